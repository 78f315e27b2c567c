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

/// Wraps a plain connector (with `enforce_http(false)`) into the TLS connector of this
/// process: rustls with the ring provider and the webpki roots, `http://` and `https://`,
/// HTTP/1.1 and HTTP/2. The error is for a message ("TLS setup failed: ...").
pub fn https_connector<R>(
    http: HttpConnector<R>,
) -> Result<HttpsConnector<HttpConnector<R>>, String> {
    wrap(http)
}

/// [`https_connector`] around any plain connector.
pub(crate) fn wrap<C>(http: C) -> Result<HttpsConnector<C>, String> {
    let provider = rustls::crypto::ring::default_provider();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(Arc::new(provider))
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http))
}
