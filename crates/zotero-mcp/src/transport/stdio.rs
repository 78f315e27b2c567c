//! The stdio runner: the one server handler (`server::ZoteroServer`) on stdin/stdout, logs on
//! stderr. It picks the transport and nothing else.

use std::process::ExitCode;

use rmcp::ServiceExt;

use crate::config::Config;
use crate::server::ZoteroServer;

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(config: Config) -> ExitCode {
    crate::log::init(&config);
    if config.debug {
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            api_base = %config.api_base,
            credentials = config.missing_credentials().is_empty(),
            read_cache = config.read_cache.is_some(),
            "server.start"
        );
    }
    let server = match ZoteroServer::new(&config) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    let service = match server.serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "MCP initialisation failed");
            return ExitCode::FAILURE;
        }
    };
    match service.waiting().await {
        Ok(reason) => {
            tracing::debug!(?reason, "server stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(error = %e, "server task failed");
            ExitCode::FAILURE
        }
    }
}
