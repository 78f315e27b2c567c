//! `SourceError`, everything that can go wrong turning a source into a file. The server maps
//! it to the public error codes at its edge.

/// Examples of the arXiv identifiers `ArxivId::parse` accepts, for error messages.
pub(crate) const ARXIV_EXAMPLES: &str = "2301.00001, 2301.00001v2, arXiv:1706.03762, \
hep-th/9901001, math.CA/0611800v2, https://arxiv.org/abs/1706.03762, \
https://arxiv.org/pdf/1706.03762v1.pdf";

use std::path::PathBuf;

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    // ---- the caller's input cannot be used (ZOTERO_VALIDATION_ERROR, details.field) ----
    #[error("{field} is not a URL that can be fetched: {reason}")]
    InvalidUrl { field: &'static str, reason: String },

    /// The URL (or a redirect) leads to a loopback, private, link-local or otherwise
    /// non-public address, and `ZOTERO_FETCH_ALLOW_PRIVATE` is off.
    #[error("{field} leads to {host} ({ip}), a {reason} address; only public internet addresses are fetched (the server's operator can allow private ones with ZOTERO_FETCH_ALLOW_PRIVATE=1)")]
    Forbidden {
        field: &'static str,
        host: String,
        ip: String,
        reason: &'static str,
    },

    #[error("{}", too_large_message(.size, *.max_bytes))]
    TooLarge {
        field: &'static str,
        /// The size when it is known (file metadata, `Content-Length`, base64 length);
        /// `None` when the limit was passed while reading.
        size: Option<u64>,
        max_bytes: u64,
    },

    #[error("{field} is not valid base64: {reason}")]
    InvalidBase64 { field: &'static str, reason: String },

    #[error("{field} cannot be used as a file name: {reason}")]
    InvalidFilename { field: &'static str, reason: String },

    #[error(
        "content_type {value:?} is not a media type; give it as type/subtype, e.g. application/pdf"
    )]
    InvalidContentType { value: String },

    #[error("{input:?} is not an arXiv identifier ({reason}); accepted forms: {ARXIV_EXAMPLES}")]
    InvalidArxivId { input: String, reason: String },

    #[error("{field}: no such file; check the path (it is read by the server process, which may run on another machine or in a container){hint}")]
    PathNotFound {
        field: &'static str,
        hint: &'static str,
    },

    /// `file_path` leads where the server does not read: a hidden name, a system tree, or
    /// outside `ZOTERO_UPLOAD_ROOTS` (see `path_policy`). The message names no part of the
    /// path (it is logged); `path` is quoted in the answer's details only.
    #[error("{field} is not allowed: {}", .refusal.explain())]
    PathNotAllowed {
        field: &'static str,
        /// At most 256 characters of the path as given.
        path: String,
        refusal: PathRefusal,
    },

    #[error("{field}: permission denied; the server process may not read this file")]
    PathPermissionDenied { field: &'static str },

    #[error("{field} is {kind}, not a regular file; give the path of a file")]
    NotARegularFile {
        field: &'static str,
        kind: &'static str,
    },

    #[error("{field} could not be read: {reason}")]
    Unreadable { field: &'static str, reason: String },

    // ---- the remote side (ZOTERO_NOT_FOUND / ZOTERO_UPSTREAM_ERROR) ----
    // A `url` here is shown without its query and fragment (after a redirect it was chosen
    // by the remote server and may carry a signature).
    /// `require_pdf` and the downloaded bytes do not start with `%PDF-`.
    #[error("expected a PDF, but the server sent something else (content type {content_type})")]
    NotPdf {
        field: &'static str,
        content_type: String,
        url: String,
    },

    #[error("{}", remote_status_message(*.status, .host))]
    RemoteStatus {
        status: u16,
        url: String,
        host: String,
    },

    #[error(
        "more than {max} redirects while fetching from {host}; give the final URL of the file"
    )]
    TooManyRedirects {
        max: usize,
        url: String,
        host: String,
    },

    #[error("{host} redirected to a URL that cannot be followed: {reason}")]
    BadRedirect {
        url: String,
        host: String,
        reason: String,
    },

    #[error("could not fetch from {host}: {reason}")]
    Network { host: String, reason: String },

    #[error("{host} did not answer within {secs} s (ZOTERO_TIMEOUT_SECONDS)")]
    Timeout { host: String, secs: f64 },

    #[error("the call was cancelled by the client")]
    Cancelled,

    // ---- a defect or broken environment (ZOTERO_INTERNAL_ERROR) ----
    #[error("internal error while preparing the file: {reason}")]
    Internal { reason: String },
}

fn too_large_message(size: &Option<u64>, max: u64) -> String {
    match size {
        Some(size) => format!(
            "the file is {size} bytes, more than the {max} bytes ZOTERO_UPLOAD_MAX_BYTES allows; \
             upload a smaller file (or the server's operator can raise ZOTERO_UPLOAD_MAX_BYTES)"
        ),
        None => format!(
            "the file is larger than the {max} bytes ZOTERO_UPLOAD_MAX_BYTES allows; \
             upload a smaller file (or the server's operator can raise ZOTERO_UPLOAD_MAX_BYTES)"
        ),
    }
}

fn remote_status_message(status: u16, host: &str) -> String {
    match status {
        404 | 410 => format!("{host} answered {status}: there is no file at this URL; check it"),
        500..=599 => format!("{host} answered {status} (a server error); try again later"),
        _ => format!("{host} answered {status} instead of the file"),
    }
}

/// Whose doing an error is; the server turns this into the public error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// The caller's input cannot be used.
    Input,
    /// The remote side says there is nothing there (404, 410).
    Missing,
    /// The remote side failed, refused or sent the wrong thing; or the call was cancelled.
    Remote,
    /// A defect or a broken environment.
    Internal,
}

impl SourceError {
    pub fn blame(&self) -> Blame {
        match self {
            SourceError::InvalidUrl { .. }
            | SourceError::Forbidden { .. }
            | SourceError::TooLarge { .. }
            | SourceError::InvalidBase64 { .. }
            | SourceError::InvalidFilename { .. }
            | SourceError::InvalidContentType { .. }
            | SourceError::InvalidArxivId { .. }
            | SourceError::PathNotFound { .. }
            | SourceError::PathNotAllowed { .. }
            | SourceError::PathPermissionDenied { .. }
            | SourceError::NotARegularFile { .. }
            | SourceError::Unreadable { .. } => Blame::Input,
            SourceError::RemoteStatus { status: 404, .. }
            | SourceError::RemoteStatus { status: 410, .. } => Blame::Missing,
            SourceError::NotPdf { .. }
            | SourceError::RemoteStatus { .. }
            | SourceError::TooManyRedirects { .. }
            | SourceError::BadRedirect { .. }
            | SourceError::Network { .. }
            | SourceError::Timeout { .. }
            | SourceError::Cancelled => Blame::Remote,
            SourceError::Internal { .. } => Blame::Internal,
        }
    }

    /// The error's context as named values (the field, sizes, the URL without its query,
    /// the status, the host): what a caller may be shown besides the message.
    pub fn context(&self) -> Map<String, Value> {
        let mut c = Map::new();
        if let Some(field) = self.field() {
            c.insert("field".into(), field.into());
        }
        match self {
            SourceError::TooLarge {
                size, max_bytes, ..
            } => {
                if let Some(size) = size {
                    c.insert("size".into(), (*size).into());
                }
                c.insert("max_bytes".into(), (*max_bytes).into());
            }
            SourceError::Forbidden { host, ip, .. } => {
                c.insert("host".into(), host.clone().into());
                c.insert("ip".into(), ip.clone().into());
            }
            SourceError::PathNotAllowed { path, refusal, .. } => {
                c.insert("path".into(), path.clone().into());
                c.insert("reason".into(), refusal.reason().into());
                match refusal {
                    PathRefusal::SystemDir { dir } => {
                        c.insert("system_directory".into(), (*dir).into());
                    }
                    PathRefusal::OutsideRoots { roots } => {
                        let roots: Vec<Value> = roots
                            .iter()
                            .map(|r| r.to_string_lossy().into_owned().into())
                            .collect();
                        c.insert("upload_roots".into(), roots.into());
                    }
                    PathRefusal::Hidden { .. } => {}
                }
            }
            SourceError::InvalidContentType { value } => {
                c.insert("value".into(), value.clone().into());
            }
            SourceError::NotPdf {
                content_type, url, ..
            } => {
                c.insert("content_type".into(), content_type.clone().into());
                c.insert("url".into(), url.clone().into());
            }
            SourceError::RemoteStatus { status, url, .. } => {
                c.insert("status".into(), (*status).into());
                c.insert("url".into(), url.clone().into());
            }
            SourceError::TooManyRedirects { max, url, .. } => {
                c.insert("max_redirects".into(), (*max as u64).into());
                c.insert("url".into(), url.clone().into());
            }
            SourceError::BadRedirect { url, .. } => {
                c.insert("url".into(), url.clone().into());
            }
            SourceError::Network { host, .. } | SourceError::Timeout { host, .. } => {
                c.insert("host".into(), host.clone().into());
            }
            _ => {}
        }
        c
    }

    /// The input field the error is about, when it is about one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            SourceError::InvalidUrl { field, .. }
            | SourceError::Forbidden { field, .. }
            | SourceError::TooLarge { field, .. }
            | SourceError::InvalidBase64 { field, .. }
            | SourceError::InvalidFilename { field, .. }
            | SourceError::PathNotFound { field, .. }
            | SourceError::PathNotAllowed { field, .. }
            | SourceError::PathPermissionDenied { field }
            | SourceError::NotARegularFile { field, .. }
            | SourceError::Unreadable { field, .. }
            | SourceError::NotPdf { field, .. } => Some(field),
            SourceError::InvalidContentType { .. } => Some("content_type"),
            SourceError::InvalidArxivId { .. } => Some("arxiv_id"),
            _ => None,
        }
    }
}

/// Why a resolved path may not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathRefusal {
    /// A hidden file or a file under a hidden directory (with roots: below the root).
    Hidden { with_roots: bool },
    /// Under one of `SYSTEM_DIRS` (the default policy only).
    SystemDir { dir: &'static str },
    /// Below none of the `ZOTERO_UPLOAD_ROOTS` directories, listed here.
    OutsideRoots { roots: Vec<PathBuf> },
}

/// How an operator widens what may be read; every refusal ends with it.
const HOW: &str = "the server's operator can set ZOTERO_UPLOAD_ROOTS=/path/to/papers \
(directories separated by ':'), and then only files below those directories are read";

impl PathRefusal {
    /// The refusal as a word for `details.reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            PathRefusal::Hidden { .. } => "hidden",
            PathRefusal::SystemDir { .. } => "system_directory",
            PathRefusal::OutsideRoots { .. } => "outside_upload_roots",
        }
    }

    /// Why, and what to do instead. Names no part of the caller's path: this is logged.
    pub fn explain(&self) -> String {
        match self {
            PathRefusal::SystemDir { dir } => format!(
                "it leads (symlinks followed) to a file under {dir}, a system directory, which \
                 is not read; to upload from a directory of your own, {HOW}"
            ),
            PathRefusal::Hidden { with_roots: false } => format!(
                "it leads (symlinks followed) to a hidden file or into a hidden directory (a \
                 name starting with '.', such as ~/.ssh or ~/.config, where keys and settings \
                 live), which is not read; to upload from a directory of your own, {HOW}"
            ),
            PathRefusal::Hidden { with_roots: true } => format!(
                "it leads (symlinks followed) to a hidden file or into a hidden directory (a \
                 name starting with '.') below the directories ZOTERO_UPLOAD_ROOTS allows, \
                 which is not read; move the file, or {HOW} (a directory named there may \
                 itself be hidden)"
            ),
            PathRefusal::OutsideRoots { .. } => format!(
                "it leads (symlinks followed) outside the directories ZOTERO_UPLOAD_ROOTS \
                 allows (details.upload_roots); use a file inside them, or {HOW}"
            ),
        }
    }
}
