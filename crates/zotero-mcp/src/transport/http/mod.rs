//! The Streamable HTTP runner: the one server handler (`server::ZoteroServer`, the same as on
//! stdio) behind rmcp's `StreamableHttpService`, served by hyper on `ADDR` at [`PATH`],
//! stateless by default, answering with JSON (SSE only when a call sends notifications
//! first); with `ZOTERO_MCP_HTTP_SESSIONS=1` it keeps sessions (`Mcp-Session-Id`, a `GET`
//! stream for what the server sends unasked), so subscriptions, confirmations and log
//! messages work as on stdio.
//!
//! Every request passes the [`Guard`] before rmcp sees it: `Host` (DNS rebinding; one host,
//! the target's authority when it has one), `Origin` (cross-site requests from browsers), the
//! bearer token when one is set, the path, and the body's declared size. The body is then read
//! within [`Limits`] (its size, a share of the bytes buffered by all connections, an idle and a
//! total timeout) and judged by the same JSON-RPC rules (`jsonrpc::classify`), so a malformed
//! message gets the same error over both transports. Logs stay JSON on stderr; stdout is not
//! used.

mod body;
mod guard;
mod limits;
mod refusal;
mod service;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use self::body::{Budget, Reader};
use self::guard::Guard;
pub use self::guard::PATH;
use self::limits::Limits;
use self::service::{answer, Mcp};
use crate::config::Config;
use crate::mcp::server::ZoteroServer;

/// The address `serve --http` binds without one.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8000";

/// How long a shutdown waits for the calls in flight before it stops anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's headers (and how long a kept-alive
/// connection may wait for its next request).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest HTTP/1 read buffer, which bounds a request's line and headers (hyper answers
/// `431` beyond it); hyper's own default is about 400 KiB per connection.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Why the server may not start on an address: it is beyond loopback and no token is set.
#[derive(Debug, thiserror::Error)]
#[error(
    "serving HTTP on {addr}, beyond loopback, requires ZOTERO_MCP_HTTP_TOKEN (a bearer \
     token of at least {min} characters that every request must carry); set it, or bind \
     to 127.0.0.1",
    min = crate::config::MIN_HTTP_TOKEN_CHARS
)]
pub struct BindError {
    /// The address asked for.
    pub addr: SocketAddr,
}

/// Whether the server may start on `addr` with this configuration: binding beyond loopback
/// needs `ZOTERO_MCP_HTTP_TOKEN`. The error is the message for the user.
pub fn check_bind(config: &Config, addr: SocketAddr) -> Result<(), BindError> {
    if addr.ip().is_loopback() || config.http.token.is_some() {
        Ok(())
    } else {
        Err(BindError { addr })
    }
}

/// Serves MCP over Streamable HTTP on `addr` until SIGTERM or SIGINT, then finishes the calls
/// in flight (for at most [`SHUTDOWN_GRACE`]) and exits 0.
pub async fn serve(config: Config, addr: SocketAddr) -> ExitCode {
    crate::log::init(&config);
    if let Err(message) = check_bind(&config, addr) {
        tracing::error!(%message, "cannot start");
        return ExitCode::from(2);
    }
    crate::log::server_start(&config);
    let server = match ZoteroServer::new(&config) {
        // Without sessions there is no connection to send a notification on later.
        Ok(s) if !config.http.sessions => s.without_subscriptions(),
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(%addr, error = %e, "http.bind_failed");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    let limits = Limits::new(&config);
    let max_body = limits.body;
    let cancel = CancellationToken::new();
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.http.sessions)
        .with_json_response(true)
        // Host and Origin are checked by the guard, with this server's rules.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(cancel.child_token());
    let mcp = if config.http.sessions {
        let sessions = Arc::new(LocalSessionManager::default());
        Mcp::Sessions {
            service: StreamableHttpService::new(
                move || Ok(server.for_session()),
                sessions.clone(),
                rmcp_config,
            ),
            sessions,
            max: config.http.max_sessions,
        }
    } else {
        Mcp::Stateless(StreamableHttpService::new(
            // Each request is a session of its own: a log level one client sets does not
            // hold for another's calls.
            move || Ok(server.for_session()),
            Arc::new(NeverSessionManager::default()),
            rmcp_config,
        ))
    };
    let mcp = Arc::new(mcp);
    let guard = Arc::new(Guard::new(&config, bound, max_body));
    let buffered = Budget::new(limits.buffered);
    let connections = Arc::new(Semaphore::new(limits.connections));
    tracing::info!(
        addr = %bound, path = PATH, auth = guard.token.is_some(), sessions = config.http.sessions,
        max_body = limits.body, max_buffered = limits.buffered,
        max_connections = limits.connections, "http.listening"
    );

    let mut builder = auto::Builder::new(TokioExecutor::new());
    // A client that never finishes its headers does not hold a connection forever, nor
    // more than a small buffer while it sends them.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES);
    let graceful = GracefulShutdown::new();
    let stop = shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let Ok(permit) = connections.clone().try_acquire_owned() else {
                        tracing::warn!(max = limits.connections, "http.too_many_connections");
                        tokio::spawn(refuse_connection(stream));
                        continue;
                    };
                    // HTTP/2 may carry many requests at once on one connection: together
                    // they hold no more than one largest body.
                    let on_conn = Reader {
                        limits: limits.clone(),
                        server: buffered.clone(),
                        connection: Budget::new(limits.body),
                    };
                    let (guard, mcp, on_conn) = (guard.clone(), mcp.clone(), Arc::new(on_conn));
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let (guard, mcp, on_conn) = (guard.clone(), mcp.clone(), on_conn.clone());
                        async move {
                            Ok::<_, Infallible>(answer(&guard, &mcp, &on_conn, req).await)
                        }
                    });
                    let conn = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .into_owned();
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "http.connection_error");
                        }
                        drop(permit);
                    });
                }
                Err(e) => {
                    // Out of file descriptors, most likely: wait a little rather than spin.
                    tracing::warn!(error = %e, "http.accept_failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut stop => break,
        }
    }
    drop(listener);
    tracing::info!(connections = graceful.count(), "http.shutting_down");
    tokio::select! {
        drained = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()) => {
            if drained.is_err() {
                tracing::warn!(
                    grace_seconds = SHUTDOWN_GRACE.as_secs(),
                    "http.shutdown_timeout"
                );
            }
        }
        // A second signal: stop waiting.
        () = shutdown_signal() => tracing::warn!("http.shutdown_forced"),
    }
    cancel.cancel();
    tracing::info!("http.stopped");
    ExitCode::SUCCESS
}

const TOO_MANY_CONNECTIONS: &str = "Service Unavailable: too many open connections \
                                    (ZOTERO_MCP_HTTP_MAX_CONNECTIONS); retry shortly";

/// Answers a connection beyond `ZOTERO_MCP_HTTP_MAX_CONNECTIONS` with `503` and closes it,
/// spending at most two seconds on it.
async fn refuse_connection(mut stream: tokio::net::TcpStream) {
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{TOO_MANY_CONNECTIONS}",
        TOO_MANY_CONNECTIONS.len()
    );
    let wrote = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    if matches!(wrote, Ok(Ok(()))) {
        // Closing a socket with unread input resets it, and the client may lose the answer:
        // read a little of what it sent first.
        let mut sink = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            for _ in 0..16 {
                if matches!(stream.read(&mut sink).await, Ok(0) | Err(_)) {
                    break;
                }
            }
        })
        .await;
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "http.no_sigterm_handler");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn binding_beyond_loopback_needs_a_token() {
        let env = HashMap::new();
        let config = Config::from_map(&env).unwrap();
        assert!(check_bind(&config, "127.0.0.1:0".parse().unwrap()).is_ok());
        assert!(check_bind(&config, "[::1]:0".parse().unwrap()).is_ok());
        let e = check_bind(&config, "0.0.0.0:8000".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("ZOTERO_MCP_HTTP_TOKEN"), "{e}");
    }
}
