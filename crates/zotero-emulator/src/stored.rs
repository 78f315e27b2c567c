//! What a library keeps of an attachment beside its JSON: the full text and the stored file.
//! The plain records sit below the per-library state (`libs.rs`) and the code that serves
//! them (`fulltext.rs`, `storage.rs`, `files.rs`), so that state imports none of that code.

/// The full text of one attachment as Zotero stores it: the text, what was indexed of the
/// document, and the library version at which it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullText {
    pub content: String,
    /// PDFs: the pages text was extracted from (Zotero stops at its page limit).
    pub indexed_pages: Option<u64>,
    /// PDFs: the pages of the document.
    pub total_pages: Option<u64>,
    /// Other documents: characters indexed, as Zotero counts them (JavaScript's `length`,
    /// UTF-16 code units).
    pub indexed_chars: Option<u64>,
    /// Other documents: characters in the document, counted the same way.
    pub total_chars: Option<u64>,
    /// The library version of the write that stored it (set by `LibraryView::set_fulltext`).
    pub version: u64,
}

/// JavaScript's `String.length`.
fn js_length(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

impl FullText {
    /// A PDF's text, extracted from `indexed_pages` of its `total_pages`.
    pub fn pdf(content: &str, indexed_pages: u64, total_pages: u64) -> FullText {
        FullText {
            content: content.to_string(),
            indexed_pages: Some(indexed_pages),
            total_pages: Some(total_pages),
            indexed_chars: None,
            total_chars: None,
            version: 0,
        }
    }

    /// The text of an HTML snapshot, an EPUB or a text file, all of it indexed.
    pub fn document(content: &str) -> FullText {
        let n = js_length(content);
        FullText::partial_document(content, n)
    }

    /// The first part of a longer document (Zotero indexes up to `fulltext.textMaxLength`
    /// characters): `content` is what was indexed, `total_chars` the document's length.
    pub fn partial_document(content: &str, total_chars: u64) -> FullText {
        FullText {
            content: content.to_string(),
            indexed_pages: None,
            total_pages: None,
            indexed_chars: Some(js_length(content)),
            total_chars: Some(total_chars),
            version: 0,
        }
    }
}

/// A file attached to an item (`storageFileItems`).
#[derive(Debug, Clone)]
pub(crate) struct ItemFile {
    pub(crate) hash: String,
    pub(crate) size: u64,
}
