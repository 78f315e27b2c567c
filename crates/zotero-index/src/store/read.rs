//! What an open index answers about itself: its model, its documents, its counts, its
//! status, and the key of its vectors for the in-memory copy.

use std::fs::{self};

use rusqlite::OptionalExtension;

use crate::encoder::ModelIdentity;
use crate::error::{IndexError, Result};

use super::document::Status;
use super::open::Index;
use super::schema::{read_model, sibling};
use crate::cache_key::CacheKey;

impl Index {
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

    /// Every indexed document as (key, kind), and every attachment whose file the index
    /// knows as (key, `file`): for reconciling with a library that cannot say what was
    /// deleted.
    pub fn document_keys(&self) -> Result<Vec<(String, String)>> {
        let run = || -> Result<Vec<(String, String)>> {
            let mut stmt = self.conn.prepare(
                "SELECT key, kind FROM documents UNION ALL SELECT key, 'file' FROM files",
            )?;
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
    pub(crate) fn cache_key(&self, dims: usize) -> Result<CacheKey> {
        let (chunks, with_vectors) = self.counts()?;
        self.cache_key_with(dims, chunks, with_vectors)
    }

    /// [`Index::cache_key`] with the counts already read.
    pub(crate) fn cache_key_with(
        &self,
        dims: usize,
        chunks: u64,
        with_vectors: u64,
    ) -> Result<CacheKey> {
        Ok(CacheKey {
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
}
