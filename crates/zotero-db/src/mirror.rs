//! Test support: writes items and collections given as the API's wire JSON (an emulator's
//! stored state) into a fixture database, so the same library can be read through the web
//! API and through `zotero.sqlite` and the answers compared. Types and fields the fixture's
//! schema excerpt lacks are added the way `_updateGlobalSchema` adds new ones (next ID, then
//! the type's field list).

use std::collections::HashMap;

use rusqlite::params;
use serde_json::Value;

use crate::data_keys::is_field;
use crate::fixture::{Builder, Result};

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// An object's `data` (the wire object itself when it has none).
fn data(object: &Value) -> &Value {
    object.get("data").unwrap_or(object)
}

/// An object's version, at its top or in its `data` (0 when it has none).
fn version(object: &Value) -> i64 {
    object
        .get("version")
        .or_else(|| data(object).get("version"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The item's tags as the fixture takes them (`auto:` before an automatic one).
fn item_tags(d: &Value) -> Vec<String> {
    d.get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let tag = s(t, "tag");
            if t.get("type").and_then(Value::as_i64) == Some(1) {
                format!("auto:{tag}")
            } else {
                tag.to_string()
            }
        })
        .collect()
}

/// A date as Zotero stores it (`Zotero.Date.multipartToSQL`): the parsed date as
/// `YYYY-MM-DD` with `00` for what is unknown, a space, the date as written.
fn multipart_date(parsed: Option<&str>, written: &str) -> String {
    let mut parts = parsed.unwrap_or_default().split('-');
    let mut part = |width: usize| {
        let p = parts.next().unwrap_or_default();
        format!("{}{p}", "0".repeat(width.saturating_sub(p.len())))
    };
    let (y, m, d) = (part(4), part(2), part(2));
    format!("{y}-{m}-{d} {written}")
}

/// ISO 8601 (`2024-01-01T10:00:00Z`) as Zotero stores it (`2024-01-01 10:00:00`).
fn sql_time(iso: &str) -> String {
    iso.trim_end_matches('Z').replacen('T', " ", 1)
}

impl Builder {
    fn ensure_type(&self, name: &str) -> Result<i64> {
        let found = self.find_id("SELECT itemTypeID FROM itemTypes WHERE typeName = ?1", name)?;
        if let Some(id) = found {
            return Ok(id);
        }
        let id: i64 = self.conn.query_row(
            "SELECT COALESCE(MAX(itemTypeID), 0) + 1 FROM itemTypes",
            [],
            |r| r.get(0),
        )?;
        self.conn.execute(
            "INSERT INTO itemTypes VALUES (?1, ?2, NULL, 1)",
            params![id, name],
        )?;
        self.conn.execute(
            "INSERT INTO itemTypesCombined VALUES (?1, ?2, 1, 0)",
            params![id, name],
        )?;
        Ok(id)
    }

    fn ensure_field(&self, type_id: i64, name: &str) -> Result<()> {
        let found = self.find_id("SELECT fieldID FROM fields WHERE fieldName = ?1", name)?;
        let field_id = match found {
            Some(id) => id,
            None => {
                let id: i64 = self.conn.query_row(
                    "SELECT COALESCE(MAX(fieldID), 0) + 1 FROM fields",
                    [],
                    |r| r.get(0),
                )?;
                self.conn.execute(
                    "INSERT INTO fields VALUES (?1, ?2, NULL)",
                    params![id, name],
                )?;
                self.conn.execute(
                    "INSERT INTO fieldsCombined VALUES (?1, ?2, NULL, NULL, 0)",
                    params![id, name],
                )?;
                id
            }
        };
        let order: i64 = self.conn.query_row(
            "SELECT COALESCE(MAX(orderIndex), -1) + 1 FROM itemTypeFields WHERE itemTypeID = ?1",
            [type_id],
            |r| r.get(0),
        )?;
        self.conn.execute(
            "INSERT OR IGNORE INTO itemTypeFields VALUES (?1, ?2, 0, ?3)",
            params![type_id, field_id, order],
        )?;
        Ok(())
    }

    fn ensure_creator_type(&self, name: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO creatorTypes (creatorType) SELECT ?1 \
             WHERE NOT EXISTS (SELECT 1 FROM creatorTypes WHERE creatorType = ?1)",
            [name],
        )?;
        Ok(())
    }

    /// An item's relations (`{"owl:sameAs": "uri"}` or a list of URIs) as
    /// `Zotero.Item._saveData` stores them: `relationPredicates`, then `itemRelations`.
    fn relations(&self, item: i64, relations: Option<&Value>) -> Result<()> {
        for (predicate, objects) in relations.and_then(Value::as_object).into_iter().flatten() {
            self.conn.execute(
                "INSERT INTO relationPredicates (predicate) SELECT ?1 \
                 WHERE NOT EXISTS (SELECT 1 FROM relationPredicates WHERE predicate = ?1)",
                [predicate],
            )?;
            let objects: Vec<&str> = match objects {
                Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                other => other.as_str().into_iter().collect(),
            };
            for object in objects {
                self.conn.execute(
                    "INSERT OR IGNORE INTO itemRelations (itemID, predicateID, object) \
                     SELECT ?1, predicateID, ?3 FROM relationPredicates WHERE predicate = ?2",
                    params![item, predicate, object],
                )?;
            }
        }
        Ok(())
    }

    /// Writes wire items and collections into `library` (1: the user library): the
    /// collections, then each item, then the notes', attachments' and annotations' own rows
    /// once every parent has an ID.
    pub fn mirror(&self, library: i64, items: &[Value], collections: &[Value]) -> Result<()> {
        self.conn.execute_batch("BEGIN")?;
        let collection_ids = self.mirror_collections(library, collections);
        let mut item_ids: HashMap<String, i64> = HashMap::new();
        for item in items {
            let id = self.mirror_item(library, item, &collection_ids)?;
            item_ids.insert(s(data(item), "key").to_string(), id);
        }
        for item in items {
            let d = data(item);
            let Some(id) = item_ids.get(s(d, "key")).copied() else {
                continue;
            };
            let parent = d
                .get("parentItem")
                .and_then(Value::as_str)
                .and_then(|k| item_ids.get(k))
                .copied();
            match s(d, "itemType") {
                "note" => {
                    self.conn.execute(
                        "INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?1, ?2, ?3, '')",
                        params![id, parent, s(d, "note")],
                    )?;
                }
                "attachment" => self.mirror_attachment(id, parent, d)?,
                "annotation" => self.mirror_annotation(id, parent, d)?,
                _ => {}
            }
        }
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// The collections, parents before children (they are listed in creation order, so a
    /// child waits for its parent), with their versions and trash; their IDs by key. One
    /// whose parent never comes is left out.
    fn mirror_collections(&self, library: i64, collections: &[Value]) -> HashMap<String, i64> {
        let mut collection_ids: HashMap<String, i64> = HashMap::new();
        let mut pending: Vec<&Value> = collections.iter().collect();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|c| {
                let d = data(c);
                let parent = d.get("parentCollection").and_then(Value::as_str);
                let parent_id = match parent {
                    Some(p) => match collection_ids.get(p) {
                        Some(id) => Some(*id),
                        None => return true,
                    },
                    None => None,
                };
                let key = s(d, "key");
                if let Ok(id) = self.collection(library, key, s(d, "name"), parent_id) {
                    collection_ids.insert(key.to_string(), id);
                    let _ = self.conn.execute(
                        "UPDATE collections SET version = ?2, clientDateModified = '2024-01-01 00:00:00' WHERE collectionID = ?1",
                        params![id, version(c)],
                    );
                    if d.get("deleted").and_then(Value::as_bool) == Some(true) {
                        let _ = self.conn.execute(
                            "INSERT INTO deletedCollections (collectionID) VALUES (?1)",
                            [id],
                        );
                    }
                }
                false
            });
            if pending.len() == before {
                break;
            }
        }
        collection_ids
    }

    /// One item's row with its fields, creators and tags, then its version and dates, its
    /// relations, its collections and its trash; its ID.
    fn mirror_item(
        &self,
        library: i64,
        item: &Value,
        collection_ids: &HashMap<String, i64>,
    ) -> Result<i64> {
        let d = data(item);
        let item_type = s(d, "itemType");
        let type_id = self.ensure_type(item_type)?;
        let fields = self.item_fields(type_id, item)?;
        let creators = self.item_creators(d)?;
        let tags = item_tags(d);
        let field_refs: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let creator_refs: Vec<(&str, Option<&str>, &str)> = creators
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_deref(), c.as_str()))
            .collect();
        let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
        let id = self.item(
            library,
            s(d, "key"),
            item_type,
            &field_refs,
            &creator_refs,
            &tag_refs,
        )?;
        self.conn.execute(
            "UPDATE items SET version = ?2, dateAdded = COALESCE(?3, dateAdded), dateModified = COALESCE(?4, dateModified) WHERE itemID = ?1",
            params![
                id,
                version(item),
                d.get("dateAdded").and_then(Value::as_str).map(sql_time),
                d.get("dateModified").and_then(Value::as_str).map(sql_time)
            ],
        )?;
        self.relations(id, d.get("relations"))?;
        for c in d
            .get("collections")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(cid) = c.as_str().and_then(|k| collection_ids.get(k)) {
                self.file(*cid, id)?;
            }
        }
        if d.get("deleted").and_then(Value::as_bool) == Some(true)
            || d.get("deleted").and_then(Value::as_i64) == Some(1)
        {
            self.trash(id)?;
        }
        Ok(id)
    }

    /// The item's fields with a text value (each added to its type when the schema lacks
    /// it), a date as Zotero stores it.
    fn item_fields(&self, type_id: i64, item: &Value) -> Result<Vec<(String, String)>> {
        let d = data(item);
        let mut fields: Vec<(String, String)> = Vec::new();
        for (k, v) in d.as_object().into_iter().flatten() {
            if !is_field(k) {
                continue;
            }
            if let Some(text) = v.as_str().filter(|t| !t.is_empty()) {
                self.ensure_field(type_id, k)?;
                let text = if k == "date" {
                    let parsed = item
                        .get("meta")
                        .and_then(|m| m.get("parsedDate"))
                        .and_then(Value::as_str);
                    multipart_date(parsed, text)
                } else {
                    text.to_string()
                };
                fields.push((k.clone(), text));
            }
        }
        Ok(fields)
    }

    /// The item's creators, `(type, first name, last name)` (no first name: a single-field
    /// name), each type added when the schema lacks it.
    fn item_creators(&self, d: &Value) -> Result<Vec<(String, Option<String>, String)>> {
        let mut creators = Vec::new();
        for c in d
            .get("creators")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ctype = s(c, "creatorType");
            self.ensure_creator_type(ctype)?;
            match c.get("name").and_then(Value::as_str) {
                Some(name) => creators.push((ctype.into(), None, name.into())),
                None => creators.push((
                    ctype.into(),
                    Some(s(c, "firstName").into()),
                    s(c, "lastName").into(),
                )),
            }
        }
        Ok(creators)
    }

    /// An attachment's row: its link mode, content type, file (`storage:` + its name) or
    /// path, MD5, modification time and charset.
    fn mirror_attachment(&self, id: i64, parent: Option<i64>, d: &Value) -> Result<()> {
        let mode = [
            "imported_file",
            "imported_url",
            "linked_file",
            "linked_url",
            "embedded_image",
        ]
        .iter()
        .position(|m| *m == s(d, "linkMode"))
        .unwrap_or(0) as i64;
        let path = match d.get("filename").and_then(Value::as_str) {
            Some(f) => Some(format!("storage:{f}")),
            None => d.get("path").and_then(Value::as_str).map(str::to_string),
        };
        let charset = d
            .get("charset")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        if let Some(charset) = charset {
            self.conn.execute(
                "INSERT OR IGNORE INTO charsets (charset) VALUES (?1)",
                [charset],
            )?;
        }
        self.conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path, storageHash, storageModTime, charsetID) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT charsetID FROM charsets WHERE charset = ?8))",
            params![
                id,
                parent,
                mode,
                d.get("contentType").and_then(Value::as_str),
                path,
                d.get("md5").and_then(Value::as_str),
                d.get("mtime").and_then(Value::as_i64),
                charset
            ],
        )?;
        Ok(())
    }

    /// An annotation's row: its type (Zotero's `ANNOTATION_TYPE_*`), author, text, comment,
    /// colour, page label, sort index and position.
    fn mirror_annotation(&self, id: i64, parent: Option<i64>, d: &Value) -> Result<()> {
        let kind = ["highlight", "note", "image", "ink", "underline", "text"]
            .iter()
            .position(|m| *m == s(d, "annotationType"))
            .map_or(1, |p| p as i64 + 1);
        let position = match d.get("annotationPosition") {
            Some(Value::String(p)) => p.clone(),
            Some(other) => other.to_string(),
            None => "{}".into(),
        };
        self.conn.execute(
            "INSERT INTO itemAnnotations (itemID, parentItemID, type, authorName, text, comment, color, pageLabel, sortIndex, position, isExternal) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0)",
            params![
                id,
                parent.unwrap_or(0),
                kind,
                d.get("annotationAuthorName").and_then(Value::as_str),
                d.get("annotationText").and_then(Value::as_str),
                d.get("annotationComment").and_then(Value::as_str),
                d.get("annotationColor").and_then(Value::as_str),
                d.get("annotationPageLabel").and_then(Value::as_str),
                s(d, "annotationSortIndex"),
                position
            ],
        )?;
        Ok(())
    }

    /// The library's version (`libraries.version`, what sync last reached).
    pub fn set_library_version(&self, library: i64, version: u64) -> Result<()> {
        self.conn.execute(
            "UPDATE libraries SET version = ?2 WHERE libraryID = ?1",
            params![library, version as i64],
        )?;
        Ok(())
    }

    /// The cached full text of an attachment, as `Zotero.FullText` leaves it.
    pub fn set_fulltext(
        &self,
        library: i64,
        key: &str,
        text: &str,
        pages: Option<(u64, u64)>,
    ) -> Result<()> {
        let io = |e: std::io::Error| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        let folder = self.dir.join("storage").join(key);
        std::fs::create_dir_all(&folder).map_err(io)?;
        std::fs::write(folder.join(".zotero-ft-cache"), text).map_err(io)?;
        let id: i64 = self.conn.query_row(
            "SELECT itemID FROM items WHERE libraryID = ?1 AND key = ?2",
            params![library, key],
            |r| r.get(0),
        )?;
        let chars = text.chars().count() as i64;
        match pages {
            Some((indexed, total)) => self.conn.execute(
                "REPLACE INTO fulltextItems (itemID, indexedPages, totalPages, version, synced) VALUES (?1, ?2, ?3, 1, 1)",
                params![id, indexed as i64, total as i64],
            )?,
            None => self.conn.execute(
                "REPLACE INTO fulltextItems (itemID, indexedChars, totalChars, version, synced) VALUES (?1, ?2, ?2, 1, 1)",
                params![id, chars],
            )?,
        };
        Ok(())
    }
}
