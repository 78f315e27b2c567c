//! `zotero_get_item_fulltext`'s workflow. Zotero's own index answers a plain read (`pages`
//! absent) as it always did; the attachment's file is read and extracted page by page when
//! `pages` is asked for, or when Zotero has no indexed text (a paper just added with its PDF).
//! An extracted document is cached on disk ([`cache`]), so reading it again neither downloads
//! nor extracts it; [`reader`] reads and caches it, for the search index's update too. The
//! extraction itself is [`crate::config::TextConfig::extract`] (`zotero_text::extract`;
//! tests hand in their own).

pub mod cache;
pub mod pages;
pub mod reader;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::error::NoFullText;
use zotero_api::fulltext::{DocumentKind, FullTextPage, PageRequest, Paged, Pager};
use zotero_api::model::WireObject;
use zotero_api::{Library, ObjectKey, ZoteroError};
use zotero_text::{Document, PageStatus};

use self::cache::status_name;
pub use self::reader::FileReader;
use crate::error::{ErrorCode, ToolError};
use crate::service::ZoteroService;

/// The most attachments of one item whose files are tried, in reading order.
const MAX_FILES_TRIED: usize = 3;

/// One page of an item's text: Zotero's index, or a file read page by page.
pub enum ItemText {
    Index(FullTextPage),
    File(FileText),
}

/// Text read from an attachment's file.
pub struct FileText {
    pub item_key: ObjectKey,
    pub item_type: String,
    pub title: String,
    pub attachment: Attachment,
    pub offset: u64,
    pub page: Paged,
    /// The document's pages.
    pub total_pages: u64,
    /// The pages this answer's text overlaps, in order.
    pub pages: Vec<PageSpan>,
}

/// The attachment a file's text is from.
pub struct Attachment {
    pub key: String,
    pub title: String,
    pub content_type: Option<String>,
    pub kind: DocumentKind,
}

/// Where one page's part (its header line, then its text) lies in the whole.
pub struct PageSpan {
    /// 1-based position in the document.
    pub number: u32,
    pub label: String,
    /// `text`, or why there is none: `no_text_layer`, `encrypted`, `damaged`.
    pub status: &'static str,
    pub offset: u64,
    pub end_offset: u64,
    /// Its running headers and footers (`zotero_text::running`): `[start, end)` in the
    /// whole text's characters, as `offset`.
    pub running: Vec<[u64; 2]>,
}

fn field<'a>(o: &'a WireObject, name: &str) -> Option<&'a str> {
    o.data
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

impl ZoteroService {
    /// One page of `key`'s text: Zotero's index unless `pages` is asked for or the index has
    /// none, else the file's pages (`pages` selects them, see [`pages`]).
    pub async fn item_text(
        &self,
        lib: Library<'_>,
        key: &ObjectKey,
        page: PageRequest,
        pages: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<ItemText, ToolError> {
        if pages.is_some() {
            return Ok(ItemText::File(
                self.file_text(lib, key, page, pages, cancel).await?,
            ));
        }
        let not_indexed = match lib.item_fulltext(key, page, cancel).await {
            Ok(text) => return Ok(ItemText::Index(text)),
            Err(
                e @ ZoteroError::NoFullText {
                    why: NoFullText::NotIndexed { .. },
                    ..
                },
            ) => e,
            Err(e) => return Err(e.into()),
        };
        match self.file_text(lib, key, page, None, cancel).await {
            Ok(text) => Ok(ItemText::File(text)),
            Err(file) if file.code == ErrorCode::NotFound => {
                // Neither Zotero's index nor the file: both say why.
                Err(ToolError::from(not_indexed).with_detail(
                    "file",
                    json!({"message": file.message, "details": file.details}),
                ))
            }
            Err(file) => Err(file),
        }
    }

    async fn file_text(
        &self,
        lib: Library<'_>,
        key: &ObjectKey,
        page: PageRequest,
        pages: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<FileText, ToolError> {
        let found = lib.file_candidates(key, cancel).await?;
        let mut failure = None;
        for att in found.attachments.iter().take(MAX_FILES_TRIED) {
            match self.document(&lib, att, cancel).await {
                Ok(doc) => return assemble(&found.item, att, &doc, page, pages),
                Err(e) if e.code == ErrorCode::NotFound => failure = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(failure.unwrap_or_else(|| ToolError::not_found("no file")))
    }

    /// The document of attachment `key` (read first, as a write depends on it), from the
    /// cache or its file: what an annotation is placed on.
    pub(crate) async fn attachment_document(
        &self,
        lib: &Library<'_>,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Document, ToolError> {
        let found = lib
            .read_objects(
                zotero_api::edit::ObjectKind::Item,
                std::slice::from_ref(key),
                cancel,
            )
            .await?;
        let Some(att) = found.get(key.as_str()) else {
            return Err(ToolError::not_found(format!(
                "no attachment with key {key} in this library"
            )));
        };
        self.document(lib, att, cancel).await
    }

    /// An attachment's document: from the cache, else its file read and extracted.
    pub(crate) async fn document(
        &self,
        lib: &Library<'_>,
        att: &WireObject,
        cancel: &CancellationToken,
    ) -> Result<Document, ToolError> {
        Ok(self.file_reader().read(lib, att, true, cancel).await?)
    }

    /// How this server reads attachments' files.
    pub fn file_reader(&self) -> FileReader {
        FileReader {
            extract: self.text.extract,
            max_file_bytes: self.text.max_file_bytes,
            linked_roots: self.linked_roots.clone(),
            cache: self.file_cache.clone(),
        }
    }
}

/// Byte ranges of `text` as character ranges of the whole text, `text` starting at `at`.
fn char_ranges(text: &str, spans: &[zotero_text::running::Span], at: u64) -> Vec<[u64; 2]> {
    let chars = |byte: u32| -> u64 {
        let end = usize::try_from(byte).unwrap_or(usize::MAX).min(text.len());
        text.get(..end).map_or(0, |t| t.chars().count() as u64)
    };
    spans
        .iter()
        .map(|&(s, e)| [at + chars(s), at + chars(e)])
        .collect()
}

/// The selected pages of `doc` as one text, paged; each under its label, a page without
/// text saying why. A selection with no text at all is an error naming the reason.
fn assemble(
    item: &WireObject,
    att: &WireObject,
    doc: &Document,
    page: PageRequest,
    spec: Option<&str>,
) -> Result<FileText, ToolError> {
    let chosen: Vec<usize> = match spec {
        Some(s) => {
            pages::select(&doc.pages, s).map_err(|e| ToolError::invalid("pages", e.to_string()))?
        }
        None => (0..doc.pages.len()).collect(),
    };
    let att_key = att.key();
    let selected: Vec<&zotero_text::Page> =
        chosen.iter().filter_map(|&i| doc.pages.get(i)).collect();
    let has_text =
        |p: &zotero_text::Page| p.status == PageStatus::Text && !p.text.trim().is_empty();
    if !selected.iter().any(|p| has_text(p)) {
        let why = selected
            .iter()
            .map(|p| p.status)
            .find(|s| *s != PageStatus::Text)
            .unwrap_or(PageStatus::NoTextLayer);
        let reason = status_name(why);
        return Err(ToolError::not_found(format!(
                "the pages read of attachment {att_key} have no text ({reason}): a scan needs OCR, an encrypted or damaged file must be opened and saved again in a PDF reader"
            ),
        )
        .with_detail("attachment_key", att_key.as_str())
        .with_detail("reason", reason));
    }
    let marks = zotero_text::running::running_lines(doc);
    let mut pager = Pager::new(page);
    let mut spans = Vec::with_capacity(selected.len());
    for (n, p) in selected.iter().enumerate() {
        if n > 0 {
            pager.push("\n\n");
        }
        let offset = pager.position();
        pager.push(&pages::header(&p.label));
        let mut running = Vec::new();
        let status = if has_text(p) {
            let at = pager.push(&p.text).start;
            let page_marks = usize::try_from(p.index)
                .ok()
                .and_then(|i| marks.get(i))
                .map_or(&[][..], Vec::as_slice);
            running = char_ranges(&p.text, page_marks, at);
            "text"
        } else {
            let why = match p.status {
                PageStatus::Text => "no_text_layer",
                s => status_name(s),
            };
            pager.push(&format!("[no text: {why}]"));
            why
        };
        spans.push(PageSpan {
            number: p.index.saturating_add(1),
            label: p.label.clone(),
            status,
            offset,
            end_offset: pager.position(),
            running,
        });
    }
    let paged = pager.finish();
    let end = paged.next_offset.unwrap_or(paged.total_chars);
    spans.retain(|s| s.end_offset > page.offset && s.offset < end.max(page.offset + 1));
    Ok(FileText {
        item_key: ObjectKey::parse(&item.key()).map_err(|e| ToolError::internal(e.to_string()))?,
        item_type: item.item_type(),
        title: field(item, "title").unwrap_or_default().to_string(),
        attachment: Attachment {
            key: att_key,
            title: field(att, "title")
                .or_else(|| field(att, "filename"))
                .unwrap_or_default()
                .to_string(),
            content_type: field(att, "contentType").map(str::to_string),
            kind: field(att, "contentType").map_or(DocumentKind::Other, DocumentKind::of),
        },
        offset: page.offset,
        page: paged,
        total_pages: doc.pages.len() as u64,
        pages: spans,
    })
}
