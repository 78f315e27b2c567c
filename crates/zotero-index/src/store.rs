//! The index of one library: one SQLite file.
//!
//! # Schema (version [`SCHEMA_VERSION`], `PRAGMA application_id` = [`APPLICATION_ID`])
//!
//! - `meta(key, value)`: the model identity of the stored vectors (`model_id`,
//!   `model_revision`, `model_hashes` as `name=hash` lines, `model_dims`), whether full
//!   text is included (`fulltext_included`), the time of the last committed update
//!   (`last_update`, Unix seconds), and `data_generation`: raised by every committed write
//!   of documents or vectors (to at least the time in nanoseconds, so that a rebuilt file
//!   does not start again where the old one was), which tells an in-memory copy of the
//!   vectors ([`crate::vcache`]) that it is stale.
//! - `sync(kind, version)`: the Zotero library version up to which each kind of object
//!   ("items", "fulltext", "deleted"… as the sync chooses) is indexed. It is written in the
//!   same transaction as the objects, so an update killed at any point resumes from what
//!   was committed.
//! - `documents`: one row per indexed Zotero object, unique by `(kind, key)`, `kind` being
//!   `item`, `note`, `annotation` or `fulltext` (an attachment's text, keyed by the
//!   attachment). `item_key` is the top-level item it belongs to (itself for an item or a
//!   standalone note), `parent_key` its direct parent. The row whose `key` is an
//!   `item_key` carries the metadata that filters and answers use: title, creators, year,
//!   item type, collection keys and tags (each list stored as `\x1f`-separated and
//!   -enclosed text, so that one is found with `instr`), the trashed flag, the version.
//! - `chunks`: the searchable pieces (see [`crate::chunk`]): `matched` (title, metadata,
//!   abstract, note, annotation, fulltext), the text, `start_char`/`end_char` (character
//!   offsets into the source text, when it has some), `priority` (the order vectors are
//!   computed in) and `embedded` (whether its vector is stored).
//! - `vectors(chunk_id, doc_id, vector)`: each chunk's vector, `dims` f32 little-endian.
//!   A table of its own rather than a column of `chunks`, so that a semantic search scans
//!   vectors without reading text (2.7× faster on 114,000 chunks: 283 → 105 ms) and
//!   writing a vector does not rewrite and split the pages of chunk rows; `doc_id` lets
//!   the scan apply filters from a set of allowed documents without a join.
//! - `chunks_fts`: an FTS5 table, contentless with `rowid` = chunk id (the text is in
//!   `chunks`; `contentless_delete` lets a chunk's row be removed by id).
//!
//! # Tokenizer
//!
//! `unicode61 remove_diacritics 2`: words of any alphabetic script, case- and
//! diacritic-insensitive ("Müller" = "Muller", "Gödel" = "Godel"; mode 2 also folds
//! letters with several diacritics). It sees a run of CJK characters as one word, so the
//! text given to FTS puts a space around each Han, kana and Hangul character
//! (`fts_text`) and a query's CJK run becomes a phrase of its characters: "画像認識"
//! finds "深層学習による画像認識", and a one- or two-character query works too, which a
//! `trigram` table (three characters at least, and one more table) would not.
//! Limits: the folding of diacritics is FTS5's, for Latin letters (decomposed ones too),
//! not Greek breathings or accents; Thai, Lao, Khmer and Burmese, written without spaces,
//! are not cut into words (a query finds only a whole run between spaces or punctuation).
//!
//! # Concurrency
//!
//! WAL mode: a search sees the last committed state while an update writes. Writes go
//! through an [`Updater`], which holds an advisory lock (`flock` on `<file>.lock`) for the
//! whole update, so a second updater gets [`IndexError::Busy`] at once; each [`Batch`] is
//! one `BEGIN IMMEDIATE` transaction.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::chunk::{self, Chunk, ItemMeta, Matched};
use crate::encoder::{Encoder, ModelIdentity};
use crate::error::{IndexError, Remedy, Result};

/// Marks a file as a zotero-mcp index (`PRAGMA application_id`): "ZMCP".
pub const APPLICATION_ID: i32 = 0x5a4d_4350;
/// The layout of the tables (`PRAGMA user_version`); a file of another version is
/// refused with [`IndexError::Corrupt`], to be rebuilt.
pub const SCHEMA_VERSION: i32 = 1;

const TABLES: &[&str] = &[
    "meta",
    "sync",
    "documents",
    "chunks",
    "vectors",
    "chunks_fts",
];

const SCHEMA: &str = "
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
    embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX chunks_doc ON chunks (doc_id);
CREATE INDEX chunks_pending ON chunks (priority, id) WHERE embedded = 0;
CREATE TABLE vectors (
    chunk_id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
";

/// How long a statement waits for SQLite's own locks (a checkpoint, a commit) before
/// answering busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Which library an index is of: `user` or `group:<id>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LibraryId {
    User,
    Group(u64),
}

impl LibraryId {
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s == "user" {
            return Ok(LibraryId::User);
        }
        s.strip_prefix("group:")
            .and_then(|n| n.parse().ok())
            .map(LibraryId::Group)
            .ok_or_else(|| IndexError::LibraryId(s.to_string()))
    }

    /// The index file's name in the index directory: `user.sqlite`, `group-123.sqlite`.
    pub fn file_name(&self) -> String {
        match self {
            LibraryId::User => "user.sqlite".to_string(),
            LibraryId::Group(id) => format!("group-{id}.sqlite"),
        }
    }
}

impl std::fmt::Display for LibraryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LibraryId::User => write!(f, "user"),
            LibraryId::Group(id) => write!(f, "group:{id}"),
        }
    }
}

/// Where indexes live by default: `$ZOTERO_INDEX_DIR`, else
/// `$XDG_DATA_HOME/zotero-mcp/index`, else `$HOME/.local/share/zotero-mcp/index`. `env`
/// reads a variable (e.g. `|k| std::env::var(k).ok()`); empty values, and a relative
/// `XDG_DATA_HOME` (which the XDG specification says to ignore), are skipped.
pub fn default_dir(env: impl Fn(&str) -> Option<String>) -> Result<PathBuf> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("ZOTERO_INDEX_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(data) = var("XDG_DATA_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(Path::new(&data).join("zotero-mcp").join("index"));
    }
    var("HOME")
        .map(|home| Path::new(&home).join(".local/share/zotero-mcp/index"))
        .ok_or(IndexError::NoDirectory)
}

/// What kind of Zotero object a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocKind {
    Item,
    Note,
    Annotation,
    /// An attachment's full text, keyed by the attachment.
    Fulltext,
}

impl DocKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Item => "item",
            DocKind::Note => "note",
            DocKind::Annotation => "annotation",
            DocKind::Fulltext => "fulltext",
        }
    }
}

/// One Zotero object to index, with its chunks. The constructors chunk the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub key: String,
    pub kind: DocKind,
    /// The top-level item: the object itself for an item or a standalone note.
    pub item_key: String,
    pub parent_key: Option<String>,
    /// The object's Zotero version.
    pub version: u64,
    /// The metadata searches filter on and answer; read from the top-level item's row, so
    /// children may leave it empty.
    pub meta: ItemMeta,
    /// In the trash (a child in the trash, or any object of an item in the trash, is left
    /// out of searches unless asked for).
    pub deleted: bool,
    pub chunks: Vec<Chunk>,
}

impl Document {
    pub fn item(key: &str, version: u64, meta: ItemMeta, deleted: bool) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Item,
            item_key: key.to_string(),
            parent_key: None,
            version,
            chunks: chunk::item_chunks(&meta),
            meta,
            deleted,
        }
    }

    /// A note, child of `parent` or standalone (`None`; give it `meta`, e.g. its title and
    /// item type `note`, for filters and answers).
    pub fn note(
        key: &str,
        parent: Option<&str>,
        version: u64,
        markdown: &str,
        meta: ItemMeta,
        deleted: bool,
    ) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Note,
            item_key: parent.unwrap_or(key).to_string(),
            parent_key: parent.map(str::to_string),
            version,
            meta,
            deleted,
            chunks: chunk::note_chunks(markdown),
        }
    }

    /// An annotation of the attachment `attachment_key`, whose top-level item is `item_key`.
    pub fn annotation(
        key: &str,
        attachment_key: &str,
        item_key: &str,
        version: u64,
        text: &str,
        comment: &str,
        deleted: bool,
    ) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Annotation,
            item_key: item_key.to_string(),
            parent_key: Some(attachment_key.to_string()),
            version,
            meta: ItemMeta::default(),
            deleted,
            chunks: chunk::annotation_chunks(text, comment),
        }
    }

    /// The full text of the attachment `attachment_key` (its offsets are those of
    /// `zotero_get_item_fulltext` called with the attachment's key).
    pub fn fulltext(attachment_key: &str, item_key: &str, version: u64, text: &str) -> Self {
        Document {
            key: attachment_key.to_string(),
            kind: DocKind::Fulltext,
            item_key: item_key.to_string(),
            parent_key: (attachment_key != item_key).then(|| attachment_key.to_string()),
            version,
            meta: ItemMeta::default(),
            deleted: false,
            chunks: chunk::fulltext_chunks(text),
        }
    }
}

/// A chunk still without a vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChunk {
    pub id: i64,
    pub matched: Matched,
    pub text: String,
}

/// What the index holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub library: LibraryId,
    pub path: PathBuf,
    /// Distinct top-level items with at least one indexed object.
    pub items: u64,
    pub documents: u64,
    pub chunks: u64,
    pub chunks_with_vectors: u64,
    /// The library version everything is indexed up to: the least of the sync versions.
    pub library_version: Option<u64>,
    pub sync_versions: Vec<(String, u64)>,
    /// Unix seconds of the last committed update.
    pub last_update: Option<u64>,
    /// The model of the stored vectors; `None` before the first vector.
    pub model: Option<ModelIdentity>,
    /// Bytes of the file and its write-ahead log.
    pub size_bytes: u64,
    pub fulltext_included: bool,
}

/// An open index. Searches take `&self`; writes go through [`Index::updater`].
#[derive(Debug)]
pub struct Index {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    library: LibraryId,
    /// The file's (device, inode) when opened: a file rebuilt at the same path has others.
    file_id: Option<(u64, u64)>,
}

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
fn private_dir(dir: &Path) -> Result<()> {
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
fn tighten(path: &Path, mode: u32, remedy: Remedy) -> Result<()> {
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

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Checks what can be checked before SQLite reads the file: its header and length.
fn check_header(path: &Path) -> Result<()> {
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

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Raises `data_generation` (see the module's notes): one more, or the time in nanoseconds
/// when that is higher. To be called in every transaction that changes documents, chunks
/// or vectors.
fn bump_generation(conn: &Connection) -> Result<()> {
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

impl Index {
    /// Opens (creating if absent) the index of `library` in `dir`. The directory is made
    /// 0700, the file and its companions 0600. A file that is not an index of this
    /// version is [`IndexError::Corrupt`], left as it is.
    pub fn open(dir: &Path, library: &LibraryId) -> Result<Self> {
        private_dir(dir)?;
        let path = dir.join(library.file_name());
        Self::open_file(&path, library.clone()).map_err(|e| e.at(&path))
    }

    fn open_file(path: &Path, library: LibraryId) -> Result<Self> {
        // Created here with its mode, so that SQLite (which gives -wal and -shm the mode of
        // the database) never makes a readable file.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(IndexError::io_file("cannot open the index file", path))?;
        let file_id = crate::vcache::file_id(&file);
        drop(file);
        for suffix in ["", "-wal", "-shm", ".lock"] {
            tighten(&sibling(path, suffix), 0o600, Remedy::File)?;
        }
        check_header(path)?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;

        let mut index = Index {
            conn,
            path: path.to_path_buf(),
            library,
            file_id,
        };
        index.check_or_create()?;
        Ok(index)
    }

    fn corrupt(&self, why: impl Into<String>) -> IndexError {
        IndexError::Corrupt {
            path: self.path.clone(),
            why: why.into(),
        }
    }

    /// Reads (application_id, user_version, number of schema objects).
    fn identity(&self) -> Result<(i32, i32, i64)> {
        let app: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i32 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let objects: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        Ok((app, version, objects))
    }

    fn check_or_create(&mut self) -> Result<()> {
        let (mut app, mut version, objects) = self.identity()?;
        if app == 0 && version == 0 && objects == 0 {
            // A new file: WAL first (it cannot change inside a transaction), then the
            // schema in one transaction, checked again inside it against a racing creator.
            self.conn
                .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (a, v, o) = {
                let app: i32 = tx.query_row("PRAGMA application_id", [], |r| r.get(0))?;
                let v: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let o: i64 =
                    tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
                (app, v, o)
            };
            if a == 0 && v == 0 && o == 0 {
                tx.execute_batch(SCHEMA)?;
                tx.execute_batch(&format!(
                    "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
                ))?;
            }
            tx.commit()?;
            (app, version, _) = self.identity()?;
        }
        if app != APPLICATION_ID {
            return Err(self.corrupt(format!(
                "it is an SQLite database of another application (application_id {app:#x})"
            )));
        }
        if version != SCHEMA_VERSION {
            return Err(self.corrupt(format!(
                "it has schema version {version}, this program reads version {SCHEMA_VERSION}"
            )));
        }
        for table in TABLES {
            let found: Option<i64> = self
                .conn
                .query_row(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .optional()?;
            if found.is_none() {
                return Err(self.corrupt(format!("the table {table} is missing")));
            }
        }
        // Reading each table's first page finds a damaged file now rather than mid-search.
        for table in ["meta", "sync", "documents", "chunks", "vectors"] {
            self.conn.query_row(
                &format!("SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)"),
                [],
                |_| Ok(()),
            )?;
        }
        self.conn
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        for suffix in ["-wal", "-shm"] {
            tighten(&sibling(&self.path, suffix), 0o600, Remedy::File)?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn library(&self) -> &LibraryId {
        &self.library
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// The model of the stored vectors, `None` before any vector is stored.
    pub fn model(&self) -> Result<Option<ModelIdentity>> {
        read_model(&self.conn).map_err(|e| e.at(&self.path))
    }

    /// The library version up to which objects of `kind` are indexed.
    pub fn sync_version(&self, kind: &str) -> Result<Option<u64>> {
        let v: Option<i64> = self
            .conn
            .query_row("SELECT version FROM sync WHERE kind = ?1", [kind], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(v.map(|v| v.max(0) as u64))
    }

    /// The top-level item indexed under an attachment (`parent`), from its full text or
    /// annotations already indexed: the sync asks Zotero only when this has no answer.
    pub fn item_of_parent(&self, parent: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT item_key FROM documents
                 WHERE parent_key = ?1 OR (key = ?1 AND kind = 'fulltext') LIMIT 1",
                [parent],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| IndexError::from(e).at(&self.path))
    }

    /// Every indexed document as (key, kind): for reconciling with a library that cannot
    /// say what was deleted.
    pub fn document_keys(&self) -> Result<Vec<(String, String)>> {
        let run = || -> Result<Vec<(String, String)>> {
            let mut stmt = self.conn.prepare("SELECT key, kind FROM documents")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        run().map_err(|e| e.at(&self.path))
    }

    /// Whether the vectors of `encoder` may be used with this index: yes when it holds
    /// none or the encoder's model made them; otherwise [`IndexError::ModelMismatch`].
    pub fn check_model(&self, identity: &ModelIdentity) -> Result<()> {
        match self.model()? {
            Some(indexed) if &indexed != identity => Err(IndexError::ModelMismatch {
                path: self.path.clone(),
                indexed: indexed.to_string(),
                current: identity.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// What an in-memory copy of the vectors of `dims` values must match to be used.
    pub(crate) fn cache_key(&self, dims: usize) -> Result<crate::vcache::CacheKey> {
        let (chunks, with_vectors) = self.counts()?;
        self.cache_key_with(dims, chunks, with_vectors)
    }

    /// [`Index::cache_key`] with the counts already read.
    pub(crate) fn cache_key_with(
        &self,
        dims: usize,
        chunks: u64,
        with_vectors: u64,
    ) -> Result<crate::vcache::CacheKey> {
        Ok(crate::vcache::CacheKey {
            file: self.file_id,
            generation: self.meta("data_generation")?,
            chunks,
            with_vectors,
            dims,
        })
    }

    pub(crate) fn counts(&self) -> Result<(u64, u64)> {
        let total: i64 = self
            .conn
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        let pending: i64 = self.conn.query_row(
            "SELECT count(*) FROM chunks INDEXED BY chunks_pending WHERE embedded = 0",
            [],
            |r| r.get(0),
        )?;
        let total = total.max(0) as u64;
        Ok((total, total.saturating_sub(pending.max(0) as u64)))
    }

    /// The library version the index is complete up to (the least of its kinds'), as
    /// [`Status::library_version`] says, without the rest of the status.
    pub fn library_version(&self) -> Result<Option<u64>> {
        let v: Option<i64> = self
            .conn
            .query_row("SELECT min(version) FROM sync", [], |r| r.get(0))
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(v.map(|v| v.max(0) as u64))
    }

    pub fn status(&self) -> Result<Status> {
        self.status_inner().map_err(|e| e.at(&self.path))
    }

    fn status_inner(&self) -> Result<Status> {
        let count = |sql: &str| -> Result<u64> {
            let n: i64 = self.conn.query_row(sql, [], |r| r.get(0))?;
            Ok(n.max(0) as u64)
        };
        let (chunks, chunks_with_vectors) = self.counts()?;
        let mut stmt = self
            .conn
            .prepare("SELECT kind, version FROM sync ORDER BY kind")?;
        let sync_versions = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let size_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| fs::metadata(sibling(&self.path, s)).ok())
            .map(|m| m.len())
            .sum();
        Ok(Status {
            library: self.library.clone(),
            path: self.path.clone(),
            items: count("SELECT count(DISTINCT item_key) FROM documents")?,
            documents: count("SELECT count(*) FROM documents")?,
            chunks,
            chunks_with_vectors,
            library_version: sync_versions.iter().map(|(_, v)| *v).min(),
            sync_versions,
            last_update: self.meta("last_update")?.and_then(|v| v.parse().ok()),
            model: read_model(&self.conn)?,
            size_bytes,
            fulltext_included: self.meta("fulltext_included")?.as_deref() == Some("1"),
        })
    }

    /// Like [`Index::updater`], but waits up to `timeout` for another update to finish
    /// before answering [`IndexError::Busy`].
    pub fn updater_wait(&mut self, timeout: Duration) -> Result<Updater<'_>> {
        // A timeout too far to represent waits for ever.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            match self.try_lock()? {
                Some(lock) => {
                    return Ok(Updater {
                        index: self,
                        _lock: lock,
                    })
                }
                None if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Err(IndexError::Busy {
                        path: self.path.clone(),
                    })
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Starts an update: takes the index's update lock, or answers [`IndexError::Busy`]
    /// at once when another updater (any process) holds it.
    pub fn updater(&mut self) -> Result<Updater<'_>> {
        self.updater_wait(Duration::ZERO)
    }

    /// The update lock, or `None` when another holds it.
    fn try_lock(&self) -> Result<Option<File>> {
        try_lock_at(&self.path)
    }

    /// Takes the update lock of `library`'s index in `dir` without opening the index (it
    /// may be damaged, or about to be replaced), or answers [`IndexError::Busy`] at once.
    pub fn lock(dir: &Path, library: &LibraryId) -> Result<UpdateLock> {
        private_dir(dir)?;
        let path = dir.join(library.file_name());
        match try_lock_at(&path).map_err(|e| e.at(&path))? {
            Some(file) => Ok(UpdateLock { file, path }),
            None => Err(IndexError::Busy { path }),
        }
    }

    /// Replaces the index that `lock` guards by an empty one: its files are removed and a
    /// new index is made, all while the lock is held, so that no other update can start on
    /// either the old file or the new one meanwhile. A damaged file is replaced as well.
    /// Searches that had the old file open keep reading it until they close it.
    pub fn replace(lock: &UpdateLock, library: &LibraryId) -> Result<Self> {
        for suffix in ["", "-wal", "-shm"] {
            let p = sibling(&lock.path, suffix);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(IndexError::io_file("cannot remove the old index", &p)(e)),
            }
        }
        Self::open_file(&lock.path, library.clone()).map_err(|e| e.at(&lock.path))
    }

    /// Starts an update under a lock taken by [`Index::lock`] for this index's file.
    pub fn updater_with(&mut self, lock: UpdateLock) -> Result<Updater<'_>> {
        if lock.path != self.path {
            return Err(IndexError::WrongLock {
                lock: lock.path,
                index: self.path.clone(),
            });
        }
        Ok(Updater {
            index: self,
            _lock: lock.file,
        })
    }
}

/// The update lock of the index file at `path` (a `.lock` file beside it, which outlives
/// the index's own files), or `None` when another holds it.
fn try_lock_at(path: &Path) -> Result<Option<File>> {
    let lock_path = sibling(path, ".lock");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(IndexError::io_file(
            "cannot open the update lock",
            &lock_path,
        ))?;
    let locked = crate::flock::try_lock(&lock).map_err(IndexError::io(
        "cannot take the update lock",
        &lock_path,
        Remedy::File,
    ))?;
    Ok(locked.then_some(lock))
}

/// An index's update lock held before the index is open (see [`Index::lock`]); released
/// when dropped, or kept by the [`Updater`] it is given to.
#[derive(Debug)]
pub struct UpdateLock {
    file: File,
    /// The index file it guards.
    path: PathBuf,
}

fn read_model(conn: &Connection) -> Result<Option<ModelIdentity>> {
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

fn write_model(conn: &Connection, m: &ModelIdentity) -> Result<()> {
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

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// Holds the update lock of an index until dropped; writes in [`Batch`]es.
#[derive(Debug)]
pub struct Updater<'a> {
    index: &'a mut Index,
    /// The `flock` is released when the file is closed, including when the process dies.
    _lock: File,
}

impl Updater<'_> {
    pub fn index(&self) -> &Index {
        self.index
    }

    /// Starts a batch: one transaction, all of whose writes land together or not at all.
    pub fn batch(&mut self) -> Result<Batch<'_>> {
        let path = self.index.path.clone();
        let tx = self
            .index
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| IndexError::from(e).at(&path))?;
        Ok(Batch { tx, path })
    }

    /// Up to `limit` chunks without a vector, those describing items first, then notes
    /// and annotations, then full text.
    pub fn pending_vectors(&self, limit: usize) -> Result<Vec<PendingChunk>> {
        let conn = &self.index.conn;
        let run = || -> Result<Vec<PendingChunk>> {
            let mut stmt = conn.prepare(
                "SELECT id, matched, text FROM chunks INDEXED BY chunks_pending
                 WHERE embedded = 0 ORDER BY priority, id LIMIT ?1",
            )?;
            let rows = stmt.query_map([limit.min(i64::MAX as usize) as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, matched, text) = row?;
                out.push(PendingChunk {
                    id,
                    matched: Matched::parse(&matched).unwrap_or(Matched::Fulltext),
                    text,
                });
            }
            Ok(out)
        };
        run().map_err(|e| e.at(&self.index.path))
    }

    /// Stores vectors of `model` for chunks (by id) in one transaction. The first vectors
    /// record the model; vectors of another model than the recorded one are refused
    /// ([`IndexError::ModelMismatch`]: [`Updater::reset_vectors`] first).
    pub fn write_vectors(
        &mut self,
        model: &ModelIdentity,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<()> {
        self.index.check_model(model)?;
        let path = self.index.path.clone();
        let mut run = || -> Result<()> {
            let tx = self
                .index
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            if read_model(&tx)?.is_none() {
                write_model(&tx, model)?;
            }
            {
                let mut stmt = tx.prepare(
                    "INSERT OR REPLACE INTO vectors (chunk_id, doc_id, vector)
                     SELECT id, doc_id, ?2 FROM chunks WHERE id = ?1",
                )?;
                let mut mark = tx.prepare("UPDATE chunks SET embedded = 1 WHERE id = ?1")?;
                for (id, v) in vectors {
                    if v.len() != model.dims {
                        return Err(IndexError::Encode(crate::encoder::EncodeError(format!(
                            "the model {} gave a vector of {} values, not {}",
                            model.id,
                            v.len(),
                            model.dims
                        ))));
                    }
                    stmt.execute(params![id, vector_blob(v)])?;
                    mark.execute([id])?;
                }
            }
            bump_generation(&tx)?;
            tx.commit()?;
            Ok(())
        };
        run().map_err(|e| e.at(&path))
    }

    /// Computes vectors for up to `max_chunks` chunks lacking one, `batch` at a time, each
    /// batch committed on its own (so that a long run can be stopped and resumed).
    /// Answers how many chunks got a vector.
    pub fn embed_pending(
        &mut self,
        encoder: &dyn Encoder,
        batch: usize,
        max_chunks: usize,
    ) -> Result<usize> {
        let model = encoder.identity();
        self.index.check_model(&model)?;
        let mut done = 0;
        while done < max_chunks {
            let pending = self.pending_vectors(batch.max(1).min(max_chunks - done))?;
            if pending.is_empty() {
                break;
            }
            let texts: Vec<&str> = pending.iter().map(|p| p.text.as_str()).collect();
            let vectors = encoder.encode(&texts)?;
            if vectors.len() != pending.len() {
                return Err(IndexError::Encode(crate::encoder::EncodeError(format!(
                    "the encoder answered {} vectors for {} texts",
                    vectors.len(),
                    pending.len()
                ))));
            }
            let batch: Vec<(i64, Vec<f32>)> = pending.iter().map(|p| p.id).zip(vectors).collect();
            self.write_vectors(&model, &batch)?;
            done += batch.len();
        }
        Ok(done)
    }

    /// Drops every vector and records `model` as the index's model: the way to change
    /// models. Keyword search keeps working while the vectors are recomputed.
    pub fn reset_vectors(&mut self, model: &ModelIdentity) -> Result<()> {
        let path = self.index.path.clone();
        let mut run = || -> Result<()> {
            let tx = self
                .index
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("UPDATE chunks SET embedded = 0 WHERE embedded = 1", [])?;
            tx.execute("DELETE FROM vectors", [])?;
            write_model(&tx, model)?;
            bump_generation(&tx)?;
            tx.commit()?;
            Ok(())
        };
        run().map_err(|e| e.at(&path))
    }
}

pub(crate) fn vector_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One value of a stored vector: four bytes of a [`vector_blob`] (0 for fewer).
pub(crate) fn blob_value(bytes: &[u8]) -> f32 {
    <[u8; 4]>::try_from(bytes).map_or(0.0, f32::from_le_bytes)
}

/// The writes of one transaction. Dropped without [`Batch::commit`], it is rolled back.
#[derive(Debug)]
pub struct Batch<'a> {
    tx: rusqlite::Transaction<'a>,
    path: PathBuf,
}

impl Batch<'_> {
    /// Inserts or replaces a document and all its chunks (their keyword rows and vectors
    /// with them). A chunk whose text is unchanged keeps its vector.
    pub fn upsert(&mut self, doc: &Document) -> Result<()> {
        self.upsert_inner(doc).map_err(|e| e.at(&self.path))
    }

    fn upsert_inner(&mut self, doc: &Document) -> Result<()> {
        let tx = &self.tx;
        let old: Option<i64> = tx
            .query_row(
                "SELECT id FROM documents WHERE key = ?1 AND kind = ?2",
                params![doc.key, doc.kind.as_str()],
                |r| r.get(0),
            )
            .optional()?;
        let mut kept: HashMap<String, Vec<u8>> = HashMap::new();
        if let Some(id) = old {
            let mut stmt = tx.prepare(
                "SELECT c.text, v.vector FROM chunks c JOIN vectors v ON v.chunk_id = c.id
                 WHERE c.doc_id = ?1",
            )?;
            let rows = stmt.query_map([id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })?;
            for row in rows {
                let (text, vector) = row?;
                kept.insert(text, vector);
            }
            delete_chunks(tx, id)?;
        }
        let sep = |v: &[String]| -> String {
            if v.is_empty() {
                String::new()
            } else {
                format!("\u{1f}{}\u{1f}", v.join("\u{1f}"))
            }
        };
        let m = &doc.meta;
        let doc_id: i64 = tx.query_row(
            "INSERT INTO documents
                (key, kind, item_key, parent_key, version, title, creators, year, item_type,
                 collections, tags, deleted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (key, kind) DO UPDATE SET
                item_key = excluded.item_key, parent_key = excluded.parent_key,
                version = excluded.version, title = excluded.title,
                creators = excluded.creators, year = excluded.year,
                item_type = excluded.item_type, collections = excluded.collections,
                tags = excluded.tags, deleted = excluded.deleted
             RETURNING id",
            params![
                doc.key,
                doc.kind.as_str(),
                doc.item_key,
                doc.parent_key,
                doc.version.min(i64::MAX as u64) as i64,
                m.title,
                m.creators,
                m.year,
                m.item_type,
                sep(&m.collections),
                sep(&m.tags),
                doc.deleted,
            ],
            |r| r.get(0),
        )?;
        let mut insert = tx.prepare(
            "INSERT INTO chunks (doc_id, item_key, matched, text, start_char, end_char, priority, embedded)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut keep =
            tx.prepare("INSERT INTO vectors (chunk_id, doc_id, vector) VALUES (?1, ?2, ?3)")?;
        let mut fts = tx.prepare("INSERT INTO chunks_fts (rowid, text) VALUES (?1, ?2)")?;
        for c in &doc.chunks {
            let (start, end) = c.span.map_or((None, None), |(s, e)| {
                (
                    Some(s.min(i64::MAX as u64) as i64),
                    Some(e.min(i64::MAX as u64) as i64),
                )
            });
            insert.execute(params![
                doc_id,
                doc.item_key,
                c.matched.as_str(),
                c.text,
                start,
                end,
                c.matched.priority(),
                kept.contains_key(&c.text),
            ])?;
            let id = tx.last_insert_rowid();
            if let Some(v) = kept.get(&c.text) {
                keep.execute(params![id, doc_id, v])?;
            }
            fts.execute(params![id, fts_text(&c.text)])?;
        }
        Ok(())
    }

    /// Removes the objects with this key (of any kind) and their chunks; answers how many
    /// documents went.
    pub fn delete(&mut self, key: &str) -> Result<usize> {
        self.delete_where("key = ?1", key)
            .map_err(|e| e.at(&self.path))
    }

    /// Removes an item and everything indexed under it: its notes, annotations and full
    /// texts (by `item_key` or `parent_key`).
    pub fn delete_item(&mut self, key: &str) -> Result<usize> {
        self.delete_where("key = ?1 OR item_key = ?1 OR parent_key = ?1", key)
            .map_err(|e| e.at(&self.path))
    }

    fn delete_where(&mut self, cond: &str, key: &str) -> Result<usize> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .tx
                .prepare(&format!("SELECT id FROM documents WHERE {cond}"))?;
            let rows = stmt.query_map([key], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for id in &ids {
            delete_chunks(&self.tx, *id)?;
            self.tx
                .execute("DELETE FROM documents WHERE id = ?1", [id])?;
        }
        Ok(ids.len())
    }

    /// What hangs under an attachment (its full text and annotations) follows a change of
    /// the attachment: moved to another item (`item_key`), or into or out of the trash
    /// (`deleted`). Answers how many documents changed.
    pub fn reattach(&mut self, attachment: &str, item_key: &str, deleted: bool) -> Result<usize> {
        let run = |tx: &rusqlite::Transaction<'_>| -> Result<usize> {
            let under = "(parent_key = ?1 OR (key = ?1 AND kind = 'fulltext'))";
            tx.execute(
                &format!(
                    "UPDATE chunks SET item_key = ?2 WHERE item_key != ?2 AND doc_id IN
                     (SELECT id FROM documents WHERE {under})"
                ),
                params![attachment, item_key],
            )?;
            Ok(tx.execute(
                &format!(
                    "UPDATE documents SET item_key = ?2, deleted = ?3
                     WHERE {under} AND (item_key != ?2 OR deleted != ?3)"
                ),
                params![attachment, item_key, deleted],
            )?)
        };
        run(&self.tx).map_err(|e| e.at(&self.path))
    }

    /// Removes every document of one kind (e.g. the full texts, when they are no longer
    /// wanted); answers how many went.
    pub fn delete_kind(&mut self, kind: DocKind) -> Result<usize> {
        self.delete_where("kind = ?1", kind.as_str())
            .map_err(|e| e.at(&self.path))
    }

    /// Forgets how far objects of `kind` are indexed (the next update reads them all).
    pub fn clear_sync_version(&mut self, kind: &str) -> Result<()> {
        self.tx
            .execute("DELETE FROM sync WHERE kind = ?1", [kind])
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }

    /// Records that objects of `kind` are indexed up to library version `version`.
    pub fn set_sync_version(&mut self, kind: &str, version: u64) -> Result<()> {
        self.tx
            .execute(
                "INSERT INTO sync (kind, version) VALUES (?1, ?2)
                 ON CONFLICT (kind) DO UPDATE SET version = excluded.version",
                params![kind, version.min(i64::MAX as u64) as i64],
            )
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }

    pub fn set_fulltext_included(&mut self, included: bool) -> Result<()> {
        set_meta(
            &self.tx,
            "fulltext_included",
            if included { "1" } else { "0" },
        )
        .map_err(|e| e.at(&self.path))
    }

    /// Makes the batch's writes visible, all together, and records the time.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        set_meta(&self.tx, "last_update", &now_secs().to_string()).map_err(|e| e.at(&path))?;
        // Every batch counts as a change (most change documents): at worst a copy of the
        // vectors is reloaded that was still good.
        bump_generation(&self.tx).map_err(|e| e.at(&path))?;
        self.tx.commit().map_err(|e| IndexError::from(e).at(&path))
    }
}

fn delete_chunks(tx: &Connection, doc_id: i64) -> Result<()> {
    tx.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?1)",
        [doc_id],
    )?;
    tx.execute(
        "DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = ?1)",
        [doc_id],
    )?;
    tx.execute("DELETE FROM chunks WHERE doc_id = ?1", [doc_id])?;
    Ok(())
}

/// Whether the tokenizer should see `c` as a word of its own: Han, kana, Hangul, whose
/// scripts do not put spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xF900..=0xFAFF // Han compatibility
        | 0xFF66..=0xFF9F // half-width Katakana
        | 0x1100..=0x11FF // Hangul Jamo
        | 0x3130..=0x318F // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0x20000..=0x2FFFF // Han extensions B…
    )
}

/// The text the keyword index is given: `text` with a space around each CJK character, so
/// that the tokenizer makes each one a token (see the module's notes).
pub(crate) fn fts_text(text: &str) -> String {
    if !text.chars().any(is_cjk) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    for c in text.chars() {
        if is_cjk(c) {
            out.push(' ');
            out.push(c);
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// A user's query as the pieces of an FTS5 expression that cannot be a syntax error nor
/// mean anything but "any of these words" once joined by OR: each whitespace-separated
/// piece becomes a quoted string (quotes inside are dropped: the tokenizer separates words
/// at them anyway), which FTS5 reads as a phrase of the piece's tokens (so
/// `sleep-deprivation` and a CJK run are phrases); BM25 ranks chunks matching more and
/// rarer pieces higher. Operators (`AND`, `NEAR`, `-`, `*`, `^`, `:`, parentheses) inside
/// quotes are plain text; control characters are spaces. Empty when nothing in the query
/// can match.
pub(crate) fn fts_pieces(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .take(64)
        .map(|p| {
            // FTS5 reads the expression as a C string: a NUL would end it mid-quote.
            let p: String = p
                .chars()
                .map(|c| if c == '"' || c.is_control() { ' ' } else { c })
                .collect();
            format!("\"{}\"", fts_text(&p))
        })
        .collect()
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
    use std::collections::HashMap;

    /// The expression a search gives FTS5.
    fn fts_query(query: &str) -> Option<String> {
        let pieces = fts_pieces(query);
        (!pieces.is_empty()).then(|| pieces.join(" OR "))
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn default_dir_follows_xdg_with_an_override() {
        let home = [("HOME", "/home/u")];
        assert_eq!(
            default_dir(env(&home)).unwrap(),
            Path::new("/home/u/.local/share/zotero-mcp/index")
        );
        let xdg = [("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")];
        assert_eq!(
            default_dir(env(&xdg)).unwrap(),
            Path::new("/data/zotero-mcp/index")
        );
        // A relative or empty XDG_DATA_HOME is ignored, as the specification says.
        let rel = [("HOME", "/home/u"), ("XDG_DATA_HOME", "data")];
        assert_eq!(
            default_dir(env(&rel)).unwrap(),
            Path::new("/home/u/.local/share/zotero-mcp/index")
        );
        let over = [("XDG_DATA_HOME", "/data"), ("ZOTERO_INDEX_DIR", "/srv/idx")];
        assert_eq!(default_dir(env(&over)).unwrap(), Path::new("/srv/idx"));
        assert!(matches!(
            default_dir(env(&[])),
            Err(IndexError::NoDirectory)
        ));
    }

    #[test]
    fn library_ids_name_safe_files() {
        assert_eq!(LibraryId::parse("user").unwrap().file_name(), "user.sqlite");
        let g = LibraryId::parse("group:123").unwrap();
        assert_eq!(g.file_name(), "group-123.sqlite");
        assert_eq!(g.to_string(), "group:123");
        for bad in ["group:../x", "group:", "users", "group:-1", "group:1/2"] {
            assert!(LibraryId::parse(bad).is_err(), "{bad}");
        }
    }

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

    #[test]
    fn queries_are_quoted_phrases() {
        assert_eq!(
            fts_query("a \"b c"),
            Some("\"a\" OR \" b\" OR \"c\"".to_string())
        );
        assert_eq!(
            fts_query("画像認識"),
            Some("\" 画  像  認  識 \"".to_string())
        );
        assert_eq!(fts_query(" - * ( ) "), None);
    }
}
