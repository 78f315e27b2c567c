//! The sync state: how far each kind of object is indexed, read and written in the
//! batch that writes the objects, and the commit that records the time.

use rusqlite::{params, OptionalExtension};

use crate::error::{IndexError, Result};

use super::open::Index;
use super::schema::{bump_generation, now_secs, set_meta};
use super::write::Batch;

impl Index {
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

    /// The library version the index is complete up to (the least of its kinds'), as
    /// [`Status::library_version`] says, without the rest of the status.
    pub fn library_version(&self) -> Result<Option<u64>> {
        let v: Option<i64> = self
            .conn
            .query_row("SELECT min(version) FROM sync", [], |r| r.get(0))
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(v.map(|v| v.max(0) as u64))
    }

    /// Where a source that has no library version (Zotero's own database) last read
    /// `name` up to, as it wrote it with [`Batch::set_source_mark`]. Kept apart from the
    /// sync versions: it is no library version and must not lower the index's.
    pub fn source_mark(&self, name: &str) -> Result<Option<String>> {
        self.meta(&mark_key(name)).map_err(|e| e.at(&self.path))
    }

    /// Every document filed in collections, with their keys: for a source that is not told
    /// when a collection's members change (a collection erased in Zotero's database leaves
    /// its items as they were).
    pub fn document_collections(&self) -> Result<Vec<(String, Vec<String>)>> {
        let run = || -> Result<Vec<(String, Vec<String>)>> {
            let mut stmt = self
                .conn
                .prepare("SELECT key, collections FROM documents WHERE collections != ''")?;
            let rows =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (key, list) = row?;
                let collections = list
                    .split('\u{1f}')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect();
                out.push((key, collections));
            }
            Ok(out)
        };
        run().map_err(|e| e.at(&self.path))
    }
}

fn mark_key(name: &str) -> String {
    format!("mark:{name}")
}

impl Batch<'_> {
    /// Records a source's mark (see [`Index::source_mark`]), in the batch that wrote what
    /// it covers.
    pub fn set_source_mark(&mut self, name: &str, value: &str) -> Result<()> {
        set_meta(&self.tx, &mark_key(name), value).map_err(|e| e.at(&self.path))
    }

    /// Forgets a source's mark (the next update reads everything of `name` again).
    pub fn clear_source_mark(&mut self, name: &str) -> Result<()> {
        self.tx
            .execute("DELETE FROM meta WHERE key = ?1", [mark_key(name)])
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
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
