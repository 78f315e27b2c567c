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

    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("SQLite error in the search index: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

pub type Result<T, E = IndexError> = std::result::Result<T, E>;

impl IndexError {
    pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| IndexError::Io { what, path, source }
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
            _ => self,
        }
    }
}
