//! Annotation workflows (`zotero_create_annotation`): the PDF attachment resolved (an
//! attachment, or the one PDF of a regular item), its text read through a
//! [`DocumentSource`], the quote located on its glyphs (`zotero_text::locate`), and ONE
//! annotation item written through the write backend in use, exactly once
//! (`Library::create_annotation`, the path `zotero_create_note` takes).

use std::future::Future;
use std::pin::Pin;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::edit::{field_value, ObjectKind};
use zotero_api::model::WireObject;
use zotero_api::write::NewAnnotation;
use zotero_api::{Library, ObjectKey};
use zotero_text::locate::{locate, note_rect, LocateError, Located, Near};
use zotero_text::{Document, Rect};

use crate::error::ToolError;
use crate::service::ZoteroService;

/// What a [`DocumentSource`] answers.
pub type DocumentFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Document, ToolError>> + Send + 'a>>;

/// Where the text and glyph boxes of an attachment's file come from when not from the file
/// itself (`ZoteroService::attachment_document`: download or local copy, cache, then
/// `zotero_text::extract`): tests hand in the documents their PDFs would be.
pub trait DocumentSource: Send + Sync {
    /// The document of file attachment `attachment` of `lib`.
    fn document<'a>(
        &'a self,
        lib: &'a Library<'a>,
        attachment: &'a ObjectKey,
        cancel: &'a CancellationToken,
    ) -> DocumentFuture<'a>;
}

/// The annotation types this workflow writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewKind {
    Highlight,
    Underline,
    Note,
}

impl NewKind {
    pub fn name(self) -> &'static str {
        match self {
            NewKind::Highlight => "highlight",
            NewKind::Underline => "underline",
            NewKind::Note => "note",
        }
    }
}

/// What to write: checked by the tool already (a highlight has `text`, a note `page`).
#[derive(Debug, Clone)]
pub struct AnnotationRequest {
    /// A PDF attachment, or a regular item with exactly one.
    pub target: ObjectKey,
    pub kind: NewKind,
    pub text: Option<String>,
    pub page: Option<String>,
    pub comment: String,
    /// `#rrggbb`, lower case.
    pub color: String,
    pub tags: Vec<String>,
    pub dry_run: bool,
}

/// Where the annotation is (or would be), and the item when it was written.
#[derive(Debug, Clone)]
pub struct PlacedAnnotation {
    pub attachment_key: ObjectKey,
    pub page_index: u32,
    pub page_label: String,
    pub rects: Vec<Rect>,
    pub sort_index: String,
    /// The marked text as stored (highlight, underline).
    pub text: Option<String>,
    /// The new item; `None` in a dry run.
    pub written: Option<WireObject>,
}

/// Zotero's limits (`Zotero_Items`): longer text is cut by the server, a longer label or
/// position refused.
const MAX_TEXT_CHARS: usize = 7_500;
const MAX_PAGE_LABEL_BYTES: usize = 50;
const MAX_POSITION_BYTES: usize = 65_535;

impl ZoteroService {
    /// Places and writes one annotation (see the module comment). A quote not found, found
    /// twice, or an attachment that is not a PDF is refused before anything is written.
    pub async fn create_annotation(
        &self,
        lib: &Library<'_>,
        req: AnnotationRequest,
        cancel: &CancellationToken,
    ) -> Result<PlacedAnnotation, ToolError> {
        lib.require_write(false, cancel).await?;
        let (attachment, object) = pdf_attachment(lib, &req.target, cancel).await?;
        // The attachment as just read: its file (md5, name) needs no second read.
        let doc = match &self.documents {
            Some(source) => source.document(lib, &attachment, cancel).await?,
            None => self.document(lib, &object, cancel).await?,
        };
        let placed = place(&doc, &req)?;
        let position = position_json(placed.page_index, &placed.rects)?;
        if placed.page_label.len() > MAX_PAGE_LABEL_BYTES {
            return Err(ToolError::invalid(
                "page",
                format!(
                    "the page's label is longer than Zotero's {MAX_PAGE_LABEL_BYTES} bytes; \
                     nothing was written"
                ),
            ));
        }
        let text = match req.kind {
            NewKind::Note => None,
            _ => Some(stored_text(&placed.text)),
        };
        let new = NewAnnotation {
            parent: Some(attachment.clone()),
            annotation_type: req.kind.name().to_string(),
            text: text.clone(),
            comment: req.comment,
            color: req.color,
            page_label: placed.page_label.clone(),
            sort_index: placed.sort_index.clone(),
            position,
            tags: req.tags,
        };
        let written = if req.dry_run {
            None
        } else {
            Some(lib.create_annotation(&new, cancel).await?)
        };
        Ok(PlacedAnnotation {
            attachment_key: attachment,
            page_index: placed.page_index,
            page_label: placed.page_label,
            rects: placed.rects,
            sort_index: placed.sort_index,
            text,
            written,
        })
    }
}

/// The text Zotero would store: the page's words with one space between, cut at 7,500.
fn stored_text(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_TEXT_CHARS)
        .collect()
}

/// A coordinate as JavaScript's `JSON.stringify` writes it (`130`, not `130.0`).
fn js_number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// `annotationPosition`: a JSON string, within Zotero's limit.
fn position_json(page_index: u32, rects: &[Rect]) -> Result<String, ToolError> {
    let rects: Vec<Value> = rects
        .iter()
        .map(|r| Value::Array(r.iter().map(|v| js_number(*v)).collect()))
        .collect();
    let s = json!({"pageIndex": page_index, "rects": rects}).to_string();
    if s.len() > MAX_POSITION_BYTES {
        return Err(ToolError::invalid(
            "text",
            format!(
                "the passage covers {} lines, more than one annotation can hold in Zotero \
                 ({MAX_POSITION_BYTES} bytes of position); mark a shorter passage",
                rects.len()
            ),
        ));
    }
    Ok(s)
}

/// The quote located (or the note placed) on the document.
fn place(doc: &Document, req: &AnnotationRequest) -> Result<Located, ToolError> {
    let page = req.page.as_deref();
    let located = match &req.text {
        Some(text) => Some(locate(doc, text, page).map_err(refusal)?),
        None => None,
    };
    if req.kind != NewKind::Note {
        return located.ok_or_else(|| {
            ToolError::invalid("text", "'text' is required for a highlight or an underline")
        });
    }
    let hint = page.unwrap_or_default();
    let target = match &located {
        Some(l) => doc.pages.iter().find(|p| p.index == l.page_index),
        None => zotero_text::locate::find_page(doc, hint),
    };
    let Some(p) = target else {
        return Err(refusal(LocateError::NoSuchPage {
            hint: hint.to_string(),
            pages: doc.pages.len(),
        }));
    };
    let (rect, sort_index) = note_rect(p, located.as_ref());
    Ok(Located {
        page_index: p.index,
        page_label: p.label.clone(),
        start: 0,
        end: 0,
        text: String::new(),
        rects: vec![rect],
        sort_index,
    })
}

fn near_json(n: &Near) -> Value {
    json!({"page_label": n.page_label, "page_index": n.page_index,
           "similarity": n.similarity, "excerpt": n.excerpt})
}

/// A placement failure as the caller's error: what was wrong, and what the document has.
fn refusal(e: LocateError) -> ToolError {
    let nothing = "; nothing was written";
    match e {
        LocateError::NotFound { hint, closest } => {
            let first = closest.first().map(|n| {
                format!(
                    " The closest passage is on page {} ({:.0}% alike): \"{}\"",
                    n.page_label,
                    n.similarity * 100.0,
                    n.excerpt
                )
            });
            let on = hint.map(|h| format!(" on page {h}")).unwrap_or_default();
            ToolError::invalid(
                "text",
                format!(
                    "'text' was not found{on} in the PDF{nothing}. Quote it as the PDF \
                     reads (a few exact words are enough).{}",
                    first.unwrap_or_default()
                ),
            )
            .with_detail("closest", closest.iter().map(near_json).collect::<Vec<_>>())
        }
        LocateError::Ambiguous { places } => {
            let labels: Vec<&str> = places.iter().map(|p| p.page_label.as_str()).collect();
            ToolError::invalid(
                "text",
                format!(
                    "'text' is in the PDF {} times (pages {}){nothing}: give 'page', or \
                     quote more words so it is found once",
                    places.len(),
                    labels.join(", ")
                ),
            )
            .with_detail(
                "places",
                places
                    .iter()
                    .map(|p| {
                        json!({"page_label": p.page_label, "page_index": p.page_index,
                               "excerpt": p.text})
                    })
                    .collect::<Vec<_>>(),
            )
        }
        LocateError::NoSuchPage { hint, pages } => ToolError::invalid(
            "page",
            format!(
                "'page' {hint} is neither a page label nor a page number of this PDF \
                 ({pages} pages){nothing}"
            ),
        ),
        LocateError::EmptyQuote => ToolError::invalid(
            "text",
            format!("'text' has no letters to look for{nothing}"),
        ),
        LocateError::NoGlyphs { label } => ToolError::invalid(
            "text",
            format!(
                "page {label} of this file has no text positions (a scan without a text \
                 layer?), so no highlight can be placed{nothing}"
            ),
        ),
    }
}

/// The PDF attachment `key` names: itself, or the one PDF of a regular item.
async fn pdf_attachment(
    lib: &Library<'_>,
    key: &ObjectKey,
    cancel: &CancellationToken,
) -> Result<(ObjectKey, WireObject), ToolError> {
    let found = lib
        .read_objects(ObjectKind::Item, std::slice::from_ref(key), cancel)
        .await?;
    let Some(item) = found.get(key.as_str()) else {
        return Err(ToolError::not_found(format!(
            "'attachment_key': no item with key {key} in this library; \
                 zotero_get_item_children lists an item's attachments"
        ))
        .with_detail("field", "attachment_key"));
    };
    if field_value(&item.data, "deleted") == Value::Bool(true) {
        return Err(ToolError::invalid(
            "attachment_key",
            format!(
                "{key} is in the trash: restore it first with zotero_trash_items (restore: \
                 true); nothing was written"
            ),
        ));
    }
    match item.item_type().as_str() {
        "attachment" => check_pdf(item).map(|()| (key.clone(), item.clone())),
        "note" | "annotation" => Err(ToolError::invalid(
            "attachment_key",
            format!(
                "{key} is a {}, not a PDF: give the PDF attachment (zotero_get_item_children \
                 lists them)",
                item.item_type()
            ),
        )),
        _ => only_pdf_of(lib, key, cancel).await,
    }
}

fn is_pdf(a: &WireObject) -> bool {
    a.item_type() == "attachment"
        && a.data.get("linkMode").and_then(Value::as_str) != Some("linked_url")
        && a.data.get("contentType").and_then(Value::as_str) == Some("application/pdf")
}

fn check_pdf(a: &WireObject) -> Result<(), ToolError> {
    if is_pdf(a) {
        return Ok(());
    }
    let ct = a
        .data
        .get("contentType")
        .and_then(Value::as_str)
        .unwrap_or("");
    Err(ToolError::invalid(
        "attachment_key",
        format!(
            "{} is not a PDF file ({}): this tool places annotations on PDFs (EPUB and \
             snapshot annotations use CSS selectors); nothing was written",
            a.key(),
            if ct.is_empty() { "a link" } else { ct }
        ),
    )
    .with_detail("content_type", ct))
}

/// The one PDF among a regular item's attachments.
async fn only_pdf_of(
    lib: &Library<'_>,
    key: &ObjectKey,
    cancel: &CancellationToken,
) -> Result<(ObjectKey, WireObject), ToolError> {
    let children = lib.children(key, Some("attachment"), cancel).await?;
    let pdfs: Vec<&WireObject> = children
        .iter()
        .filter(|c| is_pdf(c) && field_value(&c.data, "deleted") != Value::Bool(true))
        .collect();
    match pdfs.as_slice() {
        [one] => ObjectKey::parse(&one.key())
            .map(|k| (k, (*one).clone()))
            .map_err(|_| {
                ToolError::upstream(format!(
                    "Zotero answered an attachment of {key} with a malformed key"
                ))
            }),
        [] => Err(ToolError::invalid(
            "attachment_key",
            format!("{key} has no PDF attachment to annotate; nothing was written"),
        )),
        many => Err(ToolError::invalid(
            "attachment_key",
            format!(
                "{key} has {} PDF attachments: give the one to annotate as attachment_key",
                many.len()
            ),
        )
        .with_detail(
            "pdf_attachments",
            many.iter()
                .map(|a| json!({"key": a.key(), "title": field_value(&a.data, "title")}))
                .collect::<Vec<_>>(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_written_as_javascript_writes_them() {
        let s = position_json(3, &[[130.0, 700.5, 180.0, 710.0]]).expect("fits");
        assert_eq!(s, r#"{"pageIndex":3,"rects":[[130,700.5,180,710]]}"#);
        let many = vec![[123.456, 700.123, 180.789, 710.321]; 3_000];
        assert!(position_json(0, &many).is_err());
    }

    #[test]
    fn stored_text_has_single_spaces_and_zoteros_length() {
        assert_eq!(
            stored_text(" study\nhyphenation  of "),
            "study hyphenation of"
        );
        assert_eq!(stored_text(&"a".repeat(8_000)).chars().count(), 7_500);
    }
}
