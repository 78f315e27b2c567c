//! The TLS connector and the user agent of every request this process sends.

use std::sync::Arc;

use hyper::header::HeaderValue;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;

/// The `User-Agent` of every request this process sends (the Zotero API, storage uploads,
/// `file_url` downloads).
pub fn user_agent() -> HeaderValue {
    HeaderValue::from_static(concat!("zotero-mcp/", env!("CARGO_PKG_VERSION")))
}

/// The TLS connector could not be set up: rustls refused the ring provider (it reads "TLS
/// setup failed: " and rustls's reason).
#[derive(Debug, Clone, PartialEq)]
pub struct TlsSetupError(rustls::Error);

impl std::fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TLS setup failed: {}", self.0)
    }
}

// rustls's reason is in the message already, so it is not a source too (an error chain
// would repeat it).
impl std::error::Error for TlsSetupError {}

/// Wraps a plain connector (with `enforce_http(false)`) into the TLS connector of this
/// process: rustls with the ring provider and the webpki roots, `http://` and `https://`,
/// HTTP/1.1 and HTTP/2.
pub fn https_connector<R>(
    http: HttpConnector<R>,
) -> Result<HttpsConnector<HttpConnector<R>>, TlsSetupError> {
    wrap(http)
}

/// [`https_connector`] around any plain connector.
pub(crate) fn wrap<C>(http: C) -> Result<HttpsConnector<C>, TlsSetupError> {
    let provider = rustls::crypto::ring::default_provider();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(Arc::new(provider))
        .map_err(TlsSetupError)?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_setup_error_says_so_and_why() {
        let e = TlsSetupError(rustls::Error::General("no protocol versions".into()));
        assert_eq!(
            e.to_string(),
            "TLS setup failed: unexpected error: no protocol versions"
        );
    }
}
