//! The web API key `zotero-mcp login` stored: `zotero-api-key.json` in the user's config
//! directory (mode 0600, written as [`write_private`] writes secrets), with the user ID and
//! name Zotero gave with it. Read once at start, only when `ZOTERO_API_KEY` is not set: the
//! environment always wins.

use std::path::{Path, PathBuf};

use zotero_api::ApiKey;

use super::private_file::{write_private, StoreError};

/// The key file's name in the config directory.
pub const WEB_KEY_FILE: &str = "zotero-api-key.json";

/// A stored key and whose it is.
#[derive(Debug, Clone)]
pub struct StoredKey {
    pub key: ApiKey,
    pub user_id: u64,
    pub username: String,
}

/// Why the stored key cannot be read; the caller says what to do (delete it and sign in
/// again).
#[derive(Debug, thiserror::Error)]
pub enum WebKeyError {
    #[error("{0}")]
    Read(std::io::Error),
    #[error("{0}")]
    NotJson(serde_json::Error),
    #[error("no \"key\" of letters and digits with a numeric \"userID\"")]
    Incomplete,
}

/// A key as zotero.org makes them: letters and digits (24 of them today).
fn is_web_key(k: &str) -> bool {
    (16..=64).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The stored key (`None` when there is no file).
pub fn load(path: &Path) -> Result<Option<StoredKey>, WebKeyError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(WebKeyError::Read(e)),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(WebKeyError::NotJson)?;
    let key = v
        .get("key")
        .and_then(serde_json::Value::as_str)
        .filter(|k| is_web_key(k));
    let user_id = v.get("userID").and_then(serde_json::Value::as_u64);
    let (Some(key), Some(user_id)) = (key, user_id) else {
        return Err(WebKeyError::Incomplete);
    };
    let username = v
        .get("username")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    Ok(Some(StoredKey {
        key: ApiKey::new(key),
        user_id,
        username: username.to_string(),
    }))
}

/// Stores `key` in `dir` (replacing a key stored before); the file's path.
pub fn store(dir: &Path, key: &StoredKey) -> Result<PathBuf, StoreError> {
    let body = serde_json::to_vec_pretty(&serde_json::json!({
        "key": key.key.expose(),
        "userID": key.user_id,
        "username": key.username,
    }))
    .map_err(std::io::Error::other)?;
    write_private(dir, WEB_KEY_FILE, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_reads_back_and_a_broken_file_is_told() {
        let dir = std::env::temp_dir().join(format!("zmcp-webkey-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(load(&dir.join(WEB_KEY_FILE)).unwrap().is_none());
        let key = StoredKey {
            key: ApiKey::new("A".repeat(24)),
            user_id: 42,
            username: "ada".into(),
        };
        let path = store(&dir, &key).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700);
        }
        let back = load(&path).unwrap().unwrap();
        assert_eq!(back.key.expose(), "A".repeat(24));
        assert_eq!((back.user_id, back.username.as_str()), (42, "ada"));
        std::fs::write(&path, r#"{"key":"short","userID":1}"#).unwrap();
        assert!(matches!(load(&path), Err(WebKeyError::Incomplete)));
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(load(&path), Err(WebKeyError::NotJson(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
