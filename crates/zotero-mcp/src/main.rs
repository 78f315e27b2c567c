//! The command line: serve MCP on stdio (default), `check` the configuration, or print the
//! tool list. Nothing else lives here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rmcp::ServiceExt;
use zotero_mcp::config::Config;
use zotero_mcp::server::{tool_definitions, ZoteroServer};

/// MCP server for a personal Zotero library. With no command it serves MCP on stdio.
/// Configuration comes from the environment (ZOTERO_API_KEY, ZOTERO_USER_ID, ...).
#[derive(Parser)]
#[command(name = "zotero-mcp", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP on stdin/stdout (the default).
    Serve,
    /// Check the configuration against Zotero: ZOTERO_API_KEY and ZOTERO_USER_ID (who the key
    /// belongs to, what it may do in each library) and the desktop app's local API.
    Check,
    /// Print the tools this server lists, as JSON.
    Tools {
        /// JSON output (the only format).
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zotero-mcp: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Some(Command::Tools { .. }) => match serde_json::to_string_pretty(&tool_definitions()) {
            Ok(s) => {
                println!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("zotero-mcp: {e}");
                ExitCode::FAILURE
            }
        },
        Some(Command::Check) => run(zotero_mcp::check::run(config)),
        None | Some(Command::Serve) => run(serve(config)),
    }
}

fn run(fut: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(fut),
        Err(e) => {
            eprintln!("zotero-mcp: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> ExitCode {
    zotero_mcp::log::init(&config);
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
