//! The writes of documents and their chunks, in [`Batch`]es: one transaction each.

use std::collections::HashMap;
use std::path::PathBuf;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::chunk::{Chunk, Matched};
use crate::error::{IndexError, Result};

use super::document::{DocKind, Document};
use super::fts::fts_text;
use super::update::Updater;

impl Updater<'_> {
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
}

/// The writes of one transaction. Dropped without [`Batch::commit`], it is rolled back.
#[derive(Debug)]
pub struct Batch<'a> {
    pub(super) tx: rusqlite::Transaction<'a>,
    pub(super) path: PathBuf,
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
            "INSERT INTO chunks (doc_id, item_key, matched, text, start_char, end_char, priority,
                                 embedded, page_index, page_label)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut keep =
            tx.prepare("INSERT INTO vectors (chunk_id, doc_id, vector) VALUES (?1, ?2, ?3)")?;
        let mut fts = tx
            .prepare("INSERT INTO chunks_fts (rowid, title, meta, body) VALUES (?1, ?2, ?3, ?4)")?;
        // An item is one keyword row (see `ItemRecord`), under its first chunk's id.
        let record = (doc.kind == DocKind::Item).then(|| ItemRecord::of(&doc.chunks));
        let mut first_id = None;
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
                c.page.as_ref().map(|p| p.index),
                c.page.as_ref().map(|p| p.label.as_str()),
            ])?;
            let id = tx.last_insert_rowid();
            if let Some(v) = kept.get(&c.text) {
                keep.execute(params![id, doc_id, v])?;
            }
            first_id.get_or_insert(id);
            if record.is_none() {
                fts.execute(params![id, "", "", fts_text(&c.text)])?;
            }
        }
        if let (Some(r), Some(id)) = (record, first_id) {
            fts.execute(params![
                id,
                fts_text(&r.title),
                fts_text(&r.meta),
                fts_text(&r.body)
            ])?;
        }
        Ok(())
    }

    /// Removes the objects with this key (of any kind) and their chunks; answers how many
    /// documents went.
    pub fn delete(&mut self, key: &str) -> Result<usize> {
        self.forget_files("key = ?1", key)?;
        self.delete_where("key = ?1", key)
            .map_err(|e| e.at(&self.path))
    }

    /// Removes an item and everything indexed under it: its notes, annotations and full
    /// texts (by `item_key` or `parent_key`).
    pub fn delete_item(&mut self, key: &str) -> Result<usize> {
        self.forget_files("key = ?1 OR item_key = ?1", key)?;
        self.delete_where("key = ?1 OR item_key = ?1 OR parent_key = ?1", key)
            .map_err(|e| e.at(&self.path))
    }

    /// Removes the full text indexed under an attachment's key and its chunks (the
    /// attachment's own document, when it stands alone, and its annotations stay);
    /// answers how many documents went (0 or 1).
    pub fn delete_fulltext(&mut self, attachment_key: &str) -> Result<usize> {
        self.unread_files(Some(attachment_key))?;
        self.delete_where("key = ?1 AND kind = 'fulltext'", attachment_key)
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
            tx.execute(
                "UPDATE files SET item_key = ?2, deleted = ?3 WHERE key = ?1",
                params![attachment, item_key, deleted],
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
        if kind == DocKind::Fulltext {
            // Every file is read again when full texts are wanted again.
            self.unread_files(None)?;
        }
        self.delete_where("kind = ?1", kind.as_str())
            .map_err(|e| e.at(&self.path))
    }
}

/// An item as one row of the keyword index: its title, metadata and whole abstract in
/// three columns, so that BM25 scores the document (the title's words and the abstract's
/// together, one length) rather than each chunk alone, and a column can weigh more.
struct ItemRecord {
    title: String,
    meta: String,
    body: String,
}

impl ItemRecord {
    fn of(chunks: &[Chunk]) -> Self {
        let join = |m: Matched| {
            chunks
                .iter()
                .filter(|c| c.matched == m)
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        ItemRecord {
            title: join(Matched::Title),
            meta: join(Matched::Metadata),
            body: unsplit(chunks.iter().filter(|c| c.matched == Matched::Abstract)),
        }
    }
}

/// The text that overlapping passages were cut from, each shared stretch once (by their
/// character offsets; passages without offsets are joined whole).
fn unsplit<'a>(passages: impl Iterator<Item = &'a Chunk>) -> String {
    let mut out = String::new();
    let mut end: Option<u64> = None;
    for c in passages {
        match (c.span, end) {
            (Some((start, stop)), Some(e)) if start < e => {
                let skip = usize::try_from(e - start).unwrap_or(usize::MAX);
                out.extend(c.text.chars().skip(skip));
                end = Some(stop.max(e));
            }
            (span, _) => {
                if !out.is_empty() && span.is_none() {
                    out.push('\n');
                }
                out.push_str(&c.text);
                end = span.map(|(_, stop)| stop);
            }
        }
    }
    out
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
