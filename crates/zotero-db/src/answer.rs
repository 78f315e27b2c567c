//! Requests in the API's path language answered from the snapshot: listings filtered as the
//! web API filters them (quick search, tags, item type, collection, trash, keys, `since`),
//! sorted, paged, with `Total-Results` and `Last-Modified-Version`.

use rusqlite::OptionalExtension;
use serde_json::{json, Value};

use crate::collections::{collections, tags};
use crate::error::DbError;
use crate::fulltext::{full_text, Reply};
use crate::listing::{collection_id, keep_type, list_items, sort_page};
use crate::query::{parse, Params, Route};
use crate::reader::{slug, ItemRow, Lib, Reader};
use crate::reply::{page_bounds, DbAnswer};
use crate::snapshot::{Snapshot, ZoteroDb};
use crate::sorts::accepts_item_sort;

/// Which library a request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryScope {
    User,
    Group(u64),
}

/// Where the web API and zotero.org's pages are, as the API's links name them.
const API: &str = "https://api.zotero.org";
const WWW: &str = "https://www.zotero.org";

impl ZoteroDb {
    /// Answers `GET {library}{path_and_query}` (blocking).
    pub fn answer(&self, scope: LibraryScope, path_and_query: &str) -> Result<DbAnswer, DbError> {
        let (route, params) = parse(path_and_query);
        if route == Route::Unsupported || params.needs_api {
            return Ok(DbAnswer::status(501, "not served from the Zotero database"));
        }
        let reply = self.with(|s| {
            let reader = Reader {
                conn: &s.conn,
                names: &s.names,
                index: &s.index,
                data_dir: self.data_dir(),
            };
            let Some(lib) = library(s, scope)? else {
                return Ok(Reply::Ready(DbAnswer::status(
                    404,
                    "no such library in the Zotero database",
                )));
            };
            match &route {
                Route::FullText(key) => full_text(&reader, &lib, key),
                _ => answer_route(&reader, &lib, &route, &params).map(Reply::Ready),
            }
        })?;
        match reply {
            Reply::Ready(answer) => Ok(answer),
            // Out of the snapshot's lock: the file is read while other reads go on.
            Reply::Text(text) => text.read(self.data_dir()),
        }
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
            "libraryEditing": if editable { "members" } else { "admins" },
            "libraryReading": "members",
            "fileEditing": if files_editable { "members" } else { "none" },
        },
    })
}

pub(crate) fn library(s: &Snapshot, scope: LibraryScope) -> Result<Option<Lib>, DbError> {
    let mut found = match scope {
        LibraryScope::User => s
            .conn
            .prepare_cached(
                "SELECT libraryID, version FROM libraries WHERE type = 'user' ORDER BY libraryID LIMIT 1",
            )?
            .query_row(
                [],
                |r| {
                    Ok(Lib {
                        id: r.get(0)?,
                        group: None,
                        version: r.get(1)?,
                        name: String::new(),
                        www: None,
                        api: String::new(),
                    })
                },
            )
            .optional()?,
        LibraryScope::Group(g) => s
            .conn
            .prepare_cached(
                "SELECT l.libraryID, l.version, g.name FROM groups g JOIN libraries l USING (libraryID) \
                 WHERE g.groupID = ?1",
            )?
            .query_row(
                [i64::try_from(g).unwrap_or(-1)],
                |r| {
                    Ok(Lib {
                        id: r.get(0)?,
                        group: Some(g),
                        version: r.get(1)?,
                        name: r.get(2)?,
                        // `Zotero_URI::getGroupURI` names a group by its slug when the
                        // group is public and by its ID otherwise; the database does not
                        // say which, and zotero.org answers the ID form for both.
                        www: Some(format!("{WWW}/groups/{g}")),
                        api: format!("{API}/groups/{g}"),
                    })
                },
            )
            .optional()?,
    };
    if let (Some(lib), LibraryScope::User) = (found.as_mut(), scope) {
        // The account Zotero synced with (`Zotero.Users.setCurrentUsername`, `setCurrentUserID`).
        let account = |key: &str| -> Result<Option<String>, DbError> {
            let value: Option<rusqlite::types::Value> = s
                .conn
                .prepare_cached(
                    "SELECT value FROM settings WHERE setting = 'account' AND key = ?1",
                )?
                .query_row([key], |r| r.get(0))
                .optional()?;
            Ok(match value {
                Some(rusqlite::types::Value::Text(t)) => Some(t),
                Some(rusqlite::types::Value::Integer(i)) => Some(i.to_string()),
                _ => None,
            })
        };
        lib.www = account("username")?
            .map(|u| slug(&u))
            .filter(|u| !u.is_empty())
            .map(|u| format!("{WWW}/{u}"));
        let user_id = account("userID")?
            .and_then(|id| id.parse::<u64>().ok())
            .unwrap_or(0);
        lib.api = format!("{API}/users/{user_id}");
    }
    Ok(found)
}

fn answer_route(r: &Reader<'_>, lib: &Lib, route: &Route, p: &Params) -> Result<DbAnswer, DbError> {
    match route {
        Route::Item(key) => match r.item_by_key(lib, key) {
            Some(row) => Ok(DbAnswer::json(&r.item_json(lib, row)?, None, row.version)),
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
            let Some(parent) = r.item_by_key(lib, key) else {
                return Ok(DbAnswer::status(404, "Item not found"));
            };
            let rows: Vec<&ItemRow> = r
                .index
                .children
                .get(&parent.id)
                .into_iter()
                .flatten()
                // Children in the trash only when asked for (`includeTrashed`, as the
                // API's children listing), marked `deleted` by `item_json`.
                .filter(|id| p.include_trashed || !r.index.trashed.contains(id))
                .filter_map(|id| r.index.row(*id))
                .filter(|row| keep_type(r, row, p))
                .collect();
            page_items(r, lib, rows, p)
        }
        Route::Collections { parent, top } => collections(r, lib, parent.as_deref(), *top, p),
        Route::Collection(key) => {
            let id = collection_id(r, lib, key)?;
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
        // Full text is answered by `answer` itself, its file read outside the lock.
        Route::FullText(_) | Route::Unsupported => {
            Ok(DbAnswer::status(501, "not served from the Zotero database"))
        }
    }
}

fn page_items(
    r: &Reader<'_>,
    lib: &Lib,
    mut rows: Vec<&ItemRow>,
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
            let mut keys: Vec<&str> = rows.iter().map(|row| row.key.as_str()).collect();
            keys.sort_unstable();
            let mut answer = DbAnswer::json(&Value::Null, Some(total as u64), lib.version);
            answer.content_type = "text/plain";
            answer.body = format!("{}\n", keys.join("\n")).into_bytes();
            return Ok(answer);
        }
        _ => {}
    }
    if let Some(sort) = p.sort.as_deref().filter(|s| !accepts_item_sort(s)) {
        return Ok(DbAnswer::status(
            400,
            &format!("Invalid 'sort' value '{sort}'"),
        ));
    }
    let (start, end) = page_bounds(total, p);
    sort_page(r, &mut rows, p, (start, end))?;
    let mut out = Vec::new();
    for row in rows.get(start..end).unwrap_or_default() {
        out.push(r.item_json(lib, row)?);
    }
    Ok(DbAnswer::json(&Value::Array(out), Some(total as u64), lib.version).paged(end, total))
}
