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

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use hyper::http::uri::Authority;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, Verdict};
use super::lines::max_message_bytes;
use crate::config::{Config, HttpToken};
use crate::mcp::server::ZoteroServer;

/// Where MCP is served.
pub const PATH: &str = "/mcp";

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

/// The bytes of bodies all connections may buffer together when
/// `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES` is unset, unless the largest body needs more.
const DEFAULT_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

/// What the server holds for its clients, at most (each in the README's Security section).
#[derive(Debug, Clone)]
struct Limits {
    /// The largest request body: a stdio message, within `buffered`.
    body: usize,
    /// The bytes of request bodies all connections together may hold in memory.
    buffered: usize,
    /// How long a body may send nothing.
    body_idle: Duration,
    /// How long a whole body may take.
    body_total: Duration,
    /// The connections open at once.
    connections: usize,
}

impl Limits {
    fn new(config: &Config) -> Self {
        let message = max_message_bytes(config.uploads.max_bytes);
        let buffered = match config.http.max_buffered_bytes {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            // Room for the largest message, so that an upload is never refused for want of
            // room while nothing else is being read.
            None => message.max(DEFAULT_BUFFERED_BYTES),
        };
        Limits {
            body: message.min(buffered),
            buffered,
            body_idle: config.http.body_idle,
            body_total: config.http.body_timeout,
            connections: config.http.max_connections,
        }
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// Whether the server may start on `addr` with this configuration: binding beyond loopback
/// needs `ZOTERO_MCP_HTTP_TOKEN`. The error is the message for the user.
pub fn check_bind(config: &Config, addr: SocketAddr) -> Result<(), String> {
    if addr.ip().is_loopback() || config.http.token.is_some() {
        Ok(())
    } else {
        Err(format!(
            "serving HTTP on {addr}, beyond loopback, requires ZOTERO_MCP_HTTP_TOKEN (a bearer \
             token of at least {} characters that every request must carry); set it, or bind \
             to 127.0.0.1",
            crate::config::MIN_HTTP_TOKEN_CHARS
        ))
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

/// rmcp's service, stateless or keeping sessions (`ZOTERO_MCP_HTTP_SESSIONS`).
enum Mcp {
    Stateless(StreamableHttpService<ZoteroServer, NeverSessionManager>),
    Sessions {
        service: StreamableHttpService<ZoteroServer, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        /// `ZOTERO_MCP_HTTP_MAX_SESSIONS`.
        max: usize,
    },
}

impl Mcp {
    async fn handle<B>(&self, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        match self {
            Mcp::Stateless(service) => service.handle(req).await,
            Mcp::Sessions {
                service,
                sessions,
                max,
            } => {
                // A request without a session asks for a new one: bounded, so that clients
                // that never close theirs cannot exhaust the server (idle sessions end after
                // rmcp's keep-alive, 5 minutes).
                let opens =
                    req.method() == Method::POST && !req.headers().contains_key("mcp-session-id");
                if opens && sessions.sessions.read().await.len() >= *max {
                    tracing::warn!(max = *max, "http.too_many_sessions");
                    return Refusal::new(StatusCode::SERVICE_UNAVAILABLE, TOO_MANY_SESSIONS)
                        .response();
                }
                service.handle(req).await
            }
        }
    }
}

const TOO_MANY_SESSIONS: &str = "Service Unavailable: too many open sessions \
                                 (ZOTERO_MCP_HTTP_MAX_SESSIONS); close one with DELETE, or \
                                 retry when idle sessions have ended";

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

/// Bytes of request bodies held in memory, against a bound: the server's (all connections)
/// or one connection's.
#[derive(Debug)]
struct Budget {
    used: AtomicUsize,
    max: usize,
}

impl Budget {
    fn new(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            max,
        })
    }

    /// Takes `n` bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|total| *total <= self.max)
            })
            .is_ok()
    }

    fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What one connection reads request bodies with.
struct Reader {
    limits: Limits,
    server: Arc<Budget>,
    connection: Arc<Budget>,
}

impl Reader {
    fn hold(&self) -> Held {
        Held {
            server: self.server.clone(),
            connection: self.connection.clone(),
            bytes: 0,
        }
    }
}

/// What one request holds of the server's and its connection's budgets, given back when it
/// is dropped: once its answer is made, since the body, and what rmcp parses of it, live
/// that long.
struct Held {
    server: Arc<Budget>,
    connection: Arc<Budget>,
    bytes: usize,
}

impl Held {
    /// Holds `total` bytes in all, or refuses the request with `503`.
    fn grow_to(&mut self, total: usize) -> Result<(), Refusal> {
        let more = total.saturating_sub(self.bytes);
        if more == 0 {
            return Ok(());
        }
        if !self.server.take(more) {
            return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, SERVER_FULL));
        }
        if !self.connection.take(more) {
            self.server.give(more);
            return Err(Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                CONNECTION_FULL,
            ));
        }
        self.bytes += more;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.server.give(self.bytes);
        self.connection.give(self.bytes);
    }
}

const SERVER_FULL: &str = "Service Unavailable: the bodies of requests in progress fill the \
                           server's buffer (ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES); retry shortly";
const CONNECTION_FULL: &str = "Service Unavailable: the requests in progress on this \
                               connection hold the largest body already; retry shortly";
const BODY_IDLE: &str = "Request Timeout: the body stopped arriving \
                         (ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS)";
const BODY_TOO_SLOW: &str = "Request Timeout: the body took too long to arrive \
                             (ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS)";

/// Reads a request body within `limits`: at most `limits.body` bytes, held against the
/// budgets as they arrive (a declared length is held before anything is read, so that a
/// client announcing a large body is refused at once when there is no room for it), never
/// waiting more than `body_idle` for the next bytes nor `body_total` for all of them.
async fn read_body<B>(
    mut body: B,
    declared: Option<u64>,
    limits: &Limits,
    held: &mut Held,
) -> Result<Bytes, Refusal>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    if let Some(n) = declared {
        held.grow_to(usize::try_from(n).unwrap_or(usize::MAX))?;
    }
    let deadline = Instant::now() + limits.body_total;
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut len = 0usize;
    loop {
        let wake = deadline.min(Instant::now() + limits.body_idle);
        let frame = match tokio::time::timeout_at(wake, body.frame()).await {
            Err(_) if wake >= deadline => {
                return Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, BODY_TOO_SLOW));
            }
            Err(_) => return Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, BODY_IDLE)),
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                tracing::debug!(error = %e, "http.body_unreadable");
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: unreadable body",
                ));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        // Trailers carry nothing the server reads.
        let Ok(data) = frame.into_data() else {
            continue;
        };
        len = len.saturating_add(data.len());
        if len > limits.body {
            return Err(Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE));
        }
        held.grow_to(len)?;
        if !data.is_empty() {
            chunks.push(data);
        }
    }
    Ok(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.pop().unwrap_or_default(),
        _ => {
            let mut all = Vec::with_capacity(len);
            for chunk in &chunks {
                all.extend_from_slice(chunk);
            }
            Bytes::from(all)
        }
    })
}

/// One request: refused by the guard, or read (within the limits) and judged by the same
/// JSON-RPC rules as a stdio line, then served by rmcp.
async fn answer(
    guard: &Guard,
    mcp: &Mcp,
    reader: &Reader,
    req: Request<Incoming>,
) -> Response<Body> {
    if let Err(refusal) = guard.check(&req) {
        return refusal.response();
    }
    if req.method() != Method::POST {
        return mcp.handle(req).await;
    }
    let (parts, body) = req.into_parts();
    let declared = declared_length(&parts.headers);
    let mut held = reader.hold();
    let bytes = match read_body(body, declared, &reader.limits, &mut held).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal.response(),
    };
    let response = judge_and_serve(mcp, parts, bytes).await;
    drop(held);
    response
}

/// The `Content-Length` of a request, when it has a valid one.
fn declared_length(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// A body judged by the same JSON-RPC rules as a stdio line; served by rmcp when valid.
async fn judge_and_serve(
    mcp: &Mcp,
    parts: hyper::http::request::Parts,
    bytes: Bytes,
) -> Response<Body> {
    match jsonrpc::classify(&bytes) {
        Verdict::Deliver(_) => {
            mcp.handle(Request::from_parts(parts, Full::new(bytes)))
                .await
        }
        Verdict::Answer { line, refusal } => {
            refusal.log();
            // A message that is not JSON-RPC at all is a bad request; a request with bad
            // params is answered like any other error of a method.
            let status = match refusal.code {
                Some(code) if code == ErrorCode::PARSE_ERROR.0 => StatusCode::BAD_REQUEST,
                Some(code) if code == ErrorCode::INVALID_REQUEST.0 => StatusCode::BAD_REQUEST,
                _ => StatusCode::OK,
            };
            let mut response = Response::new(Full::new(Bytes::from(line)).boxed());
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        // An invalid notification or response: nothing to answer, but not accepted either.
        Verdict::Silence(refusal) => {
            refusal.log();
            Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: invalid message").response()
        }
        Verdict::Skip => {
            Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: empty body").response()
        }
    }
}

const TOO_LARGE: &str = "Payload Too Large: the body exceeds the largest message accepted \
                         (ZOTERO_UPLOAD_MAX_BYTES as base64, plus 1 MiB, within \
                         ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES)";

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

/// What every request must satisfy before rmcp reads it.
struct Guard {
    token: Option<HttpToken>,
    /// The address bound, accepted as a `Host` when it is a specific one.
    bound: Option<IpAddr>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`, parsed: host and optional port; `None`: any host.
    hosts: Option<Vec<(String, Option<u16>)>>,
    origins: Vec<String>,
    max_body: usize,
}

/// Why a request was refused: the status, a short text for the client and the log.
#[derive(Debug, PartialEq)]
struct Refusal {
    status: StatusCode,
    reason: &'static str,
}

impl Refusal {
    fn new(status: StatusCode, reason: &'static str) -> Self {
        Refusal { status, reason }
    }

    fn response(self) -> Response<Body> {
        tracing::warn!(
            status = self.status.as_u16(),
            reason = self.reason,
            "http.refused"
        );
        let mut response = Response::new(Full::new(Bytes::from(self.reason)).boxed());
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"zotero-mcp\""),
            );
        }
        response
    }
}

impl Guard {
    fn new(config: &Config, bound: SocketAddr, max_body: usize) -> Self {
        let hosts = if config.http.allowed_hosts.iter().any(|h| h == "*") {
            None
        } else {
            Some(
                config
                    .http
                    .allowed_hosts
                    .iter()
                    .filter_map(|h| authority(h))
                    .collect(),
            )
        };
        Guard {
            token: config.http.token.clone(),
            bound: Some(bound.ip()).filter(|ip| !ip.is_unspecified()),
            hosts,
            origins: config.http.allowed_origins.clone(),
            max_body,
        }
    }

    /// `Ok` when the request may go to rmcp; checked in this order: `Host`, `Origin`, the
    /// token, the path, the declared body size.
    fn check<B>(&self, req: &Request<B>) -> Result<(), Refusal> {
        let host = requested_host(req)?;
        if !host.is_some_and(|h| self.host_allowed(h)) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed (see ZOTERO_MCP_HTTP_ALLOWED_HOSTS)",
            ));
        }
        if let Some(origin) = req.headers().get(ORIGIN) {
            if !origin.to_str().is_ok_and(|o| self.origin_allowed(o)) {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Origin is not allowed (see ZOTERO_MCP_HTTP_ALLOWED_ORIGINS)",
                ));
            }
        }
        if let Some(token) = &self.token {
            let presented = req
                .headers()
                .get(AUTHORIZATION)
                .and_then(|v| bearer(v.as_bytes()));
            if !presented.is_some_and(|p| token.matches(p)) {
                return Err(Refusal::new(
                    StatusCode::UNAUTHORIZED,
                    "Unauthorized: send Authorization: Bearer <ZOTERO_MCP_HTTP_TOKEN>",
                ));
            }
        }
        if req.uri().path() != PATH {
            return Err(Refusal::new(
                StatusCode::NOT_FOUND,
                "Not Found: MCP is served at /mcp",
            ));
        }
        let declared = declared_length(req.headers());
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return Err(Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE));
        }
        Ok(())
    }

    fn host_allowed(&self, value: &str) -> bool {
        let Some((host, port)) = authority(value) else {
            return false;
        };
        if is_loopback_name(&host) {
            return true;
        }
        if self
            .bound
            .is_some_and(|ip| host.parse::<IpAddr>().is_ok_and(|h| h == ip))
        {
            return true;
        }
        match &self.hosts {
            None => true,
            Some(hosts) => hosts
                .iter()
                .any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port)),
        }
    }

    fn origin_allowed(&self, value: &str) -> bool {
        let value = value.trim().to_ascii_lowercase();
        let loopback = value
            .strip_prefix("http://")
            .or_else(|| value.strip_prefix("https://"))
            .filter(|rest| !rest.contains('/'))
            .and_then(authority)
            .is_some_and(|(host, _)| is_loopback_name(&host));
        loopback || self.origins.contains(&value)
    }
}

const MANY_HOSTS: &str = "Bad Request: more than one Host header";
const HOST_MISMATCH: &str = "Bad Request: the Host header names another host than the \
                             request target";

/// The host a request is for (RFC 9112 §3.2): its target's authority when it has one (an
/// absolute-form target, or HTTP/2's `:authority`), else its `Host` header. Several `Host`
/// headers are refused (`400`), and so is a `Host` that names another host than the target:
/// the two checks would otherwise judge different hosts than a proxy or rmcp might use.
fn requested_host<B>(req: &Request<B>) -> Result<Option<&str>, Refusal> {
    let mut hosts = req.headers().get_all(HOST).iter();
    let header = hosts.next();
    if hosts.next().is_some() {
        return Err(Refusal::new(StatusCode::BAD_REQUEST, MANY_HOSTS));
    }
    let header = header.and_then(|h| h.to_str().ok());
    let Some(target) = req.uri().authority() else {
        return Ok(header);
    };
    if let Some(header) = header {
        let default_port = match req.uri().scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("https") => 443,
            _ => 80,
        };
        let same = match (authority(target.as_str()), authority(header)) {
            (Some((h1, p1)), Some((h2, p2))) => {
                h1 == h2 && p1.unwrap_or(default_port) == p2.unwrap_or(default_port)
            }
            _ => false,
        };
        if !same {
            return Err(Refusal::new(StatusCode::BAD_REQUEST, HOST_MISMATCH));
        }
    }
    Ok(Some(target.as_str()))
}

/// A `Host` value (or an allowed-host entry) as a lowercase host without brackets and its
/// port; `None` when it is not an authority or carries user information.
fn authority(value: &str) -> Option<(String, Option<u16>)> {
    if value.contains('@') {
        return None;
    }
    let a: Authority = value.trim().parse().ok()?;
    let host = a
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some((host, a.port_u16()))
}

/// `localhost` or a loopback address (127.0.0.0/8, ::1).
fn is_loopback_name(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The token of an `Authorization: Bearer <token>` value.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = value.get(7..)?;
    let start = token.iter().position(|b| *b != b' ')?;
    token.get(start..)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn guard(vars: &[(&str, &str)], bound: &str) -> Guard {
        let env: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let config = Config::from_map(&env).unwrap();
        Guard::new(&config, bound.parse().unwrap(), 1000)
    }

    fn req(headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method("POST").uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    fn status(g: &Guard, headers: &[(&str, &str)]) -> Option<u16> {
        g.check(&req(headers)).err().map(|r| r.status.as_u16())
    }

    #[test]
    fn loopback_hosts_pass_and_others_are_refused() {
        let g = guard(&[], "127.0.0.1:8000");
        for host in [
            "localhost:8000",
            "127.0.0.1",
            "[::1]:9",
            "LOCALHOST",
            "127.0.0.2:1",
        ] {
            assert_eq!(status(&g, &[("host", host)]), None, "{host}");
        }
        for host in [
            "evil.example:8000",
            "0.0.0.0:8000",
            "localhost.evil",
            "a@localhost",
        ] {
            assert_eq!(status(&g, &[("host", host)]), Some(403), "{host}");
        }
        assert_eq!(status(&g, &[]), Some(403));
    }

    #[test]
    fn the_bound_address_and_allowed_hosts_pass() {
        let token = ("ZOTERO_MCP_HTTP_TOKEN", "0123456789abcdef");
        let auth = ("authorization", "Bearer 0123456789abcdef");
        let g = guard(
            &[
                token,
                ("ZOTERO_MCP_HTTP_ALLOWED_HOSTS", "mcp.example.org,lab:8443"),
            ],
            "10.0.0.2:8000",
        );
        for host in [
            "10.0.0.2:8000",
            "mcp.example.org:1",
            "lab:8443",
            "localhost",
        ] {
            assert_eq!(status(&g, &[("host", host), auth]), None, "{host}");
        }
        for host in ["lab:8000", "10.0.0.3:8000", "example.org"] {
            assert_eq!(status(&g, &[("host", host), auth]), Some(403), "{host}");
        }
        let any = guard(
            &[token, ("ZOTERO_MCP_HTTP_ALLOWED_HOSTS", "*")],
            "0.0.0.0:8000",
        );
        assert_eq!(status(&any, &[("host", "whatever:1"), auth]), None);
        let unspecified = guard(&[token], "0.0.0.0:8000");
        assert_eq!(
            status(&unspecified, &[("host", "0.0.0.0:8000"), auth]),
            Some(403)
        );
    }

    #[test]
    fn origins_must_be_loopback_or_allowed() {
        let g = guard(
            &[("ZOTERO_MCP_HTTP_ALLOWED_ORIGINS", "https://app.example.org")],
            "127.0.0.1:8000",
        );
        let h = ("host", "localhost:8000");
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:5",
            "https://APP.example.org",
        ] {
            assert_eq!(status(&g, &[h, ("origin", origin)]), None, "{origin}");
        }
        for origin in [
            "https://evil.example",
            "null",
            "file://localhost",
            "http://localhost.evil.example",
            "https://app.example.org:444",
        ] {
            assert_eq!(status(&g, &[h, ("origin", origin)]), Some(403), "{origin}");
        }
    }

    #[test]
    fn a_token_is_required_when_set() {
        let g = guard(
            &[("ZOTERO_MCP_HTTP_TOKEN", "0123456789abcdef")],
            "127.0.0.1:8000",
        );
        let h = ("host", "localhost");
        assert_eq!(status(&g, &[h]), Some(401));
        assert_eq!(
            status(&g, &[h, ("authorization", "Bearer 0123456789abcdeX")]),
            Some(401)
        );
        assert_eq!(
            status(&g, &[h, ("authorization", "Basic 0123456789abcdef")]),
            Some(401)
        );
        assert_eq!(
            status(&g, &[h, ("authorization", "bearer 0123456789abcdef")]),
            None
        );
        let refused = g.check(&req(&[h])).unwrap_err().response();
        assert!(refused
            .headers()
            .get("www-authenticate")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("Bearer"));
    }

    #[test]
    fn path_and_declared_size_are_checked_last() {
        let g = guard(&[], "127.0.0.1:8000");
        let h = ("host", "localhost");
        assert_eq!(status(&g, &[h, ("content-length", "1000")]), None);
        assert_eq!(status(&g, &[h, ("content-length", "1001")]), Some(413));
        let other = Request::builder()
            .uri("/other")
            .header("host", "localhost")
            .body(())
            .unwrap();
        assert_eq!(g.check(&other).unwrap_err().status, StatusCode::NOT_FOUND);
    }

    fn at(uri: &str, headers: &[(&str, &str)]) -> Option<(u16, &'static str)> {
        let mut b = Request::builder().method("POST").uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let g = guard(&[], "127.0.0.1:8000");
        g.check(&b.body(()).unwrap())
            .err()
            .map(|r| (r.status.as_u16(), r.reason))
    }

    #[test]
    fn one_host_and_the_target_authority_wins() {
        // Several Host headers, even equal ones: 400 (RFC 9112 §3.2).
        assert_eq!(
            at("/mcp", &[("host", "localhost"), ("host", "evil.example")]),
            Some((400, MANY_HOSTS))
        );
        assert_eq!(
            at("/mcp", &[("host", "localhost"), ("host", "localhost")]),
            Some((400, MANY_HOSTS))
        );
        // An absolute-form target names the host: a Host naming another is refused, and
        // the target's authority passes the allow-list like a Host would.
        assert_eq!(
            at("http://evil.example/mcp", &[("host", "localhost")]),
            Some((400, HOST_MISMATCH))
        );
        assert_eq!(
            at("http://localhost/mcp", &[("host", "evil.example")]),
            Some((400, HOST_MISMATCH))
        );
        assert_eq!(
            at("http://evil.example/mcp", &[("host", "evil.example")]).map(|r| r.0),
            Some(403)
        );
        assert_eq!(at("http://evil.example/mcp", &[]).map(|r| r.0), Some(403));
        assert_eq!(at("http://a@localhost/mcp", &[]).map(|r| r.0), Some(403));
        // Consistent ones pass; a missing port is the scheme's.
        assert_eq!(
            at("http://localhost:8000/mcp", &[("host", "localhost:8000")]),
            None
        );
        assert_eq!(
            at("http://LOCALHOST/mcp", &[("host", "localhost:80")]),
            None
        );
        assert_eq!(
            at("https://localhost/mcp", &[("host", "localhost:443")]),
            None
        );
        assert_eq!(
            at("http://localhost:8000/mcp", &[("host", "localhost:8001")]),
            Some((400, HOST_MISMATCH))
        );
        // HTTP/2 style: the authority alone.
        assert_eq!(at("http://127.0.0.1:8000/mcp", &[]), None);
    }

    /// A body fed from a channel: a chunk per message, stalled while the channel is empty.
    struct Fed(tokio::sync::mpsc::Receiver<Bytes>);

    impl hyper::body::Body for Fed {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            self.0
                .poll_recv(cx)
                .map(|o| o.map(|b| Ok(hyper::body::Frame::data(b))))
        }
    }

    fn limits(body: usize, buffered: usize, idle_ms: u64, total_ms: u64) -> Limits {
        Limits {
            body,
            buffered,
            body_idle: Duration::from_millis(idle_ms),
            body_total: Duration::from_millis(total_ms),
            connections: 8,
        }
    }

    fn reader(limits: Limits, server: &Arc<Budget>) -> Reader {
        Reader {
            connection: Budget::new(limits.body),
            limits,
            server: server.clone(),
        }
    }

    async fn read(
        r: &Reader,
        declared: Option<u64>,
        chunks: Vec<&'static [u8]>,
        close: bool,
    ) -> (Result<Bytes, Refusal>, Held) {
        let (tx, rx) = tokio::sync::mpsc::channel(chunks.len().max(1));
        for c in chunks {
            tx.send(Bytes::from_static(c)).await.unwrap();
        }
        if close {
            drop(tx);
        } else {
            // Kept open: the body stalls once the chunks are read.
            std::mem::forget(tx);
        }
        let mut held = r.hold();
        let got = read_body(Fed(rx), declared, &r.limits, &mut held).await;
        (got, held)
    }

    #[tokio::test]
    async fn a_body_is_read_whole_and_its_bytes_given_back() {
        let server = Budget::new(100);
        let r = reader(limits(50, 100, 60_000, 60_000), &server);
        let (got, held) = read(&r, Some(6), vec![b"abc", b"def"], true).await;
        assert_eq!(got.unwrap(), Bytes::from_static(b"abcdef"));
        assert_eq!(server.used.load(Ordering::SeqCst), 6);
        assert_eq!(r.connection.used.load(Ordering::SeqCst), 6);
        drop(held);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
        assert_eq!(r.connection.used.load(Ordering::SeqCst), 0);
        // Streamed past the largest body: 413.
        let (got, _) = read(&r, None, vec![&[b'x'; 30], &[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn past_the_servers_buffer_a_body_is_refused_with_503() {
        let server = Budget::new(100);
        let a = reader(limits(60, 100, 60_000, 60_000), &server);
        let b = reader(limits(60, 100, 60_000, 60_000), &server);
        // A body on `a` holds 60 (declared, still arriving).
        let mut held_a = a.hold();
        held_a.grow_to(60).unwrap();
        // `b` declares 50: no room, refused before it is read.
        let (got, held_b) = read(&b, Some(50), vec![b"x"], true).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.reason, SERVER_FULL);
        drop(held_b);
        // Streamed without a length, refused once it passes the room left.
        let (got, _) = read(&b, None, vec![&[b'x'; 30], &[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().reason, SERVER_FULL);
        // A small one fits.
        let (got, _) = read(&b, Some(5), vec![b"hello"], true).await;
        assert_eq!(got.unwrap(), Bytes::from_static(b"hello"));
        drop(held_a);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
        let (got, _) = read(&b, Some(50), vec![&[b'x'; 50]], true).await;
        assert_eq!(got.unwrap().len(), 50);
    }

    #[tokio::test]
    async fn requests_on_one_connection_share_its_bound() {
        let server = Budget::new(1000);
        let r = reader(limits(60, 1000, 60_000, 60_000), &server);
        let mut first = r.hold();
        first.grow_to(40).unwrap();
        let (got, _) = read(&r, Some(30), vec![&[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().reason, CONNECTION_FULL);
        // What the connection refused is not kept by the server.
        assert_eq!(server.used.load(Ordering::SeqCst), 40);
    }

    #[tokio::test]
    async fn a_stalled_body_ends_at_the_idle_timeout() {
        let server = Budget::new(100);
        let r = reader(limits(60, 100, 50, 600_000), &server);
        let (got, held) = read(&r, Some(60), vec![b"{\"jsonrpc\""], false).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(refused.reason, BODY_IDLE);
        drop(held);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_trickling_body_ends_at_the_total_timeout() {
        let server = Budget::new(100);
        // Never idle for long (a byte every 5 ms against 10 minutes), but never done.
        let r = reader(limits(60, 100, 600_000, 100), &server);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let feeder = tokio::spawn(async move {
            loop {
                if tx.send(Bytes::from_static(b" ")).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let mut held = r.hold();
        let got = read_body(Fed(rx), None, &r.limits, &mut held).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(refused.reason, BODY_TOO_SLOW);
        feeder.abort();
    }

    #[test]
    fn the_buffer_holds_the_largest_body_and_bounds_it() {
        let env = |vars: &[(&str, &str)]| {
            let env: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Limits::new(&Config::from_map(&env).unwrap())
        };
        let default = env(&[]);
        assert_eq!(default.body, 70_953_644);
        assert_eq!(default.buffered, 70_953_644);
        assert_eq!(default.connections, 512);
        let small = env(&[("ZOTERO_UPLOAD_MAX_BYTES", "1000")]);
        assert_eq!(small.body, 16 * 1024 * 1024);
        assert_eq!(small.buffered, 64 * 1024 * 1024);
        let tight = env(&[("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "2000000")]);
        assert_eq!((tight.body, tight.buffered), (2_000_000, 2_000_000));
    }

    #[test]
    fn binding_beyond_loopback_needs_a_token() {
        let env = HashMap::new();
        let config = Config::from_map(&env).unwrap();
        assert!(check_bind(&config, "127.0.0.1:0".parse().unwrap()).is_ok());
        assert!(check_bind(&config, "[::1]:0".parse().unwrap()).is_ok());
        let e = check_bind(&config, "0.0.0.0:8000".parse().unwrap()).unwrap_err();
        assert!(e.contains("ZOTERO_MCP_HTTP_TOKEN"), "{e}");
    }
}
