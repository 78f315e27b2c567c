//! Getting the sentence encoder's model directory: a local directory used as it is, or a
//! Hugging Face model downloaded into (or found in) the cache `huggingface_hub` uses, so that
//! a copy Python tools downloaded is reused and ours is reusable by them.
//!
//! The cache layout (`$HF_HUB_CACHE`, default `$HF_HOME/hub`, default
//! `$XDG_CACHE_HOME/huggingface/hub` or `~/.cache/huggingface/hub`):
//!
//! ```text
//! models--{org}--{name}/
//!   blobs/{etag}                      the content (LFS: etag = sha256; else git blob sha1)
//!   snapshots/{commit}/{path}         relative symlinks: ../../blobs/{etag}
//!   refs/{branch or tag}              the commit it pointed to when last asked
//!   .no_exist/{commit}/{path}         an optional file the commit does not have
//! .locks/models--{org}--{name}/{etag}.lock    flock while a blob is downloaded
//! ```
//!
//! A pinned commit whose snapshot is complete costs no request; a branch costs one `HEAD` (to
//! learn its commit); offline (`HF_HUB_OFFLINE=1`) costs none and uses `refs/`. A download
//! asks `HEAD {endpoint}/{id}/resolve/{revision}/{path}` for the commit, ETag and size,
//! then GETs the file (LFS files from the CDN the Hub redirects to, without the token),
//! streamed to `blobs/{etag}.incomplete`, resumed with `Range` after an interruption,
//! verified (sha256 for LFS files, the git blob sha1 for the others), fsynced and renamed.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::header::{
    HeaderMap, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_LENGTH, CONTENT_RANGE, LOCATION, RANGE,
    USER_AGENT,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncSeekExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use zotero_net::{
    find_forbidden, guarded_https_connector, user_agent, AddressPolicy, Attempt, ErrorChain,
    GuardedConnector, Retry, RetryError, RetryPolicy,
};

/// The default model, PINNED to a commit so that vectors never silently change model: the
/// commit of `sentence-transformers/all-MiniLM-L6-v2`'s `main` that sentence-transformers
/// documents (and the snapshot name most existing Python caches hold).
pub const DEFAULT_MODEL: &str =
    "sentence-transformers/all-MiniLM-L6-v2@c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

/// The alternative the README names (better ranking, half the speed), pinned likewise.
pub const BGE_SMALL_MODEL: &str = "BAAI/bge-small-en-v1.5@5c38ec7c405ec4b44b94cc5a9bb96e735b38267a";

/// The weights, among [`REQUIRED_FILES`].
pub const WEIGHTS_FILE: &str = "model.safetensors";

/// The files a sentence-transformers model directory must have for the encoder.
pub const REQUIRED_FILES: &[&str] = &[
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "modules.json",
    "1_Pooling/config.json",
];

/// Files the encoder reads when the model has them.
pub const OPTIONAL_FILES: &[&str] = &[
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];

/// The public Hub (`HF_ENDPOINT` overrides it).
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Redirects followed for one request (the Hub's own relative ones, then the CDN).
const MAX_REDIRECTS: usize = 5;

/// Attempts of one download in a row that bring no new byte before giving up (as
/// `huggingface_hub`'s `http_get`).
const MAX_STALLED_ATTEMPTS: u32 = 5;

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
    #[error("TLS setup failed: {0}")]
    Tls(String),
    /// The weights file fails the checks of its size and header (made before it is hashed
    /// or read whole).
    #[error("{} is not a usable safetensors file: {reason}; download the model's model.safetensors again (remove this one first)", path.display())]
    BadWeights { path: PathBuf, reason: String },
}

pub type Result<T, E = ModelCacheError> = std::result::Result<T, E>;

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> ModelCacheError {
    let path = path.to_path_buf();
    move |source| ModelCacheError::Io { what, path, source }
}

/// Which model: a Hugging Face id at a revision, or a local directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    Hub {
        /// `org/name`.
        id: String,
        /// A branch, a tag or a 40-hex commit (`main` when none was given).
        revision: String,
    },
    /// A directory holding the model's files, used as it is.
    Local(PathBuf),
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Hub { id, revision } => write!(f, "{id}@{revision}"),
            ModelSpec::Local(p) => write!(f, "{}", p.display()),
        }
    }
}

fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A part of a repo id as the Hub allows it: letters, digits, `-`, `_`, `.`, not starting
/// or ending with `-` or `.`, no `--` or `..` (`huggingface_hub`'s `validate_repo_id`).
fn valid_id_part(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 96
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !p.starts_with(['-', '.'])
        && !p.ends_with(['-', '.'])
        && !p.contains("--")
        && !p.contains("..")
}

fn valid_revision(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 255
        && !r.starts_with('/')
        && !r.ends_with('/')
        && !r.split('/').any(|s| s.is_empty() || s == "." || s == "..")
        && r.chars().all(|c| !c.is_control() && !c.is_whitespace())
}

impl ModelSpec {
    /// Parses a spec, expanding `~/` with the process's `HOME`.
    pub fn parse(s: &str) -> Result<ModelSpec> {
        ModelSpec::parse_with(s, &|k| std::env::var(k).ok())
    }

    /// The default model unless `ZOTERO_EMBEDDING_MODEL` names another.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<ModelSpec> {
        match env("ZOTERO_EMBEDDING_MODEL").filter(|s| !s.trim().is_empty()) {
            Some(s) => ModelSpec::parse_with(&s, env),
            None => ModelSpec::parse_with(DEFAULT_MODEL, env),
        }
    }

    /// Parses `org/name[@revision]`, or a directory: absolute, `./…`, `../…` or `~/…`.
    pub fn parse_with(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<ModelSpec> {
        let bad = |reason: &str| ModelCacheError::BadSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("it is empty"));
        }
        if t.starts_with('/') || t.starts_with("./") || t.starts_with("../") || t == "." {
            return Ok(ModelSpec::Local(PathBuf::from(t)));
        }
        if let Some(rest) = t.strip_prefix("~/") {
            let home = env("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| bad("`~` needs HOME to be set"))?;
            return Ok(ModelSpec::Local(Path::new(&home).join(rest)));
        }
        let (id, revision) = match t.split_once('@') {
            Some((id, rev)) => (id, rev),
            None => (t, "main"),
        };
        let parts: Vec<&str> = id.split('/').collect();
        match parts.as_slice() {
            [org, name] if valid_id_part(org) && valid_id_part(name) => {}
            [_] => return Err(bad(
                "a Hugging Face id has the form `org/name` (for a directory here, write `./name`)",
            )),
            _ => return Err(bad("not a valid Hugging Face id `org/name`")),
        }
        if !valid_revision(revision) {
            return Err(bad(
                "the revision after `@` is not a valid branch, tag or commit",
            ));
        }
        Ok(ModelSpec::Hub {
            id: id.to_string(),
            revision: revision.to_string(),
        })
    }

    /// A Hub model at a full commit: its cached snapshot never changes.
    pub fn is_pinned(&self) -> bool {
        matches!(self, ModelSpec::Hub { revision, .. } if is_commit(revision))
    }
}

/// Where and how models are fetched: the `huggingface_hub` settings.
#[derive(Clone)]
pub struct HubConfig {
    /// `HF_ENDPOINT`, without a trailing `/`.
    pub endpoint: String,
    /// `HF_HUB_CACHE`.
    pub cache_dir: PathBuf,
    /// `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`): no request at all.
    pub offline: bool,
    /// `HF_TOKEN`, else (once a [`ModelCache`] is made) the token file `huggingface-cli
    /// login` wrote; never shown.
    token: Option<String>,
    /// Where that file is: read when a download may need it, not when the configuration is
    /// read (every start of the server reads it).
    token_file: Option<PathBuf>,
    /// `ZOTERO_FETCH_ALLOW_PRIVATE`: plain http to this machine (the emulator in tests) and
    /// connections to loopback and private addresses; otherwise https only, and public
    /// addresses only (zotero-net's guard, on every request and redirect hop: the Hub's and
    /// its CDN's).
    pub allow_http_loopback: bool,
    /// For a connection and an answer's head, then for each wait for more of a body.
    pub timeout: Duration,
    /// Retries of 429, 5xx and network failures.
    pub retry: RetryPolicy,
}

impl fmt::Debug for HubConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HubConfig")
            .field("endpoint", &self.endpoint)
            .field("cache_dir", &self.cache_dir)
            .field("offline", &self.offline)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_http_loopback", &self.allow_http_loopback)
            .finish()
    }
}

/// `huggingface_hub`'s `_is_true`.
fn env_true(v: Option<String>) -> bool {
    v.is_some_and(|v| matches!(v.to_ascii_uppercase().as_str(), "1" | "ON" | "YES" | "TRUE"))
}

/// `os.path.expandvars(os.path.expanduser(p))`, as `huggingface_hub` reads its paths.
fn expand(p: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let p = match p.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match env("HOME") {
            Some(home) => format!("{home}{rest}"),
            None => p.to_string(),
        },
        _ => p.to_string(),
    };
    // `$NAME` and `${NAME}` of set variables; others are left as they are.
    let mut out = String::with_capacity(p.len());
    let mut rest = p.as_str();
    while let Some(i) = rest.find('$') {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let after = after.get(1..).unwrap_or("");
        let (name, tail, braced) = match after.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(j) => (b.get(..j).unwrap_or(""), b.get(j + 1..).unwrap_or(""), true),
                None => ("", after, false),
            },
            None => {
                let j = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (
                    after.get(..j).unwrap_or(""),
                    after.get(j..).unwrap_or(""),
                    false,
                )
            }
        };
        match env(name).filter(|_| !name.is_empty()) {
            Some(v) => out.push_str(&v),
            None if braced => {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            }
            None => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

impl HubConfig {
    /// The settings `huggingface_hub` would use with this environment: `HF_ENDPOINT`,
    /// `HF_HOME`, `HF_HUB_CACHE` (or the older `HUGGINGFACE_HUB_CACHE`), `XDG_CACHE_HOME`,
    /// `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`), `HF_TOKEN` (else the file at
    /// `HF_TOKEN_PATH`, default `$HF_HOME/token`).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> HubConfig {
        let endpoint = env("HF_ENDPOINT")
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string();
        let home = env("HOME").unwrap_or_default();
        let hf_home = match env("HF_HOME") {
            Some(h) => expand(&h, env),
            None => {
                let xdg = env("XDG_CACHE_HOME").unwrap_or_else(|| format!("{home}/.cache"));
                expand(&format!("{xdg}/huggingface"), env)
            }
        };
        let cache = env("HF_HUB_CACHE")
            .or_else(|| env("HUGGINGFACE_HUB_CACHE"))
            .map(|c| expand(&c, env))
            .unwrap_or_else(|| format!("{hf_home}/hub"));
        let offline = env_true(env("HF_HUB_OFFLINE").or_else(|| env("TRANSFORMERS_OFFLINE")));
        let token = env("HF_TOKEN")
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let token_file = token.is_none().then(|| {
            PathBuf::from(
                env("HF_TOKEN_PATH")
                    .map(|p| expand(&p, env))
                    .unwrap_or_else(|| format!("{hf_home}/token")),
            )
        });
        HubConfig {
            endpoint,
            cache_dir: PathBuf::from(cache),
            offline,
            token,
            token_file,
            allow_http_loopback: false,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy {
                max_attempts: 4,
                base_delay: Duration::from_millis(500),
                max_delay: Duration::from_secs(8),
                max_wait: Duration::from_secs(60),
            },
        }
    }

    /// Replaces the token (`None`: none).
    pub fn with_token(mut self, token: Option<String>) -> HubConfig {
        self.token = token.filter(|t| !t.is_empty());
        self.token_file = None;
        self
    }

    /// Reads the token file when no `HF_TOKEN` was given (offline: no need).
    fn with_token_file(mut self) -> HubConfig {
        if let (None, Some(path), false) = (&self.token, self.token_file.take(), self.offline) {
            self.token = fs::read_to_string(path)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty());
        }
        self
    }

    /// Whether a token will be sent to the Hub.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Hides the token in a message that might echo it.
    fn scrub(&self, s: &str) -> String {
        match &self.token {
            Some(t) if t.len() >= 4 => s.replace(t.as_str(), "<HF_TOKEN>"),
            _ => s.to_string(),
        }
    }
}

/// A model directory ready for the encoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    /// The directory holding the files (a snapshot of the cache, or the local directory).
    pub path: PathBuf,
    /// The Hugging Face id, or the local directory as given.
    pub id: String,
    /// The commit of the files (`local` for a local directory).
    pub revision: String,
    /// (path in the model, sha256 hex) of each file present: the required ones, then the
    /// optional ones, in the order of [`REQUIRED_FILES`] and [`OPTIONAL_FILES`].
    pub files: Vec<(String, String)>,
}

impl ModelDir {
    /// The identity the index records for vectors of this model (`dims`: the encoder's).
    pub fn identity(&self, dims: usize) -> crate::encoder::ModelIdentity {
        crate::encoder::ModelIdentity {
            id: self.id.clone(),
            revision: self.revision.clone(),
            file_hashes: self.files.clone(),
            dims,
        }
    }
}

/// What a download reports: (file, bytes done, bytes in all).
pub type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Send + Sync);

/// The weights file of the model in `dir`, checked from its size and header before anything
/// hashes or reads it whole (see [`crate::weights`]).
fn check_weights(dir: &Path) -> Result<()> {
    let path = dir.join(WEIGHTS_FILE);
    match crate::weights::check_safetensors(&path) {
        Ok(_) => Ok(()),
        Err(crate::weights::WeightsError::Io(e)) => Err(io_err("cannot read", &path)(e)),
        Err(crate::weights::WeightsError::Bad(reason)) => {
            Err(ModelCacheError::BadWeights { path, reason })
        }
    }
}

/// sha256 of a file, streamed.
fn sha256_file(path: &Path) -> Result<String> {
    let mut f = File::open(path).map_err(io_err("cannot read", path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io_err("cannot read", path))?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex(&h.finalize()))
}

/// A timeout as a message says it: whole seconds as `30 s`, anything else in milliseconds
/// (`400 ms`, never rounded down to `0 s`).
fn shown_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis().max(1))
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The model directory `dir` as it is: every required file present, each hashed.
pub fn local_model_dir(dir: &Path) -> Result<ModelDir> {
    let meta = fs::metadata(dir).map_err(io_err("cannot open the model directory", dir))?;
    if !meta.is_dir() {
        return Err(ModelCacheError::Io {
            what: "the model is not a directory:",
            path: dir.to_path_buf(),
            source: io::Error::other("a model is a directory of files"),
        });
    }
    if let Some(missing) = REQUIRED_FILES.iter().find(|f| !dir.join(f).is_file()) {
        return Err(ModelCacheError::MissingFile {
            dir: dir.to_path_buf(),
            file: (*missing).to_string(),
        });
    }
    check_weights(dir)?;
    let mut files = Vec::new();
    for f in REQUIRED_FILES
        .iter()
        .chain(OPTIONAL_FILES)
        .filter(|f| dir.join(f).is_file())
    {
        files.push(((*f).to_string(), sha256_file(&dir.join(f))?));
    }
    Ok(ModelDir {
        path: dir.to_path_buf(),
        id: dir.display().to_string(),
        revision: "local".to_string(),
        files,
    })
}

/// What the Hub says of one file at a revision.
#[derive(Debug, Clone)]
struct FileMeta {
    commit: String,
    /// Normalized (no `W/`, no quotes): the blob's name.
    etag: String,
    size: u64,
    /// Where to GET it (the CDN for an LFS file).
    location: Uri,
}

/// How a blob is checked: by its name, which is its hash.
enum Check {
    Sha256(Sha256),
    GitSha1(Sha1),
    /// An ETag of another form: only the size is checked.
    Size,
}

impl Check {
    fn new(etag: &str, size: u64) -> Check {
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
    fn update(&mut self, data: &[u8]) {
        match self {
            Check::Sha256(h) => h.update(data),
            Check::GitSha1(h) => h.update(data),
            Check::Size => {}
        }
    }
    /// (algorithm, hex digest) when there is one.
    fn finish(self) -> Option<(&'static str, String)> {
        match self {
            Check::Sha256(h) => Some(("sha256", hex(&h.finalize()))),
            Check::GitSha1(h) => Some(("git blob sha1", hex(&h.finalize()))),
            Check::Size => None,
        }
    }
}

type HubClient = Client<HttpsConnector<GuardedConnector>, Empty<Bytes>>;

/// Fetches models into the Hugging Face cache.
pub struct ModelCache {
    config: HubConfig,
    client: HubClient,
}

impl fmt::Debug for ModelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelCache")
            .field("config", &self.config)
            .finish()
    }
}

/// One model being fetched.
struct Job<'a> {
    id: &'a str,
    repo_dir: PathBuf,
    progress: Progress<'a>,
    cancel: &'a CancellationToken,
}

fn host_of(u: &Uri) -> String {
    u.authority().map(|a| a.to_string()).unwrap_or_default()
}

/// The URL without its query (a CDN URL's query is a signature: never shown).
fn shown(u: &Uri) -> String {
    format!(
        "{}://{}{}",
        u.scheme_str().unwrap_or("http"),
        host_of(u),
        u.path()
    )
}

fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

fn normalize_etag(e: &str) -> String {
    e.trim()
        .strip_prefix("W/")
        .unwrap_or(e.trim())
        .trim_matches('"')
        .to_string()
}

/// Why a request got no answer: an address the guard refused (not retried), or anything else.
enum SendFailure {
    Forbidden(String),
    Other(String),
}

/// A blob name must not leave `blobs/`.
fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `Location` resolved against the URL it answered.
fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.parse().ok();
    }
    let scheme = base.scheme_str()?;
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}").parse().ok();
    }
    let authority = base.authority()?;
    if location.starts_with('/') {
        return format!("{scheme}://{authority}{location}").parse().ok();
    }
    let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
    format!("{scheme}://{authority}{dir}/{location}")
        .parse()
        .ok()
}

fn quote(s: &str) -> String {
    // What `huggingface_hub` quotes: the revision entirely (`/` too), a path but its `/`.
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%2D", "-")
        .replace("%2E", ".")
        .replace("%5F", "_")
        .replace("%7E", "~")
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `flock`s `path` (created if needed) without blocking the runtime; waits while another
/// process (ours or `huggingface_hub`, which locks the same file) holds it.
async fn lock(path: &Path, cancel: &CancellationToken, model: &str) -> Result<File> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(path)
        .map_err(io_err("cannot open the lock", path))?;
    let mut told = false;
    loop {
        match crate::flock::try_lock(&f) {
            Ok(true) => return Ok(f),
            Ok(false) => {}
            Err(err) => {
                return Err(ModelCacheError::Io {
                    what: "cannot take the lock",
                    path: path.to_path_buf(),
                    source: err,
                })
            }
        }
        if !told {
            tracing::info!(lock = %path.display(), "another process is downloading this file; waiting");
            told = true;
        }
        zotero_net::sleep(Duration::from_millis(100), cancel)
            .await
            .map_err(|_| ModelCacheError::Cancelled {
                model: model.to_string(),
            })?;
    }
}

/// Writes `content` to `path` atomically (a temp file renamed over it).
fn write_atomic(path: &Path, content: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let tmp = path.with_file_name(format!(
        "{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("ref"),
        std::process::id()
    ));
    fs::write(&tmp, content).map_err(io_err("cannot write", &tmp))?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644))
        .map_err(io_err("cannot set permissions of", &tmp))?;
    fs::rename(&tmp, path).map_err(io_err("cannot write", path))
}

/// `snapshots/{commit}/{file}` → `../../blobs/{etag}` (one more `../` per directory level of
/// `file`), replaced atomically.
fn link_snapshot(repo_dir: &Path, commit: &str, file: &str, etag: &str) -> Result<()> {
    let pointer = repo_dir.join("snapshots").join(commit).join(file);
    let depth = file.matches('/').count();
    let target = format!("{}blobs/{etag}", "../".repeat(2 + depth));
    if fs::read_link(&pointer).is_ok_and(|t| t == Path::new(&target)) {
        return Ok(());
    }
    if let Some(parent) = pointer.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let tmp = pointer.with_file_name(format!(
        ".{}.{}.tmp",
        pointer
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("link"),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&target, &tmp).map_err(io_err("cannot create the link", &tmp))?;
    fs::rename(&tmp, &pointer).map_err(io_err("cannot create the link", &pointer))
}

fn sync_dir(dir: &Path) {
    // Makes the rename durable; a failure only loses durability, not correctness.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

enum Fetched {
    Done,
    /// The server ignored `Range` or refused it: start over.
    Restart,
}

impl ModelCache {
    pub fn new(config: HubConfig) -> Result<ModelCache> {
        let config = config.with_token_file();
        let policy = AddressPolicy::from_config(config.allow_http_loopback);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(guarded_https_connector(policy, config.timeout).map_err(ModelCacheError::Tls)?);
        Ok(ModelCache { config, client })
    }

    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    /// The directory of `org/name` in the cache: `models--org--name`.
    pub fn repo_dir(&self, id: &str) -> PathBuf {
        self.config
            .cache_dir
            .join(format!("models--{}", id.replace('/', "--")))
    }

    /// The model's directory: a local one checked, or a Hub one from the cache, downloading
    /// what is missing (unless offline). `progress` hears of every downloaded piece;
    /// `cancel` stops between pieces, leaving the partial file for the next run to resume.
    pub async fn get(
        &self,
        spec: &ModelSpec,
        progress: Progress<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelDir> {
        let (id, revision) = match spec {
            ModelSpec::Local(dir) => {
                // Hashing a 90 MB file: not on the runtime's threads.
                let path = dir.clone();
                return tokio::task::spawn_blocking(move || local_model_dir(&path))
                    .await
                    .map_err(|e| ModelCacheError::Io {
                        what: "hashing failed in",
                        path: dir.clone(),
                        source: io::Error::other(e.to_string()),
                    })?;
            }
            ModelSpec::Hub { id, revision } => (id.as_str(), revision.as_str()),
        };
        let job = Job {
            id,
            repo_dir: self.repo_dir(id),
            progress,
            cancel,
        };
        if is_commit(revision) {
            if let Some(dir) = self.snapshot(&job, revision, self.config.offline)? {
                return Ok(dir);
            }
        }
        if self.config.offline {
            return self.offline(&job, revision);
        }

        let mut commit: Option<String> = is_commit(revision).then(|| revision.to_string());
        for (i, file) in REQUIRED_FILES.iter().chain(OPTIONAL_FILES).enumerate() {
            if cancel.is_cancelled() {
                return Err(ModelCacheError::Cancelled {
                    model: id.to_string(),
                });
            }
            let optional = i >= REQUIRED_FILES.len();
            let rev = commit.clone().unwrap_or_else(|| revision.to_string());
            if commit.is_some() {
                let snap = job.repo_dir.join("snapshots").join(&rev);
                if snap.join(file).exists()
                    || job
                        .repo_dir
                        .join(".no_exist")
                        .join(&rev)
                        .join(file)
                        .exists()
                {
                    continue;
                }
            }
            let meta = match self.head(&job, &rev, file).await {
                Ok(m) => m,
                Err(ModelCacheError::FileNotFound { .. }) if optional => {
                    let marker = job.repo_dir.join(".no_exist").join(&rev).join(file);
                    if let Some(parent) = marker.parent() {
                        let _ = fs::create_dir_all(parent);
                    }
                    // Python's cache marks it so; a failure only costs a HEAD next time.
                    let _ = File::create(&marker);
                    continue;
                }
                Err(e) if commit.is_none() && Self::may_fall_back(&e) => {
                    // The Hub is unreachable: the last snapshot this revision pointed to
                    // will do, as `huggingface_hub` does.
                    if let Some(c) = self.read_ref(&job, revision) {
                        if let Some(dir) = self.snapshot(&job, &c, true)? {
                            tracing::warn!(model = %id, revision, commit = %c, error = %e, "the Hub cannot be reached; using the cached snapshot");
                            return Ok(dir);
                        }
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
            if commit.is_none() {
                if meta.commit != revision {
                    // Best effort, as Python: a read-only cache with the snapshot still works.
                    let ref_path = job.repo_dir.join("refs").join(revision);
                    if let Err(e) = write_atomic(&ref_path, &meta.commit) {
                        tracing::warn!(error = %e, "cannot record the commit of the revision");
                    }
                }
                commit = Some(meta.commit.clone());
                if let Some(dir) = self.snapshot(&job, &meta.commit, false)? {
                    return Ok(dir);
                }
            }
            self.fetch_file(&job, file, &meta).await?;
        }
        let commit = commit.unwrap_or_else(|| revision.to_string());
        self.snapshot(&job, &commit, true)?
            .ok_or_else(|| ModelCacheError::MissingFile {
                dir: job.repo_dir.join("snapshots").join(&commit),
                file: REQUIRED_FILES
                    .iter()
                    .find(|f| {
                        !job.repo_dir
                            .join("snapshots")
                            .join(&commit)
                            .join(f)
                            .is_file()
                    })
                    .map_or_else(String::new, |f| (*f).to_string()),
            })
    }

    fn may_fall_back(e: &ModelCacheError) -> bool {
        match e {
            ModelCacheError::Network { .. } | ModelCacheError::NotAHub { .. } => true,
            ModelCacheError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    fn read_ref(&self, job: &Job<'_>, revision: &str) -> Option<String> {
        if is_commit(revision) {
            return Some(revision.to_string());
        }
        let c = fs::read_to_string(job.repo_dir.join("refs").join(revision)).ok()?;
        let c = c.trim();
        is_commit(c).then(|| c.to_string())
    }

    fn offline(&self, job: &Job<'_>, revision: &str) -> Result<ModelDir> {
        let err = |missing: String| ModelCacheError::Offline {
            model: format!("{}@{revision}", job.id),
            cache: self.config.cache_dir.clone(),
            missing,
        };
        let Some(commit) = self.read_ref(job, revision) else {
            return Err(err(format!(
                "no refs/{revision} in {}",
                job.repo_dir.display()
            )));
        };
        match self.snapshot(job, &commit, true)? {
            Some(dir) => Ok(dir),
            None => Err(err(format!("snapshot {commit} incomplete"))),
        }
    }

    /// The snapshot of `commit` when it is complete: every required file, and each optional
    /// one present or known absent (`.no_exist`), unless `lenient` (offline) accepts not
    /// knowing.
    fn snapshot(&self, job: &Job<'_>, commit: &str, lenient: bool) -> Result<Option<ModelDir>> {
        let snap = job.repo_dir.join("snapshots").join(commit);
        if REQUIRED_FILES.iter().any(|f| !snap.join(f).is_file()) {
            return Ok(None);
        }
        let unknown = OPTIONAL_FILES.iter().any(|f| {
            !snap.join(f).is_file() && !job.repo_dir.join(".no_exist").join(commit).join(f).exists()
        });
        if unknown && !lenient {
            return Ok(None);
        }
        check_weights(&snap)?;
        let mut files = Vec::new();
        for f in REQUIRED_FILES
            .iter()
            .chain(OPTIONAL_FILES)
            .filter(|f| snap.join(f).is_file())
        {
            let path = snap.join(f);
            // An LFS blob is named by its sha256 (checked when we downloaded it; Python
            // checks its size): trusted rather than reading 90 MB at every start.
            let named = fs::read_link(&path).ok().and_then(|t| {
                let name = t.file_name()?.to_str()?.to_string();
                (name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
            });
            let sha = match named {
                Some(n) => n,
                None => sha256_file(&path)?,
            };
            files.push(((*f).to_string(), sha));
        }
        Ok(Some(ModelDir {
            path: snap,
            id: job.id.to_string(),
            revision: commit.to_string(),
            files,
        }))
    }

    fn check_url(&self, u: &Uri) -> Result<()> {
        match u.scheme_str() {
            Some("https") => Ok(()),
            Some("http")
                if self.config.allow_http_loopback && u.host().is_some_and(is_loopback) =>
            {
                Ok(())
            }
            _ => Err(ModelCacheError::Insecure { url: shown(u) }),
        }
    }

    /// One request (retried on 429, 5xx and network failures), with the token only for the
    /// endpoint's own host.
    async fn send(
        &self,
        job: &Job<'_>,
        method: Method,
        url: &Uri,
        from: Option<u64>,
    ) -> Result<Response<hyper::body::Incoming>> {
        self.check_url(url)?;
        let endpoint_host = self
            .config
            .endpoint
            .parse::<Uri>()
            .ok()
            .map(|u| host_of(&u));
        let with_token = endpoint_host.as_deref() == Some(host_of(url).as_str());
        let build = || {
            let mut r = Request::builder()
                .method(method.clone())
                .uri(url.clone())
                .header(USER_AGENT, user_agent())
                // The size of the file, not of a compressed answer.
                .header(ACCEPT_ENCODING, "identity");
            if let (true, Some(t)) = (with_token, &self.config.token) {
                r = r.header(AUTHORIZATION, format!("Bearer {t}"));
            }
            if let Some(n) = from.filter(|n| *n > 0) {
                r = r.header(RANGE, format!("bytes={n}-"));
            }
            r.body(Empty::new())
        };
        let retry = Retry {
            policy: &self.config.retry,
            gate: None,
            repeatable: true,
            cancel: job.cancel,
        };
        let outcome = retry
            .run(|_| async {
                let req = match build() {
                    Ok(r) => r,
                    Err(e) => return Attempt::Fatal(SendFailure::Other(e.to_string())),
                };
                match tokio::time::timeout(self.config.timeout, self.client.request(req)).await {
                    Err(_) => Attempt::Failed(SendFailure::Other(format!(
                        "no answer within {}",
                        shown_duration(self.config.timeout)
                    ))),
                    Ok(Err(e)) => match find_forbidden(&e) {
                        // Not retried: the address will not change its nature.
                        Some(f) => Attempt::Fatal(SendFailure::Forbidden(f.to_string())),
                        None => Attempt::Failed(SendFailure::Other(ErrorChain(&e).to_string())),
                    },
                    Ok(Ok(resp)) => {
                        let wait =
                            zotero_net::retry_after(resp.headers(), std::time::SystemTime::now());
                        Attempt::judge(resp.status().as_u16(), wait, resp)
                    }
                }
            })
            .await;
        match outcome {
            Ok((resp, _)) => Ok(resp),
            Err(RetryError::Cancelled) => Err(ModelCacheError::Cancelled {
                model: job.id.to_string(),
            }),
            Err(RetryError::WaitTooLong {
                answer: Some(resp), ..
            }) => Ok(resp),
            Err(RetryError::WaitTooLong { wait, answer: None }) => Err(ModelCacheError::Network {
                model: job.id.to_string(),
                host: host_of(url),
                reason: format!("asked to wait {} s", wait.as_secs()),
            }),
            Err(RetryError::Failed(SendFailure::Forbidden(address))) => {
                Err(ModelCacheError::Forbidden {
                    model: job.id.to_string(),
                    address,
                })
            }
            Err(RetryError::Failed(SendFailure::Other(reason))) => Err(ModelCacheError::Network {
                model: job.id.to_string(),
                host: host_of(url),
                reason: self.config.scrub(&reason),
            }),
        }
    }

    /// The error an unsuccessful answer of the Hub means.
    fn status_error(
        &self,
        job: &Job<'_>,
        revision: &str,
        file: &str,
        url: &Uri,
        h: &HeaderMap,
        status: StatusCode,
    ) -> ModelCacheError {
        let code = header(h, "x-error-code").unwrap_or("");
        let message = self
            .config
            .scrub(header(h, "x-error-message").unwrap_or(""));
        let endpoint = self.config.endpoint.clone();
        let model = job.id.to_string();
        let s = status.as_u16();
        match (s, code) {
            (_, "GatedRepo") | (403, _) => ModelCacheError::Gated {
                model,
                status: s,
                advice: if self.config.has_token() {
                    format!("the token in HF_TOKEN has no access to it: accept its terms on {endpoint}/{} with that account, or set HF_TOKEN to another token", job.id)
                } else {
                    format!("accept its terms on {endpoint}/{} and set HF_TOKEN to a token of that account", job.id)
                },
                endpoint,
            },
            (_, "RepoNotFound") => ModelCacheError::RepoNotFound { model, endpoint },
            (401, _) => ModelCacheError::Gated {
                model,
                status: s,
                advice: if self.config.has_token() {
                    "the token in HF_TOKEN was refused: set HF_TOKEN to a valid token that may read it".to_string()
                } else {
                    format!("it needs a login: set HF_TOKEN to a token that may read it (and accept its terms on {endpoint}/{} if it is gated)", job.id)
                },
                endpoint,
            },
            (_, "RevisionNotFound") => ModelCacheError::RevisionNotFound {
                model,
                revision: revision.to_string(),
                endpoint,
            },
            (404, _) => ModelCacheError::FileNotFound {
                model,
                revision: revision.to_string(),
                file: file.to_string(),
            },
            _ => ModelCacheError::Status {
                model,
                url: shown(url),
                status: s,
                message: if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                },
            },
        }
    }

    fn resolve_url(&self, id: &str, revision: &str, file: &str) -> String {
        let path = file.split('/').map(quote).collect::<Vec<_>>().join("/");
        format!(
            "{}/{id}/resolve/{}/{path}",
            self.config.endpoint,
            quote(revision)
        )
    }

    /// `HEAD …/resolve/{revision}/{file}`, following the Hub's own redirects (a renamed
    /// repo) but not the one to the CDN, whose headers say what the file is.
    async fn head(&self, job: &Job<'_>, revision: &str, file: &str) -> Result<FileMeta> {
        let first = self.resolve_url(job.id, revision, file);
        let mut url: Uri = first.parse().map_err(|_| ModelCacheError::NotAHub {
            url: first.clone(),
            reason: "HF_ENDPOINT does not make a valid URL".to_string(),
        })?;
        for _ in 0..=MAX_REDIRECTS {
            let resp = self.send(job, Method::HEAD, &url, None).await?;
            let status = resp.status();
            let h = resp.headers();
            let not_hub = |reason: &str| ModelCacheError::NotAHub {
                url: shown(&url),
                reason: reason.to_string(),
            };
            let location = if status.is_redirection() {
                let loc = header(h, LOCATION.as_str())
                    .and_then(|l| resolve(&url, l))
                    .ok_or_else(|| not_hub("a redirect without a usable Location"))?;
                if host_of(&loc) == host_of(&url) && h.get("x-linked-etag").is_none() {
                    url = loc;
                    continue;
                }
                loc
            } else if status.is_success() {
                // GET at the commit, not the branch: every file of one commit even if the
                // branch moves meanwhile.
                match header(h, "x-repo-commit").filter(|c| is_commit(c)) {
                    Some(c) if url.to_string() == first => self
                        .resolve_url(job.id, c, file)
                        .parse()
                        .unwrap_or_else(|_| url.clone()),
                    _ => url.clone(),
                }
            } else {
                return Err(self.status_error(job, revision, file, &url, h, status));
            };
            let commit = header(h, "x-repo-commit")
                .filter(|c| is_commit(c))
                .ok_or_else(|| not_hub("no X-Repo-Commit commit hash"))?
                .to_string();
            let etag = header(h, "x-linked-etag")
                .or_else(|| header(h, "etag"))
                .map(normalize_etag)
                .filter(|e| safe_name(e))
                .ok_or_else(|| not_hub("no usable ETag"))?;
            let size = header(h, "x-linked-size")
                .or_else(|| {
                    (!status.is_redirection())
                        .then(|| header(h, CONTENT_LENGTH.as_str()))
                        .flatten()
                })
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| not_hub("no size (X-Linked-Size or Content-Length)"))?;
            return Ok(FileMeta {
                commit,
                etag,
                size,
                location,
            });
        }
        Err(ModelCacheError::TooManyRedirects { url: first })
    }

    /// Puts `file` in the snapshot: its blob downloaded unless present, then the link.
    async fn fetch_file(&self, job: &Job<'_>, file: &str, meta: &FileMeta) -> Result<()> {
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
    async fn download(
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn config_follows_huggingface_hub() {
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u")]));
        assert_eq!(c.endpoint, "https://huggingface.co");
        assert_eq!(c.cache_dir, PathBuf::from("/home/u/.cache/huggingface/hub"));
        assert!(!c.offline && !c.has_token());
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", "/x"),
            ("HF_ENDPOINT", "https://mirror.example/"),
            ("HF_HUB_OFFLINE", "yes"),
            ("HF_TOKEN", "hf_secret"),
        ]));
        assert_eq!(c.endpoint, "https://mirror.example");
        assert_eq!(c.cache_dir, PathBuf::from("/x/huggingface/hub"));
        assert!(c.offline && c.has_token());
        assert!(!format!("{c:?}").contains("hf_secret"));
        // The login's token file is read by the cache that may download, not by the
        // configuration (read at every start).
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "hf_from_file\n").unwrap();
        let path = file.display().to_string();
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u"), ("HF_TOKEN_PATH", &path)]));
        assert!(!c.has_token());
        assert!(ModelCache::new(c).unwrap().config().has_token());
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("HF_TOKEN_PATH", &path),
            ("HF_TOKEN", "hf_env"),
        ]));
        assert_eq!(
            ModelCache::new(c).unwrap().config().token.as_deref(),
            Some("hf_env")
        );
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u"), ("HF_HOME", "~/hf")]));
        assert_eq!(c.cache_dir, PathBuf::from("/home/u/hf/hub"));
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("HF_HOME", "/h"),
            ("D", "/data"),
            ("HF_HUB_CACHE", "${D}/hub-cache"),
            ("TRANSFORMERS_OFFLINE", "1"),
        ]));
        assert_eq!(c.cache_dir, PathBuf::from("/data/hub-cache"));
        assert!(c.offline);
        let c = HubConfig::from_env(&env(&[("HOME", "/h"), ("HF_HUB_OFFLINE", "0")]));
        assert!(!c.offline);
    }

    #[test]
    fn timeouts_are_shown_without_rounding_to_zero() {
        assert_eq!(shown_duration(Duration::from_millis(400)), "400 ms");
        assert_eq!(shown_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(shown_duration(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(shown_duration(Duration::from_micros(10)), "1 ms");
    }

    #[test]
    fn specs_parse() {
        let e = env(&[("HOME", "/home/u")]);
        assert_eq!(
            ModelSpec::parse_with("BAAI/bge-small-en-v1.5", &e).unwrap(),
            ModelSpec::Hub {
                id: "BAAI/bge-small-en-v1.5".into(),
                revision: "main".into()
            }
        );
        let pinned = ModelSpec::parse_with(DEFAULT_MODEL, &e).unwrap();
        assert!(pinned.is_pinned());
        assert!(ModelSpec::parse_with(BGE_SMALL_MODEL, &e)
            .unwrap()
            .is_pinned());
        assert_eq!(
            ModelSpec::parse_with("~/models/m", &e).unwrap(),
            ModelSpec::Local(PathBuf::from("/home/u/models/m"))
        );
        assert_eq!(
            ModelSpec::parse_with("./m", &e).unwrap(),
            ModelSpec::Local(PathBuf::from("./m"))
        );
        assert_eq!(ModelSpec::from_env(&e).unwrap(), pinned);
        for bad in [
            "", "name", "a/b/c", "a//b", "-a/b", "a/b@", "a/b@x y", "a/b@../x", "a--x/b",
        ] {
            let err = ModelSpec::parse_with(bad, &e).unwrap_err();
            assert!(
                matches!(err, ModelCacheError::BadSpec { .. }),
                "{bad}: {err}"
            );
        }
        let err = ModelSpec::parse_with("all-MiniLM-L6-v2", &e)
            .unwrap_err()
            .to_string();
        assert!(err.contains("org/name") && err.contains("./"), "{err}");
    }

    #[test]
    fn urls_resolve_and_quote() {
        let base: Uri = "https://huggingface.co/a/b/resolve/main/x".parse().unwrap();
        assert_eq!(
            resolve(&base, "/api/x").unwrap().to_string(),
            "https://huggingface.co/api/x"
        );
        assert_eq!(
            resolve(&base, "https://cdn-lfs.hf.co/r?s=1")
                .unwrap()
                .to_string(),
            "https://cdn-lfs.hf.co/r?s=1"
        );
        assert_eq!(quote("refs/pr/1"), "refs%2Fpr%2F1");
        assert_eq!(
            quote("config_sentence-transformers.json"),
            "config_sentence-transformers.json"
        );
        assert_eq!(normalize_etag("W/\"abc\""), "abc");
        assert!(!safe_name("../x") && !safe_name("a/b") && safe_name("abc.def"));
        assert!(is_loopback("127.0.0.1") && is_loopback("localhost") && is_loopback("[::1]"));
        assert!(!is_loopback("example.org"));
    }
}
