//! Where an upload's bytes come from: a file on the server's disk, a URL, inline base64, or an
//! arXiv PDF (a URL, checked to be a PDF). `Fetcher::prepare` turns any of them into a
//! `PreparedFile` whose size and MD5 are known before the upload starts, and whose `stream()`
//! hands the same bytes out again for each upload attempt, checking on the way that they did
//! not change.
//!
//! Limits: `ZOTERO_UPLOAD_MAX_BYTES` is enforced before anything is read or decoded (file
//! metadata, `Content-Length`, the base64 length) and again while reading. A path is never
//! held in memory; a download is spooled to an unlinked temp file (memory if `TMPDIR` cannot
//! be used); base64 is decoded into memory (the text already is).
//!
//! A path is resolved (symlinks followed) and checked against the path policy before it is
//! opened, and the resolved path is what is read (see `path_policy`): by default no hidden
//! file, nothing in a hidden directory or a system tree; with `ZOTERO_UPLOAD_ROOTS` only
//! what is below its directories.
//!
//! Downloads use their own HTTP client, which never carries the Zotero API key, and refuse
//! non-public addresses (zotero-net's `guard`, shared with every client of outside hosts) unless `ZOTERO_FETCH_ALLOW_PRIVATE` is on. Nothing here
//! logs file contents or paths: at most sizes and hosts.

mod arxiv;
mod error;
mod fetch;
use zotero_net::guard;
mod local;
mod names;
mod path_policy;
mod store;
#[cfg(test)]
mod tests;
mod weburl;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use md5::{Digest, Md5};
use tokio_util::sync::CancellationToken;

pub use arxiv::ArxivId;
pub use error::{Blame, PathRefusal, SourceError};
pub use path_policy::SYSTEM_DIRS;

use fetch::Downloader;
use store::Storage;
use zotero_net::ByteStream;

/// Where the bytes come from (the caller has checked that exactly one source was given).
pub enum SourceSpec {
    /// `file_path`: a regular file readable by the server process that the path policy
    /// allows (relative paths are resolved against the working directory).
    Path(PathBuf),
    /// `file_url`: an `http://` or `https://` URL.
    Url(String),
    /// `file_bytes_base64` with its required `filename` (checked as the field `filename`).
    Base64 { data: String, filename: String },
}

impl SourceSpec {
    /// The tool argument this source comes from, for error details.
    pub fn field(&self) -> &'static str {
        match self {
            SourceSpec::Path(_) => "file_path",
            SourceSpec::Url(_) => "file_url",
            SourceSpec::Base64 { .. } => "file_bytes_base64",
        }
    }
}

/// Never shows a path, URL or content (a `{:?}` may end up in a log line).
impl fmt::Debug for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceSpec::Path(_) => f.write_str("SourceSpec::Path(..)"),
            SourceSpec::Url(_) => f.write_str("SourceSpec::Url(..)"),
            SourceSpec::Base64 { data, .. } => {
                write!(f, "SourceSpec::Base64 {{ {} chars, .. }}", data.len())
            }
        }
    }
}

/// What the fetcher needs to know, given by the server (which reads the environment).
#[derive(Debug, Clone)]
pub struct SourcesConfig {
    /// Per request until its answer's head, then per wait for the next piece of a body.
    pub timeout: std::time::Duration,
    /// `ZOTERO_UPLOAD_MAX_BYTES`.
    pub max_bytes: u64,
    /// Which addresses downloads may reach: public ones only, or also loopback, private,
    /// link-local and unspecified ones (`ZOTERO_FETCH_ALLOW_PRIVATE=1`; tests use it to
    /// reach the emulator).
    pub policy: guard::AddressPolicy,
    /// Where downloads are spooled (a scratch image may have none: memory then).
    pub temp_dir: PathBuf,
    /// `ZOTERO_UPLOAD_ROOTS`, each resolved (canonical) at start-up: the only directories
    /// `file_path` may read from. Empty: the default policy.
    pub upload_roots: Vec<PathBuf>,
}

#[derive(Debug, Clone, Default)]
pub struct PrepareOptions {
    /// Caller-given content type; wins over everything (`type/subtype`, parameters dropped).
    pub content_type: Option<String>,
    /// Caller-given file name for a path or URL source; wins over the path's name,
    /// `Content-Disposition` and the URL. Not used for base64, which carries its own name.
    /// Errors name the field `filename`.
    pub filename: Option<String>,
    /// URL sources only (arXiv): the bytes must start with `%PDF-`; otherwise
    /// `SourceError::NotPdf`. With no caller-given content type, the type is then
    /// `application/pdf`. A path or base64 source with it is refused (`Internal`).
    pub require_pdf: bool,
    /// The tool argument the source came from, when it is not the usual one (`arxiv_id`
    /// for an arXiv PDF fetched as a URL); errors about the source name it in `field`.
    pub input_field: Option<&'static str>,
}

/// Prepares upload sources. One per process; cheap to clone (the HTTP client inside is
/// shared and pools its connections).
#[derive(Clone)]
pub struct Fetcher {
    downloader: Arc<Downloader>,
    /// `SourcesConfig::upload_roots`.
    upload_roots: Arc<[PathBuf]>,
}

impl Fetcher {
    pub fn new(config: &SourcesConfig) -> Result<Fetcher, SourceError> {
        Ok(Fetcher {
            downloader: Arc::new(Downloader::new(config)?),
            upload_roots: config.upload_roots.clone().into(),
        })
    }

    /// A fetcher with its own address policy (tests of the guard on redirects).
    #[cfg(test)]
    pub(crate) fn with_policy(config: &SourcesConfig, policy: guard::AddressPolicy) -> Fetcher {
        Fetcher {
            downloader: Arc::new(
                Downloader::with_policy(config, policy).unwrap_or_else(|e| panic!("{e}")),
            ),
            upload_roots: config.upload_roots.clone().into(),
        }
    }

    /// `ZOTERO_UPLOAD_MAX_BYTES`.
    fn max_bytes(&self) -> u64 {
        self.downloader.max_bytes
    }

    /// Checks, reads (or downloads, or decodes) and hashes a source.
    pub async fn prepare(
        &self,
        spec: SourceSpec,
        opts: PrepareOptions,
        cancel: &CancellationToken,
    ) -> Result<PreparedFile, SourceError> {
        if cancel.is_cancelled() {
            return Err(SourceError::Cancelled);
        }
        let field = opts.input_field.unwrap_or_else(|| spec.field());
        let content_type = opts
            .content_type
            .as_deref()
            .map(names::validate_content_type)
            .transpose()?;
        if opts.require_pdf && !matches!(spec, SourceSpec::Url(_)) {
            return Err(SourceError::Internal {
                reason: "require_pdf is only checked for URL sources".into(),
            });
        }
        let name = |n: &str| names::validate_filename(n, "filename");
        let given = Given {
            content_type,
            field,
        };
        match spec {
            SourceSpec::Path(path) => {
                let filename = opts.filename.as_deref().map(name).transpose()?;
                self.prepare_path(path, filename, given, cancel).await
            }
            SourceSpec::Url(url) => {
                let filename = opts.filename.as_deref().map(name).transpose()?;
                self.prepare_url(&url, filename, opts.require_pdf, given, cancel)
                    .await
            }
            SourceSpec::Base64 { data, filename } => {
                let filename = name(&filename)?;
                self.prepare_base64(data, filename, given, cancel).await
            }
        }
    }

    /// Reads a local file that the path policy (`ZOTERO_UPLOAD_ROOTS`) allows, whole, when it
    /// holds at most `max_bytes`: a text to check rather than a file to upload. A larger file
    /// is [`LocalRead::TooLarge`] with its size, unread, so that the caller says which bound
    /// it passed. `field` names the argument in errors.
    pub async fn read_local(
        &self,
        path: PathBuf,
        max_bytes: u64,
        field: &'static str,
        cancel: &CancellationToken,
    ) -> Result<LocalRead, SourceError> {
        let roots = self.upload_roots.clone();
        let task = tokio::task::spawn_blocking(move || {
            let resolved = path_policy::resolve(&path, &roots, field)?;
            local::read_bounded(&resolved, max_bytes, field)
        });
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(SourceError::Cancelled),
            r = task => r.map_err(join_error)?,
        }
    }

    /// `filename` is the caller's override of the path's own name.
    async fn prepare_path(
        &self,
        path: PathBuf,
        filename: Option<String>,
        given: Given,
        cancel: &CancellationToken,
    ) -> Result<PreparedFile, SourceError> {
        let field = given.field;
        let (task_path, task_cancel, max) = (path.clone(), cancel.clone(), self.max_bytes());
        let roots = self.upload_roots.clone();
        // The path is resolved and checked first, and only the resolved path is opened.
        let task = tokio::task::spawn_blocking(move || {
            let resolved = path_policy::resolve(&task_path, &roots, field)?;
            local::hash_path(&resolved, max, field, &task_cancel).map(|h| (resolved, h))
        });
        let (resolved, hashed) = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(SourceError::Cancelled),
            r = task => r.map_err(join_error)??,
        };
        let filename = match filename {
            Some(name) => name,
            None => path
                .file_name()
                .and_then(|n| names::sanitize_filename(&n.to_string_lossy()))
                .ok_or_else(|| SourceError::InvalidFilename {
                    field,
                    reason: "the path does not end in a file name; give filename".into(),
                })?,
        };
        let content_type = pick_content_type(given.content_type, false, None, &filename);
        Ok(PreparedFile {
            filename,
            content_type,
            size: hashed.size,
            md5: hashed.md5,
            mtime_ms: hashed.mtime_ms,
            final_url: None,
            storage: Storage::Path(Arc::new(local::CheckedFile {
                path: resolved,
                id: hashed.id,
            })),
            field,
        })
    }

    /// `filename` is the base64 source's own, already checked.
    async fn prepare_base64(
        &self,
        data: String,
        filename: String,
        given: Given,
        cancel: &CancellationToken,
    ) -> Result<PreparedFile, SourceError> {
        let field = given.field;
        let max = self.max_bytes();
        // Decoding and hashing tens of megabytes is CPU work: off the runtime threads.
        let task = tokio::task::spawn_blocking(move || {
            local::decode_base64(&data, max, field).map(|decoded| {
                let md5 = format!("{:x}", Md5::digest(&decoded.bytes));
                (decoded, md5)
            })
        });
        let (decoded, md5) = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(SourceError::Cancelled),
            r = task => r.map_err(join_error)??,
        };
        let content_type = pick_content_type(
            given.content_type,
            false,
            decoded.data_url_type.filter(|t| !names::is_generic(t)),
            &filename,
        );
        Ok(PreparedFile {
            filename,
            content_type,
            size: decoded.bytes.len() as u64,
            md5,
            mtime_ms: local::now_ms(),
            final_url: None,
            storage: Storage::Memory(decoded.bytes),
            field,
        })
    }

    /// `filename` is the caller's override of the name the server or the URL suggests.
    async fn prepare_url(
        &self,
        url: &str,
        filename: Option<String>,
        require_pdf: bool,
        given: Given,
        cancel: &CancellationToken,
    ) -> Result<PreparedFile, SourceError> {
        let field = given.field;
        let d = self
            .downloader
            .download(url, field, require_pdf, cancel)
            .await?;
        let server_type = d.content_type.filter(|t| !names::is_generic(t));
        let (filename, derived) = match filename {
            Some(name) => (name, false),
            None => {
                let from_url = || {
                    d.final_url
                        .path()
                        .rsplit('/')
                        .find(|s| !s.is_empty())
                        .and_then(|s| names::sanitize_filename(&weburl::percent_decode(s)))
                };
                let name = d
                    .disposition_name
                    .or_else(from_url)
                    .unwrap_or_else(|| "download".to_string());
                (name, true)
            }
        };
        let content_type =
            pick_content_type(given.content_type, require_pdf, server_type, &filename);
        // `download` from https://example.org/download?id=5 served as application/pdf
        // becomes download.pdf.
        let filename = if derived && !names::has_extension(&filename) {
            match names::extension_for(&content_type) {
                Some(ext) if !names::is_generic(&content_type) => {
                    names::sanitize_filename(&format!("{filename}.{ext}")).unwrap_or(filename)
                }
                _ => filename,
            }
        } else {
            filename
        };
        Ok(PreparedFile {
            filename,
            content_type,
            size: d.size,
            md5: d.md5,
            mtime_ms: local::now_ms(),
            final_url: Some(d.final_url.to_string()),
            storage: d.storage,
            field,
        })
    }
}

/// What every source's preparation needs of the checked caller options.
struct Given {
    content_type: Option<String>,
    field: &'static str,
}

/// Caller-given, else `application/pdf` for a checked PDF, else what the source says (a
/// server's or data URL's type, generic ones such as `application/octet-stream` left out),
/// else the file name's extension, else `application/octet-stream`.
fn pick_content_type(
    given: Option<String>,
    require_pdf: bool,
    from_source: Option<String>,
    filename: &str,
) -> String {
    given
        .or_else(|| require_pdf.then(|| "application/pdf".to_string()))
        .or(from_source)
        .or_else(|| names::guess_from_name(filename))
        .unwrap_or_else(|| names::OCTET_STREAM.to_string())
}

fn join_error(e: tokio::task::JoinError) -> SourceError {
    SourceError::Internal {
        reason: format!("the file task failed: {e}"),
    }
}

/// What [`Fetcher::read_local`] found.
#[derive(Debug)]
pub enum LocalRead {
    /// The whole file.
    Bytes(Vec<u8>),
    /// The file holds more than the bound asked for: its size in bytes, nothing read.
    TooLarge { size: u64 },
}

/// A source, checked and hashed, ready to upload.
pub struct PreparedFile {
    pub filename: String,
    pub content_type: String,
    pub size: u64,
    /// Lowercase hex MD5 of the whole content.
    pub md5: String,
    /// The file's modification time for paths; the time of preparing for URL and base64.
    pub mtime_ms: u64,
    /// The URL the file came from after redirects (URL sources only).
    pub final_url: Option<String>,
    storage: Storage,
    field: &'static str,
}

/// Never shows the path (a `{:?}` may end up in a log line).
impl fmt::Debug for PreparedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedFile")
            .field("filename", &self.filename)
            .field("content_type", &self.content_type)
            .field("size", &self.size)
            .field("md5", &self.md5)
            .field("mtime_ms", &self.mtime_ms)
            .field("held_in", &self.storage.kind())
            .finish_non_exhaustive()
    }
}

impl PreparedFile {
    /// A fresh stream of exactly the bytes that were hashed, for one upload attempt; call
    /// again for a retry. From a file it re-checks size and MD5 as it reads, and if the file
    /// changed since it was hashed it ends with an `io::Error` (saying so, and that nothing
    /// was stored) instead of the last chunk, so a changed file is never sent in full.
    pub fn stream(&self) -> ByteStream {
        self.stream_in(store::CHUNK)
    }

    /// `stream` in chunks of `chunk` bytes.
    fn stream_in(&self, chunk: usize) -> ByteStream {
        store::stream(&self.storage, self.size, &self.md5, self.field, chunk)
    }
}
