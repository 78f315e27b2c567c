//! Finding a quoted passage in a [`crate::Document`] and the rectangles that cover its glyphs,
//! in Zotero's annotation position format.
//!
//! The quote and each page's text are compared after one normalisation (`norm`): case,
//! whitespace, hyphenation, ligatures and quote styles do not matter. A match maps back to
//! the page text's bytes, from there to the glyphs, and from the glyphs to one rectangle per
//! line with Zotero's sort index (`rects`). Not found: the closest passages (`near`).

mod near;
mod norm;
mod rects;

pub use near::{Near, MAX_EXCERPT_CHARS};

use crate::document::{Document, Page, PageStatus, Rect};
use near::{best_window, excerpt, round2};
use norm::{find_all, normalise, normalise_chars};

/// Zotero's note icon is a square of this side, in points (`PDF_NOTE_DIMENSIONS`).
pub const NOTE_SIZE: f64 = 22.0;

/// How many closest passages a refusal lists.
pub const MAX_NEAR: usize = 3;

/// Where a quote is: its page, its bytes in the page's text, and what Zotero stores.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// 0-based (`annotationPosition.pageIndex`).
    pub page_index: u32,
    /// The printed label (`annotationPageLabel`).
    pub page_label: String,
    /// Byte range of the passage in the page's text.
    pub start: usize,
    pub end: usize,
    /// The passage as the page's text has it.
    pub text: String,
    /// One rectangle per line, `[x1, y1, x2, y2]` in PDF user space.
    pub rects: Vec<Rect>,
    /// `annotationSortIndex`, `ppppp|oooooo|ttttt`.
    pub sort_index: String,
}

/// Why a quote could not be placed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LocateError {
    #[error("the quote has no letters to look for")]
    EmptyQuote,
    #[error("no page is labelled or numbered '{hint}' (the document has {pages} pages)")]
    NoSuchPage { hint: String, pages: usize },
    #[error("the quote was not found{}", on_page(.hint))]
    NotFound {
        hint: Option<String>,
        closest: Vec<Near>,
    },
    #[error("the quote was found {} times; give the page to say which", .places.len())]
    Ambiguous { places: Vec<Located> },
    #[error("page {label} has no glyph positions to place an annotation on (not a PDF with text)")]
    NoGlyphs { label: String },
}

fn on_page(hint: &Option<String>) -> String {
    hint.as_deref()
        .map(|h| format!(" on page {h}"))
        .unwrap_or_default()
}

/// The page a hint names: a page whose label is the hint, else the hint as a 1-based
/// page number. A label wins because that is what the reader sees printed.
pub fn find_page<'d>(doc: &'d Document, hint: &str) -> Option<&'d Page> {
    let hint = hint.trim();
    if let Some(p) = doc.pages.iter().find(|p| p.label == hint) {
        return Some(p);
    }
    let n: usize = hint.parse().ok()?;
    doc.pages.get(n.checked_sub(1)?)
}

/// Finds `quote` in `doc` (only on the page `page` names, when given): exactly one place, or
/// why not.
pub fn locate(doc: &Document, quote: &str, page: Option<&str>) -> Result<Located, LocateError> {
    let needle = normalise_chars(quote);
    if needle.is_empty() {
        return Err(LocateError::EmptyQuote);
    }
    let pages: Vec<&Page> = match page {
        Some(hint) => vec![find_page(doc, hint).ok_or_else(|| LocateError::NoSuchPage {
            hint: hint.to_string(),
            pages: doc.pages.len(),
        })?],
        None => doc.pages.iter().collect(),
    };
    let mut places = Vec::new();
    for p in pages.iter().filter(|p| p.status == PageStatus::Text) {
        let hay = normalise(&p.text);
        for at in find_all(&hay, &needle) {
            let (Some(first), Some(last)) = (hay.get(at), hay.get(at + needle.len() - 1)) else {
                continue;
            };
            places.push(place(p, first.start, last.end)?);
        }
    }
    match places.len() {
        0 => Err(LocateError::NotFound {
            hint: page.map(str::to_string),
            closest: closest(doc, &needle),
        }),
        1 => places.pop().ok_or(LocateError::EmptyQuote),
        _ => Err(LocateError::Ambiguous { places }),
    }
}

/// The bytes `start..end` of page `p` as Zotero would store them.
fn place(p: &Page, start: usize, end: usize) -> Result<Located, LocateError> {
    let no_glyphs = || LocateError::NoGlyphs {
        label: p.label.clone(),
    };
    let (first, last) = rects::glyphs_of(p, start, end).ok_or_else(no_glyphs)?;
    let rects = rects::line_rects(p, first, last);
    if rects.is_empty() {
        return Err(no_glyphs());
    }
    Ok(Located {
        page_index: p.index,
        page_label: p.label.clone(),
        start,
        end,
        text: p.text.get(start..end).unwrap_or("").to_string(),
        sort_index: rects::sort_index(p, &rects),
        rects,
    })
}

/// The best passage of each page, the [`MAX_NEAR`] most similar first.
fn closest(doc: &Document, needle: &[char]) -> Vec<Near> {
    let mut found: Vec<Near> = doc
        .pages
        .iter()
        .filter(|p| p.status == PageStatus::Text)
        .filter_map(|p| {
            let hay = normalise(&p.text);
            let (similarity, a, b) = best_window(&hay, needle)?;
            (similarity > 0.0).then(|| Near {
                page_index: p.index,
                page_label: p.label.clone(),
                similarity: round2(similarity),
                excerpt: excerpt(&p.text, &hay, a, b),
            })
        })
        .collect();
    found.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    found.truncate(MAX_NEAR);
    found
}

/// Where Zotero puts a note annotation: at the top right of a located passage
/// (`pdf-position-mapper`), else the centre of the page (the reader's keyboard shortcut),
/// a [`NOTE_SIZE`] square; with its sort index.
pub fn note_rect(page: &Page, at: Option<&Located>) -> (Rect, String) {
    let rect = match at.filter(|l| !l.rects.is_empty()) {
        Some(l) => {
            let right = l
                .rects
                .iter()
                .map(|r| r[2])
                .fold(f64::NEG_INFINITY, f64::max);
            let top = l
                .rects
                .iter()
                .map(|r| r[3])
                .fold(f64::NEG_INFINITY, f64::max);
            [right - NOTE_SIZE, top - NOTE_SIZE, right, top]
        }
        None => {
            let [x1, y1, x2, y2] = page.view_box;
            let (cx, cy) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
            let h = NOTE_SIZE / 2.0;
            [cx - h, cy - h, cx + h, cy + h]
        }
    };
    let sort = rects::sort_index(page, std::slice::from_ref(&rect));
    (rect, sort)
}

#[cfg(test)]
mod tests;
