//! The SSRF guard of every request to an outside host (`file_url` and arXiv downloads, the
//! metadata services, the model hub): which addresses a connection may go to.
//!
//! Checked at connect time, so every hop of a redirect is checked whoever follows it, in two
//! places because hyper-util's `HttpConnector` skips the resolver for IP literals:
//! [`GuardedConnector`] checks an IP-literal host before connecting, and [`GuardedResolver`],
//! the connector's resolver, every address a name resolves to. The connection only ever
//! goes to addresses that passed the check, so a name that resolves differently on a
//! second lookup (DNS rebinding) gains nothing.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use std::time::Duration;

use hyper::Uri;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Why an address may not be fetched from, or `None` for a public unicast address.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        (0, _, _) => "unspecified (0.0.0.0/8)",
        (127, _, _) => "loopback",
        (10, _, _) => "private (10.0.0.0/8)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "shared carrier-grade NAT (100.64.0.0/10)",
        (192, 0, 0) => "reserved (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 88, 99) => "reserved (6to4 relay anycast)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast",
        _ if ip.is_broadcast() => "broadcast",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    };
    Some(reason)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let [s0, s1, s2, s3, s4, s5, s6, s7] = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if ip.is_unspecified() {
        return Some("unspecified (::)");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    // IPv4-compatible ::a.b.c.d (deprecated): judged by the IPv4 address, and refused anyway.
    if s0 == 0 && s1 == 0 && s2 == 0 && s3 == 0 && s4 == 0 && s5 == 0 {
        return Some(v4_reason(embedded(s6, s7)).unwrap_or("reserved (IPv4-compatible IPv6)"));
    }
    // NAT64 well-known prefix: the IPv4 address inside decides.
    if (s0, s1, s2, s3, s4, s5) == (0x64, 0xff9b, 0, 0, 0, 0) {
        return v4_reason(embedded(s6, s7));
    }
    // 6to4: the IPv4 address in bits 16..48 decides.
    if s0 == 0x2002 {
        return v4_reason(embedded(s1, s2));
    }
    let reason = match (s0, s1) {
        (0x64, 0xff9b) if s2 == 1 => "reserved (NAT64 local use)",
        (0x100, 0) if (s2, s3) == (0, 0) => "reserved (discard prefix)",
        (0x2001, 0xdb8) => "documentation",
        (0x3fff, 0..=0x0fff) => "documentation",
        (0x2001, 0) => "Teredo tunnelling",
        (0x2001, 0x10..=0x2f) => "reserved (ORCHID)",
        (0xfc00..=0xfdff, _) => "unique local (fc00::/7)",
        (0xfe80..=0xfebf, _) => "link-local",
        (0xfec0..=0xfeff, _) => "site-local (deprecated)",
        (0xff00..=0xffff, _) => "multicast",
        _ => return None,
    };
    Some(reason)
}

/// A host that resolved to (or is) an address the guard refuses; found again in the
/// connect error's source chain to give the caller a clear answer.
#[derive(Debug)]
pub struct ForbiddenAddress {
    pub host: String,
    pub ip: IpAddr,
    pub reason: &'static str,
}

impl std::fmt::Display for ForbiddenAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if literal_ip(&self.host) == Some(self.ip) {
            write!(f, "{} is a {} address", self.host, self.reason)
        } else {
            write!(
                f,
                "{} resolves to {}, a {} address",
                self.host, self.ip, self.reason
            )
        }
    }
}

impl std::error::Error for ForbiddenAddress {}

/// Finds a `ForbiddenAddress` in an error's source chain.
pub fn find_forbidden<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a ForbiddenAddress> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(f) = e.downcast_ref::<ForbiddenAddress>() {
            return Some(f);
        }
        current = e.source();
    }
    None
}

/// The IP address of a URL host when the host is an IP literal (with or without brackets).
pub fn literal_ip(host: &str) -> Option<IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>().ok()
}

/// Which addresses a request to an outside host may connect to.
#[derive(Debug, Clone, Copy)]
pub enum AddressPolicy {
    /// Public addresses only (the default).
    PublicOnly,
    /// Anything (`ZOTERO_FETCH_ALLOW_PRIVATE=1`).
    Any,
    /// Tests: refuse exactly the addresses `f` picks, so that a loopback server can play a
    /// public host and another loopback address a private one. No variable selects it.
    Refuse(fn(IpAddr) -> bool),
}

impl AddressPolicy {
    /// `ZOTERO_FETCH_ALLOW_PRIVATE`: on, anything; off, public addresses only.
    pub fn from_config(allow_private: bool) -> Self {
        if allow_private {
            AddressPolicy::Any
        } else {
            AddressPolicy::PublicOnly
        }
    }

    /// Why `ip` may not be reached, if it may not.
    pub fn refuses(self, ip: IpAddr) -> Option<&'static str> {
        match self {
            AddressPolicy::PublicOnly => forbidden_reason(ip),
            AddressPolicy::Any => None,
            AddressPolicy::Refuse(f) => f(ip).then_some("refused by the test policy"),
        }
    }

    /// The address `host` (a URL host) stands for, when it is an IP literal the policy
    /// refuses. Names are judged by the resolver, when they are looked up.
    pub fn refuses_literal(self, host: &str) -> Option<ForbiddenAddress> {
        let ip = literal_ip(host)?;
        let reason = self.refuses(ip)?;
        Some(ForbiddenAddress {
            host: host.to_string(),
            ip,
            reason,
        })
    }
}

/// The resolver of every guarded client: `tokio::net::lookup_host`, then every address is
/// checked; one forbidden address fails the whole lookup (a public name has no business
/// resolving to a private address, and refusing is clearer than quietly picking another).
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    pub policy: AddressPolicy,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let host = name.as_str().to_string();
        let policy = self.policy;
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if addrs.is_empty() {
                return Err(format!("{host} has no addresses").into());
            }
            for addr in &addrs {
                if let Some(reason) = policy.refuses(addr.ip()) {
                    return Err(Box::new(ForbiddenAddress {
                        host,
                        ip: addr.ip(),
                        reason,
                    }) as BoxError);
                }
            }
            Ok(addrs.into_iter())
        })
    }
}

/// The connector of every guarded client: an IP-literal host is checked here (the resolver
/// never sees one), then the plain connector connects through [`GuardedResolver`].
#[derive(Debug, Clone)]
pub struct GuardedConnector {
    inner: HttpConnector<GuardedResolver>,
    policy: AddressPolicy,
}

impl GuardedConnector {
    /// `http://` and `https://` (TLS is added around it), connecting within `connect_timeout`.
    pub fn new(policy: AddressPolicy, connect_timeout: Duration) -> Self {
        let mut inner = HttpConnector::new_with_resolver(GuardedResolver { policy });
        inner.enforce_http(false);
        inner.set_connect_timeout(Some(connect_timeout));
        Self { inner, policy }
    }
}

impl tower_service::Service<Uri> for GuardedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        if let Some(forbidden) = dst.host().and_then(|h| self.policy.refuses_literal(h)) {
            return Box::pin(std::future::ready(Err(Box::new(forbidden) as BoxError)));
        }
        let connecting = self.inner.call(dst);
        Box::pin(async move { connecting.await.map_err(Into::into) })
    }
}

/// The TLS connector of this process around a [`GuardedConnector`]: what every client of
/// outside hosts is built on.
pub fn guarded_https_connector(
    policy: AddressPolicy,
    connect_timeout: Duration,
) -> Result<HttpsConnector<GuardedConnector>, crate::tls::TlsSetupError> {
    crate::tls::wrap(GuardedConnector::new(policy, connect_timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        forbidden_reason(s.parse().unwrap())
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for addr in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:0.0.0.0",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff05::2",
            "2001:db8::1",
            "3fff::1",
            "2001::1",
            "2001:10::1",
            "100::1",
        ] {
            assert!(reason(addr).is_some(), "{addr} should be refused");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "192.169.0.1",
            "169.253.1.1",
            "11.0.0.1",
            "223.255.255.254",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:4860:4860::8888",
            "4000::1",
        ] {
            assert_eq!(reason(addr), None, "{addr} should pass");
        }
    }

    #[test]
    fn literal_hosts_are_recognised() {
        assert_eq!(literal_ip("[::1]"), Some("::1".parse().unwrap()));
        assert_eq!(literal_ip("127.0.0.1"), Some("127.0.0.1".parse().unwrap()));
        assert_eq!(literal_ip("example.org"), None);
        // Not a strict literal: goes to the resolver, which checks what it resolves to.
        assert_eq!(literal_ip("2130706433"), None);
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost_and_allows_it_when_told() {
        use tower_service::Service;
        let name: Name = "localhost".parse().unwrap();
        let mut strict = GuardedResolver {
            policy: AddressPolicy::PublicOnly,
        };
        let err = strict.call(name.clone()).await.unwrap_err();
        let forbidden = find_forbidden(err.as_ref()).expect("a ForbiddenAddress");
        assert_eq!(forbidden.reason, "loopback");
        let mut lax = GuardedResolver {
            policy: AddressPolicy::Any,
        };
        let addrs: Vec<_> = lax.call(name).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()));
    }

    #[tokio::test]
    async fn the_connector_refuses_literal_hosts_before_connecting() {
        use tower_service::Service;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let timeout = Duration::from_secs(5);
        for url in [
            format!("http://127.0.0.1:{port}/"),
            format!("https://[::ffff:127.0.0.1]:{port}/"),
            format!("http://localhost:{port}/"),
        ] {
            let mut strict = GuardedConnector::new(AddressPolicy::PublicOnly, timeout);
            let err = strict.call(url.parse().unwrap()).await.unwrap_err();
            let forbidden = find_forbidden(err.as_ref()).expect("a ForbiddenAddress");
            assert_eq!(forbidden.reason, "loopback", "{url}");
        }
        // The test policy: 127.0.0.1 plays a public host.
        let mut lax = GuardedConnector::new(
            AddressPolicy::Refuse(|ip| ip != IpAddr::from([127, 0, 0, 1])),
            timeout,
        );
        assert!(lax
            .call(format!("http://127.0.0.1:{port}/").parse().unwrap())
            .await
            .is_ok());
        let err = lax
            .call("http://127.0.0.2:9/".parse().unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            find_forbidden(err.as_ref()).unwrap().to_string(),
            "127.0.0.2 is a refused by the test policy address"
        );
    }
}
