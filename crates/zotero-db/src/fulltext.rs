//! `/items/{key}/fulltext`: an attachment's text as Zotero cached it in
//! `storage/<KEY>/.zotero-ft-cache`, with the page or character counts of `fulltextItems`; the
//! file is read after the snapshot's lock is let go.

use std::path::Path;

use rusqlite::OptionalExtension;
use serde_json::json;

use crate::datafile::{self, read_in_storage};
use crate::error::DbError;
use crate::reader::{Lib, Reader};
use crate::reply::DbAnswer;

/// `fulltextItems`: indexed and total pages, indexed and total characters, version.
type FullTextCounts = (Option<i64>, Option<i64>, Option<i64>, Option<i64>, i64);

/// What the database says of a full-text request: answered already, or the cache file
/// still to read, which [`CachedText::read`] does once the snapshot's lock is let go (no
/// other read waits on the file).
pub(crate) enum Reply {
    Ready(DbAnswer),
    Text(CachedText),
}

/// An attachment whose cached text is still to be read, with its `fulltextItems` counts.
pub(crate) struct CachedText {
    key: String,
    counts: Option<FullTextCounts>,
}

/// The database's part of `/items/{key}/fulltext`: the item and its counts.
pub(crate) fn full_text(r: &Reader<'_>, lib: &Lib, key: &str) -> Result<Reply, DbError> {
    let Some(row) = r.item_by_key(lib, key) else {
        return Ok(Reply::Ready(DbAnswer::status(404, "Not found")));
    };
    let counts: Option<FullTextCounts> = r
        .conn
        .query_row(
            "SELECT indexedPages, totalPages, indexedChars, totalChars, version FROM fulltextItems WHERE itemID = ?1",
            [row.id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
        )
        .optional()?;
    Ok(Reply::Text(CachedText {
        key: row.key.clone(),
        counts,
    }))
}

impl CachedText {
    /// Reads `storage/<KEY>/.zotero-ft-cache` of `data_dir` (a regular file inside
    /// `storage/`, see `datafile`) and answers it with its counts.
    pub(crate) fn read(self, data_dir: &Path) -> Result<DbAnswer, DbError> {
        let Some(content) =
            read_in_storage(data_dir, &self.key, ".zotero-ft-cache", datafile::FT_CACHE)?
        else {
            return Ok(DbAnswer::status(404, "Not found"));
        };
        let (pages, total_pages, chars, total_chars, version) =
            self.counts.unwrap_or((None, None, None, None, 0));
        let value = if pages.is_some() || total_pages.is_some() {
            json!({"content": content, "indexedPages": pages.unwrap_or(0), "totalPages": total_pages.unwrap_or(0)})
        } else {
            let n = content.chars().count();
            json!({"content": content, "indexedChars": chars.map_or(n as i64, |c| c), "totalChars": total_chars.map_or(n as i64, |c| c)})
        };
        Ok(DbAnswer::json(&value, None, version))
    }
}
