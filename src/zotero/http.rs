//! The one HTTP client of the process: hyper 1 + hyper-rustls (ring, webpki roots), a pooled
//! connection per host, per-request timeout, retries with exponential backoff and jitter,
//! `Retry-After` and `Backoff` honoured, and the optional read cache.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, Limited};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, USER_AGENT};
use hyper::{HeaderMap, Method, Request};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rand::Rng;
use tokio_util::sync::CancellationToken;

use super::cache::ReadCache;
use super::error::{cut_body, UpstreamAnswer, ZoteroError};
use crate::config::{ApiKey, Config, RetryConfig};

mod storage;
pub use storage::{host_of, ByteStream, UploadRequest};

pub type RequestBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The largest answer body we read into memory (a page of 100 items is well under 1 MB).
const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// One request to the Zotero API.
#[derive(Clone)]
pub struct ApiRequest {
    pub method: Method,
    /// Path and query below the API base, starting with `/`.
    pub path: String,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Content type and bytes.
    pub body: Option<(&'static str, Bytes)>,
    /// Safe to send again when the answer was lost or was a 429/5xx: true for GET, and for
    /// writes that carry their own protection against doing the same thing twice.
    pub repeatable: bool,
    /// A GET whose answer may come from (and go into) the read cache. Reads that a
    /// version-checked write depends on must see the library as it is now.
    pub cacheable: bool,
}

/// Bodies are left out: they may hold upload metadata, and only their size matters in a log.
impl std::fmt::Debug for ApiRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("body_len", &self.body.as_ref().map(|(_, b)| b.len()))
            .field("repeatable", &self.repeatable)
            .finish()
    }
}

impl ApiRequest {
    pub fn get(path: impl Into<String>) -> Self {
        Self {
            method: Method::GET,
            path: path.into(),
            headers: Vec::new(),
            body: None,
            repeatable: true,
            cacheable: true,
        }
    }

    /// A request with a body; not repeatable unless said so with `repeatable(true)`.
    pub fn with_body(
        method: Method,
        path: impl Into<String>,
        content_type: &'static str,
        body: impl Into<Bytes>,
    ) -> Self {
        Self {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: Some((content_type, body.into())),
            repeatable: false,
            cacheable: false,
        }
    }

    pub fn delete(path: impl Into<String>) -> Self {
        Self {
            method: Method::DELETE,
            path: path.into(),
            headers: Vec::new(),
            body: None,
            repeatable: false,
            cacheable: false,
        }
    }

    pub fn header(mut self, name: &'static str, value: HeaderValue) -> Self {
        self.headers.push((HeaderName::from_static(name), value));
        self
    }

    pub fn repeatable(mut self, yes: bool) -> Self {
        self.repeatable = yes;
        self
    }

    /// Bypasses the read cache.
    pub fn fresh(mut self) -> Self {
        self.cacheable = false;
        self
    }
}

#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// How many times the request was sent again before this answer.
    pub retries: u32,
}

impl ApiResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What the error details keep of this answer.
    pub fn answer(&self) -> UpstreamAnswer {
        UpstreamAnswer {
            status: self.status,
            body: cut_body(&self.body),
            retry_after: self.header("retry-after").map(str::to_string),
            request_id: self.header("x-zotero-requestid").map(str::to_string),
        }
    }
}

pub struct HttpClient {
    inner: Client<HttpsConnector<HttpConnector>, RequestBody>,
    base: String,
    api_key: Option<ApiKey>,
    user_agent: HeaderValue,
    retry: RetryConfig,
    timeout: Duration,
    /// `Backoff` from any answer holds back every request of the process until this instant.
    gate: Mutex<Option<Instant>>,
    cache: Option<ReadCache>,
}

impl HttpClient {
    pub fn new(config: &Config) -> Result<Arc<Self>, ZoteroError> {
        let mut http = HttpConnector::new();
        // The HTTPS connector checks the scheme, not the plain one.
        http.enforce_http(false);
        let https = https_connector(http).map_err(|reason| ZoteroError::Network {
            base: config.api_base.clone(),
            reason,
        })?;
        let inner = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(https);
        Ok(Arc::new(Self {
            inner,
            base: config.api_base.clone(),
            api_key: config.api_key.clone(),
            user_agent: user_agent(),
            retry: config.retry.clone(),
            timeout: config.timeout,
            gate: Mutex::new(None),
            cache: config
                .read_cache
                .as_ref()
                .map(|c| ReadCache::new(c.ttl, c.max_entries)),
        }))
    }

    /// Sends a request, retrying what is safe to retry. Any HTTP answer comes back as
    /// `Ok` (the caller matches the statuses it expects); `Err` is a network failure, a
    /// timeout, a cancellation, or a server-requested wait too long to sit through.
    pub async fn send(
        &self,
        req: &ApiRequest,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let is_get = req.method == Method::GET;
        let cacheable = is_get && req.cacheable;
        if let Some(cache) = &self.cache {
            if cacheable {
                if let Some(hit) = cache.get(&req.path) {
                    tracing::info!(method = "GET", path = %req.path, status = hit.status, cache = "hit", "upstream");
                    return Ok(hit);
                }
            } else if !is_get {
                // A write may change anything we have cached.
                cache.clear();
            }
        }

        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let retries = attempt - 1;
            self.wait_for_gate(cancel).await?;
            let started = Instant::now();
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ZoteroError::Cancelled),
                r = tokio::time::timeout(self.timeout, self.send_once(req)) => r,
            };
            let latency_ms = started.elapsed().as_millis() as u64;
            let may_retry = req.repeatable && attempt < self.retry.max_attempts;

            let failure = match outcome {
                Ok(Ok(mut resp)) => {
                    resp.retries = retries;
                    self.note_backoff(&resp.headers);
                    tracing::info!(
                        method = %req.method, path = %req.path, status = resp.status,
                        latency_ms, retries, "upstream"
                    );
                    let retryable = resp.status == 429 || resp.status >= 500;
                    if retryable {
                        if let Some(wait) = retry_after(&resp.headers, SystemTime::now()) {
                            if wait > self.retry.max_wait {
                                return Err(ZoteroError::WaitTooLong {
                                    wait_secs: ceil_secs(wait),
                                    max_wait_secs: ceil_secs(self.retry.max_wait),
                                    answer: Some(resp.answer()),
                                });
                            }
                            if may_retry {
                                sleep(wait, cancel).await?;
                                continue;
                            }
                        } else if may_retry {
                            sleep(self.backoff_delay(attempt), cancel).await?;
                            continue;
                        }
                    }
                    if cacheable && resp.status == 200 {
                        if let Some(cache) = &self.cache {
                            cache.put(req.path.clone(), resp.clone());
                        }
                    }
                    return Ok(resp);
                }
                Ok(Err(e)) => e,
                Err(_elapsed) => ZoteroError::Timeout {
                    secs: self.timeout.as_secs_f64(),
                },
            };
            tracing::warn!(
                method = %req.method, path = %req.path, latency_ms, retries,
                error = %failure, "upstream failed"
            );
            if !may_retry {
                return Err(failure);
            }
            sleep(self.backoff_delay(attempt), cancel).await?;
        }
    }

    async fn send_once(&self, req: &ApiRequest) -> Result<ApiResponse, ZoteroError> {
        let uri = format!("{}{}", self.base, req.path);
        let mut builder = Request::builder()
            .method(req.method.clone())
            .uri(&uri)
            .header("Zotero-API-Version", "3")
            .header(USER_AGENT, self.user_agent.clone());
        if let Some(key) = &self.api_key {
            let mut value =
                HeaderValue::from_str(key.expose()).map_err(|_| ZoteroError::InvalidRequest {
                    reason: "ZOTERO_API_KEY contains characters that cannot be sent in a header"
                        .into(),
                })?;
            value.set_sensitive(true);
            builder = builder.header("Zotero-API-Key", value);
        }
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        let body: RequestBody = match &req.body {
            Some((content_type, bytes)) => {
                builder = builder.header(CONTENT_TYPE, *content_type);
                Full::new(bytes.clone())
                    .map_err(|e| match e {})
                    .boxed_unsync()
            }
            None => Full::new(Bytes::new())
                .map_err(|e| match e {})
                .boxed_unsync(),
        };
        let request = builder
            .body(body)
            .map_err(|e| ZoteroError::InvalidRequest {
                reason: format!("cannot build a request for {}: {e}", req.path),
            })?;
        self.exchange(request, &self.base, || {}).await
    }

    /// Sends a built request and reads its whole answer (up to `MAX_RESPONSE_BYTES`);
    /// `answered` runs when the status line arrives. Failures name `host`.
    async fn exchange(
        &self,
        request: Request<RequestBody>,
        host: &str,
        answered: impl FnOnce(),
    ) -> Result<ApiResponse, ZoteroError> {
        let network = |e: &dyn std::fmt::Display| ZoteroError::Network {
            base: host.to_string(),
            reason: e.to_string(),
        };
        let response = self
            .inner
            .request(request)
            .await
            .map_err(|e| network(&ErrorChain(&e)))?;
        answered();
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| network(&ErrorChain(e.as_ref())))?
            .to_bytes();
        Ok(ApiResponse {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
            retries: 0,
        })
    }

    fn backoff_delay(&self, attempt: u32) -> Duration {
        backoff_delay(
            attempt,
            self.retry.base_delay,
            self.retry.max_delay,
            rand::rng().random_range(0.5..=1.0),
        )
    }

    fn note_backoff(&self, headers: &HeaderMap) {
        let Some(secs) = headers
            .get("backoff")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
        else {
            return;
        };
        let until = Instant::now() + Duration::from_secs_f64(secs.min(86_400.0));
        let mut gate = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        if gate.is_none_or(|g| g < until) {
            *gate = Some(until);
        }
        tracing::info!(backoff_secs = secs, "zotero asked to back off");
    }

    async fn wait_for_gate(&self, cancel: &CancellationToken) -> Result<(), ZoteroError> {
        let until = *self.gate.lock().unwrap_or_else(|p| p.into_inner());
        let Some(until) = until else { return Ok(()) };
        let wait = until.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Ok(());
        }
        if wait > self.retry.max_wait {
            return Err(ZoteroError::WaitTooLong {
                wait_secs: ceil_secs(wait),
                max_wait_secs: ceil_secs(self.retry.max_wait),
                answer: None,
            });
        }
        tracing::info!(
            wait_ms = wait.as_millis() as u64,
            "holding back for Backoff"
        );
        sleep(wait, cancel).await
    }

    /// Empties the read cache (after any write).
    pub fn invalidate_cache(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }
}

/// The `User-Agent` of every request this process sends (the Zotero API, storage uploads,
/// `file_url` downloads).
pub(crate) fn user_agent() -> HeaderValue {
    HeaderValue::from_static(concat!("zotero-mcp/", env!("CARGO_PKG_VERSION")))
}

/// Wraps a plain connector (with `enforce_http(false)`) into the TLS connector of this
/// process: rustls with the ring provider and the webpki roots, `http://` and `https://`,
/// HTTP/1.1 and HTTP/2. The error is for a message ("TLS setup failed: ...").
pub(crate) fn https_connector<R>(
    http: HttpConnector<R>,
) -> Result<HttpsConnector<HttpConnector<R>>, String> {
    let provider = rustls::crypto::ring::default_provider();
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(Arc::new(provider))
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http))
}

/// Displays an error with its sources ("connection refused", not just "client error"); a
/// source whose text is already shown is left out.
pub(crate) struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = self.0.to_string();
        let mut source = self.0.source();
        while let Some(s) = source {
            let s_text = s.to_string();
            if !text.contains(&s_text) {
                text.push_str(": ");
                text.push_str(&s_text);
            }
            source = s.source();
        }
        f.write_str(&text)
    }
}

async fn sleep(d: Duration, cancel: &CancellationToken) -> Result<(), ZoteroError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ZoteroError::Cancelled),
        _ = tokio::time::sleep(d) => Ok(()),
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The delay before attempt `attempt + 1`: `base * 2^(attempt-1)`, capped at `max`, scaled by
/// `jitter` (0.5..=1.0) so that many clients do not retry in step.
pub fn backoff_delay(attempt: u32, base: Duration, max: Duration, jitter: f64) -> Duration {
    let exp = base.as_secs_f64() * 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
    Duration::from_secs_f64(exp.min(max.as_secs_f64()) * jitter.clamp(0.0, 1.0))
}

/// `Retry-After` as delta-seconds or as an HTTP-date (relative to `now`).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_status_body_retry_after_and_request_id() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("120"));
        headers.insert("x-zotero-requestid", HeaderValue::from_static("abc123"));
        let resp = ApiResponse {
            status: 429,
            headers,
            body: Bytes::from_static(b"Too many requests"),
            retries: 2,
        };
        let a = resp.answer();
        assert_eq!(a.status, 429);
        assert_eq!(a.body, "Too many requests");
        assert_eq!(a.retry_after.as_deref(), Some("120"));
        assert_eq!(a.request_id.as_deref(), Some("abc123"));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let base = Duration::from_millis(500);
        let max = Duration::from_secs(4);
        assert_eq!(backoff_delay(1, base, max, 1.0), Duration::from_millis(500));
        assert_eq!(backoff_delay(2, base, max, 1.0), Duration::from_secs(1));
        assert_eq!(backoff_delay(3, base, max, 1.0), Duration::from_secs(2));
        assert_eq!(backoff_delay(10, base, max, 1.0), Duration::from_secs(4));
        assert_eq!(backoff_delay(3, base, max, 0.5), Duration::from_secs(1));
        assert_eq!(backoff_delay(u32::MAX, base, max, 1.0), max);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("120"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(120)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(90));
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(90)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        h.insert("retry-after", HeaderValue::from_str(&past).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }
}
