//! Requests in the API's path language answered from the snapshot: listings filtered as the
//! web API filters them (quick search, tags, item type, collection, trash, keys, `since`),
//! sorted, paged, with `Total-Results` and `Last-Modified-Version`.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value};

use crate::error::DbError;
use crate::query::{parse, Params, Route};
use crate::reader::{item_row, ItemRow, Lib, Reader, ITEM_COLUMNS};
use crate::snapshot::{Snapshot, ZoteroDb};

/// Which library a request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryScope {
    User,
    Group(u64),
}

/// An answer in the shape of an HTTP one.
#[derive(Debug, Clone)]
pub struct DbAnswer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub total_results: Option<u64>,
    pub library_version: Option<u64>,
    /// Where the next page starts, when there is one (the API's `Link: rel="next"`).
    pub next_start: Option<u64>,
}

impl DbAnswer {
    fn json(value: &Value, total: Option<u64>, version: i64) -> Self {
        Self {
            status: 200,
            content_type: "application/json",
            body: serde_json::to_vec(value).unwrap_or_default(),
            total_results: total,
            library_version: u64::try_from(version).ok(),
            next_start: None,
        }
    }

    /// Says where the next page starts when `end` is short of `total`.
    fn paged(mut self, end: usize, total: usize) -> Self {
        self.next_start = (end < total).then_some(end as u64);
        self
    }

    fn status(status: u16, message: &str) -> Self {
        Self {
            status,
            content_type: "text/plain",
            body: message.as_bytes().to_vec(),
            total_results: None,
            library_version: None,
            next_start: None,
        }
    }

    /// The database cannot serve this request (as the local API says 501): ask another
    /// backend.
    pub fn is_unsupported(&self) -> bool {
        self.status == 501
    }
}

/// The item sorts the web API accepts; any other is refused as it refuses it.
const ITEM_SORTS: &[&str] = &[
    "dateAdded",
    "dateModified",
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "addedBy",
    "numItems",
    "serverDateModified",
];

/// The web API's default and largest page.
const DEFAULT_LIMIT: usize = 25;
const MAX_LIMIT: usize = 100;

impl ZoteroDb {
    /// Answers `GET {library}{path_and_query}` (blocking).
    pub fn answer(&self, scope: LibraryScope, path_and_query: &str) -> Result<DbAnswer, DbError> {
        let (route, params) = parse(path_and_query);
        if route == Route::Unsupported || params.needs_api {
            return Ok(DbAnswer::status(501, "not served from the Zotero database"));
        }
        self.with(|s| {
            let reader = Reader {
                conn: &s.conn,
                names: &s.names,
                index: &s.index,
                data_dir: self.data_dir(),
            };
            let Some(lib) = library(s, scope)? else {
                return Ok(DbAnswer::status(
                    404,
                    "no such library in the Zotero database",
                ));
            };
            answer_route(&reader, &lib, &route, &params)
        })
    }

    /// `GET /users/{id}/groups`: the group libraries in the database.
    pub fn groups(&self) -> Result<DbAnswer, DbError> {
        self.with(|s| {
            let mut stmt = s.conn.prepare(
                "SELECT g.groupID, g.name, g.description, g.version, l.editable, l.filesEditable, \
                   (SELECT COUNT(*) FROM items i WHERE i.libraryID = g.libraryID) \
                 FROM groups g JOIN libraries l USING (libraryID) ORDER BY g.name",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(group_json(
                    r.get(0)?,
                    &r.get::<_, String>(1)?,
                    &r.get::<_, String>(2)?,
                    r.get(3)?,
                    r.get::<_, bool>(4)?,
                    r.get::<_, bool>(5)?,
                    r.get(6)?,
                ))
            })?;
            let groups: Vec<Value> = rows.collect::<rusqlite::Result<_>>()?;
            let total = groups.len() as u64;
            Ok(DbAnswer::json(&Value::Array(groups), Some(total), 0))
        })
    }
}

fn group_json(
    id: i64,
    name: &str,
    description: &str,
    version: i64,
    editable: bool,
    files_editable: bool,
    items: i64,
) -> Value {
    json!({
        "id": id,
        "version": version,
        "links": {},
        "meta": {"numItems": items},
        "data": {
            "id": id,
            "version": version,
            "name": name,
            "description": description,
            "type": "Private",
            "libraryEditing": if editable { "members" } else { "admins" },
            "libraryReading": "members",
            "fileEditing": if files_editable { "members" } else { "none" },
        },
    })
}

pub(crate) fn library(s: &Snapshot, scope: LibraryScope) -> Result<Option<Lib>, DbError> {
    Ok(match scope {
        LibraryScope::User => s
            .conn
            .query_row(
                "SELECT libraryID, version FROM libraries WHERE type = 'user' ORDER BY libraryID LIMIT 1",
                [],
                |r| {
                    Ok(Lib {
                        id: r.get(0)?,
                        group: None,
                        version: r.get(1)?,
                        name: String::new(),
                    })
                },
            )
            .optional()?,
        LibraryScope::Group(g) => s
            .conn
            .query_row(
                "SELECT l.libraryID, l.version, g.name FROM groups g JOIN libraries l USING (libraryID) \
                 WHERE g.groupID = ?1",
                [i64::try_from(g).unwrap_or(-1)],
                |r| {
                    Ok(Lib {
                        id: r.get(0)?,
                        group: Some(g),
                        version: r.get(1)?,
                        name: r.get(2)?,
                    })
                },
            )
            .optional()?,
    })
}

fn answer_route(r: &Reader<'_>, lib: &Lib, route: &Route, p: &Params) -> Result<DbAnswer, DbError> {
    match route {
        Route::Item(key) => match r.item_by_key(lib, key)? {
            Some(row) => Ok(DbAnswer::json(&r.item_json(lib, &row)?, None, row.version)),
            None => Ok(DbAnswer::status(404, "Item not found")),
        },
        Route::Items {
            collection,
            top,
            trash,
        } => {
            let rows = list_items(r, lib, collection.as_deref(), *top, *trash, p)?;
            match rows {
                Some(rows) => page_items(r, lib, rows, p),
                None => Ok(DbAnswer::status(404, "Collection not found")),
            }
        }
        Route::Children(key) => {
            let Some(parent) = r.item_by_key(lib, key)? else {
                return Ok(DbAnswer::status(404, "Item not found"));
            };
            let ids: HashSet<i64> = r
                .index
                .parent
                .iter()
                .filter(|(_, p)| **p == parent.id)
                .map(|(c, _)| *c)
                .collect();
            let mut rows = library_rows(r, lib)?;
            rows.retain(|row| ids.contains(&row.id) && keep_type(r, row, p));
            page_items(r, lib, rows, p)
        }
        Route::FullText(key) => full_text(r, lib, key),
        Route::Collections { parent, top } => collections(r, lib, parent.as_deref(), *top, p),
        Route::Collection(key) => {
            let id: Option<i64> = r
                .conn
                .query_row(
                    "SELECT collectionID FROM collections WHERE libraryID = ?1 AND key = ?2",
                    params![lib.id, key],
                    |row| row.get(0),
                )
                .optional()?;
            match id
                .map(|id| r.collection_json(lib, id))
                .transpose()?
                .flatten()
            {
                Some(c) => {
                    let version = c.get("version").and_then(Value::as_i64).unwrap_or(0);
                    Ok(DbAnswer::json(&c, None, version))
                }
                None => Ok(DbAnswer::status(404, "Collection not found")),
            }
        }
        Route::Tags { collection } => tags(r, lib, collection.as_deref(), p),
        Route::Library => match lib.group {
            Some(g) => {
                let items: i64 = r.conn.query_row(
                    "SELECT COUNT(*) FROM items WHERE libraryID = ?1",
                    [lib.id],
                    |row| row.get(0),
                )?;
                let value = group_json(
                    i64::try_from(g).unwrap_or(0),
                    &lib.name,
                    "",
                    lib.version,
                    true,
                    true,
                    items,
                );
                Ok(DbAnswer::json(&value, None, lib.version))
            }
            None => Ok(DbAnswer::status(501, "not served from the Zotero database")),
        },
        Route::Unsupported => Ok(DbAnswer::status(501, "not served from the Zotero database")),
    }
}

fn library_rows(r: &Reader<'_>, lib: &Lib) -> Result<Vec<ItemRow>, DbError> {
    let mut stmt = r.conn.prepare_cached(&format!(
        "SELECT {ITEM_COLUMNS} FROM items WHERE libraryID = ?1"
    ))?;
    let rows = stmt.query_map([lib.id], item_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `itemType=a || b`, `itemType=-a`.
fn keep_type(r: &Reader<'_>, row: &ItemRow, p: &Params) -> bool {
    let Some(filter) = p.item_type.as_deref() else {
        return true;
    };
    let name = r.type_name(row);
    match filter.strip_prefix('-') {
        Some(excluded) => name != excluded.trim(),
        None => filter.split("||").any(|t| t.trim() == name),
    }
}

fn ids_of(r: &Reader<'_>, sql: &str, arg: &dyn rusqlite::ToSql) -> Result<HashSet<i64>, DbError> {
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

/// Does the item pass every `tag=` condition (`a || b`, `-a`, `\-a` a literal hyphen)?
fn tag_filter(r: &Reader<'_>, conditions: &[String]) -> Result<Option<Vec<TagCondition>>, DbError> {
    if conditions.is_empty() {
        return Ok(None);
    }
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
    Ok(Some(out))
}

fn field_ids_with_base(r: &Reader<'_>, base: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = r
        .names
        .fields
        .iter()
        .filter(|(_, n)| n.as_str() == base)
        .map(|(id, _)| *id)
        .collect();
    ids.extend(
        r.names
            .base
            .iter()
            .filter(|(_, b)| b.as_str() == base)
            .map(|((_, f), _)| *f),
    );
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn in_list(ids: &[i64]) -> String {
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!(
        "({})",
        if list.is_empty() {
            "NULL".to_string()
        } else {
            list.join(",")
        }
    )
}

/// The items matching one quick-search word: titles, creators and years; with `everything`
/// also every field, notes, tags, annotations and the cached full text.
fn quick_search_word(
    r: &Reader<'_>,
    lib: &Lib,
    word: &str,
    everything: bool,
) -> Result<HashSet<i64>, DbError> {
    let like = format!(
        "%{}%",
        word.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let titles = in_list(&field_ids_with_base(r, "title"));
    let dates = in_list(&field_ids_with_base(r, "date"));
    let mut ids = ids_of(
        r,
        &format!(
            "SELECT d.itemID FROM itemData d JOIN itemDataValues v USING (valueID) \
             WHERE d.fieldID IN {titles} AND v.value LIKE ?1 ESCAPE '\\'"
        ),
        &like,
    )?;
    ids.extend(ids_of(
        r,
        // The creators matching first, then one pass over itemCreators: it has no index on
        // creatorID, and a join would scan it once per matching creator.
        "SELECT itemID FROM itemCreators WHERE creatorID IN \
         (SELECT creatorID FROM creators WHERE lastName LIKE ?1 ESCAPE '\\' OR firstName LIKE ?1 ESCAPE '\\')",
        &like,
    )?);
    if word.len() == 4 && word.chars().all(|c| c.is_ascii_digit()) {
        ids.extend(ids_of(
            r,
            &format!(
                "SELECT d.itemID FROM itemData d JOIN itemDataValues v USING (valueID) \
                 WHERE d.fieldID IN {dates} AND SUBSTR(v.value, 1, 4) = ?1"
            ),
            &word,
        )?);
    }
    if everything {
        for sql in [
            "SELECT d.itemID FROM itemData d JOIN itemDataValues v USING (valueID) WHERE v.value LIKE ?1 ESCAPE '\\'",
            "SELECT itemID FROM itemNotes WHERE note LIKE ?1 ESCAPE '\\'",
            "SELECT it.itemID FROM itemTags it JOIN tags t USING (tagID) WHERE t.name LIKE ?1 ESCAPE '\\'",
            "SELECT itemID FROM itemAnnotations WHERE text LIKE ?1 ESCAPE '\\' OR comment LIKE ?1 ESCAPE '\\'",
        ] {
            ids.extend(ids_of(r, sql, &like)?);
        }
        ids.extend(full_text_matches(r, lib, word)?);
    }
    Ok(ids)
}

/// Attachments whose cached full text (`storage/<KEY>/.zotero-ft-cache`) holds the word.
fn full_text_matches(r: &Reader<'_>, lib: &Lib, word: &str) -> Result<HashSet<i64>, DbError> {
    let needle = word.to_lowercase();
    let mut stmt = r.conn.prepare_cached(
        "SELECT i.itemID, i.key FROM fulltextItems f JOIN items i USING (itemID) WHERE i.libraryID = ?1",
    )?;
    let rows = stmt.query_map([lib.id], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    })?;
    let mut out = HashSet::new();
    for row in rows {
        let (id, key) = row?;
        let path = r
            .data_dir
            .join("storage")
            .join(&key)
            .join(".zotero-ft-cache");
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.to_lowercase().contains(&needle) {
                out.insert(id);
            }
        }
    }
    Ok(out)
}

fn top_of(r: &Reader<'_>, id: i64) -> i64 {
    let mut current = id;
    // Annotations sit two levels down (item → attachment → annotation).
    for _ in 0..3 {
        match r.index.parent.get(&current) {
            Some(p) => current = *p,
            None => break,
        }
    }
    current
}

/// The listing's items before paging; `None` when the collection does not exist.
fn list_items(
    r: &Reader<'_>,
    lib: &Lib,
    collection: Option<&str>,
    top: bool,
    trash: bool,
    p: &Params,
) -> Result<Option<Vec<ItemRow>>, DbError> {
    let mut rows = library_rows(r, lib)?;
    if let Some(key) = collection {
        let id: Option<i64> = r
            .conn
            .query_row(
                "SELECT collectionID FROM collections WHERE libraryID = ?1 AND key = ?2",
                params![lib.id, key],
                |row| row.get(0),
            )
            .optional()?;
        let Some(id) = id else { return Ok(None) };
        let members = ids_of(
            r,
            "SELECT itemID FROM collectionItems WHERE collectionID = ?1",
            &id,
        )?;
        // The API lists an item's children with it (child items are not filed themselves).
        rows.retain(|row| members.contains(&row.id) || members.contains(&top_of(r, row.id)));
    }
    rows.retain(|row| {
        let in_trash = r.index.in_trash(row.id);
        if trash {
            in_trash
        } else {
            p.include_trashed || !in_trash
        }
    });
    let tags = tag_filter(r, &p.tags)?;
    let keys: HashSet<&str> = p.item_keys.iter().map(String::as_str).collect();
    let passes = |row: &ItemRow| {
        keep_type(r, row, p)
            && tags.as_ref().is_none_or(|conds| {
                conds
                    .iter()
                    .all(|(negated, ids)| ids.contains(&row.id) != *negated)
            })
            && (keys.is_empty() || keys.contains(row.key.as_str()))
            && p.since.is_none_or(|s| row.version > s)
            && (!p.retracted || r.index.retracted.contains_key(&row.id))
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
    let by_id: HashMap<i64, &ItemRow> = rows.iter().map(|row| (row.id, row)).collect();
    let mut keep: HashSet<i64> = HashSet::new();
    for row in &rows {
        let hit = matched.as_ref().is_none_or(|m| m.contains(&row.id));
        if !hit {
            continue;
        }
        if top {
            // A matching child shows its parent.
            let parent = top_of(r, row.id);
            if let Some(parent_row) = by_id.get(&parent) {
                if passes(parent_row) && (parent == row.id || matched.is_some()) {
                    keep.insert(parent);
                }
            }
        } else if passes(row) {
            keep.insert(row.id);
        }
    }
    rows.retain(|row| keep.contains(&row.id));
    Ok(Some(rows))
}

/// Sort keys read in bulk (a per-item query would cost a round trip per item).
fn sort_rows(r: &Reader<'_>, rows: &mut [ItemRow], p: &Params) -> Result<(), DbError> {
    let sort = p.sort.as_deref().unwrap_or("dateModified");
    let descending = match p.direction.as_deref() {
        Some(d) => d == "desc",
        None => matches!(sort, "dateAdded" | "dateModified"),
    };
    let values = |field_ids: Vec<i64>| -> Result<HashMap<i64, String>, DbError> {
        let mut stmt = r.conn.prepare(&format!(
            "SELECT d.itemID, v.value FROM itemData d JOIN itemDataValues v USING (valueID) WHERE d.fieldID IN {}",
            in_list(&field_ids)
        ))?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    let keys: HashMap<i64, String> = match sort {
        "dateAdded" => rows
            .iter()
            .map(|row| (row.id, row.date_added.clone()))
            .collect(),
        "dateModified" => rows
            .iter()
            .map(|row| (row.id, row.date_modified.clone()))
            .collect(),
        "itemType" => rows
            .iter()
            .map(|row| (row.id, r.type_name(row).to_string()))
            .collect(),
        "title" => {
            let mut keys = values(field_ids_with_base(r, "title"))?;
            let mut stmt = r
                .conn
                .prepare("SELECT itemID, COALESCE(title, '') FROM itemNotes")?;
            for row in stmt.query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })? {
                let (id, title) = row?;
                keys.insert(id, title);
            }
            keys.into_iter()
                .map(|(id, t)| (id, t.to_lowercase()))
                .collect()
        }
        "creator" => {
            let mut stmt = r.conn.prepare(
                "SELECT ic.itemID, COALESCE(c.lastName, '') FROM itemCreators ic JOIN creators c USING (creatorID) WHERE ic.orderIndex = 0",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })?;
            rows.map(|row| row.map(|(id, n)| (id, n.to_lowercase())))
                .collect::<rusqlite::Result<_>>()?
        }
        "date" => values(field_ids_with_base(r, "date"))?,
        other => values(field_ids_with_base(r, other))?
            .into_iter()
            .map(|(id, v)| (id, v.to_lowercase()))
            .collect(),
    };
    rows.sort_by(|a, b| {
        let ka = keys.get(&a.id).map_or("", String::as_str);
        let kb = keys.get(&b.id).map_or("", String::as_str);
        // Items without a value sort last either way, as Zotero sorts empty values.
        let order = match (ka.is_empty(), kb.is_empty()) {
            (true, false) => return std::cmp::Ordering::Greater,
            (false, true) => return std::cmp::Ordering::Less,
            _ => ka.cmp(kb),
        };
        let order = if descending { order.reverse() } else { order };
        order.then_with(|| a.key.cmp(&b.key))
    });
    Ok(())
}

fn page_bounds(total: usize, p: &Params) -> (usize, usize) {
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let start = p.start.min(total);
    (start, (start + limit).min(total))
}

fn page_items(
    r: &Reader<'_>,
    lib: &Lib,
    mut rows: Vec<ItemRow>,
    p: &Params,
) -> Result<DbAnswer, DbError> {
    let total = rows.len();
    match p.format.as_deref() {
        Some("versions") => {
            let map: serde_json::Map<String, Value> = rows
                .iter()
                .map(|row| (row.key.clone(), json!(row.version)))
                .collect();
            return Ok(DbAnswer::json(
                &Value::Object(map),
                Some(total as u64),
                lib.version,
            ));
        }
        Some("keys") => {
            let keys: Vec<&str> = rows.iter().map(|row| row.key.as_str()).collect();
            let mut answer = DbAnswer::json(&Value::Null, Some(total as u64), lib.version);
            answer.content_type = "text/plain";
            answer.body = format!("{}\n", keys.join("\n")).into_bytes();
            return Ok(answer);
        }
        _ => {}
    }
    if let Some(sort) = p.sort.as_deref().filter(|s| !ITEM_SORTS.contains(s)) {
        return Ok(DbAnswer::status(
            400,
            &format!("Invalid 'sort' value '{sort}'"),
        ));
    }
    sort_rows(r, &mut rows, p)?;
    let (start, end) = page_bounds(total, p);
    let mut out = Vec::new();
    for row in rows.get(start..end).unwrap_or_default() {
        out.push(r.item_json(lib, row)?);
    }
    Ok(DbAnswer::json(&Value::Array(out), Some(total as u64), lib.version).paged(end, total))
}

/// `fulltextItems`: indexed and total pages, indexed and total characters, version.
type FullTextCounts = (Option<i64>, Option<i64>, Option<i64>, Option<i64>, i64);

fn full_text(r: &Reader<'_>, lib: &Lib, key: &str) -> Result<DbAnswer, DbError> {
    let Some(row) = r.item_by_key(lib, key)? else {
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
        .join(key)
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

/// `collections`: ID, name, parent key, time of the last change, version.
type CollectionRow = (i64, String, Option<String>, String, i64);

fn collections(
    r: &Reader<'_>,
    lib: &Lib,
    parent: Option<&str>,
    top: bool,
    p: &Params,
) -> Result<DbAnswer, DbError> {
    let mut stmt = r.conn.prepare_cached(
        "SELECT c.collectionID, c.collectionName, p.key, c.clientDateModified, c.version FROM collections c \
         LEFT JOIN collections p ON p.collectionID = c.parentCollectionID WHERE c.libraryID = ?1",
    )?;
    let rows = stmt.query_map([lib.id], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, i64>(4)?,
        ))
    })?;
    let mut found: Vec<CollectionRow> = rows.collect::<rusqlite::Result<_>>()?;
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

fn tags(
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
