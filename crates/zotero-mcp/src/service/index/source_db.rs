//! The sync's objects read from Zotero's own database instead of the API, sending no
//! request: the items changed since the last update's mark (`zotero_db::ItemChanges`, by
//! `clientDateModified`), 200 a transaction, each with the mark it completes; the cached
//! full texts written since, 20 a transaction (not over a text read from the attachment's
//! file), and the indexed full texts whose cache file is gone while the attachment stays
//! (dropped: no mark shows a removal); the items filed in
//! a collection erased since (which the stamps do not show); then the deletions, by
//! comparing the index's keys with the library's. The same marks say whether the database
//! holds what the next update would read (`database_ahead`), for the index's staleness. The documents are made exactly as from the API's objects (the
//! database answers in the API's wire JSON). The index's sync versions record the library
//! version Zotero last synced (`libraries.version`); its source marks how far the database
//! was read (see `zotero_db`'s `changes` for why these markers).

use std::collections::{HashMap, HashSet};

use zotero_api::model::WireObject;
use zotero_api::{LibraryRef, ZoteroError};
use zotero_db::{DbError, ItemChange, ItemChanges, LibraryScope, TextChange, ZoteroDb};
use zotero_index::{DocKind, Document, Index, IndexError, Updater};

use super::documents::write_object;
use super::run::{fulltext_inclusion, Flow, Run, FULLTEXT_MARK};
use super::update::{Phase, UpdateError, UpdateOptions};

/// The source mark of the items: the last `clientDateModified` read.
const ITEMS_MARK: &str = "db-items";

/// Items read and written per transaction: each is one read of a local file, not a
/// request, so a transaction can hold more than the API's 50.
const ITEMS_PER_BATCH: usize = 200;
/// Full texts per transaction (a text can be megabytes).
const FULLTEXTS_PER_BATCH: usize = 20;

fn scope_of(library: LibraryRef) -> LibraryScope {
    match library {
        LibraryRef::User => LibraryScope::User,
        LibraryRef::Group(g) => LibraryScope::Group(g),
    }
}

fn db_error(e: DbError) -> UpdateError {
    match e {
        DbError::NoLibrary { .. } => ZoteroError::NotFound {
            message: e.to_string(),
        }
        .into(),
        e => ZoteroError::Database {
            reason: e.to_string(),
        }
        .into(),
    }
}

/// Each attachment's top-level item, read again when an object names an attachment not
/// seen yet (made after the last read).
struct Tops<'d> {
    db: &'d ZoteroDb,
    scope: LibraryScope,
    map: HashMap<String, Option<String>>,
}

impl<'d> Tops<'d> {
    fn read(db: &'d ZoteroDb, scope: LibraryScope) -> Result<Self, UpdateError> {
        let mut tops = Tops {
            db,
            scope,
            map: HashMap::new(),
        };
        tops.reload()?;
        Ok(tops)
    }

    fn reload(&mut self) -> Result<(), UpdateError> {
        self.map = self
            .db
            .attachment_items(self.scope)
            .map_err(db_error)?
            .into_iter()
            .map(|(k, v)| (k, Some(v)))
            .collect();
        Ok(())
    }

    /// Makes sure every attachment of `keys` is known (one read again at most).
    fn know<'k>(&mut self, mut keys: impl Iterator<Item = &'k str>) -> Result<(), UpdateError> {
        if keys.any(|k| !self.map.contains_key(k)) {
            self.reload()?;
        }
        Ok(())
    }
}

/// How far an index read Zotero's database: its marks (`None` where nothing was read).
#[derive(Debug, Clone, Default)]
pub struct DbMarks {
    items: Option<String>,
    /// `None`: the index holds no full texts (there is nothing to compare).
    fulltext: Option<Option<i64>>,
}

impl DbMarks {
    /// The marks of `index` (full texts are compared only where they are indexed: the
    /// `fulltext` sync version is kept exactly while they are).
    pub fn read(index: &Index) -> Result<Self, IndexError> {
        let fulltext = match index.sync_version("fulltext")? {
            Some(_) => Some(
                index
                    .source_mark(FULLTEXT_MARK)?
                    .and_then(|m| m.parse::<i64>().ok()),
            ),
            None => None,
        };
        Ok(DbMarks {
            items: index.source_mark(ITEMS_MARK)?,
            fulltext,
        })
    }

    /// These marks with the full texts left out of the comparison: a search's freshness
    /// compares the items only, since the texts' check reads the time of every cached
    /// full text (a `stat` each, ~10 ms at 10,000 attachments) and would be paid on every
    /// search; the status tool and `db-status` compare both.
    pub fn items_only(self) -> Self {
        DbMarks {
            fulltext: None,
            ..self
        }
    }
}

/// Whether Zotero's database holds what the next update of `library` would read and the
/// index does not have: an item saved after the items' mark (a local edit not synced yet
/// counts: the library version does not move until sync), or a cached full text written
/// after the texts' mark. `None` when the database cannot say (blocking).
pub fn database_ahead(db: &ZoteroDb, library: LibraryRef, marks: &DbMarks) -> Option<bool> {
    let scope = scope_of(library);
    let items = db.items_saved_after(scope, marks.items.as_deref());
    let ahead = match items {
        Ok(true) => true,
        Ok(false) => match marks.fulltext {
            Some(mark) => db.fulltexts_written_after(scope, mark).ok()?,
            None => false,
        },
        Err(e) => {
            tracing::debug!(error = %e, "the database's changes could not be read");
            return None;
        }
    };
    Some(ahead)
}

/// Items, full texts and deletions of `library` from the database.
pub(super) fn sync(
    run: &mut Run<'_>,
    db: &ZoteroDb,
    library: LibraryRef,
    up: &mut Updater<'_>,
    options: UpdateOptions,
) -> Result<Flow, UpdateError> {
    let scope = scope_of(library);
    let since = up.index().source_mark(ITEMS_MARK)?;
    let changes = db.item_changes(scope, since.as_deref()).map_err(db_error)?;
    // Read after the listing: every attachment it holds is in it.
    let mut tops = Tops::read(db, scope)?;
    if sync_items(run, &mut tops, up, &changes)? == Flow::Cancelled {
        return Ok(Flow::Cancelled);
    }
    if sync_erased_collections(run, &mut tops, up, &changes)? == Flow::Cancelled {
        return Ok(Flow::Cancelled);
    }
    if sync_fulltexts(run, &mut tops, up, &changes, options)? == Flow::Cancelled {
        return Ok(Flow::Cancelled);
    }
    if run.cancelled() {
        return Ok(Flow::Cancelled);
    }
    sync_deletions(run, up, &changes, options)?;
    Ok(Flow::Done)
}

/// The mark once the objects before `rest` are written: the next one's (the mark is
/// inclusive), or the listing's after the last.
fn items_mark<'c>(rest: &'c [ItemChange], last: Option<&'c str>) -> Option<&'c str> {
    rest.first().map(|c| c.changed.as_str()).or(last)
}

fn sync_items(
    run: &mut Run<'_>,
    tops: &mut Tops<'_>,
    up: &mut Updater<'_>,
    changes: &ItemChanges,
) -> Result<Flow, UpdateError> {
    let total = changes.changed.len() as u64;
    run.tell(Phase::Items, 0, total);
    let mut done = 0u64;
    let mut rest: &[ItemChange] = &changes.changed;
    while !rest.is_empty() {
        if run.cancelled() {
            return Ok(Flow::Cancelled);
        }
        let (now, later) = rest.split_at(rest.len().min(ITEMS_PER_BATCH));
        rest = later;
        let keys: Vec<String> = now.iter().map(|c| c.key.clone()).collect();
        let mark = items_mark(rest, changes.mark.as_deref());
        write_items(run, tops, up, &keys, mark)?;
        done += now.len() as u64;
        run.tell(Phase::Items, done, total);
    }
    Ok(Flow::Done)
}

/// Reads the items of `keys` and writes them in one transaction, with the items' `mark`.
fn write_items(
    run: &mut Run<'_>,
    tops: &mut Tops<'_>,
    up: &mut Updater<'_>,
    keys: &[String],
    mark: Option<&str>,
) -> Result<(), UpdateError> {
    let values = tops.db.items_by_key(tops.scope, keys).map_err(db_error)?;
    let mut objects = Vec::with_capacity(values.len());
    for value in values {
        let o: WireObject = serde_json::from_value(value).map_err(|e| ZoteroError::Database {
            reason: format!("an item of Zotero's database could not be read: {e}"),
        })?;
        objects.push(o);
    }
    run.report.objects_read += objects.len() as u64;
    let annotated: Vec<String> = objects
        .iter()
        .filter(|o| o.item_type() == "annotation")
        .filter_map(|o| super::documents::field(o, "parentItem"))
        .collect();
    tops.know(annotated.iter().map(String::as_str))?;
    let mut b = up.batch()?;
    for o in &objects {
        run.report.chunks_written += write_object(&mut b, &tops.map, o)?;
    }
    if let Some(mark) = mark {
        b.set_source_mark(ITEMS_MARK, mark)?;
    }
    b.commit()?;
    Ok(())
}

/// The items the index files in a collection the library no longer has are read again
/// (erasing a collection changes no item's stamp).
fn sync_erased_collections(
    run: &mut Run<'_>,
    tops: &mut Tops<'_>,
    up: &mut Updater<'_>,
    changes: &ItemChanges,
) -> Result<Flow, UpdateError> {
    let stale: Vec<String> = up
        .index()
        .document_collections()?
        .into_iter()
        .filter(|(key, filed)| {
            changes.keys.contains(key) && filed.iter().any(|c| !changes.collections.contains(c))
        })
        .map(|(key, _)| key)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    for keys in stale.chunks(ITEMS_PER_BATCH) {
        if run.cancelled() {
            return Ok(Flow::Cancelled);
        }
        write_items(run, tops, up, keys, None)?;
    }
    Ok(Flow::Done)
}

fn sync_fulltexts(
    run: &mut Run<'_>,
    tops: &mut Tops<'_>,
    up: &mut Updater<'_>,
    changes: &ItemChanges,
    options: UpdateOptions,
) -> Result<Flow, UpdateError> {
    run.report.removed += fulltext_inclusion(up, options.include_fulltext)?;
    if !options.include_fulltext {
        return Ok(Flow::Done);
    }
    drop_vanished_fulltexts(run, tops.db, up, changes)?;
    let since = up
        .index()
        .source_mark(FULLTEXT_MARK)?
        .and_then(|m| m.parse::<i64>().ok());
    let texts = tops
        .db
        .fulltext_changes(tops.scope, since)
        .map_err(db_error)?;
    let total = texts.changed.len() as u64;
    run.tell(Phase::Fulltext, 0, total);
    let mut done = 0u64;
    let mut rest: &[TextChange] = &texts.changed;
    while !rest.is_empty() {
        if run.cancelled() {
            return Ok(Flow::Cancelled);
        }
        let (now, later) = rest.split_at(rest.len().min(FULLTEXTS_PER_BATCH));
        rest = later;
        tops.know(now.iter().map(|t| t.key.as_str()))?;
        let mut docs = Vec::new();
        for t in now {
            // Not an attachment of the library (any more): nothing to file it under.
            let Some(Some(item)) = tops.map.get(&t.key) else {
                continue;
            };
            if up.index().file_text_current(&t.key)? {
                continue; // read from its file, with pages: that text stays
            }
            if let Some(text) = tops.db.cached_fulltext(&t.key).map_err(db_error)? {
                run.report.fulltexts_read += 1;
                docs.push(Document::fulltext(&t.key, item, t.version, &text));
            }
        }
        let mut b = up.batch()?;
        for d in &docs {
            run.report.chunks_written += d.chunks.len() as u64;
            b.upsert(d)?;
        }
        let mark = rest.first().map(|t| t.modified_ms).or(texts.mark);
        if let Some(mark) = mark {
            b.set_source_mark(FULLTEXT_MARK, &mark.to_string())?;
        }
        b.commit()?;
        done += now.len() as u64;
        run.tell(Phase::Fulltext, done, total);
    }
    Ok(Flow::Done)
}

/// The full texts indexed under an attachment the library still has whose cache file is
/// gone (Zotero cleared its index, or the file was removed) go, in one transaction: no
/// mark shows a removal. An attachment gone too is left to the deletions.
fn drop_vanished_fulltexts(
    run: &mut Run<'_>,
    db: &ZoteroDb,
    up: &mut Updater<'_>,
    changes: &ItemChanges,
) -> Result<(), UpdateError> {
    let mut vanished = Vec::new();
    for (key, kind) in up.index().document_keys()? {
        if kind == DocKind::Fulltext.as_str()
            && changes.keys.contains(&key)
            && !db.has_cached_fulltext(&key)
            // Read from its file: Zotero's cache is not its source.
            && !up.index().file_text_current(&key)?
        {
            vanished.push(key);
        }
    }
    if vanished.is_empty() {
        return Ok(());
    }
    let mut b = up.batch()?;
    for key in &vanished {
        run.report.removed += b.delete_fulltext(key)? as u64;
    }
    b.commit()?;
    Ok(())
}

/// What the index holds that the library no longer has goes (with what hangs under it);
/// the sync versions then say the library version Zotero last synced.
fn sync_deletions(
    run: &mut Run<'_>,
    up: &mut Updater<'_>,
    changes: &ItemChanges,
    options: UpdateOptions,
) -> Result<(), UpdateError> {
    run.tell(Phase::Deleted, 0, 1);
    let gone: HashSet<String> = up
        .index()
        .document_keys()?
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !changes.keys.contains(k))
        .collect();
    let mut b = up.batch()?;
    for key in &gone {
        run.report.removed += b.delete_item(key)? as u64;
    }
    let version = changes.library_version;
    b.set_sync_version("items", version)?;
    b.set_sync_version("deleted", version)?;
    if options.include_fulltext {
        b.set_sync_version("fulltext", version)?;
    }
    b.commit()?;
    run.tell(Phase::Deleted, 1, 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_completes_up_to_the_next_change_inclusive() {
        let change = |k: &str, t: &str| ItemChange {
            key: k.into(),
            changed: t.into(),
        };
        let list = [
            change("A", "2024-01-01 10:00:00"),
            change("B", "2024-01-01 10:00:05"),
        ];
        assert_eq!(
            items_mark(&list[1..], Some("2024-01-01 10:00:05")),
            Some("2024-01-01 10:00:05")
        );
        assert_eq!(
            items_mark(&[], Some("2024-01-02 00:00:00")),
            Some("2024-01-02 00:00:00")
        );
        assert_eq!(items_mark(&[], None), None);
    }
}
