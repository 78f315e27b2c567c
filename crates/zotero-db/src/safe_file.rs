//! Reading a file of the Zotero data directory (an attachment in `storage/<KEY>/`) without
//! being led out of it: the file's directory, symlinks resolved, must lie inside the root;
//! the file itself is opened without following a symlink and must be a regular file; and
//! no more than a bound is read. The open itself is `datafile`'s, shared with the database
//! and `.zotero-ft-cache` reads.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a file inside a root could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SafeReadError {
    #[error("the file does not exist")]
    NotFound,
    #[error("the file lies outside {}, where files may be read from", .root.display())]
    OutsideRoot { root: PathBuf },
    #[error("the path is a symbolic link or not a regular file; only plain files are read")]
    NotAFile,
    #[error("the file is {size} bytes, over the {limit}-byte limit for reading it")]
    TooLarge { size: u64, limit: u64 },
    #[error("the file could not be read: {0}")]
    Io(std::io::Error),
}

fn io(e: std::io::Error) -> SafeReadError {
    match e.kind() {
        std::io::ErrorKind::NotFound => SafeReadError::NotFound,
        _ => SafeReadError::Io(e),
    }
}

/// Reads `path`, which must lie inside `root` (both may hold symlinked directories; what
/// counts is where they resolve), at most `limit` bytes.
pub fn read_inside(root: &Path, path: &Path, limit: u64) -> Result<Vec<u8>, SafeReadError> {
    let outside = || SafeReadError::OutsideRoot {
        root: root.to_path_buf(),
    };
    let root = std::fs::canonicalize(root).map_err(io)?;
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(SafeReadError::NotAFile);
    };
    let parent = std::fs::canonicalize(parent).map_err(io)?;
    if !parent.starts_with(&root) {
        return Err(outside());
    }
    let file = open_no_follow(&parent.join(name))?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SafeReadError::NotAFile);
    }
    if meta.len() > limit {
        return Err(SafeReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow between the check and the read: never past the bound.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(SafeReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The data directory's one careful open (`datafile::open_regular`: no symlink at the last
/// name, no FIFO or device, never blocking), its errors said in this module's terms.
fn open_no_follow(path: &Path) -> Result<std::fs::File, SafeReadError> {
    match crate::datafile::open_regular(path, crate::datafile::ATTACHMENT) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(SafeReadError::NotFound),
        Err(crate::error::DbError::NotAFile { .. }) => Err(SafeReadError::NotAFile),
        Err(crate::error::DbError::Io { source, .. }) => Err(io(source)),
        Err(_) => Err(SafeReadError::NotAFile),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_refuses_links_out_and_bounds_size() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("storage");
        std::fs::create_dir_all(root.join("ABCD2345")).unwrap();
        let file = root.join("ABCD2345/a.pdf");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_inside(&root, &file, 5).unwrap(), b"12345");
        assert!(matches!(
            read_inside(&root, &file, 4),
            Err(SafeReadError::TooLarge { size: 5, limit: 4 })
        ));
        assert!(matches!(
            read_inside(&root, &root.join("ABCD2345/none.pdf"), 9),
            Err(SafeReadError::NotFound)
        ));
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, b"s").unwrap();
        assert!(matches!(
            read_inside(&root, &secret, 9),
            Err(SafeReadError::OutsideRoot { .. })
        ));
        #[cfg(unix)]
        {
            let link = root.join("ABCD2345/link.pdf");
            std::os::unix::fs::symlink(&secret, &link).unwrap();
            assert!(matches!(
                read_inside(&root, &link, 9),
                Err(SafeReadError::NotAFile)
            ));
            std::os::unix::fs::symlink(dir.path(), root.join("OUTSIDE2")).unwrap();
            assert!(matches!(
                read_inside(&root, &root.join("OUTSIDE2/secret.txt"), 9),
                Err(SafeReadError::OutsideRoot { .. })
            ));
            assert!(matches!(
                read_inside(&root, &root.join("ABCD2345/../../secret.txt"), 9),
                Err(SafeReadError::OutsideRoot { .. })
            ));
        }
        assert!(matches!(
            read_inside(&root, &root.join("ABCD2345"), 9),
            Err(SafeReadError::NotAFile | SafeReadError::Io(_))
        ));
    }
}
