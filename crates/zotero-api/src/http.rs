//! The one HTTP client of the process: hyper 1 + hyper-rustls (ring, webpki roots), a bounded
//! pool of connections per host, at most `MAX_IN_FLIGHT_PER_BACKEND` requests in flight per
//! backend (the rest queue in order), per-request timeout, retries with exponential backoff and
//! jitter, `Retry-After` and `Backoff` honoured, and the optional read cache.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, USER_AGENT};
use hyper::{Method, Request};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use tokio_util::sync::CancellationToken;
use zotero_net::{
    ceil_secs, full_body, guarded_https_connector, https_connector, pooled_client, retry_after,
    user_agent, Attempt, ErrorChain, Gate, GuardedConnector, InFlight, RequestBody, Retry,
    RetryError, RetryPolicy,
};

use super::cache::ReadCache;
use super::config::{ApiKey, ClientConfig};
use super::error::ZoteroError;
pub use crate::response::ApiResponse;

mod download;
mod storage;
pub use storage::{host_of, UploadRequest};
pub use zotero_net::ByteStream;

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
    /// Whether the answer may lag behind the library (the local API's copy lags sync).
    pub consistency: Consistency,
}

/// What a request needs to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// The library as it is now, on the Web API: every write, and every read a
    /// version-checked write depends on.
    Current,
    /// A read that may come from a copy that lags (the desktop app's local API).
    MayLag,
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
            consistency: Consistency::MayLag,
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
            consistency: Consistency::Current,
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
            consistency: Consistency::Current,
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

    /// A read whose answer must be this moment's (a poll): it bypasses the read cache.
    pub fn uncached(mut self) -> Self {
        self.cacheable = false;
        self
    }

    /// A read a version-checked write depends on: it bypasses the read cache and goes to
    /// the Web API, never to a copy that lags.
    pub fn fresh(mut self) -> Self {
        self.cacheable = false;
        self.consistency = Consistency::Current;
        self
    }
}

pub struct HttpClient {
    inner: Client<HttpsConnector<HttpConnector>, RequestBody>,
    /// Uploads to a storage URL on another host than the API's: through the address guard.
    storage: Client<HttpsConnector<GuardedConnector>, RequestBody>,
    base: String,
    api_key: Option<ApiKey>,
    user_agent: HeaderValue,
    retry: RetryPolicy,
    timeout: Duration,
    /// `Backoff` from any answer holds back every request to this API.
    gate: Gate,
    /// The requests this API has in flight; a burst queues here, in order.
    in_flight: InFlight,
    /// The same for uploads to the storage host (another host than the API's).
    uploads: InFlight,
    cache: Option<ReadCache>,
}

impl HttpClient {
    /// The Web API's client (`ZOTERO_API_BASE`, with the key).
    pub fn new(config: &ClientConfig) -> Result<Arc<Self>, ZoteroError> {
        Self::build(config, &config.api_base, config.api_key.clone())
    }

    /// The desktop app's local API client: no key ever goes there.
    pub fn new_local(config: &ClientConfig, base: &str) -> Result<Arc<Self>, ZoteroError> {
        Self::build(config, base, None)
    }

    /// A client of another Zotero host that takes no API key (zotero.org's OAuth endpoints).
    pub fn new_keyless(config: &ClientConfig, base: &str) -> Result<Arc<Self>, ZoteroError> {
        Self::build(config, base, None)
    }

    fn build(
        config: &ClientConfig,
        base: &str,
        api_key: Option<ApiKey>,
    ) -> Result<Arc<Self>, ZoteroError> {
        let mut http = HttpConnector::new();
        // The HTTPS connector checks the scheme, not the plain one.
        http.enforce_http(false);
        let https = https_connector(http).map_err(|e| ZoteroError::Network {
            base: base.to_string(),
            reason: e.to_string(),
        })?;
        let inner = pooled_client().build(https);
        let guarded =
            guarded_https_connector(config.storage_policy, config.timeout).map_err(|e| {
                ZoteroError::Network {
                    base: base.to_string(),
                    reason: e.to_string(),
                }
            })?;
        Ok(Arc::new(Self {
            inner,
            storage: pooled_client().build(guarded),
            base: base.to_string(),
            api_key,
            user_agent: user_agent(),
            retry: config.retry.clone(),
            timeout: config.timeout,
            gate: Gate::default(),
            in_flight: InFlight::default(),
            uploads: InFlight::default(),
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

        let retry = Retry {
            policy: &self.retry,
            gate: Some(&self.gate),
            repeatable: req.repeatable,
            cancel,
        };
        let outcome = retry
            .run(|attempt| async move {
                let retries = attempt - 1;
                // Waiting for a place is not part of the request's time; between attempts
                // the place is given back, so a retry's wait holds nobody up.
                let _place = match self.in_flight.acquire(cancel).await {
                    Ok(place) => place,
                    Err(_) => return Attempt::Fatal(ZoteroError::Cancelled),
                };
                let started = Instant::now();
                let sent = tokio::time::timeout(self.timeout, self.send_once(req)).await;
                let latency_ms = started.elapsed().as_millis() as u64;
                let failure = match sent {
                    Ok(Ok(resp)) => {
                        if let Some(secs) = self.gate.note(&resp.headers) {
                            tracing::info!(backoff_secs = secs, "zotero asked to back off");
                        }
                        tracing::info!(
                            method = %req.method, path = %req.path, status = resp.status,
                            latency_ms, retries, "upstream"
                        );
                        return Attempt::judge(
                            resp.status,
                            retry_after(&resp.headers, SystemTime::now()),
                            resp,
                        );
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
                Attempt::Failed(failure)
            })
            .await;
        let resp = match outcome {
            Ok((mut resp, retries)) => {
                resp.retries = retries;
                resp
            }
            Err(e) => return Err(self.gave_up(e)),
        };
        if cacheable && resp.status == 200 {
            if let Some(cache) = &self.cache {
                cache.put(req.path.clone(), resp.clone());
            }
        }
        Ok(resp)
    }

    /// The error for a request the retry loop gave up on.
    pub(crate) fn gave_up(&self, e: RetryError<ApiResponse, ZoteroError>) -> ZoteroError {
        match e {
            RetryError::Failed(e) => e,
            RetryError::Cancelled => ZoteroError::Cancelled,
            RetryError::WaitTooLong { wait, answer } => ZoteroError::WaitTooLong {
                wait_secs: ceil_secs(wait),
                max_wait_secs: ceil_secs(self.retry.max_wait),
                answer: answer.map(|a| a.answer()),
            },
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
                HeaderValue::from_str(key.expose()).map_err(|_| ZoteroError::BadApiKey)?;
            value.set_sensitive(true);
            builder = builder.header("Zotero-API-Key", value);
        }
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        let body: RequestBody = match &req.body {
            Some((content_type, bytes)) => {
                builder = builder.header(CONTENT_TYPE, *content_type);
                full_body(bytes.clone())
            }
            None => full_body(Bytes::new()),
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
        read_answer(response, host).await
    }

    /// The base URL requests go to.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// How long this API's `Backoff` still holds requests back.
    pub fn backoff_remaining(&self) -> Duration {
        self.gate.remaining()
    }

    /// How many requests to this API are in flight now (for tests and logs).
    pub fn in_flight(&self) -> usize {
        self.in_flight.taken()
    }

    /// Empties the read cache (after any write).
    pub fn invalidate_cache(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }
}

/// Reads a whole answer (up to `MAX_RESPONSE_BYTES`); failures name `host`.
async fn read_answer(
    response: hyper::Response<hyper::body::Incoming>,
    host: &str,
) -> Result<ApiResponse, ZoteroError> {
    let (parts, body) = response.into_parts();
    let body = Limited::new(body, MAX_RESPONSE_BYTES)
        .collect()
        .await
        .map_err(|e| ZoteroError::Network {
            base: host.to_string(),
            reason: ErrorChain(e.as_ref()).to_string(),
        })?
        .to_bytes();
    Ok(ApiResponse {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
        retries: 0,
    })
}
