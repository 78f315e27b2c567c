//! What can go wrong getting a model, each message saying what to do.

use std::io;
use std::path::{Path, PathBuf};

use crate::model_files::REQUIRED_FILES;

/// Redirects followed for one request (the Hub's own relative ones, then the CDN).
pub(crate) const MAX_REDIRECTS: usize = 5;

/// What can go wrong getting a model; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ModelCacheError {
    #[error("{spec:?} is not a model: {reason}. Give a Hugging Face id `org/name` (optionally `@revision`: a branch, a tag or a 40-hex commit) or a directory (an absolute path, `./dir` or `~/dir`)")]
    BadSpec { spec: String, reason: String },
    #[error("the model directory {dir} has no {file}; a sentence-transformers model needs {}", REQUIRED_FILES.join(", "))]
    MissingFile { dir: PathBuf, file: String },
    #[error("HF_HUB_OFFLINE is set and {model} is not in the Hugging Face cache {cache} ({missing}): run `zotero-mcp update-db` once while online (without HF_HUB_OFFLINE) to download it, or set ZOTERO_EMBEDDING_MODEL to a local directory holding the model's files")]
    Offline {
        model: String,
        cache: PathBuf,
        missing: String,
    },
    #[error("{model} is gated or private on {endpoint} ({status}): {advice}")]
    Gated {
        model: String,
        endpoint: String,
        status: u16,
        advice: String,
    },
    #[error("no model {model} on {endpoint} (check the id; a private model also needs HF_TOKEN)")]
    RepoNotFound { model: String, endpoint: String },
    #[error("{model} has no revision {revision} on {endpoint} (give a branch, a tag or a full 40-hex commit)")]
    RevisionNotFound {
        model: String,
        revision: String,
        endpoint: String,
    },
    #[error("{model} at {revision} has no file {file}: is it a sentence-transformers model?")]
    FileNotFound {
        model: String,
        revision: String,
        file: String,
    },
    #[error("{file} of {model}: the downloaded bytes have {algorithm} {actual} but the Hub announced {expected}; the partial download was deleted. Try again; if it persists, a proxy or mirror (HF_ENDPOINT) is altering the file")]
    HashMismatch {
        model: String,
        file: String,
        algorithm: &'static str,
        expected: String,
        actual: String,
    },
    #[error("{file} of {model}: received {actual} bytes where the Hub announced {expected}; the partial download was deleted, try again")]
    SizeMismatch {
        model: String,
        file: String,
        expected: u64,
        actual: u64,
    },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot download {model} from {host}: {reason}. Check the network (or HF_ENDPOINT), set HF_HUB_OFFLINE=1 to use a cached copy, or set ZOTERO_EMBEDDING_MODEL to a local directory")]
    Network {
        model: String,
        host: String,
        reason: String,
    },
    #[error("{url} answered {status} for {model}{message}")]
    Status {
        model: String,
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "{url} does not answer as a Hugging Face Hub: {reason} (check HF_ENDPOINT and any proxy)"
    )]
    NotAHub { url: String, reason: String },
    #[error("refusing {url}: models are downloaded over https only")]
    Insecure { url: String },
    #[error("refusing to download {model} from {address}: requests to this machine and private networks need ZOTERO_FETCH_ALLOW_PRIVATE=1 (a mirror there as HF_ENDPOINT too)")]
    Forbidden { model: String, address: String },
    #[error("more than {max} redirects from {url}", max = MAX_REDIRECTS)]
    TooManyRedirects { url: String },
    #[error("the download of {model} was cancelled; the next run resumes it")]
    Cancelled { model: String },
    /// Reads "TLS setup failed: " and why.
    #[error("{0}")]
    Tls(zotero_net::TlsSetupError),
    /// The weights file fails the checks of its size and header (made before it is hashed
    /// or read whole).
    #[error("{} is not a usable safetensors file: {reason}; download the model's model.safetensors again (remove this one first)", path.display())]
    BadWeights { path: PathBuf, reason: String },
}

pub type Result<T, E = ModelCacheError> = std::result::Result<T, E>;

pub(crate) fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> ModelCacheError {
    let path = path.to_path_buf();
    move |source| ModelCacheError::Io { what, path, source }
}
