//! What changed in a library since a mark, read from the snapshot, for a copy kept in step
//! without the API (the search index): the items changed at or after the last change read,
//! every key of the library (what a copy holds and the library no longer has was deleted),
//! the cached full texts written since, and each attachment's top-level item.
//!
//! # The change marker: `items.clientDateModified`
//! Zotero writes it (`Zotero.DB.transactionDateTime`: the transaction's start, UTC, whole
//! seconds) on every save of an item, a local edit as much as an object brought by sync
//! (`DataObject._saveData`; no caller passes `skipClientDateModifiedUpdate`), and in the
//! bulk writes that bypass `save()`: the move to the trash (`Zotero.Items.trash`), a tag
//! renamed or removed (`Zotero.Tags.rename`, `removeFromLibrary`), My Publications. The
//! other columns do not serve: `version` is the server's (0 in a library never synced, and
//! moved only by sync), `synced` is cleared again by the next sync, and Zotero 10's
//! `clientVersion` is not raised by the trash or a tag's rename (and older schemas lack it).
//!
//! The mark is inclusive (`>=`): Zotero runs its transactions one at a time, so a row not
//! seen yet carries the latest stamp seen or a later one, even when its transaction had
//! started before the read and committed after it. The items of the mark's second are read
//! again by the next update (harmless: a document is replaced by itself). A mark is never
//! later than now, so that a clock that was set ahead does not hide what follows.
//!
//! # Collections erased
//! Erasing a collection deletes its `collectionItems` rows and leaves the items' rows as
//! they were: the copy compares the collections it has filed items in with the library's.
//!
//! # Deletions: by key
//! An item erased is gone from `items`; `syncDeleteLog` cannot say so, since each sync
//! empties it (a deletion before the last sync and after the copy's last update is no
//! longer there) and an item erased by sync is not logged at all. Items in the trash
//! (`deletedItems`) stay, flagged `deleted`, as the API lists them with `includeTrashed`.
//!
//! # Full texts: the cache file's modification time
//! `fulltextItems` has no time of change (its `version` is the server's); the text is in
//! `storage/<KEY>/.zotero-ft-cache`, written again whenever Zotero indexes the attachment
//! or sync brings its text. Its modification time (milliseconds) is the mark, inclusive
//! likewise. A cache file gone while its attachment stays (Zotero cleared the index) is
//! seen by asking for it (`has_cached_fulltext`): no mark shows a removal.
//!
//! # Staleness
//! `items_saved_after` and `fulltexts_written_after` say whether the next read from a mark
//! would bring anything, without reading it: a local edit not synced yet moves
//! `clientDateModified` but not `libraries.version`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::params;
use serde_json::Value;

use crate::answer::{library, LibraryScope};
use crate::error::DbError;
use crate::reader::{Lib, Reader};
use crate::snapshot::{Snapshot, ZoteroDb};

/// An item changed at or after a mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemChange {
    pub key: String,
    /// Its `clientDateModified` (`YYYY-MM-DD HH:MM:SS`, UTC): the mark once it is read.
    pub changed: String,
}

/// The items of a library changed since a mark.
#[derive(Debug, Clone, Default)]
pub struct ItemChanges {
    /// Oldest change first (then by key).
    pub changed: Vec<ItemChange>,
    /// Every item of the library now, the trash included.
    pub keys: HashSet<String>,
    /// Every collection of the library now, the trash included: an item filed in another
    /// one was in a collection erased since (erasing one leaves its items' rows as they were).
    pub collections: HashSet<String>,
    /// Where the next read starts: the latest change seen, never later than now; `None`
    /// while the library has no item (the next read starts from the beginning).
    pub mark: Option<String>,
    /// `libraries.version`: the library version Zotero last synced (0 when never).
    pub library_version: u64,
}

/// An attachment whose cached full text was written at or after a mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    pub key: String,
    /// The cache file's modification time, Unix milliseconds.
    pub modified_ms: i64,
    /// `fulltextItems.version` (the server's; 0 when never synced).
    pub version: u64,
}

/// The cached full texts of a library written since a mark.
#[derive(Debug, Clone, Default)]
pub struct TextChanges {
    /// Oldest first (then by key).
    pub changed: Vec<TextChange>,
    /// Where the next read starts (see [`ItemChanges::mark`]).
    pub mark: Option<i64>,
}

impl std::fmt::Display for LibraryScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LibraryScope::User => write!(f, "user"),
            LibraryScope::Group(g) => write!(f, "group:{g}"),
        }
    }
}

/// Whether `key` can name a folder of `storage/` (Zotero's keys are eight letters and
/// digits): anything else is never joined to a path.
pub(crate) fn is_plain_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 32 && key.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl ZoteroDb {
    fn cache_path(&self, key: &str) -> Option<PathBuf> {
        is_plain_key(key).then(|| {
            self.data_dir()
                .join("storage")
                .join(key)
                .join(".zotero-ft-cache")
        })
    }

    /// Runs `read` on the library of `scope`; a library the database does not hold is
    /// [`DbError::NoLibrary`].
    fn with_library<R>(
        &self,
        scope: LibraryScope,
        read: impl FnOnce(&Snapshot, &Lib) -> Result<R, DbError>,
    ) -> Result<R, DbError> {
        self.with(|s| match library(s, scope)? {
            Some(lib) => read(s, &lib),
            None => Err(DbError::NoLibrary { scope }),
        })
    }

    /// The items of `scope` changed at or after `since` (`None`: every item), and every
    /// key of the library, from one snapshot (blocking).
    pub fn item_changes(
        &self,
        scope: LibraryScope,
        since: Option<&str>,
    ) -> Result<ItemChanges, DbError> {
        self.with_library(scope, |s, lib| {
            let now: String = s
                .conn
                .query_row("SELECT datetime('now')", [], |r| r.get(0))?;
            let mut stmt = s.conn.prepare_cached(
                "SELECT key, clientDateModified FROM items WHERE libraryID = ?1 \
                 ORDER BY clientDateModified, key",
            )?;
            let rows = stmt.query_map([lib.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut out = ItemChanges {
                mark: since.map(str::to_string),
                library_version: u64::try_from(lib.version).unwrap_or(0),
                ..ItemChanges::default()
            };
            for row in rows {
                let (key, changed) = row?;
                if since.is_none_or(|m| changed.as_str() >= m) {
                    out.changed.push(ItemChange {
                        key: key.clone(),
                        changed,
                    });
                }
                out.keys.insert(key);
            }
            let mut stmt = s
                .conn
                .prepare_cached("SELECT key FROM collections WHERE libraryID = ?1")?;
            let rows = stmt.query_map([lib.id], |r| r.get::<_, String>(0))?;
            out.collections = rows.collect::<rusqlite::Result<_>>()?;
            if let Some(latest) = out.changed.last() {
                let capped = latest.changed.as_str().min(now.as_str()).to_string();
                out.mark = Some(match out.mark {
                    Some(m) => m.max(capped),
                    None => capped,
                });
            }
            Ok(out)
        })
    }

    /// The items of these keys in `scope` as the API's wire objects, trashed ones
    /// included; keys gone meanwhile are simply absent (blocking).
    pub fn items_by_key(
        &self,
        scope: LibraryScope,
        keys: &[String],
    ) -> Result<Vec<Value>, DbError> {
        self.with_library(scope, |s, lib| {
            let reader = Reader {
                conn: &s.conn,
                names: &s.names,
                index: &s.index,
                data_dir: self.data_dir(),
            };
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                if let Some(row) = reader.item_by_key(lib, key) {
                    out.push(reader.item_json(lib, row)?);
                }
            }
            Ok(out)
        })
    }

    /// Every attachment of `scope` → its top-level item (its parent, or itself when it
    /// stands alone) (blocking).
    pub fn attachment_items(
        &self,
        scope: LibraryScope,
    ) -> Result<HashMap<String, String>, DbError> {
        self.with_library(scope, |s, lib| {
            let mut stmt = s.conn.prepare_cached(
                "SELECT a.key, COALESCE(p.key, a.key) FROM itemAttachments x \
                 JOIN items a ON a.itemID = x.itemID \
                 LEFT JOIN items p ON p.itemID = x.parentItemID \
                 WHERE a.libraryID = ?1",
            )?;
            let rows = stmt.query_map([lib.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The attachments of `scope` with a `fulltextItems` row: (key, server version).
    fn indexed_texts(&self, scope: LibraryScope) -> Result<Vec<(String, i64)>, DbError> {
        self.with_library(scope, |s, lib| {
            let mut stmt = s.conn.prepare_cached(
                "SELECT i.key, COALESCE(f.version, 0) FROM fulltextItems f \
                 JOIN items i USING (itemID) WHERE i.libraryID = ?1",
            )?;
            let rows = stmt.query_map(params![lib.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// When the cached full text of `key` was last written (Unix milliseconds); `None`
    /// when there is no cache file (Zotero has not extracted the text, or it was removed).
    fn cache_modified_ms(&self, key: &str) -> Option<i64> {
        let path = self.cache_path(key)?;
        // Not followed: a link is no cache file (`cached_fulltext` refuses it).
        let modified = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)?
            .modified()
            .ok()?;
        Some(
            modified
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        )
    }

    /// Whether the attachment `key` has a cached full text (`storage/<KEY>/.zotero-ft-cache`).
    pub fn has_cached_fulltext(&self, key: &str) -> bool {
        self.cache_path(key)
            .is_some_and(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
    }

    /// The attachments of `scope` whose cached full text was written at or after
    /// `since_ms` (`None`: all of them) (blocking).
    pub fn fulltext_changes(
        &self,
        scope: LibraryScope,
        since_ms: Option<i64>,
    ) -> Result<TextChanges, DbError> {
        let indexed = self.indexed_texts(scope)?;
        let now = now_ms();
        let mut out = TextChanges {
            mark: since_ms,
            ..TextChanges::default()
        };
        for (key, version) in indexed {
            let Some(modified_ms) = self.cache_modified_ms(&key) else {
                continue;
            };
            if since_ms.is_none_or(|m| modified_ms >= m) {
                out.changed.push(TextChange {
                    key,
                    modified_ms,
                    version: u64::try_from(version).unwrap_or(0),
                });
            }
        }
        out.changed
            .sort_by(|a, b| (a.modified_ms, &a.key).cmp(&(b.modified_ms, &b.key)));
        if let Some(latest) = out.changed.last() {
            let capped = latest.modified_ms.min(now);
            out.mark = Some(out.mark.map_or(capped, |m| m.max(capped)));
        }
        Ok(out)
    }

    /// Whether an item of `scope` was saved after `mark` (a mark of
    /// [`ItemChanges::mark`]; `None`: none read yet), so that the next read from it brings
    /// what the last did not: a library never read that has items, or a
    /// `clientDateModified` later than the mark. One query, on the snapshot (blocking).
    /// What it cannot see: an item saved within the mark's own second after that read, and
    /// items or collections erased (they leave no stamp).
    pub fn items_saved_after(
        &self,
        scope: LibraryScope,
        mark: Option<&str>,
    ) -> Result<bool, DbError> {
        self.with_library(scope, |s, lib| {
            let latest: Option<String> = s
                .conn
                .prepare_cached("SELECT MAX(clientDateModified) FROM items WHERE libraryID = ?1")?
                .query_row([lib.id], |r| r.get(0))?;
            Ok(match (latest, mark) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(latest), Some(mark)) => latest.as_str() > mark,
            })
        })
    }

    /// Whether a cached full text of `scope` was written after `mark_ms` (a mark of
    /// [`TextChanges::mark`]; `None`: none read yet): one `stat` per attachment with a
    /// `fulltextItems` row, up to the first found (blocking).
    pub fn fulltexts_written_after(
        &self,
        scope: LibraryScope,
        mark_ms: Option<i64>,
    ) -> Result<bool, DbError> {
        Ok(self
            .indexed_texts(scope)?
            .iter()
            .filter_map(|(key, _)| self.cache_modified_ms(key))
            .any(|modified| mark_ms.is_none_or(|m| modified > m)))
    }

    /// The cached full text of an attachment (`storage/<KEY>/.zotero-ft-cache`), `None`
    /// when there is none (blocking).
    /// A cache file that is not a regular file inside `storage/` is refused (`datafile`).
    pub fn cached_fulltext(&self, key: &str) -> Result<Option<String>, DbError> {
        if !is_plain_key(key) {
            return Ok(None);
        }
        crate::datafile::read_in_storage(
            self.data_dir(),
            key,
            ".zotero-ft-cache",
            crate::datafile::FT_CACHE,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_keys_name_a_storage_folder() {
        assert!(is_plain_key("ABCD2345"));
        for bad in ["", "../x", "A/B", "..", "AB CD", "A\\B"] {
            assert!(!is_plain_key(bad), "{bad}");
        }
    }
}
