//! Zotero objects as the index's documents: an item with its metadata, a note as Markdown,
//! an annotation under its attachment's top-level item; and an attachment with a document
//! file as a file to read (`super::files`). Chunking is the index's (`Document::item` and
//! the others cut the text).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zotero_api::fulltext::DocumentKind;
use zotero_api::model::WireObject;
use zotero_index::{Batch, Document, FileEntry, IndexError, ItemMeta};

/// The fields of an attachment that reading its file needs (where it is, what it is, its
/// MD5), kept with it in the index.
const FILE_FIELDS: [&str; 5] = ["linkMode", "contentType", "filename", "path", "md5"];

/// What the index keeps of an attachment to read its file later (`files.source`).
#[derive(Debug, Serialize, Deserialize)]
struct StoredAttachment {
    version: u64,
    data: Map<String, Value>,
}

/// The document an object is indexed as; `None` for what is not indexed (attachments with
/// a parent: their text comes as full text, their annotations on their own). An
/// annotation is filed under its attachment's top-level item, from `parents` (attachment →
/// its item; the attachment itself when unknown).
pub(super) fn document(
    parents: &HashMap<String, Option<String>>,
    o: &WireObject,
) -> Option<Document> {
    let key = o.key();
    let version = o.version();
    let deleted = is_deleted(o);
    let parent = field(o, "parentItem");
    match o.item_type().as_str() {
        "note" => {
            let html = field(o, "note").unwrap_or_default();
            let markdown = crate::notes::markdown::note_to_markdown(&html);
            let meta = if parent.is_none() {
                ItemMeta {
                    title: crate::notes::markdown::note_title(&html, 120),
                    item_type: "note".into(),
                    collections: strings(o, "collections"),
                    tags: tags(o),
                    ..ItemMeta::default()
                }
            } else {
                ItemMeta::default()
            };
            Some(Document::note(
                &key,
                parent.as_deref(),
                version,
                &markdown,
                meta,
                deleted,
            ))
        }
        "annotation" => {
            let attachment = parent?;
            let item = parents
                .get(&attachment)
                .cloned()
                .flatten()
                .unwrap_or_else(|| attachment.clone());
            Some(Document::annotation(
                &key,
                &attachment,
                &item,
                version,
                &field(o, "annotationText").unwrap_or_default(),
                &field(o, "annotationComment").unwrap_or_default(),
                deleted,
            ))
        }
        "attachment" if parent.is_some() => None,
        _ => Some(Document::item(&key, version, item_meta(o), deleted)),
    }
}

/// Writes an object into `b`: its document, or for an attachment with a parent (not
/// indexed itself) what hangs under it follows it (another parent, the trash). Answers
/// the chunks written.
pub(super) fn write_object(
    b: &mut Batch<'_>,
    parents: &HashMap<String, Option<String>>,
    o: &WireObject,
) -> Result<u64, IndexError> {
    if o.item_type() == "attachment" {
        note_file(b, o)?;
    }
    if let Some(doc) = document(parents, o) {
        b.upsert(&doc)?;
        return Ok(doc.chunks.len() as u64);
    }
    if o.item_type() == "attachment" {
        b.reattach(&o.key(), &top_of(o), is_deleted(o))?;
    }
    Ok(0)
}

/// Records an attachment whose file may hold text (a stored or linked file of a document
/// type: PDF, EPUB, HTML, text), with what identifies its bytes (its MD5, else its version);
/// any other attachment is forgotten.
fn note_file(b: &mut Batch<'_>, o: &WireObject) -> Result<(), IndexError> {
    let key = o.key();
    let stored = matches!(
        field(o, "linkMode").as_deref(),
        Some("imported_file" | "imported_url" | "linked_file")
    );
    let document =
        field(o, "contentType").is_some_and(|t| DocumentKind::of(&t) != DocumentKind::Other);
    if !(stored && document) {
        return b.forget_file(&key);
    }
    let data: Map<String, Value> = FILE_FIELDS
        .iter()
        .filter_map(|f| Some((f.to_string(), o.data.get(*f)?.clone())))
        .collect();
    let source = StoredAttachment {
        version: o.version(),
        data,
    };
    let state = field(o, "md5")
        .map(|m| m.to_ascii_lowercase())
        .unwrap_or_else(|| format!("v{}", o.version()));
    let source = serde_json::to_string(&source).unwrap_or_default();
    b.note_file(&FileEntry {
        key: &key,
        item_key: &top_of(o),
        deleted: is_deleted(o),
        state: &state,
        source: &source,
    })
}

/// The attachment `key` as the index kept it ([`note_file`]): enough of its wire JSON to
/// read its file and key its cached document.
pub(super) fn stored_attachment(key: &str, source: &str) -> Option<WireObject> {
    let stored: StoredAttachment = serde_json::from_str(source).ok()?;
    let mut data = stored.data;
    data.insert("itemType".into(), Value::from("attachment"));
    Some(WireObject {
        key: Some(key.to_string()),
        version: Some(stored.version),
        data,
        ..WireObject::default()
    })
}

/// Whether an object is in the trash.
pub(super) fn is_deleted(o: &WireObject) -> bool {
    o.data.get("deleted").is_some_and(truthy)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_i64().is_some_and(|n| n != 0),
        Value::String(s) => !s.is_empty() && s != "0" && s != "false",
        _ => false,
    }
}

pub(super) fn field(o: &WireObject, name: &str) -> Option<String> {
    o.data
        .get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn strings(o: &WireObject, name: &str) -> Vec<String> {
    o.data
        .get(name)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn tags(o: &WireObject) -> Vec<String> {
    o.data
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("tag").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// An attachment's top-level item: its parent, or itself when standalone.
pub(super) fn top_of(o: &WireObject) -> String {
    field(o, "parentItem").unwrap_or_else(|| o.key())
}

/// The first four-digit run of a date, as a year.
fn year_of(date: &str) -> Option<i32> {
    let bytes = date.as_bytes();
    bytes.windows(4).enumerate().find_map(|(i, w)| {
        let digits = w.iter().all(u8::is_ascii_digit);
        let alone = i
            .checked_sub(1)
            .and_then(|j| bytes.get(j))
            .is_none_or(|b| !b.is_ascii_digit())
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit());
        if digits && alone {
            std::str::from_utf8(w).ok()?.parse().ok()
        } else {
            None
        }
    })
}

const VENUE_FIELDS: [&str; 12] = [
    "publicationTitle",
    "proceedingsTitle",
    "bookTitle",
    "conferenceName",
    "websiteTitle",
    "blogTitle",
    "forumTitle",
    "programTitle",
    "seriesTitle",
    "university",
    "institution",
    "publisher",
];

fn item_meta(o: &WireObject) -> ItemMeta {
    let item = o.to_item();
    let creators: Vec<String> = item
        .creators
        .iter()
        .map(|c| match (&c.name, &c.last_name, &c.first_name) {
            (Some(n), _, _) => n.clone(),
            (None, Some(l), Some(f)) => format!("{l}, {f}"),
            (None, Some(l), None) => l.clone(),
            (None, None, Some(f)) => f.clone(),
            (None, None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    let year = o
        .meta
        .get("parsedDate")
        .and_then(Value::as_str)
        .and_then(year_of)
        .or_else(|| item.date.as_deref().and_then(year_of));
    ItemMeta {
        title: item.title,
        creators: creators.join("; "),
        year,
        item_type: item.item_type,
        venue: VENUE_FIELDS
            .iter()
            .find_map(|f| field(o, f))
            .unwrap_or_default(),
        abstract_note: item.abstract_note.unwrap_or_default(),
        collections: strings(o, "collections"),
        tags: item.tags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years_are_four_digit_runs() {
        assert_eq!(year_of("2019-05-01"), Some(2019));
        assert_eq!(year_of("May 3, 1999"), Some(1999));
        assert_eq!(year_of("12345"), None);
        assert_eq!(year_of(""), None);
    }
}
