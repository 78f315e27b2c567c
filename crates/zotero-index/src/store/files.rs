//! The attachments whose files an update reads for their text (`files`), and what came of
//! each read. The caller says what identifies a file's bytes (`state`, e.g. its MD5), what
//! it needs to read the file again (`source`, opaque here) and names the outcomes; kept here
//! with the documents, a file is due again only when its state changes or its outcome is
//! one the caller tries again, and a deleted attachment leaves no row behind.
//!
//! A full text read from a file is told from another (Zotero's) by its chunks: theirs name
//! a page ([`crate::chunk::PageRef`]), the others' do not.

use rusqlite::{params, OptionalExtension};

use crate::error::{IndexError, Result};

use super::open::Index;
use super::write::Batch;

/// An attachment whose file may hold text, as the sync last saw it.
#[derive(Debug, Clone, Copy)]
pub struct FileEntry<'a> {
    pub key: &'a str,
    /// Its top-level item (itself when it stands alone).
    pub item_key: &'a str,
    pub deleted: bool,
    /// What identifies the file's bytes: when it changes, the file is due again.
    pub state: &'a str,
    /// What reading the file needs, as the caller wrote it.
    pub source: &'a str,
}

/// A file due to be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDue {
    pub key: String,
    pub item_key: String,
    pub deleted: bool,
    pub state: String,
    pub source: String,
    /// What came of the last read (of an earlier state, or an outcome tried again).
    pub outcome: Option<String>,
    /// Whether `outcome` is of the current state (an outcome tried again).
    pub read: bool,
    /// A full text not read from the file (Zotero's own) is indexed for the attachment.
    pub other_text: bool,
    /// The full text indexed for the attachment was read from its file (in an earlier
    /// state: the file has changed since).
    pub file_text: bool,
}

/// SQL: whether a full text indexed under the attachment `key` (an SQL expression) has
/// chunks that name a page (`pages`: it was read from the file) or chunks that do not.
fn text_exists(pages: bool, key: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM documents d JOIN chunks c ON c.doc_id = d.id
                 WHERE d.key = {key} AND d.kind = 'fulltext' AND c.page_index IS {}NULL)",
        if pages { "NOT " } else { "" }
    )
}

impl Index {
    /// The files to read: never read in their current state, or last read with an outcome
    /// in `retry`, or in `retry_without_text` while no full text is indexed for them. In key
    /// order.
    pub fn files_due(&self, retry: &[&str], retry_without_text: &[&str]) -> Result<Vec<FileDue>> {
        let run = || -> Result<Vec<FileDue>> {
            let sql = format!(
                "SELECT f.key, f.item_key, f.deleted, f.state, f.source, f.outcome,
                        f.read_state IS f.state, {}, {}
                 FROM files f ORDER BY f.key",
                text_exists(false, "f.key"),
                text_exists(true, "f.key"),
            );
            let mut stmt = self.conn.prepare(&sql)?;
            let rows = stmt.query_map([], |r| {
                Ok(FileDue {
                    key: r.get(0)?,
                    item_key: r.get(1)?,
                    deleted: r.get(2)?,
                    state: r.get(3)?,
                    source: r.get(4)?,
                    outcome: r.get(5)?,
                    read: r.get(6)?,
                    other_text: r.get(7)?,
                    file_text: r.get(8)?,
                })
            })?;
            let mut out = Vec::new();
            for row in rows {
                let due = row?;
                let outcome = due.outcome.as_deref().unwrap_or_default();
                let textless = !due.other_text && !due.file_text;
                if !due.read
                    || retry.contains(&outcome)
                    || (textless && retry_without_text.contains(&outcome))
                {
                    out.push(due);
                }
            }
            Ok(out)
        };
        run().map_err(|e| e.at(&self.path))
    }

    /// Whether the full text indexed under the attachment `key` was read from its file as it
    /// is now: another source's text must not replace it.
    pub fn file_text_current(&self, key: &str) -> Result<bool> {
        let sql = format!(
            "SELECT EXISTS (SELECT 1 FROM files WHERE key = ?1 AND read_state IS state)
                    AND {}",
            text_exists(true, "?1")
        );
        self.conn
            .query_row(&sql, [key], |r| r.get(0))
            .map_err(|e| IndexError::from(e).at(&self.path))
    }
}

impl Batch<'_> {
    /// Records an attachment whose file may hold text (or its new state, parent or trash
    /// flag); what was read of an earlier state stays until the file is read again.
    pub fn note_file(&mut self, f: &FileEntry<'_>) -> Result<()> {
        self.tx
            .execute(
                "INSERT INTO files (key, item_key, deleted, state, source)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (key) DO UPDATE SET
                    item_key = excluded.item_key, deleted = excluded.deleted,
                    state = excluded.state, source = excluded.source",
                params![f.key, f.item_key, f.deleted, f.state, f.source],
            )
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }

    /// Forgets an attachment that no longer has a file to read (a link, another type); a
    /// full text read from its file goes with it.
    pub fn forget_file(&mut self, key: &str) -> Result<()> {
        let had: Option<i64> = self
            .tx
            .query_row("SELECT 1 FROM files WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        if had.is_some() && self.file_text(key)? {
            self.delete_fulltext(key)?;
        }
        self.forget_files("key = ?1", key)
    }

    /// Records what came of reading the file of `key` in `state`.
    pub fn file_read(&mut self, key: &str, state: &str, outcome: &str) -> Result<()> {
        self.tx
            .execute(
                "UPDATE files SET read_state = ?2, outcome = ?3 WHERE key = ?1",
                params![key, state, outcome],
            )
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }

    /// Whether the full text indexed under `key` was read from its file.
    fn file_text(&self, key: &str) -> Result<bool> {
        self.tx
            .query_row(&format!("SELECT {}", text_exists(true, "?1")), [key], |r| {
                r.get(0)
            })
            .map_err(|e| IndexError::from(e).at(&self.path))
    }

    /// Removes the rows of the files `cond` (on `key` and `item_key`, with `?1`) selects.
    pub(super) fn forget_files(&mut self, cond: &str, key: &str) -> Result<()> {
        self.tx
            .execute(&format!("DELETE FROM files WHERE {cond}"), [key])
            .map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }

    /// Makes the file of `key` (every file, with `None`) due again.
    pub(super) fn unread_files(&mut self, key: Option<&str>) -> Result<()> {
        let done = match key {
            Some(k) => self.tx.execute(
                "UPDATE files SET read_state = NULL, outcome = NULL WHERE key = ?1",
                [k],
            ),
            None => self
                .tx
                .execute("UPDATE files SET read_state = NULL, outcome = NULL", []),
        };
        done.map_err(|e| IndexError::from(e).at(&self.path))?;
        Ok(())
    }
}
