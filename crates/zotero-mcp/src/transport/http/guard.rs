//! What every request must satisfy before rmcp reads it: `Host` (DNS rebinding), `Origin`
//! (cross-site requests from browsers), the bearer token, the path, the declared body size.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{AUTHORIZATION, HOST, ORIGIN};
use hyper::http::uri::Authority;
use hyper::{Request, StatusCode};

use super::body::{declared_length, TOO_LARGE};
use super::refusal::Refusal;
use crate::config::{Config, HttpToken};

/// Where MCP is served.
pub const PATH: &str = "/mcp";

/// What every request must satisfy before rmcp reads it.
pub(super) struct Guard {
    pub(super) token: Option<HttpToken>,
    /// The address bound, accepted as a `Host` when it is a specific one.
    bound: Option<IpAddr>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`, parsed: host and optional port; `None`: any host.
    hosts: Option<Vec<(String, Option<u16>)>>,
    origins: Vec<String>,
    max_body: usize,
}

impl Guard {
    pub(super) fn new(config: &Config, bound: SocketAddr, max_body: usize) -> Self {
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
    pub(super) fn check<B>(&self, req: &Request<B>) -> Result<(), Refusal> {
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
const NO_HOST: &str = "Bad Request: no Host header (HTTP/1.1 requires one)";
const BAD_HOST: &str = "Bad Request: the Host header is not a valid host";
const HOST_MISMATCH: &str = "Bad Request: the Host header names another host than the \
                             request target";

/// The host a request is for (RFC 9112 §3.2): its target's authority when it has one (an
/// absolute-form target, or HTTP/2's `:authority`), else its `Host` header. Several `Host`
/// headers are refused (`400`), and so are none (from HTTP/1.1 on) or an unreadable one, and
/// a `Host` that names another host than the target:
/// the two checks would otherwise judge different hosts than a proxy or rmcp might use.
fn requested_host<B>(req: &Request<B>) -> Result<Option<&str>, Refusal> {
    let mut hosts = req.headers().get_all(HOST).iter();
    let header = hosts.next();
    if hosts.next().is_some() {
        return Err(Refusal::new(StatusCode::BAD_REQUEST, MANY_HOSTS));
    }
    let header = match header.map(|h| h.to_str()) {
        Some(Err(_)) => return Err(Refusal::new(StatusCode::BAD_REQUEST, BAD_HOST)),
        Some(Ok(h)) => Some(h),
        None => None,
    };
    let Some(target) = req.uri().authority() else {
        // HTTP/1.0 did not require a Host; a request without one names no host to allow.
        if header.is_none() && req.version() != hyper::Version::HTTP_10 {
            return Err(Refusal::new(StatusCode::BAD_REQUEST, NO_HOST));
        }
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
    use std::collections::HashMap;

    use super::*;

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
        // RFC 9112 §3.2: an HTTP/1.1 request without Host is a bad request.
        assert_eq!(status(&g, &[]), Some(400));
        let mut old = req(&[]);
        *old.version_mut() = hyper::Version::HTTP_10;
        assert_eq!(g.check(&old).err().map(|r| r.status.as_u16()), Some(403));
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
}
