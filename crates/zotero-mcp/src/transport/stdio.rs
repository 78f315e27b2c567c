//! The stdio runner: the one server handler (`server::ZoteroServer`) on stdin/stdout, logs on
//! stderr, with the JSON-RPC layer (`framed`) between stdio and rmcp.

use std::process::ExitCode;

use rmcp::ServiceExt;
use tokio::sync::mpsc;

use super::framed::{read_lines, write_lines, FramedTransport};
use super::lines::{max_message_bytes, LineReader};
use crate::config::Config;
use crate::mcp::server::ZoteroServer;

/// Lines waiting for stdout, and messages waiting for rmcp: enough to keep both busy; a
/// full queue makes its producer wait.
const QUEUE: usize = 32;

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(config: Config) -> ExitCode {
    crate::log::init(&config);
    crate::log::server_start(&config);
    let server = match ZoteroServer::new(&config) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    let max = max_message_bytes(config.uploads.max_bytes);
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (line_tx, line_rx) = mpsc::channel(QUEUE);
    let (message_tx, message_rx) = mpsc::channel(QUEUE);
    let writer = tokio::spawn(write_lines(stdout, line_rx));
    let stdin = tokio::io::BufReader::with_capacity(1 << 16, stdin);
    let reader = tokio::spawn(read_lines(
        LineReader::new(stdin, max),
        max,
        message_tx,
        line_tx.clone(),
    ));
    let code = match server
        .serve(FramedTransport::new(message_rx, line_tx))
        .await
    {
        Ok(service) => match service.waiting().await {
            Ok(reason) => {
                tracing::debug!(?reason, "server stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                tracing::error!(error = %e, "server task failed");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            tracing::error!(error = %e, "MCP initialisation failed");
            ExitCode::FAILURE
        }
    };
    // The reader is already done when stdin closed; if rmcp stopped first, stop it too. Then
    // every sender is gone and the writer ends once the last answer is written.
    reader.abort();
    let _ = reader.await;
    let _ = writer.await;
    code
}
