//! Rows of the snapshot as the Zotero API's wire objects: items (every field under Zotero's
//! field name, creators in order, tags, collections, relations, the retraction Zotero
//! stored); notes, attachments and annotations add their own data (`child_data`).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use crate::error::DbError;
use crate::index::value_text;
pub(crate) use crate::index::{Index, ItemRow};
use crate::schema::Names;

/// A library of the database.
#[derive(Debug, Clone)]
pub(crate) struct Lib {
    pub id: i64,
    /// `None`: the user library.
    pub group: Option<u64>,
    pub version: i64,
    pub name: String,
    /// The library's page on zotero.org (`links.alternate` of its items), when the database
    /// names the account (a group's is always known).
    pub www: Option<String>,
    /// The library's URL on the web API (`links.attachment` of its items name their
    /// attachments there): `https://api.zotero.org/users/<id>` (0 when the database names
    /// no account) or `.../groups/<id>`.
    pub api: String,
}

/// A zotero.org username as the site writes it in URLs (`Zotero_Utilities::slugify` of the
/// dataserver: letters, digits, space, `.`, `_`, `-` kept, lowercased, spaces as `_`).
pub(crate) fn slug(name: &str) -> String {
    name.trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '_' | '-'))
        .map(|c| {
            if c == ' ' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

impl Lib {
    pub(crate) fn wire(&self) -> Value {
        match self.group {
            Some(g) => json!({"type": "group", "id": g, "name": self.name, "links": {}}),
            None => json!({"type": "user", "id": 0, "name": self.name, "links": {}}),
        }
    }
}
/// Zotero's SQL timestamps (UTC, `YYYY-MM-DD HH:MM:SS`) as the API's ISO 8601.
pub(crate) fn iso(ts: &str) -> String {
    format!("{}Z", ts.replacen(' ', "T", 1))
}

/// A stored multipart date (`2017-12-00 December 2017`) as Zotero shows it: what follows the
/// first space; a value not in that form is shown as stored.
pub(crate) fn shown_date(stored: &str) -> &str {
    let is_multipart = stored.len() > 11
        && stored.get(4..5) == Some("-")
        && stored.get(7..8) == Some("-")
        && stored.get(10..11) == Some(" ");
    match (is_multipart, stored.get(11..)) {
        (true, Some(rest)) => rest,
        _ => stored,
    }
}

/// `parsedDate` of the API's `meta`: the multipart date without its zero parts.
fn parsed_date(stored: &str) -> Option<String> {
    let sql = stored.get(..10)?;
    let mut parts: Vec<&str> = sql.split('-').collect();
    while parts.last().is_some_and(|p| p.chars().all(|c| c == '0')) {
        parts.pop();
    }
    (!parts.is_empty() && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit())))
        .then(|| parts.join("-"))
}
/// Builds wire objects from one snapshot.
pub(crate) struct Reader<'a> {
    pub conn: &'a Connection,
    pub names: &'a Names,
    pub index: &'a Index,
    pub data_dir: &'a Path,
}

impl<'a> Reader<'a> {
    pub(crate) fn item_by_key(&self, lib: &Lib, key: &str) -> Option<&'a ItemRow> {
        self.index.by_key(lib.id, key)
    }

    pub(crate) fn key_of(&self, id: i64) -> Option<&'a str> {
        self.index.row(id).map(|row| row.key.as_str())
    }

    pub(crate) fn type_name(&self, row: &ItemRow) -> &'a str {
        self.names
            .item_types
            .get(&row.type_id)
            .map_or("", String::as_str)
    }

    /// `(field name, stored value)` of an item, in field-ID order.
    fn fields(&self, id: i64) -> Result<Vec<(i64, String)>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.fieldID, v.value FROM itemData d JOIN itemDataValues v USING (valueID) \
             WHERE d.itemID = ?1 ORDER BY d.fieldID",
        )?;
        let rows = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, value_text(r.get(1)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn creators(&self, id: i64) -> Result<Vec<Value>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT ic.creatorTypeID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic \
             JOIN creators c USING (creatorID) WHERE ic.itemID = ?1 ORDER BY ic.orderIndex",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (type_id, first, last, mode) = row?;
            let creator_type = self
                .names
                .creator_types
                .get(&type_id)
                .cloned()
                .unwrap_or_default();
            out.push(if mode == Some(1) {
                json!({"creatorType": creator_type, "name": last.unwrap_or_default()})
            } else {
                json!({
                    "creatorType": creator_type,
                    "firstName": first.unwrap_or_default(),
                    "lastName": last.unwrap_or_default(),
                })
            });
        }
        Ok(out)
    }

    fn tags(&self, id: i64) -> Result<Vec<Value>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t.name, it.type FROM itemTags it JOIN tags t USING (tagID) \
             WHERE it.itemID = ?1 ORDER BY it.rowid",
        )?;
        let rows = stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (tag, kind) = row?;
            out.push(if kind == 0 {
                json!({"tag": tag})
            } else {
                json!({"tag": tag, "type": kind})
            });
        }
        Ok(out)
    }

    /// The item's collections in the order it was filed in them (`collectionItems` rows in
    /// insertion order, as Zotero reads them and syncs them up), as the web API lists them.
    fn collection_keys(&self, id: i64) -> Result<Vec<Value>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.key FROM collectionItems ci JOIN collections c USING (collectionID) \
             WHERE ci.itemID = ?1 ORDER BY ci.rowid",
        )?;
        let rows = stmt.query_map([id], |r| r.get::<_, String>(0))?;
        Ok(rows
            .map(|r| r.map(Value::String))
            .collect::<rusqlite::Result<_>>()?)
    }

    fn relations(&self, id: i64) -> Result<Value, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT p.predicate, r.object FROM itemRelations r JOIN relationPredicates p USING (predicateID) \
             WHERE r.itemID = ?1 ORDER BY p.predicate, r.object",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out: Map<String, Value> = Map::new();
        for row in rows {
            let (predicate, object) = row?;
            match out.get_mut(&predicate) {
                Some(Value::Array(a)) => a.push(Value::String(object)),
                Some(existing) => {
                    let first = existing.take();
                    *existing = Value::Array(vec![first, Value::String(object)]);
                }
                None => {
                    out.insert(predicate, Value::String(object));
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// `meta.numChildren` as the API counts it (`Zotero_Item::getUncachedResponseProps`):
    /// a top-level item its children outside the trash, a note its attachments, a PDF
    /// attachment (not a linked URL) its annotations; other children have none.
    fn num_children(&self, row: &ItemRow, data: &Map<String, Value>) -> Option<u64> {
        if row.parent.is_none() {
            return Some(self.index.num_children(row.id));
        }
        let counted = |kind: &str| {
            self.index
                .children
                .get(&row.id)
                .into_iter()
                .flatten()
                .filter_map(|c| self.index.row(*c))
                .filter(|c| !c.deleted && self.type_name(c) == kind)
                .count() as u64
        };
        let field = |name: &str| data.get(name).and_then(Value::as_str);
        match self.type_name(row) {
            "note" => Some(counted("attachment")),
            "attachment"
                if field("contentType") == Some("application/pdf")
                    && field("linkMode") != Some("linked_url") =>
            {
                Some(counted("annotation"))
            }
            _ => None,
        }
    }

    /// The item as the API's wire object (`{key, version, library, links, meta, data}`).
    pub(crate) fn item_json(&self, lib: &Lib, row: &ItemRow) -> Result<Value, DbError> {
        let item_type = self.type_name(row).to_string();
        let mut data = Map::new();
        data.insert("key".into(), json!(row.key));
        data.insert("version".into(), json!(row.version));
        if let Some(parent) = self.index.parent.get(&row.id) {
            if let Some(key) = self.key_of(*parent) {
                data.insert("parentItem".into(), json!(key));
            }
        }
        data.insert("itemType".into(), json!(item_type));
        let mut meta = Map::new();
        let mut links = json!({});
        // The API sends every field of the item's type, empty when unset.
        let stored: HashMap<i64, String> = self.fields(row.id)?.into_iter().collect();
        let mut field_ids: Vec<i64> = self
            .names
            .type_fields
            .get(&row.type_id)
            .cloned()
            .unwrap_or_default();
        field_ids.extend(
            stored
                .keys()
                .filter(|f| !field_ids.contains(f))
                .copied()
                .collect::<Vec<_>>(),
        );
        for field_id in field_ids {
            let Some(name) = self.names.fields.get(&field_id) else {
                continue;
            };
            let value = stored.get(&field_id).map_or("", String::as_str);
            let is_date = self.names.base_name(row.type_id, field_id) == Some("date");
            if is_date && !value.is_empty() {
                if let Some(parsed) = parsed_date(value) {
                    meta.insert("parsedDate".into(), json!(parsed));
                }
                data.insert(name.clone(), json!(shown_date(value)));
            } else {
                data.insert(name.clone(), json!(value));
            }
        }
        match item_type.as_str() {
            "note" => self.note_data(row.id, &mut data)?,
            "attachment" => self.attachment_data(row, &mut data, &mut links)?,
            "annotation" => self.annotation_data(row.id, &mut data)?,
            _ => {
                let creators = self.creators(row.id)?;
                if let Some(summary) = creator_summary(&creators) {
                    meta.insert("creatorSummary".into(), json!(summary));
                }
                data.insert("creators".into(), Value::Array(creators));
                let url = data.get("url").and_then(Value::as_str).unwrap_or_default();
                if let (Some(best), Some(o)) =
                    (self.best_attachment(lib, row, url)?, links.as_object_mut())
                {
                    o.insert("attachment".into(), best);
                }
            }
        }
        data.insert("tags".into(), Value::Array(self.tags(row.id)?));
        if !self.index.parent.contains_key(&row.id) {
            data.insert(
                "collections".into(),
                Value::Array(self.collection_keys(row.id)?),
            );
        }
        if let (Some(www), Some(o)) = (&lib.www, links.as_object_mut()) {
            o.insert(
                "alternate".into(),
                json!({"href": format!("{www}/items/{}", row.key), "type": "text/html"}),
            );
        }
        data.insert("relations".into(), self.relations(row.id)?);
        data.insert("dateAdded".into(), json!(iso(&row.date_added)));
        data.insert("dateModified".into(), json!(iso(&row.date_modified)));
        if self.index.trashed.contains(&row.id) {
            data.insert("deleted".into(), json!(true));
        }
        if let Some(n) = self.num_children(row, &data) {
            meta.insert("numChildren".into(), json!(n));
        }
        if let Some(retraction) = self.index.retraction(row.id) {
            meta.insert("retraction".into(), retraction);
        }
        Ok(json!({
            "key": row.key,
            "version": row.version,
            "library": lib.wire(),
            "links": links,
            "meta": meta,
            "data": data,
        }))
    }
}

/// `meta.creatorSummary` as the API writes it: `A`, `A and B`, `A et al.`.
fn creator_summary(creators: &[Value]) -> Option<String> {
    let name = |c: &Value| {
        c.get("lastName")
            .or_else(|| c.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let authors: Vec<String> = creators.iter().filter_map(name).collect();
    match authors.as_slice() {
        [] => None,
        [a] => Some(a.clone()),
        [a, b] => Some(format!("{a} and {b}")),
        [a, ..] => Some(format!("{a} et al.")),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_dates_show_what_follows_the_first_space() {
        assert_eq!(shown_date("2017-12-00 December 2017"), "December 2017");
        assert_eq!(shown_date("1962-00-00 1962"), "1962");
        assert_eq!(shown_date("circa 1900"), "circa 1900");
        assert_eq!(
            parsed_date("2017-12-00 December 2017").as_deref(),
            Some("2017-12")
        );
        assert_eq!(parsed_date("0000-00-00 someday"), None);
    }
}
