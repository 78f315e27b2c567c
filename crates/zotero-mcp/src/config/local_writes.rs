//! Writes through Zotero 10's desktop app: `ZOTERO_WRITE_BACKEND` (`auto`, `local`, `web`),
//! `ZOTERO_LOCAL_API_KEY` (for containers), and the keys `zotero-mcp authorize` stored per
//! `Zotero-Server-ID` in `local-api-keys.json` under the user's config directory
//! (`$XDG_CONFIG_HOME/zotero-mcp`, else the platform's; the file is mode 0600, in a folder
//! only its owner may write).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use zotero_api::{ApiKey, LocalWrites, WriteBackend};

use super::private_file::write_private;
pub use super::private_file::{config_dir, StoreError};
use super::ConfigError;

/// The key file's name in the config directory.
pub const KEY_FILE: &str = "local-api-keys.json";

/// A local key as Zotero makes them: 32 letters and digits.
pub fn is_local_key(k: &str) -> bool {
    k.len() == 32 && k.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Why the key file cannot be read; the caller says what to do (delete it and authorize
/// again).
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("{0}")]
    Read(std::io::Error),
    #[error("{0}")]
    NotJson(serde_json::Error),
    #[error("no \"keys\" object")]
    NoKeys,
}

/// The stored keys, by server ID (empty when there is no file).
pub fn load_keys(path: &Path) -> Result<BTreeMap<String, String>, KeyFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(KeyFileError::Read(e)),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(KeyFileError::NotJson)?;
    let keys = v
        .get("keys")
        .and_then(serde_json::Value::as_object)
        .ok_or(KeyFileError::NoKeys)?;
    Ok(keys
        .iter()
        .filter_map(|(id, k)| Some((id.clone(), k.as_str()?.to_string())))
        .filter(|(_, k)| is_local_key(k))
        .collect())
}

/// Stores `key` for `server_id`, keeping the others, in a file only the user can read
/// ([`write_private`]).
pub fn store_key(dir: &Path, server_id: &str, key: &str) -> Result<PathBuf, StoreError> {
    let mut keys = load_keys(&dir.join(KEY_FILE)).unwrap_or_default();
    keys.insert(server_id.to_string(), key.to_string());
    let body = serde_json::to_vec_pretty(&serde_json::json!({ "keys": keys }))
        .map_err(std::io::Error::other)?;
    write_private(dir, KEY_FILE, &body)
}

/// `ZOTERO_WRITE_BACKEND`, `ZOTERO_LOCAL_API_KEY` and the key file in `config_dir` (the
/// user's config directory, found once by the caller with [`config_dir`]).
pub fn parse(
    get: &impl Fn(&str) -> Option<String>,
    config_dir: Option<&Path>,
) -> Result<LocalWrites, ConfigError> {
    let backend = match get("ZOTERO_WRITE_BACKEND") {
        None => WriteBackend::Auto,
        Some(v) => v.parse().map_err(|()| ConfigError {
            var: "ZOTERO_WRITE_BACKEND",
            value: v.clone(),
            expected: "auto (the desktop app when it can, else the web API), local or web".into(),
        })?,
    };
    let key = match get("ZOTERO_LOCAL_API_KEY") {
        None => None,
        Some(k) if is_local_key(&k) => Some(ApiKey::new(k)),
        Some(_) => {
            return Err(ConfigError {
                var: "ZOTERO_LOCAL_API_KEY",
                // Never echo a secret, even a malformed one.
                value: "<redacted>".into(),
                expected: "the 32 letters and digits `zotero-mcp authorize --print` printed".into(),
            });
        }
    };
    let stored = match config_dir {
        None => Vec::new(),
        Some(dir) => {
            let path = dir.join(KEY_FILE);
            load_keys(&path)
                .map_err(|reason| ConfigError {
                    var: "XDG_CONFIG_HOME",
                    value: path.display().to_string(),
                    expected: format!(
                        "a key file written by `zotero-mcp authorize` ({reason}); delete it and run `zotero-mcp authorize` again"
                    ),
                })?
                .into_iter()
                .map(|(id, k)| (id, ApiKey::new(k)))
                .collect()
        }
    };
    Ok(LocalWrites {
        backend,
        key,
        stored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    fn parse_in(get: &impl Fn(&str) -> Option<String>) -> Result<LocalWrites, ConfigError> {
        parse(get, config_dir(get).as_deref())
    }

    #[test]
    fn backend_and_key_are_checked_and_the_key_never_echoed() {
        let c = parse_in(&env(&[])).unwrap();
        assert_eq!(c.backend, WriteBackend::Auto);
        assert!(!c.has_key());
        let e = parse_in(&env(&[("ZOTERO_WRITE_BACKEND", "desktop")])).unwrap_err();
        assert_eq!(e.var, "ZOTERO_WRITE_BACKEND");
        let e = parse_in(&env(&[("ZOTERO_LOCAL_API_KEY", "short-secret")])).unwrap_err();
        assert!(!e.value.contains("short-secret"));
        let k = "A".repeat(32);
        let c = parse_in(&env(&[
            ("ZOTERO_LOCAL_API_KEY", &k),
            ("ZOTERO_WRITE_BACKEND", "LOCAL"),
        ]))
        .unwrap();
        assert_eq!(c.backend, WriteBackend::Local);
        assert!(!format!("{c:?}").contains(&k), "Debug redacts keys");
    }

    #[test]
    fn stored_keys_are_per_server_and_private() {
        let dir = std::env::temp_dir().join(format!("zmcp-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let conf = dir.join("zotero-mcp");
        let k1 = "a".repeat(32);
        let k2 = "b".repeat(32);
        store_key(&conf, "SERVERAAAAAA", &k1).unwrap();
        let path = store_key(&conf, "SERVERBBBBBB", &k2).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let x = dir.to_string_lossy().into_owned();
        let c = parse_in(&env(&[("XDG_CONFIG_HOME", &x)])).unwrap();
        assert_eq!(c.stored.len(), 2);
        assert_eq!(c.stored[0].0, "SERVERAAAAAA");
        assert_eq!(c.stored[0].1.expose(), k1);
        std::fs::write(&path, r#"{"other": 1}"#).unwrap();
        assert!(matches!(load_keys(&path), Err(KeyFileError::NoKeys)));
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(load_keys(&path), Err(KeyFileError::NotJson(_))));
        assert_eq!(
            parse_in(&env(&[("XDG_CONFIG_HOME", &x)])).unwrap_err().var,
            "XDG_CONFIG_HOME"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
