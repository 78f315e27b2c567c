//! Downloads from the storage host an attachment's `/file` redirects to (zotero.org's S3):
//! no API key and no Zotero headers go there, the body is streamed against a bound on its
//! size (never read unbounded), and an attempt fails when nothing arrives for the timeout.

use std::time::{Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::header::USER_AGENT;
use hyper::{Method, Request};
use tokio_util::sync::CancellationToken;
use zotero_net::{full_body, retry_after, Attempt, ErrorChain, Retry, RetryError};

use super::{host_of, ApiResponse, HttpClient};
use crate::error::{FileUnavailable, ZoteroError};

impl HttpClient {
    /// GETs `url` (a storage URL, never the API) for the file of attachment `key`, reading at
    /// most `limit` bytes: more is [`FileUnavailable::TooLarge`]. Any HTTP answer comes back
    /// (an error answer's body cut to 8 KiB); 429/5xx and lost answers are tried again.
    pub async fn download(
        &self,
        url: &str,
        key: &str,
        limit: u64,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let host = host_of(url);
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
                let started = Instant::now();
                let outcome = self.download_once(url, host, key, limit).await;
                let latency_ms = started.elapsed().as_millis() as u64;
                match outcome {
                    Ok(resp) => {
                        // The path and query of a storage URL carry signatures: host only.
                        tracing::info!(
                            method = "GET", host = %host, status = resp.status,
                            bytes = resp.body.len(), latency_ms, retries, "storage download"
                        );
                        Attempt::judge(
                            resp.status,
                            retry_after(&resp.headers, SystemTime::now()),
                            resp,
                        )
                    }
                    // Too large, or an address the guard refuses: asking again changes nothing.
                    Err(
                        e @ (ZoteroError::FileUnavailable { .. }
                        | ZoteroError::StorageAddressRefused { .. }),
                    ) => Attempt::Fatal(e),
                    Err(failure) => {
                        tracing::warn!(
                            method = "GET", host = %host, latency_ms, retries,
                            error = %failure, "storage download failed"
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
            Err(RetryError::WaitTooLong {
                answer: Some(resp), ..
            }) => Ok(resp),
            Err(e) => Err(self.gave_up(e)),
        }
    }

    async fn download_once(
        &self,
        url: &str,
        host: &str,
        key: &str,
        limit: u64,
    ) -> Result<ApiResponse, ZoteroError> {
        let network = |e: &dyn std::fmt::Display| ZoteroError::Network {
            base: host.to_string(),
            reason: e.to_string(),
        };
        let too_large = || ZoteroError::FileUnavailable {
            key: key.to_string(),
            why: FileUnavailable::TooLarge { limit },
        };
        // No key, no Zotero headers: only what any HTTP client sends.
        let request = Request::builder()
            .method(Method::GET)
            .uri(url)
            .header(USER_AGENT, self.user_agent.clone())
            .body(full_body(Bytes::new()))
            .map_err(|e| ZoteroError::InvalidRequest {
                reason: format!("cannot build the download request: {e}"),
            })?;
        // The storage host Zotero redirects to passes the address guard of outside requests,
        // as an upload's storage URL does; the API's own host is trusted as the API is.
        let pending = if host_of(url) == host_of(&self.base) {
            self.inner.request(request)
        } else {
            self.storage.request(request)
        };
        let response = tokio::time::timeout(self.timeout, pending)
            .await
            .map_err(|_| ZoteroError::Timeout {
                secs: self.timeout.as_secs_f64(),
            })?
            .map_err(|e| match zotero_net::find_forbidden(&e) {
                // Refused before connecting: the host and why, never the URL's path or query.
                Some(f) => ZoteroError::StorageAddressRefused {
                    reason: f.to_string(),
                },
                None => network(&ErrorChain(&e)),
            })?;
        let (parts, mut body) = response.into_parts();
        let ok = parts.status.is_success();
        // An error answer is read only far enough to name it.
        let cap = if ok { limit } else { 8 * 1024 };
        let declared = parts
            .headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if ok && declared.is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        let mut bytes = BytesMut::new();
        loop {
            let frame = tokio::time::timeout(self.timeout, body.frame())
                .await
                .map_err(|_| ZoteroError::Timeout {
                    secs: self.timeout.as_secs_f64(),
                })?;
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| network(&ErrorChain(&e)))?;
            if let Ok(data) = frame.into_data() {
                if (bytes.len() + data.len()) as u64 > cap {
                    if ok {
                        return Err(too_large());
                    }
                    break;
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok(ApiResponse {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: bytes.freeze(),
            retries: 0,
        })
    }
}
