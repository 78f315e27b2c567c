//! Configuration: every environment variable the server reads, read once at start-up.
//!
//! Nothing else in the program reads the environment: `Config` is passed down as plain values.
//! Each part (Zotero, outgoing requests, metadata services, uploads, HTTP transport, search
//! index, tools, log) has its own file, its own types and its own parser; a new variable goes
//! into the part it is about. The configuration imports nothing from the rest of the crate.

use std::collections::HashMap;

mod database;
mod http;
mod index;
pub mod local_writes;
mod log;
mod metadata;
mod net;
mod oauth;
mod parse;
pub mod private_file;
mod text;
mod tools;
mod uploads;
pub mod web_key;
mod zotero;

pub use database::DatabaseConfig;
pub use http::{HttpConfig, HttpToken, MIN_HTTP_BUFFERED_BYTES, MIN_HTTP_TOKEN_CHARS};
pub use index::{DownloadFiles, IndexConfig, ModelSource, NoIndexDir};
pub use log::LogConfig;
pub use metadata::MetadataConfig;
pub use net::{NetConfig, RetryConfig};
pub use oauth::OAuthConfig;
pub use text::{ExtractFn, TextConfig};
pub use tools::{ToolSet, ToolsConfig};
pub use uploads::{UploadsConfig, DEFAULT_ARXIV_BASE, DEFAULT_UPLOAD_MAX_BYTES};
pub use zotero::{
    KeySource, ZoteroConfig, CREDENTIAL_VARS, DEFAULT_API_BASE, DEFAULT_LOCAL_API_BASE,
};

pub use zotero_api::config::{ApiKey, CacheConfig};

/// A configuration value that could not be used. The message names the variable and says
/// what would be accepted, so the user knows exactly what to change.
#[derive(Debug, thiserror::Error)]
#[error("invalid {var}={value:?}: {expected}")]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub expected: String,
}

/// The whole configuration, by part.
#[derive(Debug, Clone)]
pub struct Config {
    pub zotero: ZoteroConfig,
    /// zotero.org's OAuth for `zotero-mcp login`.
    pub oauth: OAuthConfig,
    pub net: NetConfig,
    pub metadata: MetadataConfig,
    pub uploads: UploadsConfig,
    pub http: HttpConfig,
    pub index: IndexConfig,
    pub tools: ToolsConfig,
    pub log: LogConfig,
    /// Every configured secret (the Zotero API key, the local API keys, the OAuth client
    /// secret,
    /// `ZOTERO_NCBI_API_KEY`, `ZOTERO_MCP_HTTP_TOKEN`, `HF_TOKEN`): scrubbed from what outside hosts answer before
    /// it is shown or logged.
    pub secrets: zotero_net::Secrets,
    /// Zotero's own database (`ZOTERO_DATA_DIR`, `ZOTERO_DATABASE=1`); `None` when unused.
    pub database: Option<DatabaseConfig>,
    /// Reading attachments' files for their text.
    pub text: TextConfig,
}

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
        let log = LogConfig::parse(&get)?;
        let zotero = ZoteroConfig::parse(&get)?;
        let oauth = OAuthConfig::parse(&get)?;
        let net = NetConfig::parse(&get)?;
        let uploads = UploadsConfig::parse(&get)?;
        let metadata = MetadataConfig::parse(&get)?;
        let tools = ToolsConfig::parse(&get)?;
        let index = IndexConfig::parse(&get, net.allows_private())?;
        let http = HttpConfig::parse(&get)?;
        let local_keys: Vec<String> = zotero
            .local_writes
            .key
            .iter()
            .chain(zotero.local_writes.stored.iter().map(|(_, k)| k))
            .map(|k| k.expose().to_string())
            .collect();
        let database = DatabaseConfig::read(&get)?;
        let secrets = zotero_net::Secrets::new(
            local_keys
                .into_iter()
                .map(Some)
                .chain([
                    zotero.api_key.as_ref().map(|k| k.expose().to_string()),
                    metadata
                        .ncbi_api_key
                        .as_ref()
                        .map(|k| k.expose().to_string()),
                    metadata
                        .openalex_api_key
                        .as_ref()
                        .map(|k| k.expose().to_string()),
                    get("ZOTERO_MCP_HTTP_TOKEN"),
                    oauth.client.as_ref().map(|c| c.secret.expose().to_string()),
                    get("HF_TOKEN"),
                ])
                .flatten(),
        );
        Ok(Config {
            zotero,
            oauth,
            net,
            metadata,
            uploads,
            http,
            index,
            tools,
            log,
            secrets,
            database,
            text: TextConfig::default(),
        })
    }

    /// What the metadata services need.
    pub fn metadata(&self) -> zotero_metadata::services::ServicesConfig {
        zotero_metadata::services::ServicesConfig {
            bases: self.metadata.bases.clone(),
            contact_email: self.metadata.contact_email.clone(),
            ncbi_api_key: self.metadata.ncbi_api_key.clone(),
            openalex_api_key: self.metadata.openalex_api_key.clone(),
            timeout: self.net.timeout,
            retry: self.net.retry.clone(),
            min_interval_override: None,
            policy: self.net.fetch_policy,
            secrets: self.secrets.clone(),
        }
    }

    /// What the Zotero client needs.
    pub fn client(&self) -> zotero_api::ClientConfig {
        let z = &self.zotero;
        zotero_api::ClientConfig {
            api_base: z.api_base.clone(),
            api_key: z.api_key.clone(),
            user_id: z.user_id,
            missing_credentials: self.missing_credentials(),
            retry: self.net.retry.clone(),
            timeout: self.net.timeout,
            read_cache: z.read_cache.clone(),
            local_api_base: (z.local || self.writes_locally()).then(|| z.local_api_base.clone()),
            local_writes: z.local_writes.clone(),
            storage_policy: self.net.fetch_policy,
        }
    }

    /// A local key is set and writes may go to the desktop app (which it then also reads).
    pub fn writes_locally(&self) -> bool {
        let w = &self.zotero.local_writes;
        w.has_key() && w.backend != zotero_api::WriteBackend::Web
    }

    /// The desktop app's local API or Zotero's database alone, without the Web API's
    /// credentials (nor a local write key): nothing can be written, so the server runs
    /// read-only.
    pub fn local_only(&self) -> bool {
        (self.zotero.local || self.database.is_some())
            && !self.missing_credentials().is_empty()
            && !self.writes_locally()
    }

    /// What the upload sources need.
    pub fn sources(&self) -> zotero_sources::SourcesConfig {
        zotero_sources::SourcesConfig {
            timeout: self.net.timeout,
            max_bytes: self.uploads.max_bytes,
            policy: self.net.fetch_policy,
            temp_dir: self.uploads.temp_dir.clone(),
            upload_roots: self.uploads.roots.clone(),
        }
    }

    /// The credential variables that are not set, in the order a user should set them.
    pub fn missing_credentials(&self) -> Vec<&'static str> {
        self.zotero.missing_credentials()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        let default = cfg(&[]).unwrap().index.embedding.unwrap();
        match default.spec {
            ModelSpec::Hub { id, revision } => {
                assert_eq!(id, "sentence-transformers/all-MiniLM-L6-v2");
                assert_eq!(revision.len(), 40, "pinned to a commit: {revision}");
            }
            other => panic!("{other:?}"),
        }
        let bge = cfg(&[("ZOTERO_EMBEDDING_MODEL", "BAAI/bge-small-en-v1.5@main")]).unwrap();
        assert!(matches!(
            bge.index.embedding.unwrap().spec,
            ModelSpec::Hub { ref id, ref revision } if id == "BAAI/bge-small-en-v1.5" && revision == "main"
        ));
        for off in ["none", "NONE", " off "] {
            assert!(cfg(&[("ZOTERO_EMBEDDING_MODEL", off)])
                .unwrap()
                .index
                .embedding
                .is_none());
        }
        let e = cfg(&[("ZOTERO_EMBEDDING_MODEL", "not a model at all")]).unwrap_err();
        assert_eq!(e.var, "ZOTERO_EMBEDDING_MODEL");
        assert!(e.expected.contains("none"), "{}", e.expected);
        // Plain http to the emulator only where fetches may reach this machine.
        let strict = cfg(&[]).unwrap().index.embedding.unwrap();
        assert!(!strict.hub.allow_http_loopback);
        let tests = cfg(&[("ZOTERO_FETCH_ALLOW_PRIVATE", "1")]).unwrap();
        assert!(tests.index.embedding.unwrap().hub.allow_http_loopback);
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let c = cfg(&[]).unwrap();
        assert!(c.zotero.api_key.is_none() && c.zotero.user_id.is_none());
        assert_eq!(c.zotero.api_base, "https://api.zotero.org");
        assert_eq!(c.log.level, "info");
        assert_eq!(c.net.retry.max_attempts, 3);
        assert_eq!(c.net.retry.base_delay, Duration::from_millis(500));
        assert_eq!(c.net.retry.max_delay, Duration::from_secs(4));
        assert_eq!(c.net.retry.max_wait, Duration::from_secs(30));
        assert!(c.zotero.read_cache.is_none());
        assert_eq!(c.uploads.max_bytes, 52_428_800);
        assert_eq!(c.net.timeout, Duration::from_secs(30));
        assert!(!c.tools.read_only);
        assert_eq!(c.tools.sets.len(), ToolSet::ALL.len());
        assert!(!c.tools.sets_up_front);
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
        assert!(c.http.token.is_none() && c.http.allowed_hosts.is_empty());
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
        let t = c.http.token.as_ref().unwrap();
        assert!(t.matches(token.as_bytes()));
        assert!(!t.matches(b"0123456789abcdef-toke"));
        assert!(!t.matches(b"0123456789abcdef-tokeN"));
        assert!(!t.matches(b""));
        assert!(!format!("{c:?}").contains(token));
        assert_eq!(
            c.http.allowed_hosts,
            ["mcp.example.org", "10.0.0.2:8000", "[::2]:80", "*"]
        );
        assert_eq!(
            c.http.allowed_origins,
            ["https://app.example.org", "http://10.0.0.2:3000", "null"]
        );
        let err = cfg(&[("ZOTERO_MCP_HTTP_TOKEN", "short")]).unwrap_err();
        assert!(!err.to_string().contains("short"), "{err}");
    }

    #[test]
    fn http_bounds_have_defaults_and_take_their_variables() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.http.max_connections, 512);
        assert_eq!(c.http.max_buffered_bytes, None);
        assert_eq!(c.http.body_idle, Duration::from_secs(10));
        assert_eq!(c.http.body_timeout, Duration::from_secs(120));
        let c = cfg(&[
            ("ZOTERO_MCP_HTTP_MAX_CONNECTIONS", "8"),
            ("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "2000000"),
            ("ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", "0.25"),
            ("ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS", "30"),
        ])
        .unwrap();
        assert_eq!(c.http.max_connections, 8);
        assert_eq!(c.http.max_buffered_bytes, Some(2_000_000));
        assert_eq!(c.http.body_idle, Duration::from_millis(250));
        assert_eq!(c.http.body_timeout, Duration::from_secs(30));
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
        assert_eq!(c.zotero.library, zotero_api::LibraryRef::User);
        assert!(!c.zotero.local && c.client().local_api_base.is_none());
        let c = cfg(&[
            ("ZOTERO_LIBRARY", "group:42"),
            ("ZOTERO_LOCAL", "1"),
            ("ZOTERO_LOCAL_API_BASE", "http://127.0.0.1:9/api/"),
        ])
        .unwrap();
        assert_eq!(c.zotero.library, zotero_api::LibraryRef::Group(42));
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
            c.zotero.read_cache,
            Some(CacheConfig {
                ttl: Duration::from_secs(5),
                max_entries: 7
            })
        );
        assert_eq!(c.zotero.api_base, "http://127.0.0.1:8080");
        assert_eq!(c.log.level, "debug");
    }

    #[test]
    fn toolsets_and_read_only_are_parsed() {
        let c = cfg(&[
            ("ZOTERO_TOOLSETS", " Read , files,,read"),
            ("ZOTERO_READ_ONLY", "1"),
        ])
        .unwrap();
        assert!(c.tools.read_only);
        assert_eq!(
            c.tools.sets.into_iter().collect::<Vec<_>>(),
            vec![ToolSet::Read, ToolSet::Files]
        );
        let c = cfg(&[("ZOTERO_TOOLSETS", "read,ALL")]).unwrap();
        assert_eq!(c.tools.sets.len(), ToolSet::ALL.len());
        assert!(c.tools.sets_up_front);
        let e = cfg(&[("ZOTERO_TOOLSETS", "read,writes")]).unwrap_err();
        let msg = e.to_string();
        for needle in [
            "ZOTERO_TOOLSETS",
            "'writes'",
            "read, write, files, cite, identify, index, research, all",
        ] {
            assert!(msg.contains(needle), "{needle}: {msg}");
        }
    }

    #[test]
    fn upload_roots_are_resolved_at_start() {
        let c = cfg(&[]).unwrap();
        assert!(c.uploads.roots.is_empty() && c.sources().upload_roots.is_empty());

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
        assert_eq!(c.uploads.roots, vec![canonical.clone()]);
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
