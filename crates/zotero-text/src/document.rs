//! What an extraction answers: a document of pages, each with its index, label, status, text
//! and glyph boxes. These types are the contract between the extractors and the server.

/// The kind of file, chosen by the caller from the attachment's content type (or sniffed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Pdf,
    Epub,
    /// A web page snapshot (HTML).
    Html,
    /// Plain text or Markdown.
    Text,
}

/// Bounds on one extraction: past any of them it stops with a [`TextError`], never a partial
/// success passed off as whole.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest input accepted, in bytes.
    pub max_input_bytes: usize,
    /// The most bytes any one decoded stream (or the sum of an EPUB's entries) may grow to.
    pub max_decoded_bytes: usize,
    /// The most bytes all of a PDF's pages' content streams and forms may decode to together
    /// (5,000 pages of just under `max_decoded_bytes` each would take minutes).
    pub max_total_decoded_bytes: usize,
    /// The most glyphs (characters of text with a box) in the whole document: each costs
    /// ~45 bytes in the answer.
    pub max_glyphs: usize,
    /// The most pages read.
    pub max_pages: usize,
    /// Wall time for the whole extraction.
    pub max_duration: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_input_bytes: 256 * 1024 * 1024,
            max_decoded_bytes: 128 * 1024 * 1024,
            max_total_decoded_bytes: 512 * 1024 * 1024,
            max_glyphs: 2_000_000,
            max_pages: 5_000,
            max_duration: std::time::Duration::from_secs(20),
        }
    }
}

/// A rectangle in PDF user space (origin bottom left, points), as Zotero's
/// `annotationPosition.rects` stores it: `[x1, y1, x2, y2]` with `x1 <= x2`, `y1 <= y2`.
pub type Rect = [f64; 4];

/// Why a page has no text, or that it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageStatus {
    /// The page's text was read.
    Text,
    /// The page has no text layer (a scan): nothing to read without OCR.
    NoTextLayer,
    /// The file is encrypted and could not be opened for reading.
    Encrypted,
    /// The page's content could not be parsed.
    Damaged,
}

/// One glyph (or ligature) of a page's text: the byte range of `Page::text` it produced and its
/// box. Characters the extractor added (a space between words, a line break, a joined
/// hyphenation) have no glyph.
#[derive(Debug, Clone, PartialEq)]
pub struct Glyph {
    /// Byte offset in `Page::text` where this glyph's text starts.
    pub start: u32,
    /// Byte offset in `Page::text` just past this glyph's text.
    pub end: u32,
    /// The glyph's box in PDF user space (for EPUB/HTML/text: none are produced).
    pub rect: Rect,
}

/// One page: for a PDF, one page of the file; for EPUB, HTML and text, one page is one
/// section (EPUB: a spine item; HTML and text: the whole file), with no glyphs.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// 0-based index in the document (Zotero's `pageIndex`).
    pub index: u32,
    /// The printed label (the PDF's `/PageLabels`, e.g. `iv`, `217`); else `index + 1`.
    pub label: String,
    pub status: PageStatus,
    /// The page's text in reading order, NFKC-normalised, line-end hyphenation joined.
    pub text: String,
    /// The glyphs in the order of `text`.
    pub glyphs: Vec<Glyph>,
    /// The page's visible box (CropBox, else MediaBox) in user space; `[0,0,0,0]` when not a PDF.
    pub view_box: Rect,
    /// The page's `/Rotate`, in degrees (0, 90, 180, 270).
    pub rotation: u16,
}

/// The text of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub kind: DocumentKind,
    pub pages: Vec<Page>,
}

/// Why a file gave no document at all (per-page failures are a page's [`PageStatus`]).
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error("the file is {size} bytes, over the {limit}-byte limit for reading text")]
    TooLarge { size: usize, limit: usize },
    #[error("reading the file's text took longer than {seconds} s and was stopped")]
    TimedOut { seconds: u64 },
    #[error("a stream of the file decodes to more than {limit} bytes (a decompression bomb?)")]
    DecodedTooLarge { limit: usize },
    /// All the pages' content together decodes to more than [`Limits::max_total_decoded_bytes`].
    #[error("the file's pages decode to more than {limit} bytes in all (a decompression bomb?)")]
    ContentTooLarge { limit: usize },
    /// More text than [`Limits::max_glyphs`].
    #[error("the file has more than {limit} characters of text, over the limit for reading it")]
    TooMuchText { limit: usize },
    /// A PDF made of more objects and values (numbers, names, strings, arrays…) than can be
    /// loaded within the memory bound.
    #[error("the PDF is made of more than {limit} objects and values ({values} counted), too many to read its text within the memory bound")]
    TooManyObjects { values: usize, limit: usize },
    #[error("the file is encrypted with a password; open it in Zotero to read it")]
    Encrypted,
    #[error("the file is damaged and has no readable structure: {reason}")]
    Damaged { reason: String },
    #[error("reading text from this kind of file is not supported yet")]
    Unsupported,
    /// More pages (or EPUB spine items, or zip entries) than [`Limits::max_pages`] allows.
    #[error("the file has {pages} pages or sections, over the limit of {limit}")]
    TooManyPages { pages: usize, limit: usize },
}
