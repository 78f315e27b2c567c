//! The one careful open of files in Zotero's data directory (`zotero.sqlite`, its `-wal`,
//! `storage/<KEY>/.zotero-ft-cache`): regular files only, never a symlink at the last name,
//! never blocking on a FIFO, and under `storage/` never a folder that leads outside it.
//!
//! A FIFO opened for reading blocks until a writer appears, and a symlinked cache file would
//! hand its target (`/proc/self/environ`, a key file) to whoever reads the full text. Written
//! here rather than reused from zotero-sources (`local::open_checked`, the same idea for
//! `file_path`): that crate sits above this one in the crate order and answers its own
//! `SourceError`, and zotero-db takes no network crate where a shared one could live.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::DbError;

/// What a file of the data directory is, as errors name it (never its path or contents).
pub(crate) const DATABASE: &str = "the Zotero database (zotero.sqlite)";
pub(crate) const WAL: &str = "the Zotero database's write-ahead log (zotero.sqlite-wal)";
pub(crate) const FT_CACHE: &str =
    "an attachment's cached full text (storage/<KEY>/.zotero-ft-cache)";
pub(crate) const ATTACHMENT: &str = "an attachment's file";

/// Opens `path` for reading when it is a regular file: `None` when there is nothing there.
/// A symlink at the last name, a FIFO, a device, a socket or a folder is refused with
/// [`DbError::NotAFile`], at once (no open of a FIFO waits for a writer).
pub(crate) fn open_regular(path: &Path, role: &'static str) -> Result<Option<File>, DbError> {
    let file = match open_nofollow(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_symlink_refusal(&e, path) => {
            return Err(DbError::NotAFile {
                role,
                kind: "a symbolic link",
            })
        }
        Err(e) => {
            return Err(DbError::Io {
                what: role,
                source: e,
            })
        }
    };
    let meta = file.metadata().map_err(|e| DbError::Io {
        what: role,
        source: e,
    })?;
    if let Some(kind) = not_regular(&meta) {
        return Err(DbError::NotAFile { role, kind });
    }
    blocking_again(&file).map_err(|e| DbError::Io {
        what: role,
        source: e,
    })?;
    Ok(Some(file))
}

/// Opens `storage/<key>/<name>` of `data_dir` as [`open_regular`] does, when the key's folder,
/// resolved, is inside the resolved `storage/` (which may itself be a link to another disk,
/// as some users keep it). `None` when the folder or the file is missing.
pub(crate) fn open_in_storage(
    data_dir: &Path,
    key: &str,
    name: &str,
    role: &'static str,
) -> Result<Option<File>, DbError> {
    let Some(path) = inside_storage(data_dir, key, name, role)? else {
        return Ok(None);
    };
    let Some(file) = open_regular(&path, role)? else {
        return Ok(None);
    };
    // A folder on the way swapped for a link between the check and the open: the file
    // opened is then not the one at the checked path.
    if !same_file(&file, &path) {
        return Err(DbError::OutsideStorage { role });
    }
    Ok(Some(file))
}

/// The size of `storage/<key>/<name>` when the key's folder and the file are both there
/// as themselves (no link at either name) and the file is a regular one; `None` otherwise.
/// Two `lstat`s, as every listed item asks it for its best attachment.
pub(crate) fn stored_file_len(data_dir: &Path, key: &str, name: &str) -> Option<u64> {
    let single = |s: &str| {
        let mut parts = Path::new(s).components();
        matches!(
            (parts.next(), parts.next()),
            (Some(std::path::Component::Normal(_)), None)
        )
    };
    if !single(key) || !single(name) {
        return None;
    }
    let folder = data_dir.join("storage").join(key);
    std::fs::symlink_metadata(&folder)
        .ok()
        .filter(std::fs::Metadata::is_dir)?;
    std::fs::symlink_metadata(folder.join(name))
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
}

/// `storage/<key>/<name>` with the key's folder resolved and checked to be inside the
/// resolved `storage/`; `None` when either folder is missing.
fn inside_storage(
    data_dir: &Path,
    key: &str,
    name: &str,
    role: &'static str,
) -> Result<Option<PathBuf>, DbError> {
    let resolve = |p: &Path| match std::fs::canonicalize(p) {
        Ok(resolved) => Ok(Some(resolved)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DbError::Io {
            what: role,
            source: e,
        }),
    };
    let storage = data_dir.join("storage");
    let Some(root) = resolve(&storage)? else {
        return Ok(None);
    };
    let Some(folder) = resolve(&storage.join(key))? else {
        return Ok(None);
    };
    if folder == root || !folder.starts_with(&root) {
        return Err(DbError::OutsideStorage { role });
    }
    let path = folder.join(name);
    if path.parent() != Some(folder.as_path()) {
        // `name` held a separator or `..`: not a file of this folder.
        return Err(DbError::OutsideStorage { role });
    }
    Ok(Some(path))
}

/// The whole of an opened file as text (Zotero writes UTF-8; a stray invalid byte must not
/// lose the whole text).
pub(crate) fn read_text(mut file: File, role: &'static str) -> Result<String, DbError> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| DbError::Io {
        what: role,
        source: e,
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads `storage/<key>/<name>` whole (see [`open_in_storage`]); `None` when it is missing.
pub(crate) fn read_in_storage(
    data_dir: &Path,
    key: &str,
    name: &str,
    role: &'static str,
) -> Result<Option<String>, DbError> {
    match open_in_storage(data_dir, key, name, role)? {
        Some(file) => read_text(file, role).map(Some),
        None => Ok(None),
    }
}

#[cfg(unix)]
fn open_nofollow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a
    // writer (it is then refused); regular files ignore it. O_NOFOLLOW: a symlink at the
    // last name fails with ELOOP rather than being followed.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(not(unix))]
fn open_nofollow(path: &Path) -> std::io::Result<File> {
    // No O_NOFOLLOW here: the name is looked at first (a link refused), and the file
    // opened is checked again by its own metadata.
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::other(SYMLINK));
    }
    File::open(path)
}

#[cfg(not(unix))]
const SYMLINK: &str = "a symbolic link";

fn is_symlink_refusal(e: &std::io::Error, path: &Path) -> bool {
    #[cfg(unix)]
    {
        // ELOOP is O_NOFOLLOW's answer for a symlink at the last name (FreeBSD: EMLINK).
        let _ = path;
        matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EMLINK))
    }
    #[cfg(not(unix))]
    {
        e.to_string() == SYMLINK
            || std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }
}

/// Clears the O_NONBLOCK the open needed, so reads behave as on any file.
#[cfg(unix)]
fn blocking_again(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the calls' duration; F_GETFL and F_SETFL only read and set
    // the descriptor's status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn blocking_again(_file: &File) -> std::io::Result<()> {
    Ok(())
}

/// Whether the opened `file` is the one now at `path` (followed: its folders resolved).
fn same_file(file: &File, path: &Path) -> bool {
    if std::fs::canonicalize(path).ok().as_deref() != Some(path) {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        true
    }
}

/// What a file that is not a regular one is, for the error message.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("a folder");
    }
    if ft.is_symlink() {
        return Some("a symbolic link");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
        if ft.is_block_device() || ft.is_char_device() {
            return Some("a device");
        }
    }
    Some("not a regular file")
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    fn refusal(r: Result<Option<File>, DbError>) -> String {
        match r {
            Err(e) => e.to_string(),
            Ok(f) => panic!("not refused: {f:?}"),
        }
    }

    #[test]
    fn only_regular_files_open_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let regular = dir.path().join("zotero.sqlite");
        std::fs::write(&regular, b"bytes").unwrap();
        let file = open_regular(&regular, DATABASE).unwrap().unwrap();
        assert_eq!(read_text(file, DATABASE).unwrap(), "bytes");
        assert!(open_regular(&dir.path().join("missing"), WAL)
            .unwrap()
            .is_none());

        let fifo = dir.path().join("zotero.sqlite-wal");
        mkfifo(&fifo);
        let e = refusal(open_regular(&fifo, WAL));
        assert!(e.contains("write-ahead log") && e.contains("FIFO"), "{e}");
        assert!(!e.contains(&*dir.path().to_string_lossy()), "{e}");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&regular, &link).unwrap();
        let e = refusal(open_regular(&link, DATABASE));
        assert!(e.contains("symbolic link"), "{e}");
        let e = refusal(open_regular(dir.path(), DATABASE));
        assert!(e.contains("a folder"), "{e}");
        let e = refusal(open_regular(Path::new("/dev/null"), FT_CACHE));
        assert!(e.contains("a device"), "{e}");
    }

    #[test]
    fn storage_reads_stay_inside_storage() {
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"SECRET=1").unwrap();
        let storage = data.path().join("storage");
        std::fs::create_dir_all(storage.join("GOODKEY1")).unwrap();
        std::fs::write(storage.join("GOODKEY1/.zotero-ft-cache"), b"text").unwrap();
        let read = |key: &str, name: &str| read_in_storage(data.path(), key, name, FT_CACHE);

        assert_eq!(
            read("GOODKEY1", ".zotero-ft-cache").unwrap().as_deref(),
            Some("text")
        );
        assert_eq!(read("NOSUCHK1", ".zotero-ft-cache").unwrap(), None);
        // The key's folder a link out of storage/.
        std::os::unix::fs::symlink(outside.path(), storage.join("LINKDIR1")).unwrap();
        std::fs::write(outside.path().join(".zotero-ft-cache"), b"SECRET=1").unwrap();
        let e = read("LINKDIR1", ".zotero-ft-cache")
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside") && !e.contains("SECRET"), "{e}");
        // The cache file itself a link, out or in.
        std::fs::create_dir_all(storage.join("LINKFIL1")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret"),
            storage.join("LINKFIL1/.zotero-ft-cache"),
        )
        .unwrap();
        let e = read("LINKFIL1", ".zotero-ft-cache")
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link") && !e.contains("SECRET"), "{e}");
        // A name that climbs out.
        let e = read("GOODKEY1", "../../x").unwrap_err().to_string();
        assert!(e.contains("outside"), "{e}");
        assert_eq!(
            stored_file_len(data.path(), "GOODKEY1", ".zotero-ft-cache"),
            Some(4)
        );
        assert_eq!(
            stored_file_len(data.path(), "LINKDIR1", ".zotero-ft-cache"),
            None
        );
        assert_eq!(
            stored_file_len(data.path(), "LINKFIL1", ".zotero-ft-cache"),
            None
        );
        assert_eq!(
            stored_file_len(data.path(), "GOODKEY1", "../GOODKEY1/.zotero-ft-cache"),
            None
        );
        assert_eq!(stored_file_len(data.path(), "..", "storage"), None);
        // storage/ itself a link (kept on another disk) is followed.
        let moved = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(moved.path().join("K2")).unwrap();
        std::fs::write(moved.path().join("K2/.zotero-ft-cache"), b"moved").unwrap();
        let data2 = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(moved.path(), data2.path().join("storage")).unwrap();
        assert_eq!(
            read_in_storage(data2.path(), "K2", ".zotero-ft-cache", FT_CACHE)
                .unwrap()
                .as_deref(),
            Some("moved")
        );
    }
}
