//! Zotero objects as the index's documents: an item with its metadata, a note as Markdown,
//! an annotation under its attachment's top-level item. Chunking is the index's
//! (`Document::item` and the others cut the text).

use std::collections::HashMap;

use serde_json::Value;
use zotero_api::model::WireObject;
use zotero_index::{Batch, Document, IndexError, ItemMeta};

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
    if let Some(doc) = document(parents, o) {
        b.upsert(&doc)?;
        return Ok(doc.chunks.len() as u64);
    }
    if o.item_type() == "attachment" {
        b.reattach(&o.key(), &top_of(o), is_deleted(o))?;
    }
    Ok(0)
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
