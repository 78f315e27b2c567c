//! Collections (one, a listing, a collection's subcollections) and tags (of the library or
//! of a collection's items) as the API's wire objects.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value};

use crate::error::DbError;
use crate::listing::list_items;
use crate::query::Params;
use crate::reader::{Lib, Reader};
use crate::reply::{page_bounds, DbAnswer};

impl Reader<'_> {
    /// The collection as the API's wire object.
    pub(crate) fn collection_json(&self, lib: &Lib, id: i64) -> Result<Option<Value>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.key, c.version, c.collectionName, p.key, \
               (SELECT COUNT(*) FROM collections s WHERE s.parentCollectionID = c.collectionID \
                  AND s.collectionID NOT IN (SELECT collectionID FROM deletedCollections)), \
               (SELECT COUNT(*) FROM collectionItems ci WHERE ci.collectionID = c.collectionID \
                  AND ci.itemID NOT IN (SELECT itemID FROM deletedItems)), \
               c.collectionID IN (SELECT collectionID FROM deletedCollections) \
             FROM collections c LEFT JOIN collections p ON p.collectionID = c.parentCollectionID \
             WHERE c.collectionID = ?1",
        )?;
        let found = stmt
            .query_row([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, bool>(6)?,
                ))
            })
            .optional()?;
        let Some((key, version, name, parent, subs, items, deleted)) = found else {
            return Ok(None);
        };
        let mut data = json!({
            "key": key,
            "version": version,
            "name": name,
            "parentCollection": parent.map_or(Value::Bool(false), Value::String),
            "relations": {},
        });
        if deleted {
            if let Some(o) = data.as_object_mut() {
                o.insert("deleted".into(), json!(true));
            }
        }
        Ok(Some(json!({
            "key": key,
            "version": version,
            "library": lib.wire(),
            "links": {},
            "meta": {"numCollections": subs, "numItems": items},
            "data": data,
        })))
    }
}

/// `collections`: ID, name, parent key, time of the last change, version, in the trash.
type CollectionRow = (i64, String, Option<String>, String, i64, bool);

/// A listing of collections. Those in Zotero's trash (`deletedCollections`, Zotero 7+; a
/// trashed collection's subcollections are trashed with it) are left out, as Zotero's own
/// local API leaves them out (`Zotero.Collections.getByLibrary`/`getByParent`, trashed
/// excluded); `includeTrashed=1` lists them too, each with `deleted: true` in its data.
/// (Zotero's dataserver lists them always, marked `deleted`.)
pub(crate) fn collections(
    r: &Reader<'_>,
    lib: &Lib,
    parent: Option<&str>,
    top: bool,
    p: &Params,
) -> Result<DbAnswer, DbError> {
    let mut stmt = r.conn.prepare_cached(
        "SELECT c.collectionID, c.collectionName, p.key, c.clientDateModified, c.version, \
           c.collectionID IN (SELECT collectionID FROM deletedCollections) FROM collections c \
         LEFT JOIN collections p ON p.collectionID = c.parentCollectionID WHERE c.libraryID = ?1",
    )?;
    let rows = stmt.query_map([lib.id], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, i64>(4)?,
            row.get::<_, bool>(5)?,
        ))
    })?;
    let mut found: Vec<CollectionRow> = rows.collect::<rusqlite::Result<_>>()?;
    if !p.include_trashed {
        found.retain(|c| !c.5);
    }
    if let Some(parent) = parent {
        let exists: Option<i64> = r
            .conn
            .query_row(
                "SELECT collectionID FROM collections WHERE libraryID = ?1 AND key = ?2",
                params![lib.id, parent],
                |row| row.get(0),
            )
            .optional()?;
        if exists.is_none() {
            return Ok(DbAnswer::status(404, "Collection not found"));
        }
        found.retain(|c| c.2.as_deref() == Some(parent));
    } else if top {
        found.retain(|c| c.2.is_none());
    }
    let by_name = matches!(p.sort.as_deref(), Some("title" | "name"));
    // By name, or by when it last changed (its time, then its version); ties in the order
    // they were made. Descending by default for dates, as the API sorts.
    let descending = match p.direction.as_deref() {
        Some(d) => d == "desc",
        None => !by_name,
    };
    found.sort_by(|a, b| {
        let order = if by_name {
            a.1.to_lowercase().cmp(&b.1.to_lowercase())
        } else {
            a.3.cmp(&b.3)
        };
        let order = order.then(a.4.cmp(&b.4)).then(a.0.cmp(&b.0));
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    let total = found.len();
    let (start, end) = page_bounds(total, p);
    let mut out = Vec::new();
    for c in found.get(start..end).unwrap_or_default() {
        if let Some(json) = r.collection_json(lib, c.0)? {
            out.push(json);
        }
    }
    Ok(DbAnswer::json(&Value::Array(out), Some(total as u64), lib.version).paged(end, total))
}

pub(crate) fn tags(
    r: &Reader<'_>,
    lib: &Lib,
    collection: Option<&str>,
    p: &Params,
) -> Result<DbAnswer, DbError> {
    let scope = Params {
        limit: None,
        start: 0,
        q: None,
        tags: Vec::new(),
        ..p.clone()
    };
    let Some(rows) = list_items(r, lib, collection, false, false, &scope)? else {
        return Ok(DbAnswer::status(404, "Collection not found"));
    };
    let ids: HashSet<i64> = rows.iter().map(|row| row.id).collect();
    let mut stmt = r.conn.prepare_cached(
        "SELECT t.name, it.type, it.itemID FROM itemTags it JOIN tags t USING (tagID) \
         JOIN items i USING (itemID) WHERE i.libraryID = ?1",
    )?;
    let found = stmt.query_map([lib.id], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, i64>(1)?,
            row.get::<_, i64>(2)?,
        ))
    })?;
    let mut counts: HashMap<(String, i64), u64> = HashMap::new();
    for row in found {
        let (name, kind, id) = row?;
        if ids.contains(&id) {
            *counts.entry((name, kind)).or_default() += 1;
        }
    }
    let mut tags: Vec<((String, i64), u64)> = counts.into_iter().collect();
    tags.sort_by(|a, b| {
        a.0 .0
            .to_lowercase()
            .cmp(&b.0 .0.to_lowercase())
            .then(a.0 .1.cmp(&b.0 .1))
    });
    let total = tags.len();
    let (start, end) = page_bounds(total, p);
    let out: Vec<Value> = tags
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .map(|((name, kind), n)| json!({"tag": name, "links": {}, "meta": {"type": kind, "numItems": n}}))
        .collect();
    Ok(DbAnswer::json(&Value::Array(out), Some(total as u64), lib.version).paged(end, total))
}
