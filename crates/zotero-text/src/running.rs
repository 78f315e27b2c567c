//! Running headers and footers: lines that stand in the top or bottom band of most pages,
//! at the same height, with the same text once page numbers are folded (digits, roman
//! numerals). They are marked, never removed: the pages' text and every offset into it stay
//! as extracted. Computed from the glyphs' boxes, so a cached document is marked the same.

use std::collections::HashMap;

use crate::document::{Document, Page, PageStatus, Rect};

/// The top and bottom bands of a page, as a share of its height.
const BAND: f64 = 0.15;
/// How far (as a share of the page's height) a line may sit from the others of its kind.
const SAME_PLACE: f64 = 0.03;
/// The fewest pages a line must repeat on, and the share of the pages with text (running
/// heads often alternate between even and odd pages: each is on half of them).
const MIN_PAGES: usize = 3;
const MIN_SHARE: f64 = 0.4;

/// A byte range `[start, end)` of a page's text.
pub type Span = (u32, u32);

/// One line of a page in a band: its range, its folded text, its height on the page.
struct Line {
    page: usize,
    span: Span,
    key: (bool, String),
    /// Distance of its middle from the top of the displayed page, as a share of the height.
    at: f64,
}

/// For each page of `doc` (same order), the byte ranges of its text that are running
/// headers or footers, in text order; empty for pages without glyph boxes (EPUB, HTML).
pub fn running_lines(doc: &Document) -> Vec<Vec<Span>> {
    let mut out: Vec<Vec<Span>> = vec![Vec::new(); doc.pages.len()];
    let with_text = doc
        .pages
        .iter()
        .filter(|p| p.status == PageStatus::Text && !p.glyphs.is_empty())
        .count();
    let needed = MIN_PAGES.max((with_text as f64 * MIN_SHARE).ceil() as usize);
    if with_text < needed {
        return out;
    }
    let mut groups: HashMap<(bool, String), Vec<Line>> = HashMap::new();
    for (i, page) in doc.pages.iter().enumerate() {
        if page.status != PageStatus::Text {
            continue;
        }
        for line in band_lines(i, page) {
            groups.entry(line.key.clone()).or_default().push(line);
        }
    }
    for lines in groups.into_values() {
        let mut ats: Vec<f64> = lines.iter().map(|l| l.at).collect();
        ats.sort_by(f64::total_cmp);
        let median = ats.get(ats.len() / 2).copied().unwrap_or(0.0);
        let placed: Vec<&Line> = lines
            .iter()
            .filter(|l| (l.at - median).abs() <= SAME_PLACE)
            .collect();
        let mut pages: Vec<usize> = placed.iter().map(|l| l.page).collect();
        pages.dedup();
        if pages.len() < needed {
            continue;
        }
        for l in placed {
            if let Some(spans) = out.get_mut(l.page) {
                spans.push(l.span);
            }
        }
    }
    for spans in &mut out {
        spans.sort_unstable();
        spans.dedup();
    }
    out
}

/// The lines of `page` whose middle lies in its top or bottom band.
fn band_lines(index: usize, page: &Page) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut glyphs = page.glyphs.iter().peekable();
    let mut start = 0usize;
    for piece in page.text.split_inclusive('\n') {
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        let end = start + body.len();
        let mut bbox: Option<Rect> = None;
        while let Some(g) = glyphs.next_if(|g| (g.start as usize) < end) {
            if g.start as usize >= start {
                bbox = Some(bbox.map_or(g.rect, |b| union(&b, &g.rect)));
            }
        }
        if let Some(at) = bbox.and_then(|b| from_top(page, &b)) {
            let top = at < BAND;
            if top || at > 1.0 - BAND {
                let key = fold(body);
                if !key.is_empty() {
                    lines.push(Line {
                        page: index,
                        span: (start as u32, end as u32),
                        key: (top, key),
                        at,
                    });
                }
            }
        }
        start += piece.len();
    }
    lines
}

fn union(a: &Rect, b: &Rect) -> Rect {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// Where the middle of `r` sits below the top of the page as displayed (its `/Rotate`
/// applied), as a share of the displayed height; `None` for a page of no height.
fn from_top(page: &Page, r: &Rect) -> Option<f64> {
    let [x1, y1, x2, y2] = page.view_box;
    let (mid_x, mid_y) = ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0);
    let (dist, size) = match page.rotation {
        90 => (mid_x - x1, x2 - x1),
        180 => (mid_y - y1, y2 - y1),
        270 => (x2 - mid_x, x2 - x1),
        _ => (y2 - mid_y, y2 - y1),
    };
    (size > 0.0).then(|| dist / size)
}

/// A line's text with page numbers folded: every run of digits, and every word that is a
/// roman numeral, becomes `#`; white space is folded.
fn fold(line: &str) -> String {
    let mut out = String::new();
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if is_roman(word) {
            out.push('#');
            continue;
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('#');
                }
                digits = true;
            } else {
                out.push(c);
                digits = false;
            }
        }
    }
    out
}

/// Whether `word` is a roman numeral (i to mmmcmxcix, either case, not mixed).
fn is_roman(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if lower.is_empty()
        || !(word == lower || word == word.to_ascii_uppercase())
        || !lower.chars().all(|c| "ivxlcdm".contains(c))
    {
        return false;
    }
    let mut rest = lower.as_str();
    for (one, five, ten) in [
        ("m", "", ""),
        ("c", "d", "m"),
        ("x", "l", "c"),
        ("i", "v", "x"),
    ] {
        rest = digit(rest, one, five, ten);
    }
    rest.is_empty()
}

/// Strips one roman digit (0–9 of the place whose one, five and ten are given).
fn digit<'a>(s: &'a str, one: &str, five: &str, ten: &str) -> &'a str {
    if !five.is_empty() {
        for pair in [format!("{one}{ten}"), format!("{one}{five}")] {
            if let Some(rest) = s.strip_prefix(pair.as_str()) {
                return rest;
            }
        }
    }
    let mut rest = s;
    if !five.is_empty() {
        rest = rest.strip_prefix(five).unwrap_or(rest);
    }
    for _ in 0..3 {
        match rest.strip_prefix(one) {
            Some(r) => rest = r,
            None => break,
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_fold() {
        assert_eq!(
            fold("Journal of Tests  12 (2024) 117–130"),
            "Journal of Tests # (#) #–#"
        );
        assert_eq!(fold("xiv  Preface"), "# Preface");
        assert_eq!(fold("MIX of civil"), "# of civil");
        for r in ["i", "iv", "ix", "xiv", "XL", "mcmxcix", "iii"] {
            assert!(is_roman(r), "{r}");
        }
        for w in ["iiii", "civil", "vx", "Iv", "dim", "ic"] {
            assert!(!is_roman(w), "{w}");
        }
    }
}
