//! Item listings filtered as the web API filters them (quick search, tags, item type,
//! collection, trash, keys, `since`, retracted), over the snapshot's in-memory index: SQL
//! is asked only for what the index does not hold (a tag's items, a collection's members,
//! `qmode=everything` matches).

use std::collections::HashSet;

use rusqlite::{params, OptionalExtension};

use crate::datafile::{self, read_in_storage};
use crate::error::DbError;
use crate::index::{field_ids_with_base, in_list};
use crate::query::Params;
use crate::reader::{ItemRow, Lib, Reader};
use crate::search_fold::{fold_for_search, register};

/// `itemType=a || b`, `itemType=-a`.
pub(crate) fn keep_type(r: &Reader<'_>, row: &ItemRow, p: &Params) -> bool {
    let Some(filter) = p.item_type.as_deref() else {
        return true;
    };
    let name = r.type_name(row);
    match filter.strip_prefix('-') {
        Some(excluded) => name != excluded.trim(),
        None => filter.split("||").any(|t| t.trim() == name),
    }
}

pub(crate) fn ids_of(
    r: &Reader<'_>,
    sql: &str,
    arg: &dyn rusqlite::ToSql,
) -> Result<HashSet<i64>, DbError> {
    let mut stmt = r.conn.prepare_cached(sql)?;
    let rows = stmt.query_map([arg], |row| row.get::<_, i64>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn tagged(r: &Reader<'_>, tag: &str) -> Result<HashSet<i64>, DbError> {
    ids_of(
        r,
        "SELECT it.itemID FROM itemTags it JOIN tags t USING (tagID) WHERE t.name = ?1",
        &tag,
    )
}

/// One `tag=` condition: negated, and the items carrying any of its alternatives.
type TagCondition = (bool, HashSet<i64>);

/// Every `tag=` condition (`a || b`, `-a`, `\-a` a literal hyphen), read.
fn tag_filter(r: &Reader<'_>, conditions: &[String]) -> Result<Vec<TagCondition>, DbError> {
    let mut out = Vec::new();
    for condition in conditions {
        let condition = condition.trim();
        let (negated, body) = match condition.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, condition.strip_prefix('\\').unwrap_or(condition)),
        };
        let mut ids = HashSet::new();
        for alternative in body.split(" || ") {
            ids.extend(tagged(r, alternative.trim())?);
        }
        out.push((negated, ids));
    }
    Ok(out)
}

/// The items matching one quick-search word: titles, creators and years (from the index);
/// with `everything` also every field, notes, tags, annotations and the cached full text.
/// Text and word are folded as Zotero 10 folds them for search (`fold_for_search`).
fn quick_search_word(
    r: &Reader<'_>,
    lib: &Lib,
    word: &str,
    everything: bool,
) -> Result<HashSet<i64>, DbError> {
    let mut ids = r.index.quick_matches(lib.id, word);
    if everything {
        let needle = fold_for_search(word);
        let like = format!(
            "%{}%",
            needle
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        register(r.conn)?;
        for sql in [
            "SELECT d.itemID FROM itemData d JOIN itemDataValues v USING (valueID) WHERE zotero_fold(v.value) LIKE ?1 ESCAPE '\\'",
            "SELECT itemID FROM itemNotes WHERE zotero_fold(note) LIKE ?1 ESCAPE '\\'",
            "SELECT it.itemID FROM itemTags it JOIN tags t USING (tagID) WHERE zotero_fold(t.name) LIKE ?1 ESCAPE '\\'",
            "SELECT itemID FROM itemAnnotations WHERE zotero_fold(text) LIKE ?1 ESCAPE '\\' OR zotero_fold(comment) LIKE ?1 ESCAPE '\\'",
        ] {
            ids.extend(ids_of(r, sql, &like)?);
        }
        ids.extend(full_text_matches(r, lib, &needle)?);
    }
    Ok(ids)
}

/// Attachments whose cached full text (`storage/<KEY>/.zotero-ft-cache`), folded, holds
/// `needle` (folded).
fn full_text_matches(r: &Reader<'_>, lib: &Lib, needle: &str) -> Result<HashSet<i64>, DbError> {
    let mut stmt = r.conn.prepare_cached(
        "SELECT i.itemID, i.key FROM fulltextItems f JOIN items i USING (itemID) WHERE i.libraryID = ?1",
    )?;
    let rows = stmt.query_map([lib.id], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    })?;
    let mut out = HashSet::new();
    for row in rows {
        let (id, key) = row?;
        // Only a regular file inside storage/ is read (`datafile`); one refused is no match.
        let read = read_in_storage(r.data_dir, &key, ".zotero-ft-cache", datafile::FT_CACHE);
        if let Ok(Some(text)) = read {
            if fold_for_search(&text).contains(needle) {
                out.insert(id);
            }
        }
    }
    Ok(out)
}

/// The collection's ID, when the library has it.
pub(crate) fn collection_id(r: &Reader<'_>, lib: &Lib, key: &str) -> Result<Option<i64>, DbError> {
    let mut stmt = r
        .conn
        .prepare_cached("SELECT collectionID FROM collections WHERE libraryID = ?1 AND key = ?2")?;
    Ok(stmt
        .query_row(params![lib.id, key], |row| row.get(0))
        .optional()?)
}

/// The listing's items before sorting and paging, in no particular order; `None` when the
/// collection does not exist.
pub(crate) fn list_items<'a>(
    r: &Reader<'a>,
    lib: &Lib,
    collection: Option<&str>,
    top: bool,
    trash: bool,
    p: &Params,
) -> Result<Option<Vec<&'a ItemRow>>, DbError> {
    let index = r.index;
    let members = match collection {
        Some(key) => {
            let Some(id) = collection_id(r, lib, key)? else {
                return Ok(None);
            };
            Some(ids_of(
                r,
                "SELECT itemID FROM collectionItems WHERE collectionID = ?1",
                &id,
            )?)
        }
        None => None,
    };
    // In the listing's scope: its library, its collection (an item's children are listed
    // with it: child items are not filed themselves), the trash or not.
    let in_scope = |row: &ItemRow| {
        row.library == lib.id
            && members
                .as_ref()
                .is_none_or(|m| m.contains(&row.id) || m.contains(&index.top_row(row).id))
            && {
                let in_trash = index.row_in_trash(row);
                if trash {
                    in_trash
                } else {
                    p.include_trashed || !in_trash
                }
            }
    };
    let tags = tag_filter(r, &p.tags)?;
    let keys: HashSet<&str> = p.item_keys.iter().map(String::as_str).collect();
    let passes = |row: &ItemRow| {
        keep_type(r, row, p)
            && tags
                .iter()
                .all(|(negated, ids)| ids.contains(&row.id) != *negated)
            && (keys.is_empty() || keys.contains(row.key.as_str()))
            && p.since.is_none_or(|s| row.version > s)
            && (!p.retracted || index.retracted.contains_key(&row.id))
    };
    let matched: Option<HashSet<i64>> = match &p.q {
        Some(q) => {
            let mut all: Option<HashSet<i64>> = None;
            for word in q.split_whitespace() {
                let ids = quick_search_word(r, lib, word, p.everything)?;
                all = Some(match all {
                    Some(prev) => prev.intersection(&ids).copied().collect(),
                    None => ids,
                });
            }
            all
        }
        None => None,
    };
    // The rows that can be listed: what the search matched, the keys asked for, or all.
    let candidates: Vec<&'a ItemRow> = match &matched {
        Some(ids) => ids.iter().filter_map(|id| index.row(*id)).collect(),
        None if !keys.is_empty() => keys
            .iter()
            .filter_map(|k| index.by_key(lib.id, k))
            .collect(),
        None => index.library_rows(lib.id).collect(),
    };
    let mut keep: Vec<&'a ItemRow> = Vec::new();
    for row in candidates {
        if !in_scope(row) {
            continue;
        }
        if top {
            // A matching child shows its parent.
            let parent = index.top_row(row);
            if parent.id != row.id && matched.is_none() {
                continue;
            }
            if (parent.id == row.id || in_scope(parent)) && passes(parent) {
                keep.push(parent);
            }
        } else if passes(row) {
            keep.push(row);
        }
    }
    if top && matched.is_some() {
        // Children of one parent matched: the parent once.
        keep.sort_unstable_by_key(|row| row.id);
        keep.dedup_by_key(|row| row.id);
    }
    Ok(Some(keep))
}

/// Puts the page `start..end` of a listing in place, as the API sorts it: by the sort's
/// value (items without one last either way, as Zotero sorts empty values), then by key.
/// Only the page is sorted: the rest is partitioned around it.
pub(crate) fn sort_page(
    r: &Reader<'_>,
    rows: &mut Vec<&ItemRow>,
    p: &Params,
    (start, end): (usize, usize),
) -> Result<(), DbError> {
    let sort = p.sort.as_deref().unwrap_or("dateModified");
    let descending = match p.direction.as_deref() {
        Some(d) => d == "desc",
        // The dataserver's default: descending for the dates (`date*`), else ascending.
        None => sort.starts_with("date"),
    };
    let index = r.index;
    // Other fields are read when asked, in one query for the whole library.
    let other = match sort {
        "dateAdded" | "dateModified" | "itemType" | "title" | "creator" | "date" => None,
        field => {
            let mut stmt = r.conn.prepare(&format!(
                "SELECT d.itemID, v.value FROM itemData d JOIN itemDataValues v USING (valueID) WHERE d.fieldID IN {}",
                in_list(&field_ids_with_base(r.names, field))
            ))?;
            let values = stmt.query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })?;
            Some(
                values
                    .map(|v| v.map(|(id, v)| (id, v.to_lowercase())))
                    .collect::<rusqlite::Result<std::collections::HashMap<i64, String>>>()?,
            )
        }
    };
    let mut keyed: Vec<(&str, &ItemRow)> = rows
        .iter()
        .map(|row| {
            let key: Option<&str> = match sort {
                "dateAdded" => Some(row.date_added.as_str()),
                "dateModified" => Some(row.date_modified.as_str()),
                "itemType" => Some(r.type_name(row)),
                "title" => index.title_sort.get(&row.id).map(String::as_str),
                "creator" => index.creator_sort.get(&row.id).map(String::as_str),
                "date" => index.date_sort.get(&row.id).map(String::as_str),
                _ => other
                    .as_ref()
                    .and_then(|o| o.get(&row.id))
                    .map(String::as_str),
            };
            (key.unwrap_or_default(), *row)
        })
        .collect();
    let order = |(ka, a): &(&str, &ItemRow), (kb, b): &(&str, &ItemRow)| {
        let order = match (ka.is_empty(), kb.is_empty()) {
            (true, false) => return std::cmp::Ordering::Greater,
            (false, true) => return std::cmp::Ordering::Less,
            _ => ka.cmp(kb),
        };
        let order = if descending { order.reverse() } else { order };
        order.then_with(|| a.key.cmp(&b.key))
    };
    if start < end && end <= keyed.len() {
        if start > 0 {
            keyed.select_nth_unstable_by(start, order);
        }
        if let Some(tail) = keyed.get_mut(start..) {
            if end - start < tail.len() {
                tail.select_nth_unstable_by(end - start, order);
            }
        }
        if let Some(page) = keyed.get_mut(start..end) {
            page.sort_unstable_by(order);
        }
    }
    *rows = keyed.into_iter().map(|(_, row)| row).collect();
    Ok(())
}
