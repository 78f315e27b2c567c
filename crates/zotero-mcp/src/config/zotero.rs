//! `ZOTERO_*` variables that say which Zotero is reached and how: the Web API's key, user
//! and base (the key and user from `ZOTERO_API_KEY` and `ZOTERO_USER_ID`, else the key
//! `zotero-mcp login` stored), the desktop app's local API, the default library, the read
//! cache and the subscription poll.

use std::path::PathBuf;
use std::time::Duration;

use zotero_api::config::{ApiKey, CacheConfig};

use super::parse::{parse_base_or, parse_bool, parse_num, parse_secs, Vars};
use super::ConfigError;

pub const DEFAULT_API_BASE: &str = "https://api.zotero.org";
pub const DEFAULT_LOCAL_API_BASE: &str = "http://localhost:23119/api";

/// The variables a user must set before any tool can reach Zotero.
pub const CREDENTIAL_VARS: [&str; 2] = ["ZOTERO_API_KEY", "ZOTERO_USER_ID"];

/// Where the web API key came from (`check` says it; the key itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `ZOTERO_API_KEY`.
    Env,
    /// The key `zotero-mcp login` stored, in this file.
    Stored(PathBuf),
    /// No key.
    None,
}

/// Which Zotero the server talks to, and how.
#[derive(Debug, Clone)]
pub struct ZoteroConfig {
    pub api_key: Option<ApiKey>,
    pub key_source: KeySource,
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
    /// The user's config directory, where `zotero-mcp authorize` stores local keys and
    /// `zotero-mcp login` the web key (`None`: no config directory).
    pub config_dir: Option<PathBuf>,
}

impl ZoteroConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let config_dir = super::private_file::config_dir(&get);
        let (api_key, key_source, stored_user) = web_key(get, config_dir.as_deref())?;
        let user_id = match get("ZOTERO_USER_ID") {
            None => stored_user,
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
        let local_writes = super::local_writes::parse(&get, config_dir.as_deref())?;
        Ok(ZoteroConfig {
            local_writes,
            config_dir,
            api_key,
            key_source,
            user_id,
            api_base,
            library,
            local,
            local_api_base,
            read_cache,
            subscribe_poll,
        })
    }

    /// The credential variables that are not set (and not stored by `zotero-mcp login`), in
    /// the order a user should set them.
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

/// The web API key: `ZOTERO_API_KEY`, else the one `zotero-mcp login` stored in `dir` (with
/// its user ID); a stored file is not even read while the variable is set.
fn web_key(
    get: Vars,
    dir: Option<&std::path::Path>,
) -> Result<(Option<ApiKey>, KeySource, Option<u64>), ConfigError> {
    if let Some(k) = get("ZOTERO_API_KEY") {
        return Ok((Some(ApiKey::new(k)), KeySource::Env, None));
    }
    let Some(path) = dir.map(|d| d.join(super::web_key::WEB_KEY_FILE)) else {
        return Ok((None, KeySource::None, None));
    };
    match super::web_key::load(&path) {
        Ok(Some(stored)) => Ok((
            Some(stored.key),
            KeySource::Stored(path),
            Some(stored.user_id),
        )),
        Ok(None) => Ok((None, KeySource::None, None)),
        Err(reason) => Err(ConfigError {
            var: "XDG_CONFIG_HOME",
            value: path.display().to_string(),
            expected: format!(
                "a key file written by `zotero-mcp login` ({reason}); delete it and run `zotero-mcp login` again, or set ZOTERO_API_KEY"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::web_key::{store, StoredKey};

    fn parse_pairs(pairs: &[(&str, &str)]) -> Result<ZoteroConfig, ConfigError> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ZoteroConfig::parse(&|k: &str| map.get(k).cloned())
    }

    #[test]
    fn the_environment_wins_over_the_stored_key() {
        let home = std::env::temp_dir().join(format!("zmcp-keysrc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let x = home.to_string_lossy().into_owned();
        let c = parse_pairs(&[("XDG_CONFIG_HOME", &x)]).unwrap();
        assert_eq!(c.key_source, KeySource::None);
        assert_eq!(c.missing_credentials(), CREDENTIAL_VARS);
        let stored = StoredKey {
            key: ApiKey::new("S".repeat(24)),
            user_id: 7,
            username: "ada".into(),
        };
        let path = store(&home.join("zotero-mcp"), &stored).unwrap();
        let c = parse_pairs(&[("XDG_CONFIG_HOME", &x)]).unwrap();
        assert_eq!(c.key_source, KeySource::Stored(path.clone()));
        assert_eq!(c.api_key.as_ref().unwrap().expose(), "S".repeat(24));
        assert_eq!(c.user_id, Some(7));
        assert!(c.missing_credentials().is_empty());
        let c = parse_pairs(&[("XDG_CONFIG_HOME", &x), ("ZOTERO_USER_ID", "8")]).unwrap();
        assert_eq!(c.user_id, Some(8), "each variable wins over the file");
        let c = parse_pairs(&[("XDG_CONFIG_HOME", &x), ("ZOTERO_API_KEY", "envkey")]).unwrap();
        assert_eq!(c.key_source, KeySource::Env);
        assert_eq!(c.api_key.unwrap().expose(), "envkey");
        assert_eq!(
            c.user_id, None,
            "the stored user goes with the stored key only"
        );
        std::fs::write(&path, "not json").unwrap();
        let e = parse_pairs(&[("XDG_CONFIG_HOME", &x)]).unwrap_err();
        assert!(e.to_string().contains("zotero-mcp login"), "{e}");
        assert!(parse_pairs(&[("XDG_CONFIG_HOME", &x), ("ZOTERO_API_KEY", "k")]).is_ok());
        let _ = std::fs::remove_dir_all(&home);
    }
}
