//! The Streamable HTTP transport (`zotero-mcp serve --http`): the bearer token, the hosts and
//! origins accepted, sessions, and the bounds on connections and request bodies.

use std::time::Duration;

use super::parse::{parse_bool, parse_count, parse_positive_secs, Vars};
use super::ConfigError;

/// The shortest bearer token accepted.
pub const MIN_HTTP_TOKEN_CHARS: usize = 16;

/// The smallest `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES`: below it even ordinary calls would be
/// refused.
pub const MIN_HTTP_BUFFERED_BYTES: u64 = 1 << 20;

/// Who may call over HTTP, and how much they may hold open.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// `ZOTERO_MCP_HTTP_TOKEN`: the bearer token every Streamable HTTP request must carry;
    /// required to bind beyond loopback.
    pub token: Option<HttpToken>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`: `Host` values accepted besides the loopback names and
    /// the bound address (`host` for any port, `host:port`, or `*` for any), lowercased.
    pub allowed_hosts: Vec<String>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_ORIGINS`: `Origin` values accepted besides loopback origins
    /// (`https://app.example.org`, `http://host:port`, or `null`), lowercased.
    pub allowed_origins: Vec<String>,
    /// `ZOTERO_MCP_HTTP_SESSIONS`: Streamable HTTP keeps sessions (`Mcp-Session-Id`), so the
    /// server can send a client requests and notifications outside a call's answer
    /// (subscriptions, confirmations, log messages). Off by default: stateless.
    pub sessions: bool,
    /// `ZOTERO_MCP_HTTP_MAX_SESSIONS`: how many sessions may be open at once (100).
    pub max_sessions: usize,
    /// `ZOTERO_MCP_HTTP_MAX_CONNECTIONS`: how many HTTP connections may be open at once (512).
    pub max_connections: usize,
    /// `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES`: how many bytes of request bodies all connections
    /// together may hold in memory; `None`: the default, derived from the largest message.
    pub max_buffered_bytes: Option<u64>,
    /// `ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS`: how long a request body may send nothing (10 s).
    pub body_idle: Duration,
    /// `ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS`: how long a whole request body may take (120 s).
    pub body_timeout: Duration,
}

impl HttpConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let token = match get("ZOTERO_MCP_HTTP_TOKEN") {
            None => None,
            Some(v) => Some(parse_http_token(&v)?),
        };
        let allowed_hosts = match get("ZOTERO_MCP_HTTP_ALLOWED_HOSTS") {
            None => Vec::new(),
            Some(v) => parse_allowed_hosts(&v)?,
        };
        let allowed_origins = match get("ZOTERO_MCP_HTTP_ALLOWED_ORIGINS") {
            None => Vec::new(),
            Some(v) => parse_allowed_origins(&v)?,
        };
        let sessions = parse_bool(get, "ZOTERO_MCP_HTTP_SESSIONS", false)?;
        let max_sessions = parse_count(get, "ZOTERO_MCP_HTTP_MAX_SESSIONS", 100, 100_000)?;
        let max_connections = parse_count(get, "ZOTERO_MCP_HTTP_MAX_CONNECTIONS", 512, 100_000)?;
        let max_buffered_bytes = match get("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES") {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n >= MIN_HTTP_BUFFERED_BYTES)
                    .ok_or_else(|| ConfigError {
                        var: "ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES",
                        value: v.clone(),
                        expected: format!(
                            "a whole number of bytes, at least {MIN_HTTP_BUFFERED_BYTES} (1 MiB)"
                        ),
                    })?,
            ),
        };
        let body_idle = parse_positive_secs(get, "ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", 10.0)?;
        let body_timeout = parse_positive_secs(get, "ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS", 120.0)?;
        Ok(HttpConfig {
            token,
            allowed_hosts,
            allowed_origins,
            sessions,
            max_sessions,
            max_connections,
            max_buffered_bytes,
            body_idle,
            body_timeout,
        })
    }
}

/// The bearer token of the HTTP transport: never printed, compared in constant time.
#[derive(Clone)]
pub struct HttpToken(String);

impl HttpToken {
    /// Whether `candidate` is the token, in a time that depends on their lengths only.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let token = self.0.as_bytes();
        let mut diff = token.len() ^ candidate.len();
        for i in 0..token.len().max(candidate.len()) {
            let a = token.get(i).copied().unwrap_or(0);
            let b = candidate.get(i).copied().unwrap_or(0);
            diff |= usize::from(a ^ b);
        }
        std::hint::black_box(diff) == 0
    }
}

impl std::fmt::Debug for HttpToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpToken(<redacted>)")
    }
}

/// `ZOTERO_MCP_HTTP_TOKEN`: long enough not to be guessed, and printable without spaces
/// (it travels in a header).
fn parse_http_token(v: &str) -> Result<HttpToken, ConfigError> {
    if v.len() >= MIN_HTTP_TOKEN_CHARS && v.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(HttpToken(v.to_string()))
    } else {
        Err(ConfigError {
            var: "ZOTERO_MCP_HTTP_TOKEN",
            value: "<redacted>".into(),
            expected: format!(
                "at least {MIN_HTTP_TOKEN_CHARS} printable ASCII characters without spaces, \
                 e.g. from `openssl rand -hex 32`"
            ),
        })
    }
}

/// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`: comma-separated `host`, `host:port`, `[v6]:port` or `*`.
fn parse_allowed_hosts(v: &str) -> Result<Vec<String>, ConfigError> {
    let mut hosts = Vec::new();
    for entry in v.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.to_ascii_lowercase();
        let ok = entry == "*"
            || (!entry.contains(['/', '@', '?', '#'])
                && entry.parse::<hyper::http::uri::Authority>().is_ok());
        if !ok {
            return Err(ConfigError {
                var: "ZOTERO_MCP_HTTP_ALLOWED_HOSTS",
                value: v.to_string(),
                expected: "host names separated by commas, each `host` (any port), `host:port` \
                           or `*` (any host), e.g. mcp.example.org,192.168.1.5:8000"
                    .into(),
            });
        }
        hosts.push(entry);
    }
    Ok(hosts)
}

/// `ZOTERO_MCP_HTTP_ALLOWED_ORIGINS`: comma-separated `http(s)://host[:port]` or `null`.
fn parse_allowed_origins(v: &str) -> Result<Vec<String>, ConfigError> {
    let mut origins = Vec::new();
    for entry in v.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.trim_end_matches('/').to_ascii_lowercase();
        let ok = entry == "null"
            || entry
                .strip_prefix("https://")
                .or_else(|| entry.strip_prefix("http://"))
                .is_some_and(|authority| {
                    !authority.contains(['/', '@', '?', '#'])
                        && authority.parse::<hyper::http::uri::Authority>().is_ok()
                });
        if !ok {
            return Err(ConfigError {
                var: "ZOTERO_MCP_HTTP_ALLOWED_ORIGINS",
                value: v.to_string(),
                expected: "origins separated by commas, each `http://host[:port]`, \
                           `https://host[:port]` or `null`, e.g. https://app.example.org"
                    .into(),
            });
        }
        origins.push(entry);
    }
    Ok(origins)
}
