//! Configuration: every environment variable the server reads, read once at start-up.
//!
//! Nothing else in the program reads the environment: `Config` is passed down as plain values.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod database;
mod index;
mod tools;
mod uploads;

pub use database::DatabaseConfig;
pub use index::ModelSource;
pub use tools::ToolSet;
pub use uploads::DEFAULT_UPLOAD_MAX_BYTES;

/// A configuration value that could not be used. The message names the variable and says
/// what would be accepted, so the user knows exactly what to change.
#[derive(Debug, thiserror::Error)]
#[error("invalid {var}={value:?}: {expected}")]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub expected: String,
}

pub use zotero_api::config::{ApiKey, CacheConfig};
pub use zotero_net::RetryPolicy as RetryConfig;

#[derive(Debug, Clone)]
pub struct Config {
    pub api_key: Option<ApiKey>,
    pub user_id: Option<u64>,
    /// Base URL without a trailing slash, `http://` or `https://`.
    pub api_base: String,
    pub debug: bool,
    /// A `tracing` filter directive such as `info` or `debug`.
    pub log_level: String,
    pub retry: RetryConfig,
    /// `None` when the read cache is off.
    pub read_cache: Option<CacheConfig>,
    pub upload_max_bytes: u64,
    pub timeout: Duration,
    /// How often a library with subscribed resources is polled for changes
    /// (`ZOTERO_SUBSCRIBE_POLL_SECONDS`, 30 by default; quiet libraries back off from it).
    pub subscribe_poll: Duration,
    /// Which addresses requests to outside hosts may reach (`file_url` and arXiv fetches, the
    /// metadata services and the hosts they redirect to, the model hub): public ones only,
    /// or also loopback, private, link-local and unspecified ones
    /// (`ZOTERO_FETCH_ALLOW_PRIVATE=1`; tests use it to reach the emulator).
    pub fetch_policy: zotero_net::AddressPolicy,
    /// Every configured secret (the Zotero API key, `ZOTERO_NCBI_API_KEY`,
    /// `ZOTERO_MCP_HTTP_TOKEN`, `HF_TOKEN`): scrubbed from what outside hosts answer before
    /// it is shown or logged.
    pub secrets: zotero_net::Secrets,
    /// Where arXiv PDFs are fetched from: `{arxiv_base}/pdf/<id>` (`ZOTERO_ARXIV_BASE`).
    pub arxiv_base: String,
    /// Where downloads are spooled before they are hashed and uploaded (`TMPDIR`, read once
    /// here; a scratch image may have none, and then downloads are held in memory).
    pub temp_dir: PathBuf,
    /// The library a tool call is about when it names none (`ZOTERO_LIBRARY`: `user` or
    /// `group:<id>`).
    pub library: zotero_api::LibraryRef,
    /// Read through the Zotero desktop app's local API (`ZOTERO_LOCAL=1`).
    pub local: bool,
    /// `ZOTERO_LOCAL_API_BASE`, without a trailing slash.
    pub local_api_base: String,
    /// Zotero's own database (`ZOTERO_DATA_DIR`, `ZOTERO_DATABASE=1`); `None` when unused.
    pub database: Option<DatabaseConfig>,
    /// No tool may change the library: write tools are neither listed nor callable
    /// (`ZOTERO_READ_ONLY=1`).
    pub read_only: bool,
    /// The tool sets listed and callable (`ZOTERO_TOOLSETS`; every set when unset).
    pub toolsets: BTreeSet<ToolSet>,
    /// Where the search indexes live (`ZOTERO_INDEX_DIR`, else under `XDG_DATA_HOME`, else
    /// under `HOME`); `Err` says why there is no place.
    pub index_dir: Result<std::path::PathBuf, String>,
    /// `ZOTERO_EMBEDDING_MODEL` as given: the sentence model for search by meaning (a Hugging
    /// Face id, `id@revision`, or a directory; `none` for words only).
    pub embedding_model: Option<String>,
    /// The model that makes the index's vectors (`ZOTERO_EMBEDDING_MODEL`, else the default
    /// all-MiniLM-L6-v2 at a pinned commit) and where it is fetched from and cached (`HF_*`);
    /// `None` with `ZOTERO_EMBEDDING_MODEL=none`.
    pub embedding: Option<ModelSource>,
    /// The only directories `file_path` may read from (`ZOTERO_UPLOAD_ROOTS`), each resolved
    /// here, once; empty: the default policy (no hidden names, no system trees).
    pub upload_roots: Vec<PathBuf>,
    /// The root of each metadata service, when a variable (`ZOTERO_DOI_BASE`, …) replaces
    /// the public one.
    pub metadata_bases: HashMap<zotero_metadata::services::Service, String>,
    /// `ZOTERO_CONTACT_EMAIL`: named to the metadata services (Crossref's polite pool,
    /// NCBI), and what lets Unpaywall be asked for open-access PDFs.
    pub contact_email: Option<String>,
    /// `ZOTERO_NCBI_API_KEY`: E-utilities at 10 requests a second instead of 3.
    pub ncbi_api_key: Option<zotero_net::SecretString>,
    /// `ZOTERO_MCP_HTTP_TOKEN`: the bearer token every Streamable HTTP request must carry;
    /// required to bind beyond loopback.
    pub http_token: Option<HttpToken>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`: `Host` values accepted besides the loopback names and
    /// the bound address (`host` for any port, `host:port`, or `*` for any), lowercased.
    pub http_allowed_hosts: Vec<String>,
    /// `ZOTERO_MCP_HTTP_ALLOWED_ORIGINS`: `Origin` values accepted besides loopback origins
    /// (`https://app.example.org`, `http://host:port`, or `null`), lowercased.
    pub http_allowed_origins: Vec<String>,
    /// `ZOTERO_MCP_HTTP_SESSIONS`: Streamable HTTP keeps sessions (`Mcp-Session-Id`), so the
    /// server can send a client requests and notifications outside a call's answer
    /// (subscriptions, confirmations, log messages). Off by default: stateless.
    pub http_sessions: bool,
    /// `ZOTERO_MCP_HTTP_MAX_SESSIONS`: how many sessions may be open at once (100).
    pub http_max_sessions: usize,
    /// `ZOTERO_MCP_HTTP_MAX_CONNECTIONS`: how many HTTP connections may be open at once (512).
    pub http_max_connections: usize,
    /// `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES`: how many bytes of request bodies all connections
    /// together may hold in memory; `None`: the default, derived from the largest message.
    pub http_max_buffered_bytes: Option<u64>,
    /// `ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS`: how long a request body may send nothing (10 s).
    pub http_body_idle: Duration,
    /// `ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS`: how long a whole request body may take (120 s).
    pub http_body_timeout: Duration,
}

/// The bearer token of the HTTP transport: never printed, compared in constant time.
#[derive(Clone)]
pub struct HttpToken(String);

impl HttpToken {
    /// Whether `candidate` is the token, in a time that depends on their lengths only.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let token = self.0.as_bytes();
        let mut diff = token.len() ^ candidate.len();
        for i in 0..token.len().max(candidate.len()) {
            let a = token.get(i).copied().unwrap_or(0);
            let b = candidate.get(i).copied().unwrap_or(0);
            diff |= usize::from(a ^ b);
        }
        std::hint::black_box(diff) == 0
    }
}

impl std::fmt::Debug for HttpToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpToken(<redacted>)")
    }
}

/// The shortest bearer token accepted.
pub const MIN_HTTP_TOKEN_CHARS: usize = 16;

/// The smallest `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES`: below it even ordinary calls would be
/// refused.
pub const MIN_HTTP_BUFFERED_BYTES: u64 = 1 << 20;

pub const DEFAULT_API_BASE: &str = "https://api.zotero.org";
pub const DEFAULT_ARXIV_BASE: &str = "https://arxiv.org";
pub const DEFAULT_LOCAL_API_BASE: &str = "http://localhost:23119/api";

/// The variables a user must set before any tool can reach Zotero.
pub const CREDENTIAL_VARS: [&str; 2] = ["ZOTERO_API_KEY", "ZOTERO_USER_ID"];

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_map(&std::env::vars().collect())
    }

    /// Reads configuration from a map of variables (the environment, or a test's map).
    pub fn from_map(env: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let get = |name: &str| {
            env.get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };

        let api_key = get("ZOTERO_API_KEY").map(ApiKey::new);
        let user_id = match get("ZOTERO_USER_ID") {
            None => None,
            Some(v) => Some(v.parse::<u64>().map_err(|_| ConfigError {
                var: "ZOTERO_USER_ID",
                value: v.clone(),
                expected:
                    "the numeric user ID shown at https://www.zotero.org/settings/keys".into(),
            })?),
        };

        let api_base = match get("ZOTERO_API_BASE") {
            None => DEFAULT_API_BASE.to_string(),
            Some(v) => parse_base("ZOTERO_API_BASE", &v)?,
        };
        let arxiv_base = match get("ZOTERO_ARXIV_BASE") {
            None => DEFAULT_ARXIV_BASE.to_string(),
            Some(v) => parse_base("ZOTERO_ARXIV_BASE", &v)?,
        };
        let fetch_allow_private = parse_bool(&get, "ZOTERO_FETCH_ALLOW_PRIVATE", false)?;
        let library = match get("ZOTERO_LIBRARY") {
            None => zotero_api::LibraryRef::User,
            Some(v) => v.parse().map_err(|_| ConfigError {
                var: "ZOTERO_LIBRARY",
                value: v.clone(),
                expected: "user, or group:<groupID> such as group:12345".into(),
            })?,
        };
        let local = parse_bool(&get, "ZOTERO_LOCAL", false)?;
        let local_api_base = match get("ZOTERO_LOCAL_API_BASE") {
            None => DEFAULT_LOCAL_API_BASE.to_string(),
            Some(v) => parse_base("ZOTERO_LOCAL_API_BASE", &v)?,
        };
        let database = DatabaseConfig::read(&get)?;
        let temp_dir = get("TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));

        let debug = parse_bool(&get, "ZOTERO_MCP_DEBUG", false)?;
        let log_level = match get("ZOTERO_MCP_LOG_LEVEL") {
            None => "info".to_string(),
            Some(v) => {
                let lower = v.to_ascii_lowercase();
                let level = match lower.as_str() {
                    "warning" => "warn",
                    "critical" | "fatal" => "error",
                    other => other,
                };
                if !["trace", "debug", "info", "warn", "error", "off"].contains(&level) {
                    return Err(ConfigError {
                        var: "ZOTERO_MCP_LOG_LEVEL",
                        value: v,
                        expected: "one of TRACE, DEBUG, INFO, WARN, ERROR, OFF".into(),
                    });
                }
                level.to_string()
            }
        };

        let max_attempts = parse_num::<u32>(&get, "ZOTERO_RETRY_MAX_ATTEMPTS", 3)?;
        if max_attempts == 0 {
            return Err(ConfigError {
                var: "ZOTERO_RETRY_MAX_ATTEMPTS",
                value: "0".into(),
                expected: "a whole number of at least 1 (1 means no retry)".into(),
            });
        }
        let retry = RetryConfig {
            max_attempts,
            base_delay: parse_secs(&get, "ZOTERO_RETRY_BASE_DELAY", 0.5)?,
            max_delay: parse_secs(&get, "ZOTERO_RETRY_MAX_DELAY", 4.0)?,
            max_wait: parse_secs(&get, "ZOTERO_RETRY_MAX_WAIT", 30.0)?,
        };

        // TTL and size are validated even while the cache is off: a typo should not wait
        // until the cache is switched on.
        let cache = CacheConfig {
            ttl: parse_secs(&get, "ZOTERO_READ_CACHE_TTL", 30.0)?,
            max_entries: parse_num::<usize>(&get, "ZOTERO_READ_CACHE_MAX", 128)?,
        };
        let read_cache = parse_bool(&get, "ZOTERO_READ_CACHE", false)?.then_some(cache);

        let upload_max_bytes =
            parse_num::<u64>(&get, "ZOTERO_UPLOAD_MAX_BYTES", DEFAULT_UPLOAD_MAX_BYTES)?;
        let timeout = parse_secs(&get, "ZOTERO_TIMEOUT_SECONDS", 30.0)?;
        if timeout.is_zero() {
            return Err(ConfigError {
                var: "ZOTERO_TIMEOUT_SECONDS",
                value: "0".into(),
                expected: "a positive number of seconds".into(),
            });
        }

        let subscribe_poll = parse_secs(&get, "ZOTERO_SUBSCRIBE_POLL_SECONDS", 30.0)?;
        if subscribe_poll < Duration::from_millis(10) {
            return Err(ConfigError {
                var: "ZOTERO_SUBSCRIBE_POLL_SECONDS",
                value: format!("{}", subscribe_poll.as_secs_f64()),
                expected: "at least 0.01 seconds".into(),
            });
        }

        let upload_roots = match get("ZOTERO_UPLOAD_ROOTS") {
            None => Vec::new(),
            Some(v) => parse_upload_roots(&v)?,
        };

        let mut metadata_bases = HashMap::new();
        for service in zotero_metadata::services::Service::ALL {
            if let Some(v) = get(service.variable()) {
                metadata_bases.insert(service, parse_base(service.variable(), &v)?);
            }
        }
        let contact_email = match get("ZOTERO_CONTACT_EMAIL") {
            None => None,
            Some(v) => Some(parse_email(&v)?),
        };
        let ncbi_api_key = get("ZOTERO_NCBI_API_KEY").map(zotero_net::SecretString::new);

        let read_only = parse_bool(&get, "ZOTERO_READ_ONLY", false)?;
        let toolsets = match get("ZOTERO_TOOLSETS") {
            None => ToolSet::ALL.into_iter().collect(),
            Some(v) => parse_toolsets(&v)?,
        };

        let index_dir = zotero_index::default_dir(get).map_err(|e| e.to_string());
        let embedding_model = get("ZOTERO_EMBEDDING_MODEL");
        let embedding = match embedding_model.as_deref().map(str::trim) {
            Some(off) if ["none", "off"].contains(&off.to_ascii_lowercase().as_str()) => None,
            _ => Some(ModelSource {
                spec: zotero_hub::ModelSpec::from_env(&get).map_err(|e| ConfigError {
                    var: "ZOTERO_EMBEDDING_MODEL",
                    value: embedding_model.clone().unwrap_or_default(),
                    expected: format!(
                        "a Hugging Face model id (org/name, optionally @revision), a model \
                             directory, or none ({e})"
                    ),
                })?,
                hub: {
                    let mut hub = zotero_hub::HubConfig::from_env(&get);
                    // Plain http to this machine only where fetches may reach it (tests,
                    // with the emulator's Hugging Face host).
                    hub.allow_http_loopback = fetch_allow_private;
                    hub
                },
            }),
        };

        let http_token = match get("ZOTERO_MCP_HTTP_TOKEN") {
            None => None,
            Some(v) => Some(parse_http_token(&v)?),
        };
        let http_allowed_hosts = match get("ZOTERO_MCP_HTTP_ALLOWED_HOSTS") {
            None => Vec::new(),
            Some(v) => parse_allowed_hosts(&v)?,
        };
        let http_allowed_origins = match get("ZOTERO_MCP_HTTP_ALLOWED_ORIGINS") {
            None => Vec::new(),
            Some(v) => parse_allowed_origins(&v)?,
        };
        let http_sessions = parse_bool(&get, "ZOTERO_MCP_HTTP_SESSIONS", false)?;
        let http_max_sessions = parse_count(&get, "ZOTERO_MCP_HTTP_MAX_SESSIONS", 100, 100_000)?;
        let http_max_connections =
            parse_count(&get, "ZOTERO_MCP_HTTP_MAX_CONNECTIONS", 512, 100_000)?;
        let http_max_buffered_bytes = match get("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES") {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n >= MIN_HTTP_BUFFERED_BYTES)
                    .ok_or_else(|| ConfigError {
                        var: "ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES",
                        value: v.clone(),
                        expected: format!(
                            "a whole number of bytes, at least {MIN_HTTP_BUFFERED_BYTES} (1 MiB)"
                        ),
                    })?,
            ),
        };
        let http_body_idle = parse_positive_secs(&get, "ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", 10.0)?;
        let http_body_timeout =
            parse_positive_secs(&get, "ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS", 120.0)?;

        let secrets = zotero_net::Secrets::new(
            [
                api_key.as_ref().map(|k| k.expose().to_string()),
                ncbi_api_key.as_ref().map(|k| k.expose().to_string()),
                get("ZOTERO_MCP_HTTP_TOKEN"),
                get("HF_TOKEN"),
            ]
            .into_iter()
            .flatten(),
        );
        Ok(Config {
            api_key,
            user_id,
            api_base,
            debug,
            log_level,
            retry,
            read_cache,
            upload_max_bytes,
            timeout,
            subscribe_poll,
            fetch_policy: zotero_net::AddressPolicy::from_config(fetch_allow_private),
            secrets,
            arxiv_base,
            temp_dir,
            library,
            local,
            local_api_base,
            database,
            read_only,
            toolsets,
            index_dir,
            embedding_model,
            embedding,
            upload_roots,
            metadata_bases,
            contact_email,
            ncbi_api_key,
            http_token,
            http_allowed_hosts,
            http_allowed_origins,
            http_sessions,
            http_max_sessions,
            http_max_connections,
            http_max_buffered_bytes,
            http_body_idle,
            http_body_timeout,
        })
    }

    /// What the metadata services need.
    pub fn metadata(&self) -> zotero_metadata::services::ServicesConfig {
        zotero_metadata::services::ServicesConfig {
            bases: self.metadata_bases.clone(),
            contact_email: self.contact_email.clone(),
            ncbi_api_key: self.ncbi_api_key.clone(),
            timeout: self.timeout,
            retry: self.retry.clone(),
            min_interval_override: None,
            policy: self.fetch_policy,
            secrets: self.secrets.clone(),
        }
    }

    /// What the Zotero client needs.
    pub fn client(&self) -> zotero_api::ClientConfig {
        zotero_api::ClientConfig {
            api_base: self.api_base.clone(),
            api_key: self.api_key.clone(),
            user_id: self.user_id,
            missing_credentials: self.missing_credentials(),
            retry: self.retry.clone(),
            timeout: self.timeout,
            read_cache: self.read_cache.clone(),
            local_api_base: self.local.then(|| self.local_api_base.clone()),
        }
    }

    /// The desktop app's local API or Zotero's database alone, without the Web API's
    /// credentials: nothing can be written, so the server runs read-only.
    pub fn local_only(&self) -> bool {
        (self.local || self.database.is_some()) && !self.missing_credentials().is_empty()
    }

    /// What the upload sources need.
    pub fn sources(&self) -> zotero_sources::SourcesConfig {
        zotero_sources::SourcesConfig {
            timeout: self.timeout,
            max_bytes: self.upload_max_bytes,
            policy: self.fetch_policy,
            temp_dir: self.temp_dir.clone(),
            upload_roots: self.upload_roots.clone(),
        }
    }

    /// The credential variables that are not set, in the order a user should set them.
    pub fn missing_credentials(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if self.api_key.is_none() {
            missing.push(CREDENTIAL_VARS[0]);
        }
        if self.user_id.is_none() {
            missing.push(CREDENTIAL_VARS[1]);
        }
        missing
    }
}

/// A contact address: something@domain, printable, no spaces (it goes into a header and
/// query strings).
fn parse_email(v: &str) -> Result<String, ConfigError> {
    let ok = v.len() <= 254
        && v.chars().all(|c| c.is_ascii_graphic())
        && v.split_once('@')
            .is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.'));
    if ok {
        Ok(v.to_string())
    } else {
        Err(ConfigError {
            var: "ZOTERO_CONTACT_EMAIL",
            value: v.to_string(),
            expected: "an e-mail address such as you@example.org".into(),
        })
    }
}

/// `ZOTERO_MCP_HTTP_TOKEN`: long enough not to be guessed, and printable without spaces
/// (it travels in a header).
fn parse_http_token(v: &str) -> Result<HttpToken, ConfigError> {
    if v.len() >= MIN_HTTP_TOKEN_CHARS && v.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(HttpToken(v.to_string()))
    } else {
        Err(ConfigError {
            var: "ZOTERO_MCP_HTTP_TOKEN",
            value: "<redacted>".into(),
            expected: format!(
                "at least {MIN_HTTP_TOKEN_CHARS} printable ASCII characters without spaces, \
                 e.g. from `openssl rand -hex 32`"
            ),
        })
    }
}

/// `ZOTERO_MCP_HTTP_ALLOWED_HOSTS`: comma-separated `host`, `host:port`, `[v6]:port` or `*`.
fn parse_allowed_hosts(v: &str) -> Result<Vec<String>, ConfigError> {
    let mut hosts = Vec::new();
    for entry in v.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.to_ascii_lowercase();
        let ok = entry == "*"
            || (!entry.contains(['/', '@', '?', '#'])
                && entry.parse::<hyper::http::uri::Authority>().is_ok());
        if !ok {
            return Err(ConfigError {
                var: "ZOTERO_MCP_HTTP_ALLOWED_HOSTS",
                value: v.to_string(),
                expected: "host names separated by commas, each `host` (any port), `host:port` \
                           or `*` (any host), e.g. mcp.example.org,192.168.1.5:8000"
                    .into(),
            });
        }
        hosts.push(entry);
    }
    Ok(hosts)
}

/// `ZOTERO_MCP_HTTP_ALLOWED_ORIGINS`: comma-separated `http(s)://host[:port]` or `null`.
fn parse_allowed_origins(v: &str) -> Result<Vec<String>, ConfigError> {
    let mut origins = Vec::new();
    for entry in v.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.trim_end_matches('/').to_ascii_lowercase();
        let ok = entry == "null"
            || entry
                .strip_prefix("https://")
                .or_else(|| entry.strip_prefix("http://"))
                .is_some_and(|authority| {
                    !authority.contains(['/', '@', '?', '#'])
                        && authority.parse::<hyper::http::uri::Authority>().is_ok()
                });
        if !ok {
            return Err(ConfigError {
                var: "ZOTERO_MCP_HTTP_ALLOWED_ORIGINS",
                value: v.to_string(),
                expected: "origins separated by commas, each `http://host[:port]`, \
                           `https://host[:port]` or `null`, e.g. https://app.example.org"
                    .into(),
            });
        }
        origins.push(entry);
    }
    Ok(origins)
}

fn parse_base(var: &'static str, v: &str) -> Result<String, ConfigError> {
    let lower = v.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with('/') && !v.contains(['?', '#']) => {
            Ok(v.trim_end_matches('/').to_string())
        }
        _ => Err(ConfigError {
            var,
            value: v.to_string(),
            expected: "an http:// or https:// URL such as https://api.zotero.org".into(),
        }),
    }
}

/// `ZOTERO_UPLOAD_ROOTS`: absolute directories separated by `:` as in `PATH` (empty entries
/// skipped), each resolved now (symlinks followed) so that file paths, resolved the same way,
/// can be compared with them; duplicates dropped.
fn parse_upload_roots(v: &str) -> Result<Vec<PathBuf>, ConfigError> {
    const FORM: &str =
        "give absolute directories separated by ':', e.g. ZOTERO_UPLOAD_ROOTS=/path/to/papers";
    let bad = |why: String| ConfigError {
        var: "ZOTERO_UPLOAD_ROOTS",
        value: v.to_string(),
        expected: format!("{why}; {FORM}"),
    };
    let mut roots = Vec::new();
    for entry in v.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        if entry.starts_with('~') {
            return Err(bad(format!("{entry}: '~' is not expanded")));
        }
        let path = Path::new(entry);
        if !path.is_absolute() {
            return Err(bad(format!("{entry} is not an absolute path")));
        }
        let resolved = std::fs::canonicalize(path).map_err(|e| {
            bad(match e.kind() {
                std::io::ErrorKind::NotFound => format!("{entry} does not exist"),
                _ => format!("{entry} cannot be resolved ({e})"),
            })
        })?;
        if !resolved.is_dir() {
            return Err(bad(format!("{entry} is not a directory")));
        }
        if !roots.contains(&resolved) {
            roots.push(resolved);
        }
    }
    if roots.is_empty() {
        return Err(bad("no directory is given".into()));
    }
    Ok(roots)
}

/// `read,write,files`: names of tool sets, any case, separated by commas.
fn parse_toolsets(v: &str) -> Result<BTreeSet<ToolSet>, ConfigError> {
    let valid = || {
        ToolSet::ALL
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut sets = BTreeSet::new();
    for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let set = ToolSet::from_name(name).ok_or_else(|| ConfigError {
            var: "ZOTERO_TOOLSETS",
            value: v.to_string(),
            expected: format!(
                "'{name}' is not a tool set; give a comma-separated list of {} (e.g. read,write)",
                valid()
            ),
        })?;
        sets.insert(set);
    }
    if sets.is_empty() {
        return Err(ConfigError {
            var: "ZOTERO_TOOLSETS",
            value: v.to_string(),
            expected: format!("a comma-separated list of {} (e.g. read,write)", valid()),
        });
    }
    Ok(sets)
}

fn parse_bool(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: bool,
) -> Result<bool, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(ConfigError {
                var,
                value: v,
                expected: "1 or 0 (true/false, yes/no, on/off)".into(),
            }),
        },
    }
}

fn parse_num<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => v.parse::<T>().map_err(|_| ConfigError {
            var,
            value: v,
            expected: "a non-negative whole number".into(),
        }),
    }
}

/// A whole number from 1 to `max`.
fn parse_count(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: usize,
    max: usize,
) -> Result<usize, ConfigError> {
    match get(var) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| ConfigError {
                var,
                value: v.clone(),
                expected: format!("a whole number from 1 to {max}"),
            }),
    }
}

/// Seconds as [`parse_secs`] reads them, but not zero.
fn parse_positive_secs(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: f64,
) -> Result<Duration, ConfigError> {
    let secs = parse_secs(get, var, default)?;
    if secs.is_zero() {
        return Err(ConfigError {
            var,
            value: "0".into(),
            expected: "a positive number of seconds, such as 0.5".into(),
        });
    }
    Ok(secs)
}

fn parse_secs(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: f64,
) -> Result<Duration, ConfigError> {
    let secs = match get(var) {
        None => default,
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => s,
            _ => {
                return Err(ConfigError {
                    var,
                    value: v,
                    expected: "a number of seconds between 0 and 86400, such as 0.5".into(),
                })
            }
        },
    };
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_map(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn the_embedding_model_is_the_default_a_given_one_or_none() {
        use zotero_hub::ModelSpec;
        let default = cfg(&[]).unwrap().embedding.unwrap();
        match default.spec {
            ModelSpec::Hub { id, revision } => {
                assert_eq!(id, "sentence-transformers/all-MiniLM-L6-v2");
                assert_eq!(revision.len(), 40, "pinned to a commit: {revision}");
            }
            other => panic!("{other:?}"),
        }
        let bge = cfg(&[("ZOTERO_EMBEDDING_MODEL", "BAAI/bge-small-en-v1.5@main")]).unwrap();
        assert!(matches!(
            bge.embedding.unwrap().spec,
            ModelSpec::Hub { ref id, ref revision } if id == "BAAI/bge-small-en-v1.5" && revision == "main"
        ));
        for off in ["none", "NONE", " off "] {
            assert!(cfg(&[("ZOTERO_EMBEDDING_MODEL", off)])
                .unwrap()
                .embedding
                .is_none());
        }
        let e = cfg(&[("ZOTERO_EMBEDDING_MODEL", "not a model at all")]).unwrap_err();
        assert_eq!(e.var, "ZOTERO_EMBEDDING_MODEL");
        assert!(e.expected.contains("none"), "{}", e.expected);
        // Plain http to the emulator only where fetches may reach this machine.
        let strict = cfg(&[]).unwrap().embedding.unwrap();
        assert!(!strict.hub.allow_http_loopback);
        let tests = cfg(&[("ZOTERO_FETCH_ALLOW_PRIVATE", "1")]).unwrap();
        assert!(tests.embedding.unwrap().hub.allow_http_loopback);
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let c = cfg(&[]).unwrap();
        assert!(c.api_key.is_none() && c.user_id.is_none());
        assert_eq!(c.api_base, "https://api.zotero.org");
        assert_eq!(c.log_level, "info");
        assert_eq!(c.retry.max_attempts, 3);
        assert_eq!(c.retry.base_delay, Duration::from_millis(500));
        assert_eq!(c.retry.max_delay, Duration::from_secs(4));
        assert_eq!(c.retry.max_wait, Duration::from_secs(30));
        assert!(c.read_cache.is_none());
        assert_eq!(c.upload_max_bytes, 52_428_800);
        assert_eq!(c.timeout, Duration::from_secs(30));
        assert!(!c.read_only);
        assert_eq!(c.toolsets.len(), ToolSet::ALL.len());
        assert_eq!(
            c.missing_credentials(),
            vec!["ZOTERO_API_KEY", "ZOTERO_USER_ID"]
        );
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (var, value) in [
            ("ZOTERO_RETRY_MAX_ATTEMPTS", "abc"),
            ("ZOTERO_RETRY_MAX_ATTEMPTS", "0"),
            ("ZOTERO_RETRY_BASE_DELAY", "-1"),
            ("ZOTERO_READ_CACHE", "maybe"),
            ("ZOTERO_READ_CACHE_TTL", "x"),
            ("ZOTERO_USER_ID", "alice"),
            ("ZOTERO_API_BASE", "ftp://example.org"),
            ("ZOTERO_MCP_LOG_LEVEL", "loud"),
            ("ZOTERO_TIMEOUT_SECONDS", "0"),
            ("ZOTERO_SUBSCRIBE_POLL_SECONDS", "0"),
            ("ZOTERO_SUBSCRIBE_POLL_SECONDS", "soon"),
            ("ZOTERO_UPLOAD_MAX_BYTES", "1e9"),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "sometimes"),
            ("ZOTERO_ARXIV_BASE", "arxiv.org"),
            ("ZOTERO_LIBRARY", "group:abc"),
            ("ZOTERO_LIBRARY", "groups"),
            ("ZOTERO_LOCAL", "maybe"),
            ("ZOTERO_LOCAL_API_BASE", "localhost:23119"),
            ("ZOTERO_READ_ONLY", "please"),
            ("ZOTERO_TOOLSETS", "read,writes"),
            ("ZOTERO_TOOLSETS", ","),
            ("ZOTERO_UPLOAD_ROOTS", "/nonexistent/zotero-papers"),
            ("ZOTERO_UPLOAD_ROOTS", "relative/papers"),
            ("ZOTERO_DOI_BASE", "doi.org"),
            ("ZOTERO_CROSSREF_BASE", "ftp://api.crossref.org"),
            ("ZOTERO_NCBI_BASE", "https://x.org/?q"),
            ("ZOTERO_CONTACT_EMAIL", "not an address"),
            ("ZOTERO_CONTACT_EMAIL", "me@localhost"),
            ("ZOTERO_MCP_HTTP_TOKEN", "short"),
            ("ZOTERO_MCP_HTTP_TOKEN", "has a space inside it"),
            ("ZOTERO_MCP_HTTP_ALLOWED_HOSTS", "example.org/path"),
            ("ZOTERO_MCP_HTTP_ALLOWED_HOSTS", "a b"),
            ("ZOTERO_MCP_HTTP_ALLOWED_ORIGINS", "example.org"),
            ("ZOTERO_MCP_HTTP_ALLOWED_ORIGINS", "https://example.org/app"),
            ("ZOTERO_MCP_HTTP_MAX_SESSIONS", "0"),
            ("ZOTERO_MCP_HTTP_MAX_CONNECTIONS", "0"),
            ("ZOTERO_MCP_HTTP_MAX_CONNECTIONS", "many"),
            ("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "1000"),
            ("ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", "0"),
            ("ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS", "-1"),
        ] {
            let err = cfg(&[(var, value)]).unwrap_err();
            assert_eq!(err.var, var);
            assert!(err.to_string().contains(var), "{err}");
        }
    }

    #[test]
    fn http_variables_are_parsed_and_the_token_never_shown() {
        let c = cfg(&[]).unwrap();
        assert!(c.http_token.is_none() && c.http_allowed_hosts.is_empty());
        let token = "0123456789abcdef-token";
        let c = cfg(&[
            ("ZOTERO_MCP_HTTP_TOKEN", token),
            (
                "ZOTERO_MCP_HTTP_ALLOWED_HOSTS",
                " MCP.example.org, 10.0.0.2:8000,[::2]:80,*",
            ),
            (
                "ZOTERO_MCP_HTTP_ALLOWED_ORIGINS",
                "https://App.example.org/, http://10.0.0.2:3000,null",
            ),
        ])
        .unwrap();
        let t = c.http_token.as_ref().unwrap();
        assert!(t.matches(token.as_bytes()));
        assert!(!t.matches(b"0123456789abcdef-toke"));
        assert!(!t.matches(b"0123456789abcdef-tokeN"));
        assert!(!t.matches(b""));
        assert!(!format!("{c:?}").contains(token));
        assert_eq!(
            c.http_allowed_hosts,
            ["mcp.example.org", "10.0.0.2:8000", "[::2]:80", "*"]
        );
        assert_eq!(
            c.http_allowed_origins,
            ["https://app.example.org", "http://10.0.0.2:3000", "null"]
        );
        let err = cfg(&[("ZOTERO_MCP_HTTP_TOKEN", "short")]).unwrap_err();
        assert!(!err.to_string().contains("short"), "{err}");
    }

    #[test]
    fn http_bounds_have_defaults_and_take_their_variables() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.http_max_connections, 512);
        assert_eq!(c.http_max_buffered_bytes, None);
        assert_eq!(c.http_body_idle, Duration::from_secs(10));
        assert_eq!(c.http_body_timeout, Duration::from_secs(120));
        let c = cfg(&[
            ("ZOTERO_MCP_HTTP_MAX_CONNECTIONS", "8"),
            ("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "2000000"),
            ("ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", "0.25"),
            ("ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS", "30"),
        ])
        .unwrap();
        assert_eq!(c.http_max_connections, 8);
        assert_eq!(c.http_max_buffered_bytes, Some(2_000_000));
        assert_eq!(c.http_body_idle, Duration::from_millis(250));
        assert_eq!(c.http_body_timeout, Duration::from_secs(30));
    }

    #[test]
    fn metadata_services_take_their_bases_and_the_contact() {
        use zotero_metadata::services::Service;
        let c = cfg(&[]).unwrap().metadata();
        assert_eq!(c.base(Service::Crossref), "https://api.crossref.org");
        assert!(c.contact_email.is_none());
        let c = cfg(&[
            ("ZOTERO_ARXIV_API_BASE", "http://127.0.0.1:9/arxiv-api/"),
            ("ZOTERO_CONTACT_EMAIL", "me@example.org"),
        ])
        .unwrap()
        .metadata();
        assert_eq!(c.base(Service::Arxiv), "http://127.0.0.1:9/arxiv-api");
        assert_eq!(c.base(Service::Doi), "https://doi.org");
        assert_eq!(c.contact_email.as_deref(), Some("me@example.org"));
    }

    #[test]
    fn library_and_local_api_are_parsed() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.library, zotero_api::LibraryRef::User);
        assert!(!c.local && c.client().local_api_base.is_none());
        let c = cfg(&[
            ("ZOTERO_LIBRARY", "group:42"),
            ("ZOTERO_LOCAL", "1"),
            ("ZOTERO_LOCAL_API_BASE", "http://127.0.0.1:9/api/"),
        ])
        .unwrap();
        assert_eq!(c.library, zotero_api::LibraryRef::Group(42));
        assert_eq!(
            c.client().local_api_base.as_deref(),
            Some("http://127.0.0.1:9/api")
        );
        assert!(c.local_only());
        let c = cfg(&[("ZOTERO_LOCAL", "1")]).unwrap();
        assert_eq!(
            c.client().local_api_base.as_deref(),
            Some("http://localhost:23119/api")
        );
    }

    #[test]
    fn cache_and_base_are_parsed() {
        let c = cfg(&[
            ("ZOTERO_READ_CACHE", "1"),
            ("ZOTERO_READ_CACHE_TTL", "5"),
            ("ZOTERO_READ_CACHE_MAX", "7"),
            ("ZOTERO_API_BASE", "http://127.0.0.1:8080/"),
            ("ZOTERO_MCP_LOG_LEVEL", "DEBUG"),
        ])
        .unwrap();
        assert_eq!(
            c.read_cache,
            Some(CacheConfig {
                ttl: Duration::from_secs(5),
                max_entries: 7
            })
        );
        assert_eq!(c.api_base, "http://127.0.0.1:8080");
        assert_eq!(c.log_level, "debug");
    }

    #[test]
    fn toolsets_and_read_only_are_parsed() {
        let c = cfg(&[
            ("ZOTERO_TOOLSETS", " Read , files,,read"),
            ("ZOTERO_READ_ONLY", "1"),
        ])
        .unwrap();
        assert!(c.read_only);
        assert_eq!(
            c.toolsets.into_iter().collect::<Vec<_>>(),
            vec![ToolSet::Read, ToolSet::Files]
        );
        let e = cfg(&[("ZOTERO_TOOLSETS", "read,writes")]).unwrap_err();
        let msg = e.to_string();
        for needle in [
            "ZOTERO_TOOLSETS",
            "'writes'",
            "read, write, files, cite, identify, index",
        ] {
            assert!(msg.contains(needle), "{needle}: {msg}");
        }
    }

    #[test]
    fn upload_roots_are_resolved_at_start() {
        let c = cfg(&[]).unwrap();
        assert!(c.upload_roots.is_empty() && c.sources().upload_roots.is_empty());

        let dir = tempfile::Builder::new()
            .prefix("zotero-mcp-config-test-")
            .tempdir()
            .unwrap();
        let papers = dir.path().join("papers");
        std::fs::create_dir(&papers).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&papers, &link).unwrap();
        let canonical = std::fs::canonicalize(&papers).unwrap();
        // Symlinks resolved, empty entries skipped, duplicates dropped.
        let value = format!("{}::{}/", link.display(), papers.display());
        let c = cfg(&[("ZOTERO_UPLOAD_ROOTS", &value)]).unwrap();
        assert_eq!(c.upload_roots, vec![canonical.clone()]);
        assert_eq!(c.sources().upload_roots, vec![canonical]);

        let file = dir.path().join("a.pdf");
        std::fs::write(&file, b"x").unwrap();
        for (value, why) in [
            (
                format!("{}:/nonexistent/zotero-papers", papers.display()),
                "/nonexistent/zotero-papers does not exist",
            ),
            (file.display().to_string(), "is not a directory"),
            ("~/Papers".to_string(), "'~' is not expanded"),
            (": :".to_string(), "no directory"),
        ] {
            let err = cfg(&[("ZOTERO_UPLOAD_ROOTS", &value)]).unwrap_err();
            assert_eq!(err.var, "ZOTERO_UPLOAD_ROOTS");
            let msg = err.to_string();
            assert!(msg.contains(why), "{value}: {msg}");
            assert!(msg.contains("ZOTERO_UPLOAD_ROOTS=/path/to/papers"), "{msg}");
        }
    }
}
