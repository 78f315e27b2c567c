//! The file itself: the tables and their version, the checks made before a file is used
//! (directory and file modes, the SQLite header), and the `meta` rows of the model.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};

use crate::encoder::ModelIdentity;
use crate::error::{IndexError, Remedy, Result};

/// Marks a file as a zotero-mcp index (`PRAGMA application_id`): "ZMCP".
pub const APPLICATION_ID: i32 = 0x5a4d_4350;
/// The layout of the tables (`PRAGMA user_version`); a file of another version is
/// refused with [`IndexError::Corrupt`], to be rebuilt. Version 2: the keyword index
/// stems (`porter`) and holds one row per item (title, metadata, abstract in columns)
/// where version 1 held one per chunk. Version 3: the keyword index is given text folded
/// as Zotero folds it for search (`zotero_db::fold_for_search`: ø, ß, æ, ligatures…), so a
/// version 2 file's terms differ from the queries' and it must be rebuilt. Version 4: a
/// chunk names the page of the file its text is on (`page_index`, `page_label`) and `files`
/// records the attachments whose files are read for their text; a version 3 file is
/// brought to it in place ([`MIGRATE_FROM_3`]), its vectors kept.
pub const SCHEMA_VERSION: i32 = 4;

pub(crate) const TABLES: &[&str] = &[
    "meta",
    "sync",
    "documents",
    "chunks",
    "vectors",
    "chunks_fts",
    "files",
];

pub(crate) const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sync (kind TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('item', 'note', 'annotation', 'fulltext')),
    item_key TEXT NOT NULL,
    parent_key TEXT,
    version INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    creators TEXT NOT NULL DEFAULT '',
    year INTEGER,
    item_type TEXT NOT NULL DEFAULT '',
    collections TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '',
    deleted INTEGER NOT NULL DEFAULT 0,
    UNIQUE (key, kind)
);
CREATE INDEX documents_item ON documents (item_key);
CREATE INDEX documents_parent ON documents (parent_key);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents (id),
    item_key TEXT NOT NULL,
    matched TEXT NOT NULL,
    text TEXT NOT NULL,
    start_char INTEGER,
    end_char INTEGER,
    priority INTEGER NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,
    page_index INTEGER,
    page_label TEXT
);
CREATE INDEX chunks_doc ON chunks (doc_id);
CREATE INDEX chunks_pending ON chunks (priority, id) WHERE embedded = 0;
CREATE TABLE vectors (
    chunk_id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    title, meta, body, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
";

/// The attachments whose files are read for their text (see the store's notes), made with
/// [`SCHEMA`] and by [`MIGRATE_FROM_3`].
pub(crate) const FILES_TABLE: &str = "
CREATE TABLE files (
    key TEXT PRIMARY KEY,
    item_key TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    source TEXT NOT NULL,
    read_state TEXT,
    outcome TEXT
) WITHOUT ROWID;
CREATE INDEX files_item ON files (item_key);
";

/// Brings a version 3 file to version 4, in one transaction with [`FILES_TABLE`]: the page
/// columns and the `files` table added, nothing else changed (the vectors stay). Every object is read again
/// by the next update (the items' sync version back to 0, every source's mark forgotten),
/// so that it learns the attachments whose files it reads; a chunk whose text is unchanged
/// keeps its vector, so that costs requests (or reads of Zotero's database), not encoding.
pub(crate) const MIGRATE_FROM_3: &str = "
ALTER TABLE chunks ADD COLUMN page_index INTEGER;
ALTER TABLE chunks ADD COLUMN page_label TEXT;
UPDATE sync SET version = 0 WHERE kind = 'items';
DELETE FROM meta WHERE key LIKE 'mark:%';
PRAGMA user_version = 4;
";

/// How long a statement waits for SQLite's own locks (a checkpoint, a commit) before
/// answering busy.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks, creating nothing, that the index directory `dir` is a directory or is not there
/// yet (an update creates it): readers say at once that it cannot be used, rather than
/// that no index was built.
pub fn check_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(IndexError::Io {
            what: "cannot use the index directory",
            path: dir.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotADirectory),
            remedy: Remedy::Directory,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(IndexError::io(
            "cannot use the index directory",
            dir,
            Remedy::Directory,
        )(e)),
    }
}

/// Creates `dir` if needed and makes it private to the user (0700).
pub(crate) fn private_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(IndexError::io(
            "cannot create the index directory",
            dir,
            Remedy::Directory,
        ))?;
    tighten(dir, 0o700, Remedy::Directory)
}

/// Takes group and other permissions away (the files hold the library's text).
pub(crate) fn tighten(path: &Path, mode: u32, remedy: Remedy) -> Result<()> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(IndexError::io(
                "cannot read the permissions of",
                path,
                remedy,
            )(e))
        }
    };
    if meta.permissions().mode() & 0o777 != mode {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(IndexError::io(
            "cannot restrict the permissions of",
            path,
            remedy,
        ))?;
    }
    Ok(())
}

pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Checks what can be checked before SQLite reads the file: its header and length.
pub(crate) fn check_header(path: &Path) -> Result<()> {
    let corrupt = |why: String| IndexError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    let mut file = File::open(path).map_err(IndexError::io_file("cannot open", path))?;
    let len = file
        .metadata()
        .map_err(IndexError::io("cannot read", path, Remedy::File))?
        .len();
    if len == 0 {
        // Nothing was ever committed: SQLite starts a new database in it.
        return Ok(());
    }
    let mut header = [0u8; 100];
    file.read_exact(&mut header)
        .map_err(|_| corrupt(format!("the file is too short ({len} bytes) for SQLite")))?;
    if header.get(..16) != Some(b"SQLite format 3\0".as_slice()) {
        return Err(corrupt("the file is not an SQLite database".to_string()));
    }
    let be32 = |at: usize| -> u32 {
        header
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, u32::from_be_bytes)
    };
    let page = match header.get(16..18) {
        Some([1, 0]) => 65536,
        Some([a, b]) => u64::from(u16::from_be_bytes([*a, *b])),
        _ => 0,
    };
    if page < 512 || len % page != 0 {
        return Err(corrupt(format!(
            "the file is truncated ({len} bytes, not a whole number of {page}-byte pages)"
        )));
    }
    // The header's page count is valid when its change counter matches (SQLite ≥ 3.7).
    let wal_len = fs::metadata(sibling(path, "-wal")).map_or(0, |m| m.len());
    if be32(24) == be32(92) && wal_len == 0 && len < u64::from(be32(28)) * page {
        return Err(corrupt(format!(
            "the file is truncated ({len} bytes, the header says {} pages of {page})",
            be32(28)
        )));
    }
    Ok(())
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Raises `data_generation` (see the module's notes): one more, or the time in nanoseconds
/// when that is higher. To be called in every transaction that changes documents, chunks
/// or vectors.
pub(crate) fn bump_generation(conn: &Connection) -> Result<()> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('data_generation', ?1)
         ON CONFLICT (key) DO UPDATE SET
            value = max(CAST(value AS INTEGER) + 1, CAST(excluded.value AS INTEGER))",
        [nanos.to_string()],
    )?;
    Ok(())
}

pub(crate) fn read_model(conn: &Connection) -> Result<Option<ModelIdentity>> {
    let get = |k: &str| -> Result<Option<String>> {
        Ok(conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()?)
    };
    let Some(id) = get("model_id")? else {
        return Ok(None);
    };
    let file_hashes = get("model_hashes")?
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    Ok(Some(ModelIdentity {
        id,
        revision: get("model_revision")?.unwrap_or_default(),
        file_hashes,
        dims: get("model_dims")?.and_then(|d| d.parse().ok()).unwrap_or(0),
    }))
}

pub(crate) fn write_model(conn: &Connection, m: &ModelIdentity) -> Result<()> {
    let hashes: Vec<String> = m
        .file_hashes
        .iter()
        .map(|(a, b)| format!("{a}={b}"))
        .collect();
    for (k, v) in [
        ("model_id", m.id.clone()),
        ("model_revision", m.revision.clone()),
        ("model_hashes", hashes.join("\n")),
        ("model_dims", m.dims.to_string()),
    ] {
        set_meta(conn, k, &v)?;
    }
    Ok(())
}

pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;

    #[test]
    fn bundled_sqlite_has_fts5() {
        let c = Connection::open_in_memory().unwrap();
        let on: i64 = c
            .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(on, 1);
    }

    /// The SQLite build flags of `.cargo/config.toml` (`LIBSQLITE3_FLAGS`) reached the
    /// bundled SQLite: no shared page cache behind a global mutex, no memory statistics, and
    /// none of the modules nothing here uses (FTS3/4, R*Tree, dbstat: 170 KB of the binary).
    #[test]
    fn bundled_sqlite_has_the_workspace_flags() {
        let c = Connection::open_in_memory().unwrap();
        let options: Vec<String> = c
            .prepare("PRAGMA compile_options")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for on in ["DEFAULT_MEMSTATUS=0", "OMIT_SHARED_CACHE", "USE_ALLOCA"] {
            assert!(options.iter().any(|o| o == on), "{on} not in {options:?}");
        }
        for off in [
            "ENABLE_MEMORY_MANAGEMENT",
            "ENABLE_FTS3",
            "ENABLE_FTS3_PARENTHESIS",
            "ENABLE_RTREE",
            "ENABLE_DBSTAT_VTAB",
        ] {
            assert!(!options.iter().any(|o| o == off), "{off} in {options:?}");
        }
    }
}
