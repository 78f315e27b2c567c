//! Streamed uploads to the storage URL of an upload authorization: a fresh body for each
//! attempt, no API key and no Zotero headers, and a stall timeout instead of a total one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{CONTENT_TYPE, USER_AGENT};
use hyper::{Method, Request};
use tokio_util::sync::CancellationToken;

use super::{retry_after, sleep, ApiResponse, HttpClient, RequestBody};
use crate::zotero::error::ZoteroError;

/// The bytes of an upload body, in chunks.
pub type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// A streamed upload to a URL outside the API (the storage URL of an upload
/// authorization): no API key and no Zotero headers go there.
pub struct UploadRequest<'a> {
    pub url: &'a str,
    pub content_type: &'a str,
    /// The exact length of the body; sent as `Content-Length`.
    pub content_length: u64,
    /// A fresh body for each attempt.
    pub body: &'a (dyn Fn() -> Result<ByteStream, std::io::Error> + Send + Sync),
}

impl HttpClient {
    /// Sends a streamed upload, retrying (with a fresh body) what failed on the way or
    /// answered 429/5xx. There is no total timeout, since a big file takes as long as it
    /// takes: the attempt fails when nothing moved (no chunk sent, no answer) for the
    /// configured timeout. An error from the body itself (the file changed) is not retried.
    pub async fn send_upload(
        &self,
        req: &UploadRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let host = host_of(req.url);
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let retries = attempt - 1;
            let watch = Arc::new(Activity::new());
            let started = Instant::now();
            let body = (req.body)().map_err(|e| ZoteroError::Source {
                reason: e.to_string(),
            })?;
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ZoteroError::Cancelled),
                _ = watch.stalled(self.timeout) => Err(ZoteroError::Timeout {
                    secs: self.timeout.as_secs_f64(),
                }),
                r = self.upload_once(req, body, watch.clone()) => r,
            };
            let latency_ms = started.elapsed().as_millis() as u64;
            if let Some(reason) = watch.source_error() {
                return Err(ZoteroError::Source { reason });
            }
            let may_retry = attempt < self.retry.max_attempts;
            let failure = match outcome {
                Ok(mut resp) => {
                    resp.retries = retries;
                    tracing::info!(
                        method = "POST", host = %host, status = resp.status,
                        bytes = req.content_length, latency_ms, retries, "storage upload"
                    );
                    if (resp.status == 429 || resp.status >= 500) && may_retry {
                        let wait = retry_after(&resp.headers, SystemTime::now())
                            .unwrap_or_else(|| self.backoff_delay(attempt));
                        if wait > self.retry.max_wait {
                            return Ok(resp);
                        }
                        sleep(wait, cancel).await?;
                        continue;
                    }
                    return Ok(resp);
                }
                Err(e) => e,
            };
            tracing::warn!(
                method = "POST", host = %host, latency_ms, retries, error = %failure,
                "storage upload failed"
            );
            if !may_retry {
                return Err(failure);
            }
            sleep(self.backoff_delay(attempt), cancel).await?;
        }
    }

    async fn upload_once(
        &self,
        req: &UploadRequest<'_>,
        body: ByteStream,
        watch: Arc<Activity>,
    ) -> Result<ApiResponse, ZoteroError> {
        use futures_util::StreamExt;
        let tracker = watch.clone();
        let frames = body.map(move |chunk| {
            tracker.touch();
            match chunk {
                Ok(bytes) => Ok(hyper::body::Frame::data(bytes)),
                Err(e) => {
                    tracker.fail(e.to_string());
                    Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
                }
            }
        });
        let body: RequestBody = BodyExt::boxed_unsync(http_body_util::StreamBody::new(frames));
        let request = Request::builder()
            .method(Method::POST)
            .uri(req.url)
            .header(USER_AGENT, self.user_agent.clone())
            .header(CONTENT_TYPE, req.content_type)
            .header(hyper::header::CONTENT_LENGTH, req.content_length)
            .body(body)
            .map_err(|e| ZoteroError::InvalidRequest {
                reason: format!("cannot build the upload request: {e}"),
            })?;
        self.exchange(request, &host_of(req.url), || watch.touch())
            .await
    }
}

/// When an upload last made progress, and whether its body failed.
struct Activity {
    origin: Instant,
    last_ms: std::sync::atomic::AtomicU64,
    source_error: Mutex<Option<String>>,
}

impl Activity {
    fn new() -> Self {
        Self {
            origin: Instant::now(),
            last_ms: std::sync::atomic::AtomicU64::new(0),
            source_error: Mutex::new(None),
        }
    }

    fn touch(&self) {
        let now = self.origin.elapsed().as_millis() as u64;
        self.last_ms
            .store(now, std::sync::atomic::Ordering::Relaxed);
    }

    fn fail(&self, reason: String) {
        let mut slot = self.source_error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(reason);
    }

    fn source_error(&self) -> Option<String> {
        self.source_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Resolves once nothing has happened for `limit`.
    async fn stalled(&self, limit: Duration) {
        loop {
            let last =
                Duration::from_millis(self.last_ms.load(std::sync::atomic::Ordering::Relaxed));
            let idle = self.origin.elapsed().saturating_sub(last);
            if idle >= limit {
                return;
            }
            tokio::time::sleep((limit - idle).max(Duration::from_millis(50))).await;
        }
    }
}

/// `scheme://host[:port]` of a URL, for logs and errors (never the path or query, which
/// for a storage URL may carry signatures).
pub fn host_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or(host);
    format!("{scheme}://{host}")
}
