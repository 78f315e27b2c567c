//! Opening an index: the file checked or created, its identity and version.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::error::{IndexError, Remedy, Result};

use super::document::LibraryId;
use super::schema::{
    check_header, private_dir, sibling, tighten, APPLICATION_ID, BUSY_TIMEOUT, FILES_TABLE,
    MIGRATE_FROM_3, SCHEMA, SCHEMA_VERSION, TABLES,
};
use crate::cache_key::file_id;

/// An open index. Searches take `&self`; writes go through [`Index::updater`].
#[derive(Debug)]
pub struct Index {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(super) library: LibraryId,
    /// The file's (device, inode) when opened: a file rebuilt at the same path has others.
    pub(crate) file_id: Option<(u64, u64)>,
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

    pub(crate) fn open_file(path: &Path, library: LibraryId) -> Result<Self> {
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
        let file_id = file_id(&file);
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

    pub(crate) fn corrupt(&self, why: impl Into<String>) -> IndexError {
        IndexError::Corrupt {
            path: self.path.clone(),
            why: why.into(),
        }
    }

    /// Reads (application_id, user_version, number of schema objects).
    pub(crate) fn identity(&self) -> Result<(i32, i32, i64)> {
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
                tx.execute_batch(FILES_TABLE)?;
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
        if version == 3 {
            version = self.migrate_from_3().map_err(|e| match e {
                IndexError::Sqlite(e) => self.corrupt(format!(
                    "it was made by an older zotero-mcp (schema version 3) and could not be \
                     brought to version {SCHEMA_VERSION}: {e}"
                )),
                e => e,
            })?;
        }
        if version != SCHEMA_VERSION {
            let made_by = if (1..SCHEMA_VERSION).contains(&version) {
                "an older zotero-mcp, whose keyword index ranks differently"
            } else {
                "another version of zotero-mcp"
            };
            return Err(self.corrupt(format!(
                "it was made by {made_by} (schema version {version}, this program reads \
                 version {SCHEMA_VERSION})"
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
        for table in ["meta", "sync", "documents", "chunks", "vectors", "files"] {
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

    /// Brings a version 3 file to this version in place ([`MIGRATE_FROM_3`]), checked again
    /// inside the transaction against another process migrating it; answers the version
    /// the file has now.
    fn migrate_from_3(&mut self) -> Result<i32> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version == 3 {
            tx.execute_batch(FILES_TABLE)?;
            tx.execute_batch(MIGRATE_FROM_3)?;
        }
        tx.commit()?;
        let (_, version, _) = self.identity()?;
        Ok(version)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn library(&self) -> &LibraryId {
        &self.library
    }
}
