//! Downloading one file into the cache: streamed to `blobs/{etag}.incomplete`, resumed with
//! `Range`, verified against its name (sha256 or git blob sha1), fsynced, renamed, linked.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use http_body_util::BodyExt;
use hyper::header::{CONTENT_RANGE, LOCATION};
use hyper::{Method, StatusCode};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncSeekExt, AsyncWriteExt};
use zotero_net::ErrorChain;

use crate::cache::{Job, ModelCache};
use crate::error::{io_err, ModelCacheError, Result, MAX_REDIRECTS};
use crate::http::{header, host_of, resolve, shown, shown_duration, FileMeta};
use crate::layout::{link_snapshot, lock, sync_dir};
use crate::model_dir::hex;

/// Attempts of one download in a row that bring no new byte before giving up (as
/// `huggingface_hub`'s `http_get`).
const MAX_STALLED_ATTEMPTS: u32 = 5;

/// How a blob is checked: by its name, which is its hash.
pub(crate) enum Check {
    Sha256(Sha256),
    GitSha1(Sha1),
    /// An ETag of another form: only the size is checked.
    Size,
}

impl Check {
    pub(crate) fn new(etag: &str, size: u64) -> Check {
        let hex = etag.bytes().all(|b| b.is_ascii_hexdigit());
        match etag.len() {
            64 if hex => Check::Sha256(Sha256::new()),
            40 if hex => {
                let mut h = Sha1::new();
                h.update(format!("blob {size}\0").as_bytes());
                Check::GitSha1(h)
            }
            _ => Check::Size,
        }
    }
    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            Check::Sha256(h) => h.update(data),
            Check::GitSha1(h) => h.update(data),
            Check::Size => {}
        }
    }
    /// (algorithm, hex digest) when there is one.
    pub(crate) fn finish(self) -> Option<(&'static str, String)> {
        match self {
            Check::Sha256(h) => Some(("sha256", hex(&h.finalize()))),
            Check::GitSha1(h) => Some(("git blob sha1", hex(&h.finalize()))),
            Check::Size => None,
        }
    }
}

enum Fetched {
    Done,
    /// The server ignored `Range` or refused it: start over.
    Restart,
}

impl ModelCache {
    /// Puts `file` in the snapshot: its blob downloaded unless present, then the link.
    pub(crate) async fn fetch_file(
        &self,
        job: &Job<'_>,
        file: &str,
        meta: &FileMeta,
    ) -> Result<()> {
        let blobs = job.repo_dir.join("blobs");
        fs::create_dir_all(&blobs).map_err(io_err("cannot create", &blobs))?;
        self.tag_cache();
        let blob = blobs.join(&meta.etag);
        let lock_path = self
            .config
            .cache_dir
            .join(".locks")
            .join(job.repo_dir.file_name().unwrap_or_default())
            .join(format!("{}.lock", meta.etag));
        let _lock = lock(&lock_path, job.cancel, job.id).await?;
        if !blob.is_file() {
            self.download(job, file, meta, &blob).await?;
        }
        link_snapshot(&job.repo_dir, &meta.commit, file, &meta.etag)
    }

    fn tag_cache(&self) {
        let tag = self.config.cache_dir.join("CACHEDIR.TAG");
        if !tag.exists() {
            // What huggingface_hub writes, so that backup tools skip the cache.
            let _ = fs::write(
                &tag,
                "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by huggingface_hub.\n# For information about cache directory tags, see:\n#\thttps://bford.info/cachedir/\n",
            );
        }
    }

    /// Downloads a blob (the lock held): resumes `{blob}.incomplete`, verifies, renames.
    pub(crate) async fn download(
        &self,
        job: &Job<'_>,
        file: &str,
        meta: &FileMeta,
        blob: &Path,
    ) -> Result<()> {
        let partial = blob.with_file_name(format!("{}.incomplete", meta.etag));
        let mut have = fs::metadata(&partial).map(|m| m.len()).unwrap_or(0);
        if have > meta.size {
            have = 0;
        }
        let out = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .mode(0o644)
            .open(&partial)
            .map_err(io_err("cannot write", &partial))?;
        out.set_len(have)
            .map_err(io_err("cannot write", &partial))?;
        // Seed the check with the bytes a previous run left.
        let mut check = Check::new(&meta.etag, meta.size);
        if have > 0 {
            let p = partial.clone();
            let seeded = tokio::task::spawn_blocking(move || -> io::Result<Check> {
                let mut f = File::open(&p)?;
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = f.read(&mut buf)?;
                    if n == 0 {
                        return Ok(check);
                    }
                    check.update(buf.get(..n).unwrap_or_default());
                }
            })
            .await
            .map_err(|e| io::Error::other(e.to_string()))
            .and_then(|r| r)
            .map_err(io_err("cannot read", &partial))?;
            check = seeded;
            tracing::info!(model = job.id, file, from = have, "resuming a download");
        }
        let mut out = tokio::fs::File::from_std(out);
        out.seek(io::SeekFrom::Start(have))
            .await
            .map_err(io_err("cannot write", &partial))?;
        (job.progress)(file, have, meta.size);

        let mut stalled = 0u32;
        while have < meta.size {
            let before = have;
            match self
                .fetch_body(job, file, meta, &partial, &mut out, &mut have, &mut check)
                .await
            {
                Ok(Fetched::Done) => {}
                Ok(Fetched::Restart) => {
                    have = 0;
                    check = Check::new(&meta.etag, meta.size);
                    out.set_len(0)
                        .await
                        .map_err(io_err("cannot write", &partial))?;
                    out.seek(io::SeekFrom::Start(0))
                        .await
                        .map_err(io_err("cannot write", &partial))?;
                    (job.progress)(file, 0, meta.size);
                    stalled += 1;
                }
                Err(ModelCacheError::Network {
                    reason,
                    host,
                    model,
                }) => {
                    // A download broken off: resume from what arrived, a few times.
                    out.flush()
                        .await
                        .map_err(io_err("cannot write", &partial))?;
                    stalled = if have > before { 0 } else { stalled + 1 };
                    if stalled >= MAX_STALLED_ATTEMPTS {
                        return Err(ModelCacheError::Network {
                            model,
                            host,
                            reason,
                        });
                    }
                    tracing::warn!(model = job.id, file, at = have, %reason, "download interrupted; resuming");
                    zotero_net::sleep(self.config.retry.delay(stalled.max(1)), job.cancel)
                        .await
                        .map_err(|_| ModelCacheError::Cancelled {
                            model: job.id.to_string(),
                        })?;
                }
                Err(e @ ModelCacheError::Cancelled { .. }) => {
                    // Keep what arrived for the next run.
                    let _ = out.flush().await;
                    let _ = out.sync_all().await;
                    return Err(e);
                }
                Err(e @ ModelCacheError::SizeMismatch { .. }) => {
                    drop(out);
                    let _ = fs::remove_file(&partial);
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
            if stalled >= MAX_STALLED_ATTEMPTS {
                return Err(ModelCacheError::Network {
                    model: job.id.to_string(),
                    host: host_of(&meta.location),
                    reason: "the download keeps starting over".to_string(),
                });
            }
        }
        out.flush()
            .await
            .map_err(io_err("cannot write", &partial))?;
        out.sync_all()
            .await
            .map_err(io_err("cannot write", &partial))?;
        drop(out);
        if let Some((algorithm, actual)) = check.finish() {
            if actual != meta.etag {
                let _ = fs::remove_file(&partial);
                return Err(ModelCacheError::HashMismatch {
                    model: job.id.to_string(),
                    file: file.to_string(),
                    algorithm,
                    expected: meta.etag.clone(),
                    actual,
                });
            }
        }
        // A shared cache, as Python's: readable by all whatever the umask of the writer.
        fs::set_permissions(&partial, fs::Permissions::from_mode(0o644))
            .map_err(io_err("cannot set permissions of", &partial))?;
        fs::rename(&partial, blob).map_err(io_err("cannot write", blob))?;
        if let Some(dir) = blob.parent() {
            sync_dir(dir);
        }
        Ok(())
    }

    /// One GET of the rest of a blob (from `have`), following redirects, appended to `out`.
    #[allow(clippy::too_many_arguments)]
    async fn fetch_body(
        &self,
        job: &Job<'_>,
        file: &str,
        meta: &FileMeta,
        partial: &Path,
        out: &mut tokio::fs::File,
        have: &mut u64,
        check: &mut Check,
    ) -> Result<Fetched> {
        let mut url = meta.location.clone();
        let mut redirects = 0;
        let resp = loop {
            let resp = self.send(job, Method::GET, &url, Some(*have)).await?;
            let status = resp.status();
            if status.is_redirection() {
                let loc = header(resp.headers(), LOCATION.as_str())
                    .and_then(|l| resolve(&url, l))
                    .ok_or_else(|| ModelCacheError::NotAHub {
                        url: shown(&url),
                        reason: "a redirect without a usable Location".to_string(),
                    })?;
                redirects += 1;
                if redirects > MAX_REDIRECTS {
                    return Err(ModelCacheError::TooManyRedirects {
                        url: shown(&meta.location),
                    });
                }
                url = loc;
                continue;
            }
            if status == StatusCode::RANGE_NOT_SATISFIABLE {
                return Ok(Fetched::Restart);
            }
            if !status.is_success() {
                return Err(self.status_error(
                    job,
                    &meta.commit,
                    file,
                    &url,
                    resp.headers(),
                    status,
                ));
            }
            if *have > 0 {
                let start = header(resp.headers(), CONTENT_RANGE.as_str())
                    .and_then(|r| r.strip_prefix("bytes "))
                    .and_then(|r| r.split('-').next())
                    .and_then(|s| s.parse::<u64>().ok());
                if status == StatusCode::OK {
                    // The server ignored `Range` and sends the whole file: take it from the
                    // start (as `huggingface_hub` does), dropping the part.
                    tracing::info!(
                        model = job.id,
                        file,
                        "the server does not resume; starting over"
                    );
                    out.set_len(0)
                        .await
                        .map_err(io_err("cannot write", partial))?;
                    out.seek(io::SeekFrom::Start(0))
                        .await
                        .map_err(io_err("cannot write", partial))?;
                    *have = 0;
                    *check = Check::new(&meta.etag, meta.size);
                    (job.progress)(file, 0, meta.size);
                } else if status != StatusCode::PARTIAL_CONTENT || start != Some(*have) {
                    // Another piece than asked for: start over.
                    return Ok(Fetched::Restart);
                }
            }
            break resp;
        };
        let host = host_of(&url);
        let mut body = resp.into_body();
        loop {
            let next = tokio::select! {
                biased;
                _ = job.cancel.cancelled() => return Err(ModelCacheError::Cancelled { model: job.id.to_string() }),
                r = tokio::time::timeout(self.config.timeout, body.frame()) => r,
            };
            let frame = match next {
                Err(_) => {
                    return Err(ModelCacheError::Network {
                        model: job.id.to_string(),
                        host,
                        reason: format!("no data for {}", shown_duration(self.config.timeout)),
                    })
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(ModelCacheError::Network {
                        model: job.id.to_string(),
                        host,
                        reason: format!("the download broke off: {}", ErrorChain(&e)),
                    })
                }
                Ok(Some(Ok(frame))) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if *have + data.len() as u64 > meta.size {
                return Err(ModelCacheError::SizeMismatch {
                    model: job.id.to_string(),
                    file: file.to_string(),
                    expected: meta.size,
                    actual: *have + data.len() as u64,
                });
            }
            out.write_all(&data)
                .await
                .map_err(io_err("cannot write", partial))?;
            check.update(&data);
            *have += data.len() as u64;
            (job.progress)(file, *have, meta.size);
            // Between pieces: a cancelled download keeps what it has.
            if job.cancel.is_cancelled() {
                return Err(ModelCacheError::Cancelled {
                    model: job.id.to_string(),
                });
            }
        }
        if *have < meta.size {
            return Err(ModelCacheError::Network {
                model: job.id.to_string(),
                host,
                reason: format!("the answer ended at {} of {} bytes", *have, meta.size),
            });
        }
        Ok(Fetched::Done)
    }
}
