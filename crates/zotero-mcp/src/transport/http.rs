//! The Streamable HTTP runner: the one server handler (`server::ZoteroServer`, the same as on
//! stdio) behind rmcp's `StreamableHttpService`, served by hyper on `ADDR` at [`PATH`],
//! stateless by default, answering with JSON (SSE only when a call sends notifications
//! first); with `ZOTERO_MCP_HTTP_SESSIONS=1` it keeps sessions (`Mcp-Session-Id`, a `GET`
//! stream for what the server sends unasked), so subscriptions, confirmations and log
//! messages work as on stdio.
//!
//! Every request passes the [`Guard`] before rmcp sees it: `Host` (DNS rebinding), `Origin`
//! (cross-site requests from browsers), the bearer token when one is set, the path, and the
//! body's declared size. The body is then read within the same bound as a stdio message and
//! judged by the same JSON-RPC rules (`jsonrpc::classify`), so a malformed message gets the
//! same error over both transports. Logs stay JSON on stderr; stdout is not used.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
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
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, Verdict};
use super::lines::max_message_bytes;
use crate::config::{Config, HttpToken};
use crate::server::ZoteroServer;

/// Where MCP is served.
pub const PATH: &str = "/mcp";

/// The address `serve --http` binds without one.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8000";

/// How long a shutdown waits for the calls in flight before it stops anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

type Body = BoxBody<Bytes, Infallible>;

/// Whether the server may start on `addr` with this configuration: binding beyond loopback
/// needs `ZOTERO_MCP_HTTP_TOKEN`. The error is the message for the user.
pub fn check_bind(config: &Config, addr: SocketAddr) -> Result<(), String> {
    if addr.ip().is_loopback() || config.http_token.is_some() {
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
        // Without sessions there is no connection to send a notification on later.
        Ok(s) if !config.http_sessions => s.without_subscriptions(),
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
    let max_body = max_message_bytes(config.upload_max_bytes);
    let cancel = CancellationToken::new();
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.http_sessions)
        .with_json_response(true)
        // Host and Origin are checked by the guard, with this server's rules.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(cancel.child_token());
    let mcp = if config.http_sessions {
        let sessions = Arc::new(LocalSessionManager::default());
        Mcp::Sessions {
            service: StreamableHttpService::new(
                move || Ok(server.for_session()),
                sessions.clone(),
                rmcp_config,
            ),
            sessions,
            max: config.http_max_sessions,
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
    tracing::info!(
        addr = %bound, path = PATH, auth = guard.token.is_some(), sessions = config.http_sessions,
        "http.listening"
    );

    let mut builder = auto::Builder::new(TokioExecutor::new());
    // A client that never finishes its headers does not hold a connection forever.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let stop = shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let (guard, mcp) = (guard.clone(), mcp.clone());
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let (guard, mcp) = (guard.clone(), mcp.clone());
                        async move { Ok::<_, Infallible>(answer(&guard, &mcp, req).await) }
                    });
                    let conn = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .into_owned();
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "http.connection_error");
                        }
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

/// One request: refused by the guard, or read (within the bound) and judged by the same
/// JSON-RPC rules as a stdio line, then served by rmcp.
async fn answer(guard: &Guard, mcp: &Mcp, req: Request<Incoming>) -> Response<Body> {
    if let Err(refusal) = guard.check(&req) {
        return refusal.response();
    }
    if req.method() != Method::POST {
        return mcp.handle(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match Limited::new(body, guard.max_body).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE).response();
        }
        Err(e) => {
            tracing::debug!(error = %e, "http.body_unreadable");
            return Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: unreadable body")
                .response();
        }
    };
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
                         (ZOTERO_UPLOAD_MAX_BYTES as base64, plus 1 MiB)";

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
        let hosts = if config.http_allowed_hosts.iter().any(|h| h == "*") {
            None
        } else {
            Some(
                config
                    .http_allowed_hosts
                    .iter()
                    .filter_map(|h| authority(h))
                    .collect(),
            )
        };
        Guard {
            token: config.http_token.clone(),
            bound: Some(bound.ip()).filter(|ip| !ip.is_unspecified()),
            hosts,
            origins: config.http_allowed_origins.clone(),
            max_body,
        }
    }

    /// `Ok` when the request may go to rmcp; checked in this order: `Host`, `Origin`, the
    /// token, the path, the declared body size.
    fn check<B>(&self, req: &Request<B>) -> Result<(), Refusal> {
        let host = req
            .headers()
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
            // HTTP/2 carries the host in `:authority`.
            .or_else(|| req.uri().authority().map(|a| a.to_string()));
        if !host.as_deref().is_some_and(|h| self.host_allowed(h)) {
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
        let declared = req
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
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
