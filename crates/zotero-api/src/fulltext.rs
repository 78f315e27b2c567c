//! Full text: what Zotero has indexed of an item's documents. Zotero keeps it per
//! attachment (`GET {prefix}/items/{key}/fulltext`, the desktop's local API since Zotero 8);
//! for a regular item, its attachments' texts are read in a stable order and joined, each
//! under a header naming it, and one page of the whole is answered.
//!
//! The order: PDFs, then EPUBs, then HTML snapshots, then other text files; within a kind,
//! the oldest first (`dateAdded`), then by key. A parent costs one read of the item, one
//! listing of its attachments and one request per attachment that can have full text, read
//! one after another so that only one attachment's text is in memory at a time.

mod pager;

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use pager::{PageRequest, Paged, Pager};

use crate::client::Library;
pub use crate::error::NoFullText;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::WireObject;
use crate::response::{expect, parse_json};

/// The most attachments of one item whose full text is read; the rest are counted in
/// [`FullTextPage::unread`] (an attachment key reads one of them directly).
pub const MAX_SOURCES: usize = 25;

/// The longest attachment title a section header repeats (the section lists it whole).
const HEADER_TITLE_CHARS: usize = 200;

/// What kind of document an attachment is, in the order a parent's full texts are read.
/// Serialized by its [`name`](DocumentKind::name), as a server answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentKind {
    Pdf,
    Epub,
    /// A web page snapshot.
    Html,
    /// Another text file (`text/*`).
    Text,
    /// Anything else, read only when its attachment key is asked for.
    Other,
}

// By hand, not derived: a doc on a variant would publish the enum as a `oneOf`; the
// values say what they are.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for DocumentKind {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("DocumentKind")
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = DocumentKind::ALL.iter().map(|k| k.name()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl DocumentKind {
    /// Every kind, in reading order.
    pub const ALL: [DocumentKind; 5] = [
        DocumentKind::Pdf,
        DocumentKind::Epub,
        DocumentKind::Html,
        DocumentKind::Text,
        DocumentKind::Other,
    ];

    /// The kind of a MIME type (`Other` for one Zotero does not index).
    pub fn of(content_type: &str) -> DocumentKind {
        let base = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match base.as_str() {
            "application/pdf" => DocumentKind::Pdf,
            "application/epub+zip" => DocumentKind::Epub,
            "text/html" => DocumentKind::Html,
            t if t.starts_with("text/") => DocumentKind::Text,
            _ => DocumentKind::Other,
        }
    }

    /// `pdf`, `epub`, `html`, `text` or `other`.
    pub fn name(self) -> &'static str {
        match self {
            DocumentKind::Pdf => "pdf",
            DocumentKind::Epub => "epub",
            DocumentKind::Html => "html",
            DocumentKind::Text => "text",
            DocumentKind::Other => "other",
        }
    }

    fn label(self) -> &'static str {
        match self {
            DocumentKind::Pdf => "PDF",
            DocumentKind::Epub => "EPUB",
            DocumentKind::Html => "HTML snapshot",
            DocumentKind::Text => "Text",
            DocumentKind::Other => "File",
        }
    }
}

/// An attachment whose full text is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSource {
    pub attachment_key: ObjectKey,
    /// Its title, else its file name.
    pub title: String,
    pub content_type: Option<String>,
    pub kind: DocumentKind,
    date_added: String,
}

impl TextSource {
    fn of(wire: &WireObject) -> Option<TextSource> {
        let key = ObjectKey::parse(&wire.key()).ok()?;
        let summary = wire.to_attachment();
        let kind = summary
            .content_type
            .as_deref()
            .map_or(DocumentKind::Other, DocumentKind::of);
        Some(TextSource {
            attachment_key: key,
            title: summary.title,
            content_type: summary.content_type,
            kind,
            date_added: field(wire, "dateAdded").unwrap_or_default().to_string(),
        })
    }

    /// The line that opens its section of a parent's text.
    fn header(&self, stats: &IndexStats) -> String {
        let mut title: String = self
            .title
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(HEADER_TITLE_CHARS)
            .collect();
        if self.title.chars().nth(HEADER_TITLE_CHARS).is_some() {
            title.push('…');
        }
        let coverage = stats
            .coverage()
            .map(|c| format!(", {c}"))
            .unwrap_or_default();
        let label = self.kind.label();
        let key = &self.attachment_key;
        if title.trim().is_empty() {
            format!("=== {label} [{key}]{coverage} ===\n\n")
        } else {
            format!("=== {label}: {title} [{key}]{coverage} ===\n\n")
        }
    }
}

fn field<'a>(wire: &'a WireObject, name: &str) -> Option<&'a str> {
    wire.data.get(name).and_then(Value::as_str)
}

/// What Zotero indexed of a document: pages for a PDF, characters for the rest (as Zotero
/// counts them: JavaScript string lengths, UTF-16 code units).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    pub indexed_pages: Option<u64>,
    pub total_pages: Option<u64>,
    pub indexed_chars: Option<u64>,
    pub total_chars: Option<u64>,
}

impl IndexStats {
    /// Whether Zotero indexed only part of the document (its page or character limit).
    pub fn partial(&self) -> bool {
        let short = |i: Option<u64>, t: Option<u64>| matches!((i, t), (Some(i), Some(t)) if i < t);
        short(self.indexed_pages, self.total_pages) || short(self.indexed_chars, self.total_chars)
    }

    /// `11 of 15 pages indexed`, when only part was.
    fn coverage(&self) -> Option<String> {
        if !self.partial() {
            return None;
        }
        match (self.indexed_pages, self.total_pages) {
            (Some(i), Some(t)) if i < t => Some(format!("{i} of {t} pages indexed")),
            _ => Some(format!(
                "{} of {} characters indexed",
                self.indexed_chars.unwrap_or(0),
                self.total_chars.unwrap_or(0)
            )),
        }
    }
}

/// One attachment's full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullText {
    pub content: String,
    pub stats: IndexStats,
    /// The library version it was written at (`Last-Modified-Version`).
    pub version: Option<u64>,
}

/// A count as Zotero sends it: a number (a numeric string is read too; anything else is
/// left out rather than failing the whole text).
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFullText {
    content: String,
    #[serde(default, deserialize_with = "count")]
    indexed_pages: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    total_pages: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    indexed_chars: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    total_chars: Option<u64>,
}

/// One section of an item's text: an attachment and where its text lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub source: TextSource,
    pub stats: IndexStats,
    /// Where the section (its header, then its text) starts in the whole text.
    pub offset: u64,
    /// Where it ends (exclusive).
    pub end_offset: u64,
}

/// One page of an item's full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullTextPage {
    pub item_key: ObjectKey,
    pub item_type: String,
    pub title: String,
    /// Whether the item is itself the attachment read (its text comes without a header).
    pub is_attachment: bool,
    pub offset: u64,
    pub page: Paged,
    /// The attachments with text, in order.
    pub sections: Vec<Section>,
    /// The attachments read that have no indexed text.
    pub not_indexed: Vec<TextSource>,
    /// Attachments beyond [`MAX_SOURCES`] that were not read.
    pub unread: usize,
}

/// Sorts a parent's attachments into reading order, leaving out those that cannot have
/// full text (links to URLs, types Zotero does not index, keys that are not keys).
fn reading_order(children: &[WireObject]) -> Vec<TextSource> {
    let mut sources: Vec<TextSource> = children
        .iter()
        .filter(|c| field(c, "linkMode") != Some("linked_url"))
        .filter_map(TextSource::of)
        .filter(|s| s.kind != DocumentKind::Other)
        .collect();
    sources.sort_by(|a, b| {
        (a.kind, &a.date_added, a.attachment_key.as_str()).cmp(&(
            b.kind,
            &b.date_added,
            b.attachment_key.as_str(),
        ))
    });
    sources
}

impl Library<'_> {
    /// One attachment's full text; `None` when Zotero has none for it (a 404: nothing
    /// indexed, or not an attachment).
    pub async fn attachment_fulltext(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Option<FullText>, ZoteroError> {
        let resp = self
            .send(&ApiRequest::get(format!("/items/{key}/fulltext")), cancel)
            .await?;
        if resp.status == 404 {
            return Ok(None);
        }
        expect(&resp, 200, &format!("get the full text of {key}"))?;
        let version = resp
            .header("last-modified-version")
            .and_then(|v| v.trim().parse().ok());
        let wire: WireFullText = parse_json(&resp)?;
        Ok(Some(FullText {
            content: wire.content,
            stats: IndexStats {
                indexed_pages: wire.indexed_pages,
                total_pages: wire.total_pages,
                indexed_chars: wire.indexed_chars,
                total_chars: wire.total_chars,
            },
            version,
        }))
    }

    /// One page of an item's full text: an attachment's own text, or a regular item's
    /// attachments' texts in reading order, each under a header. An item without any is
    /// [`ZoteroError::NoFullText`], saying why.
    pub async fn item_fulltext(
        &self,
        key: &ObjectKey,
        page: PageRequest,
        cancel: &CancellationToken,
    ) -> Result<FullTextPage, ZoteroError> {
        // A listing, not `/items/{key}`: a library the key may not read answers 403 (an
        // access error naming it), where a single item would be a plain 404.
        let resp = self
            .send(
                &ApiRequest::get(format!("/items?itemKey={key}&includeTrashed=1&format=json")),
                cancel,
            )
            .await?;
        expect(&resp, 200, &format!("get item {key}"))?;
        let found: Vec<WireObject> = parse_json(&resp)?;
        drop(resp);
        let Some(item) = found.into_iter().find(|o| o.key() == key.as_str()) else {
            return Err(ZoteroError::NotFound {
                message: format!("no item with key {key} in this library"),
            });
        };
        let item_type = item.item_type();
        let no_text = |why| ZoteroError::NoFullText {
            key: key.to_string(),
            why,
        };
        let is_attachment = item_type == "attachment";
        let sources = match item_type.as_str() {
            "attachment" if field(&item, "linkMode") == Some("linked_url") => {
                return Err(no_text(NoFullText::LinkOnly));
            }
            "attachment" => TextSource::of(&item).into_iter().collect(),
            "note" | "annotation" => {
                return Err(no_text(NoFullText::NotADocument { item_type }));
            }
            _ => {
                let has_children = item
                    .meta
                    .get("numChildren")
                    .and_then(Value::as_u64)
                    .is_none_or(|n| n > 0);
                if has_children {
                    reading_order(&self.attachment_children(key, false, cancel).await?)
                } else {
                    Vec::new()
                }
            }
        };
        if sources.is_empty() {
            return Err(no_text(NoFullText::NoDocuments));
        }
        let unread = sources.len().saturating_sub(MAX_SOURCES);
        let mut pager = Pager::new(page);
        let mut sections = Vec::new();
        let mut not_indexed = Vec::new();
        for source in sources.into_iter().take(MAX_SOURCES) {
            let Some(text) = self
                .attachment_fulltext(&source.attachment_key, cancel)
                .await?
            else {
                not_indexed.push(source);
                continue;
            };
            if !sections.is_empty() {
                pager.push("\n\n");
            }
            let offset = pager.position();
            if !is_attachment {
                pager.push(&source.header(&text.stats));
            }
            pager.push(&text.content);
            sections.push(Section {
                source,
                stats: text.stats,
                offset,
                end_offset: pager.position(),
            });
        }
        if sections.is_empty() {
            let attachments = not_indexed
                .iter()
                .map(|s| s.attachment_key.to_string())
                .collect();
            return Err(no_text(NoFullText::NotIndexed { attachments }));
        }
        Ok(FullTextPage {
            item_key: key.clone(),
            title: field(&item, "title").unwrap_or_default().to_string(),
            item_type,
            is_attachment,
            offset: page.offset,
            page: pager.finish(),
            sections,
            not_indexed,
            unread,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_serialize_by_name() {
        for k in DocumentKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), json!(k.name()));
        }
    }

    // The published tool schemas take this type as it is: a plain enum of the names.
    #[cfg(feature = "schema")]
    #[test]
    fn kind_schema_is_the_plain_enum_of_names() {
        let schema = schemars::SchemaGenerator::default().into_root_schema_for::<DocumentKind>();
        let v = serde_json::to_value(&schema).unwrap();
        assert_eq!(v["type"], "string");
        assert_eq!(v["enum"], json!(["pdf", "epub", "html", "text", "other"]));
        assert!(v.get("oneOf").is_none(), "{v}");
    }

    fn attachment(key: &str, content_type: &str, link_mode: &str, added: &str) -> WireObject {
        serde_json::from_value(json!({"key": key, "data": {
            "itemType": "attachment", "title": format!("T {key}"), "contentType": content_type,
            "linkMode": link_mode, "dateAdded": added}}))
        .unwrap()
    }

    #[test]
    fn attachments_are_read_pdf_epub_html_text_then_oldest_first() {
        let children = vec![
            attachment(
                "HTMLAAA2",
                "text/html",
                "imported_url",
                "2020-01-01T00:00:00Z",
            ),
            attachment(
                "PDFBBBB3",
                "application/pdf",
                "imported_file",
                "2021-01-01T00:00:00Z",
            ),
            attachment(
                "TEXTCCC4",
                "text/plain; charset=utf-8",
                "imported_file",
                "2019-01-01T00:00:00Z",
            ),
            attachment(
                "PDFAAAA2",
                "application/pdf",
                "linked_file",
                "2021-01-01T00:00:00Z",
            ),
            attachment(
                "EPUBDDD5",
                "application/epub+zip",
                "imported_file",
                "2022-01-01T00:00:00Z",
            ),
            attachment(
                "PDFCCCC4",
                "application/pdf",
                "imported_file",
                "2018-01-01T00:00:00Z",
            ),
            attachment(
                "LINKEEE6",
                "text/html",
                "linked_url",
                "2017-01-01T00:00:00Z",
            ),
            attachment(
                "IMAGFFF7",
                "image/png",
                "imported_file",
                "2017-01-01T00:00:00Z",
            ),
        ];
        let keys: Vec<String> = reading_order(&children)
            .iter()
            .map(|s| s.attachment_key.to_string())
            .collect();
        assert_eq!(
            keys,
            ["PDFCCCC4", "PDFAAAA2", "PDFBBBB3", "EPUBDDD5", "HTMLAAA2", "TEXTCCC4"]
        );
    }

    #[test]
    fn headers_name_the_attachment_and_say_when_the_index_is_partial() {
        let mut s = TextSource::of(&attachment(
            "PDFAAAA2",
            "application/pdf",
            "imported_file",
            "",
        ))
        .unwrap();
        let partial = IndexStats {
            indexed_pages: Some(11),
            total_pages: Some(15),
            ..IndexStats::default()
        };
        assert!(partial.partial());
        assert_eq!(
            s.header(&partial),
            "=== PDF: T PDFAAAA2 [PDFAAAA2], 11 of 15 pages indexed ===\n\n"
        );
        let whole = IndexStats {
            indexed_chars: Some(40),
            total_chars: Some(40),
            ..IndexStats::default()
        };
        assert!(!whole.partial());
        s.title = format!("a\nb{}", "x".repeat(300));
        let h = s.header(&whole);
        assert!(
            h.starts_with("=== PDF: a b") && h.contains("x… [PDFAAAA2] ===\n\n"),
            "{h}"
        );
        let chars = IndexStats {
            indexed_chars: Some(10),
            total_chars: Some(25),
            ..IndexStats::default()
        };
        assert_eq!(
            chars.coverage().as_deref(),
            Some("10 of 25 characters indexed")
        );
        s.title = String::new();
        assert_eq!(
            s.header(&chars),
            "=== PDF [PDFAAAA2], 10 of 25 characters indexed ===\n\n"
        );
    }

    #[test]
    fn counts_are_read_tolerantly() {
        let w: WireFullText = serde_json::from_value(
            json!({"content": "x", "indexedPages": 2, "totalPages": "3", "indexedChars": null, "totalChars": "many"}),
        )
        .unwrap();
        assert_eq!(
            (
                w.indexed_pages,
                w.total_pages,
                w.indexed_chars,
                w.total_chars
            ),
            (Some(2), Some(3), None, None)
        );
    }
}
