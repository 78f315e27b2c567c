//! The extractors, one per document kind, behind one entry point, and the sniffing of a
//! file's kind from its first bytes.

use crate::budget::Budget;
use crate::document::{Document, DocumentKind, Limits, TextError};

/// Reads a file's text, page by page, within `limits`.
pub fn extract(bytes: &[u8], kind: DocumentKind, limits: &Limits) -> Result<Document, TextError> {
    if bytes.len() > limits.max_input_bytes {
        return Err(TextError::TooLarge {
            size: bytes.len(),
            limit: limits.max_input_bytes,
        });
    }
    let budget = Budget::new(limits);
    let pages = match kind {
        DocumentKind::Pdf => crate::pdf::extract(bytes, &budget)?,
        DocumentKind::Epub => crate::epub::extract(bytes, &budget)?,
        DocumentKind::Html => vec![crate::html::extract(bytes, &budget)?],
        DocumentKind::Text => vec![crate::plain::extract(bytes)],
    };
    Ok(Document { kind, pages })
}

/// The kind of a file from its first bytes, when they say it: `%PDF-` (within the first KiB,
/// as readers accept), a zip whose first entry is EPUB's `mimetype`, or an HTML start. Plain
/// text has no signature: `None` leaves the choice to the caller's content type.
pub fn sniff(bytes: &[u8]) -> Option<DocumentKind> {
    let head = bytes.get(..1024).unwrap_or(bytes);
    if head.windows(5).any(|w| w == b"%PDF-") {
        return Some(DocumentKind::Pdf);
    }
    if bytes.starts_with(b"PK\x03\x04")
        && bytes
            .get(30..58)
            .is_some_and(|name| name == b"mimetypeapplication/epub+zip")
    {
        return Some(DocumentKind::Epub);
    }
    let start = String::from_utf8_lossy(head.get(..256).unwrap_or(head)).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return Some(DocumentKind::Html);
    }
    None
}
