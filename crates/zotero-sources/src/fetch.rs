//! `file_url` (and arXiv) downloads: a separate hyper client with no Zotero key, the SSRF
//! guard, bounded redirects, the size limit before and while reading, and spooling to an
//! unlinked temp file (or memory when the temp directory cannot be used) while hashing.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Empty};
use hyper::header::{
    ACCEPT, CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, USER_AGENT,
};
use hyper::{Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use md5::{Digest, Md5};
use tokio_util::sync::CancellationToken;

use super::error::SourceError;
use super::guard::{self, AddressPolicy, GuardedConnector};
use super::names;
use super::store::{self, Storage};
use super::weburl;
use crate::SourcesConfig;
use zotero_net::{guarded_https_connector, pooled_client, user_agent, ErrorChain, InFlight};

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;

/// Spooled bytes are written to the temp file in pieces of this size.
const SPOOL_WRITE: usize = 256 * 1024;

type FetchClient = Client<HttpsConnector<GuardedConnector>, Empty<Bytes>>;

pub(crate) struct Downloader {
    client: FetchClient,
    /// The downloads in flight: a burst of calls queues here in order, a socket each at most.
    in_flight: InFlight,
    policy: AddressPolicy,
    timeout: Duration,
    /// `ZOTERO_UPLOAD_MAX_BYTES`, for every source (`Fetcher` reads it here too).
    pub(super) max_bytes: u64,
    temp_dir: PathBuf,
}

/// A finished download.
pub(crate) struct Downloaded {
    pub storage: Storage,
    pub size: u64,
    pub md5: String,
    pub final_url: Uri,
    /// The response's media type, if it sent a well-formed one.
    pub content_type: Option<String>,
    /// The file name `Content-Disposition` suggests, sanitized.
    pub disposition_name: Option<String>,
}

impl Downloader {
    pub fn new(config: &SourcesConfig) -> Result<Self, SourceError> {
        Self::with_policy(config, config.policy)
    }

    pub fn with_policy(config: &SourcesConfig, policy: AddressPolicy) -> Result<Self, SourceError> {
        let https =
            guarded_https_connector(policy, config.timeout).map_err(|e| SourceError::Internal {
                reason: e.to_string(),
            })?;
        let client = pooled_client().build(https);
        Ok(Self {
            client,
            in_flight: InFlight::default(),
            policy,
            timeout: config.timeout,
            max_bytes: config.max_bytes,
            temp_dir: config.temp_dir.clone(),
        })
    }

    /// Fetches `url`, following redirects; the body is hashed and spooled as it arrives.
    /// The timeout applies to each request until its answer's head, and then to every wait
    /// for the next piece of the body (a slow but steady download is not cut off).
    pub async fn download(
        &self,
        url: &str,
        field: &'static str,
        require_pdf: bool,
        cancel: &CancellationToken,
    ) -> Result<Downloaded, SourceError> {
        let mut current = weburl::parse(url).map_err(|reason| SourceError::InvalidUrl {
            field,
            reason: reason.to_string(),
        })?;
        let mut redirects = 0usize;
        // The place is held for the whole download, its redirects and body included.
        let _place = self
            .in_flight
            .acquire(cancel)
            .await
            .map_err(|_| SourceError::Cancelled)?;
        loop {
            let host = weburl::host_of(&current);
            self.check_literal(&host, field)?;
            let request = Request::get(current.clone())
                .header(USER_AGENT, user_agent())
                .header(ACCEPT, "*/*")
                .body(Empty::new())
                .map_err(|e| SourceError::InvalidUrl {
                    field,
                    reason: e.to_string(),
                })?;
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(SourceError::Cancelled),
                r = tokio::time::timeout(self.timeout, self.client.request(request)) => r,
            };
            let response = match outcome {
                Err(_elapsed) => {
                    return Err(SourceError::Timeout {
                        host,
                        secs: self.timeout.as_secs_f64(),
                    })
                }
                Ok(Err(e)) => return Err(self.connect_error(&e, host, field)),
                Ok(Ok(response)) => response,
            };
            let status = response.status();
            if is_redirect(status) {
                if let Some(location) = response.headers().get(LOCATION) {
                    if redirects >= MAX_REDIRECTS {
                        return Err(SourceError::TooManyRedirects {
                            max: MAX_REDIRECTS,
                            url: weburl::without_query(&current),
                            host,
                        });
                    }
                    let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
                    current = weburl::resolve(&current, &location).map_err(|reason| {
                        SourceError::BadRedirect {
                            url: weburl::without_query(&current),
                            host: host.clone(),
                            reason: reason.to_string(),
                        }
                    })?;
                    redirects += 1;
                    continue;
                }
            }
            if !status.is_success() {
                return Err(SourceError::RemoteStatus {
                    status: status.as_u16(),
                    url: weburl::without_query(&current),
                    host,
                });
            }
            let downloaded = self
                .receive(response, current, field, require_pdf, cancel)
                .await?;
            tracing::info!(
                host = %weburl::host_of(&downloaded.final_url),
                size = downloaded.size,
                redirects,
                storage = downloaded.storage.kind(),
                "file_url downloaded"
            );
            return Ok(downloaded);
        }
    }

    fn check_literal(&self, host: &str, field: &'static str) -> Result<(), SourceError> {
        match guard::literal_ip(host) {
            Some(ip) => match self.policy.refuses(ip) {
                Some(reason) => Err(SourceError::Forbidden {
                    field,
                    host: host.to_string(),
                    ip: ip.to_string(),
                    reason,
                }),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    fn connect_error(
        &self,
        e: &hyper_util::client::legacy::Error,
        host: String,
        field: &'static str,
    ) -> SourceError {
        if let Some(forbidden) = guard::find_forbidden(e) {
            return SourceError::Forbidden {
                field,
                host: forbidden.host.clone(),
                ip: forbidden.ip.to_string(),
                reason: forbidden.reason,
            };
        }
        SourceError::Network {
            host,
            reason: ErrorChain(e).to_string(),
        }
    }

    async fn receive(
        &self,
        response: hyper::Response<hyper::body::Incoming>,
        url: Uri,
        field: &'static str,
        require_pdf: bool,
        cancel: &CancellationToken,
    ) -> Result<Downloaded, SourceError> {
        let host = weburl::host_of(&url);
        let headers = response.headers();
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(size) = declared.filter(|&s| s > self.max_bytes) {
            return Err(SourceError::TooLarge {
                field,
                size: Some(size),
                max_bytes: self.max_bytes,
            });
        }
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(names::media_type);
        let disposition_name = headers
            .get(CONTENT_DISPOSITION)
            .and_then(|v| names::content_disposition_filename(v.as_bytes()));
        let not_pdf = || SourceError::NotPdf {
            field,
            content_type: content_type
                .clone()
                .unwrap_or_else(|| "not given".to_string()),
            url: weburl::without_query(&url),
        };

        let mut sink = Sink::open(&self.temp_dir).await;
        let mut body = response.into_body();
        let mut hasher = Md5::new();
        let mut head: Vec<u8> = Vec::with_capacity(5);
        let mut size: u64 = 0;
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(SourceError::Cancelled),
                r = tokio::time::timeout(self.timeout, body.frame()) => r,
            };
            let frame = match next {
                Err(_elapsed) => {
                    return Err(SourceError::Timeout {
                        host,
                        secs: self.timeout.as_secs_f64(),
                    })
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(SourceError::Network {
                        host,
                        reason: format!("the download broke off: {}", ErrorChain(&e)),
                    })
                }
                Ok(Some(Ok(frame))) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            size += data.len() as u64;
            if size > self.max_bytes {
                return Err(SourceError::TooLarge {
                    field,
                    size: None,
                    max_bytes: self.max_bytes,
                });
            }
            if require_pdf && head.len() < 5 {
                head.extend(data.iter().take(5usize.saturating_sub(head.len())));
                if head.len() == 5 && head != b"%PDF-" {
                    return Err(not_pdf());
                }
            }
            hasher.update(&data);
            sink.push(data).await?;
        }
        if require_pdf && head != b"%PDF-" {
            return Err(not_pdf());
        }
        let storage = sink.finish().await?;
        Ok(Downloaded {
            storage,
            size,
            md5: format!("{:x}", hasher.finalize()),
            final_url: url,
            content_type,
            disposition_name,
        })
    }
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// Where downloaded bytes go: an unlinked temp file, or memory when there is none.
enum Sink {
    File {
        file: Arc<std::fs::File>,
        written: u64,
        pending: BytesMut,
    },
    Memory(BytesMut),
}

impl Sink {
    async fn open(dir: &std::path::Path) -> Sink {
        let dir = dir.to_path_buf();
        let created = tokio::task::spawn_blocking(move || store::create_spool(&dir)).await;
        match created {
            Ok(Ok(file)) => Sink::File {
                file: Arc::new(file),
                written: 0,
                pending: BytesMut::new(),
            },
            Ok(Err(e)) => {
                store::warn_memory_fallback(&e);
                Sink::Memory(BytesMut::new())
            }
            Err(e) => {
                store::warn_memory_fallback(&io::Error::other(e.to_string()));
                Sink::Memory(BytesMut::new())
            }
        }
    }

    async fn push(&mut self, data: Bytes) -> Result<(), SourceError> {
        match self {
            Sink::Memory(buf) => buf.extend_from_slice(&data),
            Sink::File { pending, .. } => {
                pending.extend_from_slice(&data);
                if pending.len() >= SPOOL_WRITE {
                    self.flush().await?;
                }
            }
        }
        Ok(())
    }

    /// Writes what is pending; if the temp file fails (disk full), moves everything to
    /// memory and goes on there.
    async fn flush(&mut self) -> Result<(), SourceError> {
        let Sink::File {
            file,
            written,
            pending,
        } = self
        else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        let chunk = pending.split().freeze();
        let (f, offset) = (file.clone(), *written);
        let to_write = chunk.clone();
        let result =
            tokio::task::spawn_blocking(move || store::write_all_at(&f, &to_write, offset))
                .await
                .map_err(|e| io::Error::other(e.to_string()))
                .and_then(|r| r);
        match result {
            Ok(()) => {
                *written += chunk.len() as u64;
                Ok(())
            }
            Err(e) => {
                store::warn_memory_fallback(&e);
                let (f, len) = (file.clone(), *written);
                let earlier = tokio::task::spawn_blocking(move || {
                    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
                    store::read_full_at(&f, &mut buf, 0).map(|n| {
                        buf.truncate(n);
                        buf
                    })
                })
                .await
                .map_err(|e| io::Error::other(e.to_string()))
                .and_then(|r| r)
                .map_err(|e| SourceError::Internal {
                    reason: format!("the temp file of a download could not be read back: {e}"),
                })?;
                let mut memory = BytesMut::from(earlier.as_slice());
                memory.extend_from_slice(&chunk);
                *self = Sink::Memory(memory);
                Ok(())
            }
        }
    }

    async fn finish(mut self) -> Result<Storage, SourceError> {
        self.flush().await?;
        Ok(match self {
            Sink::File { file, .. } => Storage::Spool(file),
            Sink::Memory(buf) => Storage::Memory(buf.freeze()),
        })
    }
}
