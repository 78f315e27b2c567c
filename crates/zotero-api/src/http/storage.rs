//! Streamed uploads to the storage URL of an upload authorization: a fresh body for each
//! attempt, no API key and no Zotero headers, and a stall timeout instead of a total one; a
//! URL on another host than the API's passes the address guard of outside requests.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use http_body_util::BodyExt;
use hyper::header::{CONTENT_TYPE, USER_AGENT};
use hyper::{Method, Request};
use tokio_util::sync::CancellationToken;

use zotero_net::{retry_after, Attempt, ByteStream, RequestBody, Retry, RetryError};

use super::{ApiResponse, HttpClient};
use crate::error::ZoteroError;

/// A streamed upload to a URL outside the API (the storage URL of an upload
/// authorization): no API key and no Zotero headers go there.
pub struct UploadRequest<'a> {
    pub url: &'a str,
    pub content_type: &'a str,
    /// The exact length of the body; sent as `Content-Length`.
    pub content_length: u64,
    /// A fresh body for each attempt.
    pub body: &'a (dyn Fn() -> Result<ByteStream, std::io::Error> + Send + Sync),
    /// Zotero 10's upload receiver: the `Zotero-Server-ID` (a wrong one is refused; builds
    /// before 10.0.0 required it). `None` for the web's storage.
    pub server_id: Option<&'a str>,
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
        let retry = Retry {
            policy: &self.retry,
            // The storage host is not the API: the API's Backoff does not hold it back.
            gate: None,
            repeatable: true,
            cancel,
        };
        let host = &host;
        let outcome = retry
            .run(|attempt| async move {
                let retries = attempt - 1;
                let _place = match self.uploads.acquire(cancel).await {
                    Ok(place) => place,
                    Err(_) => return Attempt::Fatal(ZoteroError::Cancelled),
                };
                let watch = Arc::new(Activity::new());
                let started = Instant::now();
                let body = match (req.body)() {
                    Ok(body) => body,
                    Err(e) => {
                        return Attempt::Fatal(ZoteroError::Source {
                            reason: e.to_string(),
                        })
                    }
                };
                let outcome = tokio::select! {
                    biased;
                    _ = watch.stalled(self.timeout) => Err(ZoteroError::Timeout {
                        secs: self.timeout.as_secs_f64(),
                    }),
                    r = self.upload_once(req, body, watch.clone()) => r,
                };
                let latency_ms = started.elapsed().as_millis() as u64;
                // The file changed or could not be read: sending it again cannot help.
                if let Some(reason) = watch.source_error() {
                    return Attempt::Fatal(ZoteroError::Source { reason });
                }
                match outcome {
                    Ok(resp) => {
                        tracing::info!(
                            method = "POST", host = %host, status = resp.status,
                            bytes = req.content_length, latency_ms, retries, "storage upload"
                        );
                        Attempt::judge(
                            resp.status,
                            retry_after(&resp.headers, SystemTime::now()),
                            resp,
                        )
                    }
                    Err(failure @ ZoteroError::StorageAddressRefused { .. }) => {
                        tracing::warn!(host = %host, error = %failure, "storage upload refused");
                        Attempt::Fatal(failure)
                    }
                    Err(failure) => {
                        tracing::warn!(
                            method = "POST", host = %host, latency_ms, retries,
                            error = %failure, "storage upload failed"
                        );
                        Attempt::Failed(failure)
                    }
                }
            })
            .await;
        match outcome {
            Ok((mut resp, retries)) => {
                resp.retries = retries;
                Ok(resp)
            }
            // The storage's own answer (a 429/503 asking for a long wait) tells the caller
            // more than a wait of ours would.
            Err(RetryError::WaitTooLong {
                answer: Some(resp), ..
            }) => Ok(resp),
            Err(e) => Err(self.gave_up(e)),
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
        let mut builder = Request::builder()
            .method(Method::POST)
            .uri(req.url)
            .header(USER_AGENT, self.user_agent.clone())
            .header(CONTENT_TYPE, req.content_type)
            .header(hyper::header::CONTENT_LENGTH, req.content_length);
        if let Some(id) = req.server_id {
            builder = builder.header("zotero-server-id", id);
        }
        let request = builder
            .body(body)
            .map_err(|e| ZoteroError::InvalidRequest {
                reason: format!("cannot build the upload request: {e}"),
            })?;
        let host = host_of(req.url);
        if host == host_of(&self.base) {
            // The API's own host (the desktop's receiver, a self-hosted server): trusted as
            // the API is.
            return self.exchange(request, &host, || watch.touch()).await;
        }
        let response = self.storage.request(request).await.map_err(|e| {
            match zotero_net::find_forbidden(&e) {
                // Refused before connecting: the host and why, never the URL's path or query.
                Some(f) => ZoteroError::StorageAddressRefused {
                    reason: f.to_string(),
                },
                None => ZoteroError::Network {
                    base: host.clone(),
                    reason: zotero_net::ErrorChain(&e).to_string(),
                },
            }
        })?;
        watch.touch();
        super::read_answer(response, &host).await
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
        let mut slot = zotero_net::lock(&self.source_error);
        slot.get_or_insert(reason);
    }

    fn source_error(&self) -> Option<String> {
        zotero_net::lock(&self.source_error).clone()
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
