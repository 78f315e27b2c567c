//! What lies under an item: its attachments and notes (`/items/{key}/children`) and the
//! annotations of its file attachments (`/items/{attachmentKey}/children`, item type
//! `annotation`), with the annotation colour palette Zotero shows.
//!
//! Notes come back as Zotero stores them (HTML); turning them into something to read is the
//! caller's business.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::{LibraryRef, ObjectKey};
use crate::model::{text, WireObject};
use crate::response::{all_pages, expect, parse_json, parse_page, unexpected, Page};
use crate::routing::Library;

/// Zotero's annotation colours with the names it shows for them, in its order
/// (zotero/zotero `Zotero.Annotations.COLORS`, names from `general-*` in `zotero.ftl`).
pub const ANNOTATION_COLORS: [(&str, &str); 8] = [
    ("Yellow", "#ffd400"),
    ("Red", "#ff6666"),
    ("Green", "#5fb236"),
    ("Blue", "#2ea8e5"),
    ("Purple", "#a28ae5"),
    ("Magenta", "#e56eee"),
    ("Orange", "#f19837"),
    ("Gray", "#aaaaaa"),
];

/// A link that opens `attachment` in Zotero's reader at `annotation` (zotero/zotero
/// `ZoteroProtocolHandler`'s `zotero://open-pdf/…?annotation=`, Zotero 7 and later; the same
/// handler opens EPUBs and snapshots).
pub fn annotation_url(
    library: LibraryRef,
    attachment: &ObjectKey,
    annotation: &ObjectKey,
) -> String {
    let lib = match library {
        LibraryRef::User => "library".to_string(),
        LibraryRef::Group(id) => format!("groups/{id}"),
    };
    format!("zotero://open-pdf/{lib}/items/{attachment}?annotation={annotation}")
}

/// The annotation types Zotero has (`annotationType`).
pub const ANNOTATION_TYPES: [&str; 6] = ["highlight", "underline", "note", "text", "image", "ink"];

/// The name Zotero shows for an annotation colour, if it is one of its palette.
pub fn color_name(hex: &str) -> Option<&'static str> {
    ANNOTATION_COLORS
        .iter()
        .find(|(_, h)| h.eq_ignore_ascii_case(hex.trim()))
        .map(|(n, _)| *n)
}

/// A note as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub key: String,
    pub version: u64,
    /// Absent for a standalone note.
    pub parent_key: Option<String>,
    /// HTML as Zotero stores it (untrusted).
    pub html: String,
    pub tags: Vec<String>,
    pub date_added: Option<String>,
    pub date_modified: Option<String>,
}

/// An annotation of a PDF, EPUB or snapshot attachment.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub key: String,
    pub version: u64,
    /// The attachment it is on.
    pub attachment_key: String,
    /// highlight, underline, note, text, image or ink.
    pub annotation_type: String,
    /// The text marked (highlights and underlines).
    pub text: Option<String>,
    pub comment: Option<String>,
    /// `#rrggbb`
    pub color: Option<String>,
    pub page_label: Option<String>,
    /// Reading order within the attachment (`NNNNN|NNNNNN|NNNNN` on a PDF): sorts as text.
    pub sort_index: String,
    pub author_name: Option<String>,
    pub tags: Vec<String>,
    pub date_added: Option<String>,
    pub date_modified: Option<String>,
}

impl WireObject {
    /// The item's tags, each once.
    pub fn tag_names(&self) -> Vec<String> {
        self.to_item().tags
    }

    pub fn parent_key(&self) -> Option<String> {
        text(&self.data, "parentItem")
    }

    pub fn to_note(&self) -> Note {
        Note {
            key: self.key(),
            version: self.version(),
            parent_key: self.parent_key(),
            html: self
                .data
                .get("note")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            tags: self.tag_names(),
            date_added: text(&self.data, "dateAdded"),
            date_modified: text(&self.data, "dateModified"),
        }
    }

    pub fn to_annotation(&self) -> Annotation {
        let d = &self.data;
        Annotation {
            key: self.key(),
            version: self.version(),
            attachment_key: self.parent_key().unwrap_or_default(),
            annotation_type: text(d, "annotationType").unwrap_or_default(),
            text: text(d, "annotationText"),
            comment: text(d, "annotationComment"),
            color: text(d, "annotationColor").map(|c| c.to_ascii_lowercase()),
            page_label: text(d, "annotationPageLabel"),
            sort_index: text(d, "annotationSortIndex").unwrap_or_default(),
            author_name: text(d, "annotationAuthorName"),
            tags: self.tag_names(),
            date_added: text(d, "dateAdded"),
            date_modified: text(d, "dateModified"),
        }
    }

    /// An attachment with a file of its own (stored or linked), the kind that can carry
    /// annotations (`Zotero_Item::isFileAttachment`).
    pub fn is_file_attachment(&self) -> bool {
        self.item_type() == "attachment"
            && self.data.get("linkMode").and_then(Value::as_str) != Some("linked_url")
    }
}

impl Library<'_> {
    /// One item as Zotero sends it; an unknown key is `ZOTERO_NOT_FOUND`.
    pub async fn item_object(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<WireObject, ZoteroError> {
        let resp = self
            .send(&ApiRequest::get(format!("/items/{key}")), cancel)
            .await?;
        if resp.status == 404 {
            return Err(unexpected(
                &resp,
                &format!("no item with key {key} in this library"),
            ));
        }
        expect(&resp, 200, &format!("get item {key}"))?;
        parse_json(&resp)
    }

    /// A page of an item's children of one type (or all), oldest first, so that pages stay
    /// put while notes are edited.
    pub async fn children_page(
        &self,
        key: &ObjectKey,
        item_type: Option<&str>,
        limit: u32,
        start: u64,
        cancel: &CancellationToken,
    ) -> Result<Page<WireObject>, ZoteroError> {
        let filter = item_type
            .map(|t| format!("&itemType={t}"))
            .unwrap_or_default();
        let req = ApiRequest::get(format!(
            "/items/{key}/children?format=json&sort=dateAdded&direction=asc{filter}\
             &limit={limit}&start={start}"
        ));
        let resp = self.send(&req, cancel).await?;
        parse_page(
            &resp,
            &format!("list the children of {key}"),
            WireObject::clone,
        )
    }

    /// Every child of an item of one type (or all), oldest first, page after page.
    pub async fn children(
        &self,
        key: &ObjectKey,
        item_type: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        all_pages(|start| self.children_page(key, item_type, 100, start, cancel)).await
    }

    /// A page of an item's child notes, oldest first.
    pub async fn child_notes(
        &self,
        key: &ObjectKey,
        limit: u32,
        start: u64,
        cancel: &CancellationToken,
    ) -> Result<Page<Note>, ZoteroError> {
        let page = self
            .children_page(key, Some("note"), limit, start, cancel)
            .await?;
        Ok(Page {
            items: page.items.iter().map(WireObject::to_note).collect(),
            total: page.total,
            next_start: page.next_start,
        })
    }

    /// The annotations under `item` in reading order: an attachment's own, or those of each
    /// file attachment of a regular item (attachment by attachment, oldest first); an
    /// annotation is its own only one. Notes have none.
    pub async fn annotations(
        &self,
        item: &WireObject,
        cancel: &CancellationToken,
    ) -> Result<Vec<Annotation>, ZoteroError> {
        let attachments: Vec<ObjectKey> = match item.item_type().as_str() {
            "annotation" => return Ok(vec![item.to_annotation()]),
            "note" => return Ok(Vec::new()),
            "attachment" => ObjectKey::parse(&item.key()).into_iter().collect(),
            _ => {
                let key = object_key(item)?;
                self.children(&key, Some("attachment"), cancel)
                    .await?
                    .iter()
                    .filter(|a| a.is_file_attachment())
                    .filter_map(|a| ObjectKey::parse(&a.key()).ok())
                    .collect()
            }
        };
        let mut out = Vec::new();
        for attachment in &attachments {
            let mut these: Vec<Annotation> = self
                .children(attachment, Some("annotation"), cancel)
                .await?
                .iter()
                .map(WireObject::to_annotation)
                .collect();
            // Zotero's API has no sort by position; its reader sorts by sort index.
            these.sort_by(|a, b| a.sort_index.cmp(&b.sort_index).then(a.key.cmp(&b.key)));
            out.extend(these);
        }
        Ok(out)
    }
}

/// The checked key of an object Zotero sent.
pub fn object_key(item: &WireObject) -> Result<ObjectKey, ZoteroError> {
    ObjectKey::parse(&item.key()).map_err(|e| ZoteroError::BadResponse {
        reason: format!("an item key Zotero sent is not a key: {e}"),
        status: 200,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_names_match_whatever_the_case() {
        assert_eq!(color_name("#ffd400"), Some("Yellow"));
        assert_eq!(color_name("#AAAAAA"), Some("Gray"));
        assert_eq!(color_name("#009980"), None);
        assert_eq!(ANNOTATION_COLORS.len(), 8);
    }

    #[test]
    fn annotation_urls_open_the_reader_at_the_annotation() {
        let (a, n) = (
            ObjectKey::parse("PDFK2345").unwrap(),
            ObjectKey::parse("ABCD2345").unwrap(),
        );
        assert_eq!(
            annotation_url(LibraryRef::User, &a, &n),
            "zotero://open-pdf/library/items/PDFK2345?annotation=ABCD2345"
        );
        assert_eq!(
            annotation_url(LibraryRef::Group(7), &a, &n),
            "zotero://open-pdf/groups/7/items/PDFK2345?annotation=ABCD2345"
        );
    }

    #[test]
    fn annotations_parse_with_fields_absent() {
        let w: WireObject = serde_json::from_value(serde_json::json!({
            "key": "ABCD2345", "version": 3,
            "data": {"key": "ABCD2345", "parentItem": "PDFK2345", "itemType": "annotation",
                     "annotationType": "ink", "annotationComment": "", "annotationColor": "#E56EEE",
                     "annotationSortIndex": "00003|000000|00120", "annotationPosition": "{}",
                     "tags": [{"tag": "x"}, {"tag": "x"}]}
        }))
        .unwrap();
        let a = w.to_annotation();
        assert_eq!(a.attachment_key, "PDFK2345");
        assert_eq!(a.annotation_type, "ink");
        assert_eq!((a.text, a.comment), (None, None));
        assert_eq!(a.color.as_deref(), Some("#e56eee"));
        assert_eq!(a.tags, vec!["x"]);
    }
}
