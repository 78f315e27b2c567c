//! `ZOTERO_*` variables that say which Zotero is reached and how: the Web API's key, user
//! and base, the desktop app's local API, the default library, the read cache and the
//! subscription poll.

use std::time::Duration;

use zotero_api::config::{ApiKey, CacheConfig};

use super::parse::{parse_base_or, parse_bool, parse_num, parse_secs, Vars};
use super::ConfigError;

pub const DEFAULT_API_BASE: &str = "https://api.zotero.org";
pub const DEFAULT_LOCAL_API_BASE: &str = "http://localhost:23119/api";

/// The variables a user must set before any tool can reach Zotero.
pub const CREDENTIAL_VARS: [&str; 2] = ["ZOTERO_API_KEY", "ZOTERO_USER_ID"];

/// Which Zotero the server talks to, and how.
#[derive(Debug, Clone)]
pub struct ZoteroConfig {
    pub api_key: Option<ApiKey>,
    pub user_id: Option<u64>,
    /// Base URL without a trailing slash, `http://` or `https://`.
    pub api_base: String,
    /// The library a tool call is about when it names none (`ZOTERO_LIBRARY`: `user` or
    /// `group:<id>`).
    pub library: zotero_api::LibraryRef,
    /// Read through the Zotero desktop app's local API (`ZOTERO_LOCAL=1`).
    pub local: bool,
    /// `ZOTERO_LOCAL_API_BASE`, without a trailing slash.
    pub local_api_base: String,
    /// `None` when the read cache is off.
    pub read_cache: Option<CacheConfig>,
    /// How often a library with subscribed resources is polled for changes
    /// (`ZOTERO_SUBSCRIBE_POLL_SECONDS`, 30 by default; quiet libraries back off from it).
    pub subscribe_poll: Duration,
    /// Writes through Zotero 10's desktop app (`config/local_writes.rs`).
    pub local_writes: zotero_api::LocalWrites,
    /// Where `zotero-mcp authorize` stores local keys (`None`: no config directory).
    pub local_key_dir: Option<std::path::PathBuf>,
}

impl ZoteroConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
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
        let api_base = parse_base_or(get, "ZOTERO_API_BASE", DEFAULT_API_BASE)?;
        let library = match get("ZOTERO_LIBRARY") {
            None => zotero_api::LibraryRef::User,
            Some(v) => v.parse().map_err(|_| ConfigError {
                var: "ZOTERO_LIBRARY",
                value: v.clone(),
                expected: "user, or group:<groupID> such as group:12345".into(),
            })?,
        };
        let local = parse_bool(get, "ZOTERO_LOCAL", false)?;
        let local_api_base = parse_base_or(get, "ZOTERO_LOCAL_API_BASE", DEFAULT_LOCAL_API_BASE)?;

        // TTL and size are validated even while the cache is off: a typo should not wait
        // until the cache is switched on.
        let cache = CacheConfig {
            ttl: parse_secs(get, "ZOTERO_READ_CACHE_TTL", 30.0)?,
            max_entries: parse_num::<usize>(get, "ZOTERO_READ_CACHE_MAX", 128)?,
        };
        let read_cache = parse_bool(get, "ZOTERO_READ_CACHE", false)?.then_some(cache);

        let subscribe_poll = parse_secs(get, "ZOTERO_SUBSCRIBE_POLL_SECONDS", 30.0)?;
        if subscribe_poll < Duration::from_millis(10) {
            return Err(ConfigError {
                var: "ZOTERO_SUBSCRIBE_POLL_SECONDS",
                value: format!("{}", subscribe_poll.as_secs_f64()),
                expected: "at least 0.01 seconds".into(),
            });
        }
        let local_key_dir = super::local_writes::config_dir(&get);
        let local_writes = super::local_writes::parse(&get, local_key_dir.as_deref())?;
        Ok(ZoteroConfig {
            local_writes,
            local_key_dir,
            api_key,
            user_id,
            api_base,
            library,
            local,
            local_api_base,
            read_cache,
            subscribe_poll,
        })
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
