//! The data of notes, attachments and annotations, which have their own tables
//! (`itemNotes`, `itemAttachments`, `itemAnnotations`) beside `itemData`.

use rusqlite::OptionalExtension;
use serde_json::{json, Map, Value};

use crate::datafile::stored_file_len;
use crate::error::DbError;
use crate::index::{field_ids_with_base, in_list};
use crate::reader::{ItemRow, Lib, Reader};

const LINK_MODES: [&str; 5] = [
    "imported_file",
    "imported_url",
    "linked_file",
    "linked_url",
    "embedded_image",
];

/// `linkMode` of the attachments whose file is in `storage/<KEY>/` (imported file, imported
/// URL, embedded image): Zotero_Attachments' stored files.
const STORED_FILE_MODES: [i64; 3] = [0, 1, 4];

const ANNOTATION_TYPES: [&str; 6] = ["highlight", "note", "image", "ink", "underline", "text"];
impl Reader<'_> {
    pub(crate) fn note_data(&self, id: i64, data: &mut Map<String, Value>) -> Result<(), DbError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT COALESCE(note, '') FROM itemNotes WHERE itemID = ?1")?;
        let note: String = stmt
            .query_row([id], |r| r.get(0))
            .optional()?
            .unwrap_or_default();
        data.insert("note".into(), json!(note));
        Ok(())
    }

    pub(crate) fn attachment_data(
        &self,
        row: &ItemRow,
        data: &mut Map<String, Value>,
        links: &mut Value,
    ) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT a.linkMode, a.contentType, c.charset, a.path, a.storageHash, a.storageModTime \
             FROM itemAttachments a LEFT JOIN charsets c USING (charsetID) WHERE a.itemID = ?1",
        )?;
        let found = stmt
            .query_row([row.id], |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<i64>>(5)?,
                ))
            })
            .optional()?;
        let Some((mode, content_type, charset, path, md5, mtime)) = found else {
            return Ok(());
        };
        let mode_name = mode
            .and_then(|m| usize::try_from(m).ok())
            .and_then(|m| LINK_MODES.get(m))
            .copied()
            .unwrap_or("imported_file");
        data.insert("linkMode".into(), json!(mode_name));
        data.insert("note".into(), json!(""));
        data.insert(
            "contentType".into(),
            json!(content_type.clone().unwrap_or_default()),
        );
        data.insert("charset".into(), json!(charset.unwrap_or_default()));
        let stored = path.as_deref().and_then(|p| p.strip_prefix("storage:"));
        if let Some(name) = stored {
            data.insert("filename".into(), json!(name));
            data.insert("md5".into(), md5.map_or(Value::Null, Value::String));
            data.insert("mtime".into(), mtime.map_or(Value::Null, Value::from));
            // Only a regular file in its own folder of storage/ (no link followed).
            if let Some(length) = stored_file_len(self.data_dir, &row.key, name) {
                *links = json!({"enclosure": {
                    "type": content_type.unwrap_or_default(),
                    "title": name,
                    "length": length,
                }});
            }
        } else if let Some(p) = path {
            if mode_name == "linked_file" {
                data.insert("path".into(), json!(p));
            }
        }
        Ok(())
    }

    /// `links.attachment` of a regular item as the web API makes it
    /// (`Zotero_Item::getBestAttachments` of zotero/dataserver, then
    /// `getUncachedResponseProps`): among its attachments outside the trash, linked files
    /// and links left out, a PDF first, then one whose URL is the item's, then the oldest
    /// added (then the first made, where the API leaves ties to the database). The API
    /// names that one only when the server holds its file; here, when it is a stored file
    /// that is in `storage/` or was synced (`storageHash`, which sync writes). Its size is
    /// the local file's, when there.
    pub(crate) fn best_attachment(
        &self,
        lib: &Lib,
        row: &ItemRow,
        item_url: &str,
    ) -> Result<Option<Value>, DbError> {
        if !self.index.children.contains_key(&row.id) {
            return Ok(None);
        }
        let url_fields = in_list(&field_ids_with_base(self.names, "url"));
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT i.key, COALESCE(a.linkMode, 0), COALESCE(a.contentType, ''), a.path,                a.storageHash              FROM itemAttachments a JOIN items i ON i.itemID = a.itemID              LEFT JOIN itemData d ON d.itemID = a.itemID AND d.fieldID IN {url_fields}              LEFT JOIN itemDataValues v ON v.valueID = d.valueID              WHERE a.parentItemID = ?1 AND COALESCE(a.linkMode, 0) NOT IN (2, 3)                AND a.itemID NOT IN (SELECT itemID FROM deletedItems)              ORDER BY COALESCE(a.contentType = 'application/pdf', 0) DESC,                COALESCE(v.value = ?2, 0) DESC, i.dateAdded ASC, i.itemID ASC LIMIT 1"
        ))?;
        let best = stmt
            .query_row(rusqlite::params![row.id, item_url], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .optional()?;
        let Some((key, mode, content_type, path, hash)) = best else {
            return Ok(None);
        };
        if !STORED_FILE_MODES.contains(&mode) {
            return Ok(None);
        }
        let size = path
            .as_deref()
            .and_then(|p| p.strip_prefix("storage:"))
            .filter(|_| crate::changes::is_plain_key(&key))
            .and_then(|name| stored_file_len(self.data_dir, &key, name));
        if size.is_none() && hash.is_none() {
            return Ok(None);
        }
        let mut link = json!({
            "href": format!("{}/items/{key}", lib.api),
            "type": "application/json",
        });
        if let Some(o) = link.as_object_mut() {
            // The API leaves out an empty type and a size of 0 (`!empty`).
            if !content_type.is_empty() {
                o.insert("attachmentType".into(), json!(content_type));
            }
            if let Some(size) = size.filter(|s| *s > 0) {
                o.insert("attachmentSize".into(), json!(size));
            }
        }
        Ok(Some(link))
    }

    pub(crate) fn annotation_data(
        &self,
        id: i64,
        data: &mut Map<String, Value>,
    ) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT type, authorName, text, comment, color, pageLabel, sortIndex, position \
             FROM itemAnnotations WHERE itemID = ?1",
        )?;
        let found = stmt
            .query_row([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })
            .optional()?;
        let Some((kind, author, text, comment, color, page, sort_index, position)) = found else {
            return Ok(());
        };
        let kind = usize::try_from(kind - 1)
            .ok()
            .and_then(|k| ANNOTATION_TYPES.get(k))
            .copied()
            .unwrap_or("highlight");
        data.insert("annotationType".into(), json!(kind));
        if let Some(author) = author.filter(|a| !a.is_empty()) {
            data.insert("annotationAuthorName".into(), json!(author));
        }
        if matches!(kind, "highlight" | "underline") {
            data.insert("annotationText".into(), json!(text.unwrap_or_default()));
        }
        data.insert(
            "annotationComment".into(),
            json!(comment.unwrap_or_default()),
        );
        data.insert("annotationColor".into(), json!(color.unwrap_or_default()));
        data.insert(
            "annotationPageLabel".into(),
            json!(page.unwrap_or_default()),
        );
        data.insert("annotationSortIndex".into(), json!(sort_index));
        data.insert("annotationPosition".into(), json!(position));
        Ok(())
    }
}
