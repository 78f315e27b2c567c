//! What can go wrong with the index, each error saying what to do about it.

use std::path::{Path, PathBuf};

use crate::encoder::EncodeError;

/// The command that rebuilds an index from nothing; errors that need it name it.
pub const REBUILD_HINT: &str = "zotero-mcp update-db --full";

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Another process (or another handle in this one) is updating the same index.
    #[error(
        "another update of the search index {} is running; wait for it to finish (or stop it) and retry",
        path.display()
    )]
    Busy { path: PathBuf },

    /// The file is not an index of this program, is of another schema version, or is
    /// damaged. It is never wiped silently: the user decides.
    #[error(
        "the search index {} cannot be used: {why}; rebuild it with `{}` (it replaces the file)",
        path.display(),
        REBUILD_HINT
    )]
    Corrupt { path: PathBuf, why: String },

    /// The stored vectors come from another model than the encoder given: the two kinds of
    /// vectors are not comparable, so they are never mixed.
    #[error(
        "the search index {} holds vectors of the model {indexed}, but the encoder is {current}; \
         rebuild the vectors (`{}`, or reset_vectors) before using this model",
        path.display(),
        REBUILD_HINT
    )]
    ModelMismatch {
        path: PathBuf,
        indexed: String,
        current: String,
    },

    /// Semantic search was asked for but cannot be done (no encoder, or none of its vectors).
    #[error("semantic search is not available: {why}; use mode keyword or hybrid")]
    NoSemantic { why: String },

    #[error("invalid library id {0:?}: expected `user` or `group:<number>`")]
    LibraryId(String),

    /// No place for the index could be derived from the environment.
    #[error("no directory for the search index: set ZOTERO_INDEX_DIR (or XDG_DATA_HOME or HOME)")]
    NoDirectory,

    #[error("the encoder failed: {0}")]
    Encode(#[from] EncodeError),

    /// A file or directory of the index cannot be used; `remedy` says what the user can do
    /// (the message says it too).
    #[error("{what} {}: {source}; {}", path.display(), remedy.advice())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
        remedy: Remedy,
    },

    /// SQLite could not read or write the index file (permissions, a full disk, an I/O
    /// error); `remedy` says what the user can do.
    #[error("the search index {} cannot be used: {reason}; {}", path.display(), remedy.advice())]
    Storage {
        path: PathBuf,
        reason: String,
        remedy: Remedy,
    },

    /// An update lock was given to an index it does not guard: a defect of the caller.
    #[error("the update lock {} does not guard the index {}", lock.display(), index.display())]
    WrongLock { lock: PathBuf, index: PathBuf },

    #[error("SQLite error in the search index: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// What the user can do about an index file or directory that cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// The directory cannot be created or written: another directory, or these permissions.
    Directory,
    /// The file (or a companion: `-wal`, `-shm`, `.lock`) cannot be read or written.
    File,
    /// A directory (or another non-file) stands where the file should be.
    NotAFile,
    /// The disk, or the user's quota, is full.
    Space,
}

impl Remedy {
    /// What to do, as the error message ends.
    pub fn advice(self) -> &'static str {
        match self {
            Remedy::Directory => {
                "set ZOTERO_INDEX_DIR to a directory this user can create and write to, or make \
                 this one a directory this user owns and can write to"
            }
            Remedy::File => {
                "give this user read and write access to it and to its directory (the index \
                 files are 0600, the directory 0700), or move it away and rebuild the index \
                 with `zotero-mcp update-db --full`"
            }
            Remedy::NotAFile => {
                "something other than a file stands at that path: move it away, then build the \
                 index with `zotero-mcp update-db`"
            }
            Remedy::Space => {
                "free some disk space (or set ZOTERO_INDEX_DIR to a disk with room), then run \
                 `zotero-mcp update-db` again: what was committed stays"
            }
        }
    }

    /// The remedy of an I/O error at a site whose usual remedy is `usual`: a full disk or a
    /// read-only file system is that, wherever it happens.
    fn of(source: &std::io::Error, usual: Remedy) -> Remedy {
        match source.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT) => Remedy::Space,
            Some(libc::EROFS) => Remedy::Directory,
            Some(libc::EISDIR) => Remedy::NotAFile,
            _ => usual,
        }
    }
}

pub type Result<T, E = IndexError> = std::result::Result<T, E>;

impl IndexError {
    /// An I/O error at `path`, whose remedy is `usual` unless the error itself says
    /// otherwise (a full disk, a read-only file system, a directory in the way).
    pub(crate) fn io(
        what: &'static str,
        path: &Path,
        usual: Remedy,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| IndexError::Io {
            what,
            path,
            remedy: Remedy::of(&source, usual),
            source,
        }
    }

    /// An I/O error opening or creating the file at `path`: about the file when it exists,
    /// else about the directory that cannot hold it.
    pub(crate) fn io_file(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let usual = match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_file() => Remedy::File,
            Ok(_) => Remedy::NotAFile,
            Err(_) => Remedy::Directory,
        };
        Self::io(what, path, usual)
    }

    /// What the user can do about this error, when it is about the index's files (rather
    /// than a defect, the input, or another update).
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            IndexError::Io { remedy, .. } | IndexError::Storage { remedy, .. } => Some(*remedy),
            _ => None,
        }
    }

    /// Names the file in SQLite's errors that are about the file: a damaged image becomes
    /// [`IndexError::Corrupt`], a lock held elsewhere [`IndexError::Busy`].
    pub(crate) fn at(self, path: &Path) -> Self {
        use rusqlite::ErrorCode;
        let IndexError::Sqlite(e) = &self else {
            return self;
        };
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => IndexError::Corrupt {
                path: path.to_path_buf(),
                why: e.to_string(),
            },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => IndexError::Busy {
                path: path.to_path_buf(),
            },
            Some(code) => {
                let remedy = match code {
                    ErrorCode::DiskFull => Remedy::Space,
                    ErrorCode::ReadOnly
                    | ErrorCode::CannotOpen
                    | ErrorCode::PermissionDenied
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::FileLockingProtocolFailed => Remedy::File,
                    _ => return self,
                };
                IndexError::Storage {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                    remedy,
                }
            }
            None => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: std::os::raw::c_int) -> IndexError {
        IndexError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    }

    /// A full disk cannot be made in a test: its errors, from SQLite or from the file system,
    /// are mapped here to the remedy that says to free space.
    #[test]
    fn a_full_disk_says_to_free_space_wherever_it_happens() {
        let path = Path::new("/data/index/user.sqlite");
        let e = sqlite(rusqlite::ffi::SQLITE_FULL).at(path);
        assert_eq!(e.remedy(), Some(Remedy::Space), "{e}");
        assert!(e.to_string().contains("free some disk space"), "{e}");
        let e = IndexError::io("cannot create the index file", path, Remedy::File)(
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert_eq!(e.remedy(), Some(Remedy::Space), "{e}");
        let e = IndexError::io("cannot create the index directory", path, Remedy::File)(
            std::io::Error::from_raw_os_error(libc::EROFS),
        );
        assert_eq!(e.remedy(), Some(Remedy::Directory), "{e}");
        assert!(e.to_string().contains("ZOTERO_INDEX_DIR"), "{e}");
    }

    #[test]
    fn sqlite_errors_about_the_file_name_it_and_the_rest_stay_sqlite() {
        let path = Path::new("/data/index/user.sqlite");
        for code in [
            rusqlite::ffi::SQLITE_READONLY,
            rusqlite::ffi::SQLITE_CANTOPEN,
            rusqlite::ffi::SQLITE_IOERR,
        ] {
            let e = sqlite(code).at(path);
            assert_eq!(e.remedy(), Some(Remedy::File), "{e}");
            assert!(e.to_string().contains("/data/index/user.sqlite"), "{e}");
        }
        assert!(matches!(
            sqlite(rusqlite::ffi::SQLITE_CORRUPT).at(path),
            IndexError::Corrupt { .. }
        ));
        assert!(matches!(
            sqlite(rusqlite::ffi::SQLITE_BUSY).at(path),
            IndexError::Busy { .. }
        ));
        // A statement SQLite refuses is this program's defect, not the file's.
        assert!(matches!(
            sqlite(rusqlite::ffi::SQLITE_ERROR).at(path),
            IndexError::Sqlite(_)
        ));
    }
}
