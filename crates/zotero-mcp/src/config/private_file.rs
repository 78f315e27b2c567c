//! Files only their owner may read, in a folder only its owner may write: the config
//! directory (`$XDG_CONFIG_HOME/zotero-mcp`, else the platform's) and how a secret is written
//! there — a new file created with `O_EXCL | O_NOFOLLOW` and mode 0600 under a name nobody
//! can guess, written whole, flushed, then renamed over the old one. The local API keys of
//! `zotero-mcp authorize` and the web API key of `zotero-mcp login` are both written so.

use std::io::Write;
use std::path::{Path, PathBuf};

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
fn create_private(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let tmp = dir.join(format!(
        ".{name}.{}.{:016x}",
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

/// Writes `body` as `dir/name`, readable by its owner only: the directory is created (0700),
/// or an existing one others may write is made 0700 (refused when it is not ours); the
/// bytes go to a new private temporary file, flushed, then renamed over the old one (which
/// replaces a symlink there rather than writing through it).
pub fn write_private(dir: &Path, name: &str, body: &[u8]) -> Result<PathBuf, StoreError> {
    let path = dir.join(name);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    private_folder(dir)?;
    let (tmp, mut f) = create_private(dir, name)?;
    let written = f
        .write_all(body)
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

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_FILE: &str = "secret.json";

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
        let path = write_private(&conf, KEY_FILE, key.as_bytes()).unwrap();
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
        let path = write_private(&conf, KEY_FILE, key.as_bytes()).unwrap();
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
        assert_eq!(std::fs::read_to_string(&path).unwrap(), key);
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
        let path = write_private(&conf, KEY_FILE, key.as_bytes()).unwrap();
        assert_eq!(mode_of(&conf), 0o700, "our own open folder is repaired");
        assert_eq!(mode_of(&path), 0o600);

        // Another user's open folder (only root can make one to test with).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let theirs = dir.join("theirs");
            std::fs::create_dir_all(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = write_private(&theirs, KEY_FILE, key.as_bytes()).unwrap_err();
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
}
