//! `/items/{key}/fulltext`: an attachment's text as Zotero cached it in
//! `storage/<KEY>/.zotero-ft-cache`, with the page or character counts of `fulltextItems`.

use rusqlite::OptionalExtension;
use serde_json::json;

use crate::error::DbError;
use crate::reader::{Lib, Reader};
use crate::reply::DbAnswer;

/// `fulltextItems`: indexed and total pages, indexed and total characters, version.
type FullTextCounts = (Option<i64>, Option<i64>, Option<i64>, Option<i64>, i64);

pub(crate) fn full_text(r: &Reader<'_>, lib: &Lib, key: &str) -> Result<DbAnswer, DbError> {
    let Some(row) = r.item_by_key(lib, key) else {
        return Ok(DbAnswer::status(404, "Not found"));
    };
    let counts: Option<FullTextCounts> = r
        .conn
        .query_row(
            "SELECT indexedPages, totalPages, indexedChars, totalChars, version FROM fulltextItems WHERE itemID = ?1",
            [row.id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
        )
        .optional()?;
    let path = r
        .data_dir
        .join("storage")
        .join(&row.key)
        .join(".zotero-ft-cache");
    let content = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(DbAnswer::status(404, "Not found"))
        }
        Err(e) => {
            return Err(DbError::Io {
                what: "an attachment's cached full text",
                source: e,
            })
        }
    };
    let (pages, total_pages, chars, total_chars, version) =
        counts.unwrap_or((None, None, None, None, 0));
    let value = if pages.is_some() || total_pages.is_some() {
        json!({"content": content, "indexedPages": pages.unwrap_or(0), "totalPages": total_pages.unwrap_or(0)})
    } else {
        let n = content.chars().count();
        json!({"content": content, "indexedChars": chars.map_or(n as i64, |c| c), "totalChars": total_chars.map_or(n as i64, |c| c)})
    };
    Ok(DbAnswer::json(&value, None, version))
}
