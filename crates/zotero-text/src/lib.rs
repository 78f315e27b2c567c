//! Text from an attachment's own bytes, page by page: PDF, EPUB, HTML snapshots and plain
//! text or Markdown, each page with its index, its printed label and the boxes of its glyphs
//! (so an annotation can be placed exactly on quoted words). No I/O of its own: the caller
//! hands the bytes in and gets a [`Document`]; every extraction is bounded by [`Limits`].
//!
//! - `document`: the answer's types (the contract with the server).
//! - `extract`: the one entry point and `sniff`; `pdf/` (objects through lopdf, our own
//!   content interpreter and layout), `epub`, `html`, `plain`: the extractors.
//! - `locate`: finding a quoted passage in a document and the rectangles that cover it, in
//!   Zotero's own position format.
//! - `running`: the running headers and footers of a document's pages, marked as ranges of
//!   their text (never removed).

pub mod document;
pub mod extract;
pub mod locate;
pub mod running;

mod budget;
mod epub;
mod html;
mod nfkc;
mod pdf;
mod plain;

pub use document::{Document, DocumentKind, Glyph, Limits, Page, PageStatus, Rect, TextError};
pub use extract::{extract, sniff};
