//! Writes through Zotero 10's desktop app: `ZOTERO_WRITE_BACKEND` (`auto`, `local`, `web`),
//! `ZOTERO_LOCAL_API_KEY` (for containers), and the keys `zotero-mcp authorize` stored per
//! `Zotero-Server-ID` in `local-api-keys.json` under the user's config directory
//! (`$XDG_CONFIG_HOME/zotero-mcp`, else the platform's; the file is mode 0600, in a folder
//! only its owner may write).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use zotero_api::{ApiKey, LocalWrites, WriteBackend};

use super::ConfigError;

/// The key file's name in the config directory.
pub const KEY_FILE: &str = "local-api-keys.json";

/// The user's config directory for zotero-mcp: `$XDG_CONFIG_HOME/zotero-mcp` (absolute),
/// else the platform's (`~/Library/Application Support` on macOS, `%APPDATA%` on Windows,
/// `~/.config` elsewhere).
pub fn config_dir(get: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(x) = get("XDG_CONFIG_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Some(Path::new(&x).join("zotero-mcp"));
    }
    if cfg!(windows) {
        return get("APPDATA").map(|a| Path::new(&a).join("zotero-mcp"));
    }
    let home = get("HOME")?;
    let base = if cfg!(target_os = "macos") {
        Path::new(&home).join("Library/Application Support")
    } else {
        Path::new(&home).join(".config")
    };
    Some(base.join("zotero-mcp"))
}

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

/// Why the key could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The folder can be written by others and is not ours to repair: whoever can write
    /// there can swap the key file for one they read.
    #[error("{dir} can be written by other users (mode {mode:03o}) and belongs to another user; have its owner run `chmod 700 {dir}`, or set XDG_CONFIG_HOME to a folder only you can write")]
    SharedFolder { dir: String, mode: u32 },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What to do with the config folder before the key goes in it, from its mode bits and
/// owner and our effective user.
#[derive(Debug, PartialEq, Eq)]
enum FolderCheck {
    Private,
    /// Ours but writable by others: made 0700.
    Repair,
    /// Writable by others and not ours: refused.
    Refuse,
}

fn folder_check(mode: u32, owner: u32, me: u32) -> FolderCheck {
    if mode & 0o022 == 0 {
        FolderCheck::Private
    } else if owner == me {
        FolderCheck::Repair
    } else {
        FolderCheck::Refuse
    }
}

/// Makes sure nobody else can write in `dir` (it already existed with any mode, or was made
/// by someone else): repaired to 0700 when it is ours, else refused.
#[cfg(unix)]
fn private_folder(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mode = meta.mode() & 0o7777;
    match folder_check(mode, meta.uid(), me) {
        FolderCheck::Private => Ok(()),
        FolderCheck::Repair => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            Ok(())
        }
        FolderCheck::Refuse => Err(StoreError::SharedFolder {
            dir: dir.display().to_string(),
            mode,
        }),
    }
}

#[cfg(not(unix))]
fn private_folder(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// A new file only we can read, created where nothing was (`O_EXCL`: a planted file or
/// symlink of that name fails the call instead of receiving the key), under a name nobody
/// can guess in advance.
fn create_private(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let tmp = dir.join(format!(
        ".{KEY_FILE}.{}.{:016x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let f = options.open(&tmp)?;
    Ok((tmp, f))
}

/// Stores `key` for `server_id`, keeping the others: the directory is created (0700), or an
/// existing one others may write is made 0700 (refused when it is not ours); the file is
/// written whole to a new private temporary file, flushed, then renamed over the old one
/// (which replaces a symlink there rather than writing through it).
pub fn store_key(dir: &Path, server_id: &str, key: &str) -> Result<PathBuf, StoreError> {
    let path = dir.join(KEY_FILE);
    let mut keys = load_keys(&path).unwrap_or_default();
    keys.insert(server_id.to_string(), key.to_string());
    let body = serde_json::to_vec_pretty(&serde_json::json!({ "keys": keys }))
        .map_err(std::io::Error::other)?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    private_folder(dir)?;
    let (tmp, mut f) = create_private(dir)?;
    let written = f
        .write_all(&body)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    // The rename itself is durable once the folder is flushed.
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(path)
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

    #[cfg(unix)]
    fn mode_of(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_file_or_symlink_never_receives_the_key() {
        let dir = std::env::temp_dir().join(format!("zmcp-plant-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let conf = dir.join("zotero-mcp");
        std::fs::create_dir_all(&conf).unwrap();
        let key = "k".repeat(32);
        // The name the temporary file used to have: another user can make it first.
        let planted = conf.join(format!(".{KEY_FILE}.{}", std::process::id()));
        std::fs::write(&planted, "planted").unwrap();
        std::fs::set_permissions(
            &planted,
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        let path = store_key(&conf, "SERVERAAAAAA", &key).unwrap();
        assert_eq!(
            mode_of(&path),
            0o600,
            "the key file is not readable by others"
        );
        assert_eq!(std::fs::read_to_string(&planted).unwrap(), "planted");

        std::fs::remove_file(&planted).unwrap();
        let outside = dir.join("attacker.txt");
        std::fs::write(&outside, "").unwrap();
        std::os::unix::fs::symlink(&outside, &planted).unwrap();
        let path = store_key(&conf, "SERVERBBBBBB", &key).unwrap();
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "",
            "nothing written through it"
        );
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(mode_of(&path), 0o600);
        assert_eq!(load_keys(&path).unwrap().len(), 2);
        let left: Vec<_> = std::fs::read_dir(&conf)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.') && !n.ends_with(&format!(".{}", std::process::id())))
            .collect();
        assert!(left.is_empty(), "no temporary file left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_others_may_write_is_made_private_or_refused() {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(folder_check(0o700, 1000, 1000), FolderCheck::Private);
        assert_eq!(folder_check(0o755, 0, 1000), FolderCheck::Private);
        assert_eq!(folder_check(0o777, 1000, 1000), FolderCheck::Repair);
        assert_eq!(folder_check(0o770, 1000, 1000), FolderCheck::Repair);
        assert_eq!(folder_check(0o1777, 0, 1000), FolderCheck::Refuse);
        assert_eq!(folder_check(0o722, 1001, 1000), FolderCheck::Refuse);

        let dir = std::env::temp_dir().join(format!("zmcp-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let conf = dir.join("zotero-mcp");
        std::fs::create_dir_all(&conf).unwrap();
        std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o777)).unwrap();
        let key = "k".repeat(32);
        let path = store_key(&conf, "SERVERAAAAAA", &key).unwrap();
        assert_eq!(mode_of(&conf), 0o700, "our own open folder is repaired");
        assert_eq!(mode_of(&path), 0o600);

        // Another user's open folder (only root can make one to test with).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let theirs = dir.join("theirs");
            std::fs::create_dir_all(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = store_key(&theirs, "SERVERAAAAAA", &key).unwrap_err();
            assert!(
                matches!(e, StoreError::SharedFolder { mode: 0o777, .. }),
                "{e}"
            );
            assert!(e.to_string().contains("chmod 700"), "{e}");
            assert!(!theirs.join(KEY_FILE).exists(), "nothing stored");
            assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
        }
        let _ = std::fs::remove_dir_all(&dir);
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
