//! The search index kept in step with Zotero: the sync from the Zotero API into
//! `zotero-index` (one SQLite file per library), and what the tools and the CLI share
//! (opening an index that exists, its status against the library's current version).
//!
//! It lives here, not in `zotero-index`, because it reads Zotero through `zotero-api` and
//! converts notes with this crate's HTML → Markdown (`markdown::note_to_markdown`), so the
//! index crate stays free of both.
//!
//! # Where things are
//! - `settings`: where indexes live and which encoder makes vectors (loaded once);
//! - `sync`: an update as the tools and the CLI ask for it; `update` holds its options,
//!   progress, report and errors, `run` its phases, `documents` turns Zotero objects into
//!   index documents, `files` reads attachments' files into page-true full texts;
//! - `freshness`: how far behind the library an index is;
//! - here: the index files of a directory and the index errors as tool errors.
//!
//! Nothing here imports the service (`super`): the sync is given the Zotero client and the
//! search settings, so that `service` → `service::index` is the only direction.
//!
//! # The sync, per kind of object, each with its own library version in the index
//! 1. items (regular items, notes, annotations, attachments): one request for the versions
//!    of everything changed since the version indexed (`format=versions`, trash included),
//!    then the changed objects 50 keys a request, oldest version first; each request's
//!    objects are committed in one transaction together with the version up to which every
//!    object is now indexed, so that a killed update resumes where it stopped. An
//!    annotation is indexed under its attachment's parent (learnt in the run, from the
//!    index, or asked for); an attachment with a parent is not indexed itself, but its full
//!    text and annotations follow it to another parent or into the trash.
//! 2. full texts: `/fulltext?since=` (key → version), then each changed attachment's text,
//!    20 a transaction, likewise.
//! 3. deletions: `/deleted?since=`; the desktop's local API has no `/deleted`, so there
//!    the keys of the whole library (one `format=versions` request) are compared with the
//!    index instead.
//! 4. attachments' files (with full texts included): each file new or changed since it was
//!    last read (the index keeps the attachments step 1 saw, `files`) read where the library
//!    keeps it (this machine; zotero.org only as `ZOTERO_INDEX_DOWNLOAD_FILES` allows) and
//!    indexed page by page in place of Zotero's text, one committed transaction a file.
//! 5. vectors, when an encoder is given: the chunks still without one, metadata, notes and
//!    annotations first, committed in batches.
//!
//! With Zotero's own database configured (`ZOTERO_DATA_DIR`), steps 1 to 3 read it instead
//! and send no request (`source_db`): what changed since the last update by the items'
//! `clientDateModified` and the cached full texts' modification times, deletions by key;
//! step 4 reads the files in its `storage/`.

mod documents;
mod files;
mod freshness;
mod run;
pub mod search;
mod settings;
mod source_db;
mod sync;
mod update;

use std::path::{Path, PathBuf};

use zotero_api::LibraryRef;
use zotero_index::{Index, IndexError, LibraryId};

use crate::error::ToolError;

pub use freshness::{current_version, freshness, freshness_of, Freshness};
pub use settings::{IndexFiles, ModelSource, ModelUnavailable, SearchSettings, SharedEncoder};
pub use source_db::{database_ahead, DbMarks};
pub use sync::{update, update_with_model, SharedClient};
pub use update::{
    number_schema, Phase, Progress, ProgressCallback, UpdateError, UpdateOptions, UpdateReport,
};

/// The command that builds an index; answers about a missing index name it.
pub const BUILD_COMMAND: &str = "zotero-mcp update-db";

/// The index's name for a library.
pub fn index_id(library: LibraryRef) -> LibraryId {
    match library {
        LibraryRef::User => LibraryId::User,
        LibraryRef::Group(g) => LibraryId::Group(g),
    }
}

/// The file of a library's index, whether or not it exists.
pub fn index_path(dir: &Path, library: LibraryRef) -> PathBuf {
    dir.join(index_id(library).file_name())
}

/// The libraries with an index file in `dir`.
pub fn indexed_libraries(dir: &Path) -> Vec<LibraryRef> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".sqlite") else {
            continue;
        };
        if stem == "user" {
            out.push(LibraryRef::User);
        } else if let Some(id) = stem.strip_prefix("group-").and_then(|n| n.parse().ok()) {
            out.push(LibraryRef::Group(id));
        }
    }
    out.sort();
    out
}

/// The error for a library without an index: names the command and the tool that build it.
pub fn no_index(library: LibraryRef) -> ToolError {
    let cmd = if library == LibraryRef::User {
        BUILD_COMMAND.to_string()
    } else {
        format!("{BUILD_COMMAND} --library {library}")
    };
    ToolError::not_found(format!(
        "the library {library} has no search index yet; build it with `{cmd}` (or the tool \
             zotero_update_search_database), then search again; zotero_search_items searches \
             by words meanwhile"
    ))
    .with_detail("command", cmd)
}

/// Opens the index of `library` when its file exists (never creates one). A directory that
/// cannot hold an index is an error, not "no index".
pub fn open_existing(dir: &Path, library: LibraryRef) -> Result<Option<Index>, IndexError> {
    zotero_index::check_dir(dir)?;
    if !index_path(dir, library).exists() {
        return Ok(None);
    }
    Index::open(dir, &index_id(library)).map(Some)
}

#[cfg(test)]
mod tests {}
