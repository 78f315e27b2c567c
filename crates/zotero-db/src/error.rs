//! What can go wrong reading Zotero's database, each with what to change.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("no Zotero database at {path}: set ZOTERO_DATA_DIR to the folder that holds zotero.sqlite and storage/")]
    NotFound { path: PathBuf },

    #[error("could not copy the Zotero database {path} to a private snapshot: {source}")]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not a Zotero database ({reason}); set ZOTERO_DATA_DIR to Zotero's data directory")]
    NotZotero { path: PathBuf, reason: String },

    #[error("the Zotero database {path} is damaged ({reason}): in Zotero, Settings → Advanced → Files and Folders → Check Database Integrity repairs it; or restore zotero.sqlite.bak from the same folder")]
    Corrupt { path: PathBuf, reason: String },

    #[error("the Zotero database has schema version {found} (userdata), newer than the newest this server understands ({known}); update zotero-mcp, or use the web API (ZOTERO_API_KEY)")]
    NewerSchema { found: i64, known: i64 },

    #[error("the Zotero database has schema version {found} (userdata), older than the oldest this server reads ({oldest}); open it once in a current Zotero to upgrade it")]
    OlderSchema { found: i64, oldest: i64 },

    #[error("reading the Zotero database snapshot failed: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("Zotero's database holds no {scope} library: name a library it holds (zotero-mcp check lists the groups), or set ZOTERO_DATA_DIR to the data directory of the Zotero that syncs it")]
    NoLibrary { scope: crate::LibraryScope },

    #[error("{role} in the Zotero data directory is {kind}, not a regular file, and only regular files there are read: put back the file Zotero wrote (or remove it and let Zotero write it again)")]
    NotAFile {
        role: &'static str,
        kind: &'static str,
    },

    #[error("{role} lies outside the data directory's storage/ folder (reached through a symbolic link) and is not read: remove the link and let Zotero write the file again")]
    OutsideStorage { role: &'static str },

    #[error("reading {what} from the Zotero data directory failed: {source}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// Whether SQLite read a damaged database (as opposed to a file that is not one).
fn is_corrupt(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt)
}

impl DbError {
    /// A failed read of the database at `path`: damaged, else not a Zotero database.
    pub(crate) fn unreadable(path: &Path, e: rusqlite::Error) -> Self {
        if is_corrupt(&e) {
            Self::Corrupt {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        } else {
            Self::NotZotero {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        }
    }

    /// A read that failed on a damaged page says so, naming the database.
    pub(crate) fn damaged_at(self, path: &Path) -> Self {
        match self {
            Self::Sqlite(e) if is_corrupt(&e) => Self::Corrupt {
                path: path.to_path_buf(),
                reason: e.to_string(),
            },
            other => other,
        }
    }
}
