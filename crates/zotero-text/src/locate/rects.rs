//! From a byte range of a page's text to what Zotero stores: one rectangle per line run of
//! the quoted glyphs, and the `annotationSortIndex`, both computed as Zotero's PDF reader
//! computes them (zotero/reader `src/pdf/selection.js`: `getRectsFromChars`, `getSortIndex`).

use crate::document::{Glyph, Page, Rect};

/// One line of a page: the glyphs `first..=last` (indexes in `Page::glyphs`) and the line's
/// vertical extent, from all its glyph boxes.
#[derive(Debug, Clone, Copy)]
struct Line {
    first: usize,
    last: usize,
    y1: f64,
    y2: f64,
}

/// Whether `next` starts a new line after `prev`: the extractor put a line break between
/// them, or the glyphs do not share a baseline band (a new line, a column, a float), or the
/// text runs back to the left.
fn breaks_line(page: &Page, prev: &Glyph, next: &Glyph) -> bool {
    let between = page
        .text
        .get(prev.end as usize..next.start as usize)
        .unwrap_or("");
    if between.contains('\n') {
        return true;
    }
    let [px1, py1, _, py2] = prev.rect;
    let [nx1, ny1, _, ny2] = next.rect;
    let overlap = py2.min(ny2) - py1.max(ny1);
    let smaller = (py2 - py1).min(ny2 - ny1).max(0.0);
    if overlap <= smaller * 0.5 {
        return true;
    }
    // Back to the left by more than a glyph's height: a new line that kept the band.
    nx1 < px1 - smaller.max(1.0)
}

/// The page's glyphs split into lines, in text order.
fn lines(page: &Page) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut prev: Option<&Glyph> = None;
    for (i, g) in page.glyphs.iter().enumerate() {
        let new = match prev {
            None => true,
            Some(p) => breaks_line(page, p, g),
        };
        match out.last_mut() {
            Some(line) if !new => {
                line.last = i;
                line.y1 = line.y1.min(g.rect[1]);
                line.y2 = line.y2.max(g.rect[3]);
            }
            _ => out.push(Line {
                first: i,
                last: i,
                y1: g.rect[1],
                y2: g.rect[3],
            }),
        }
        prev = Some(g);
    }
    out
}

/// Glyph indexes whose text overlaps `start..end` of the page's text.
pub(crate) fn glyphs_of(page: &Page, start: usize, end: usize) -> Option<(usize, usize)> {
    let mut hit = page
        .glyphs
        .iter()
        .enumerate()
        .filter(|(_, g)| (g.start as usize) < end && (g.end as usize) > start)
        .map(|(i, _)| i);
    let first = hit.next()?;
    let last = hit.next_back().unwrap_or(first);
    Some((first, last))
}

/// Zotero rounds every coordinate to 3 decimals (`parseFloat(value.toFixed(3))`).
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// One rectangle per line the glyphs `first..=last` run over: x from the first to the last
/// quoted glyph of that line, y the line's own extent (so a highlight is as tall as its
/// line, whatever letters it covers).
pub(crate) fn line_rects(page: &Page, first: usize, last: usize) -> Vec<Rect> {
    let mut out = Vec::new();
    for line in lines(page) {
        let from = line.first.max(first);
        let to = line.last.min(last);
        if from > to {
            continue;
        }
        let Some(run) = page.glyphs.get(from..=to) else {
            continue;
        };
        let x1 = run.iter().map(|g| g.rect[0]).fold(f64::INFINITY, f64::min);
        let x2 = run
            .iter()
            .map(|g| g.rect[2])
            .fold(f64::NEG_INFINITY, f64::max);
        out.push([round3(x1), round3(line.y1), round3(x2), round3(line.y2)]);
    }
    out
}

/// The distance between two rectangles (`rectsDist`: 0 when they touch or overlap).
fn rects_dist(a: &Rect, b: &Rect) -> f64 {
    let [ax1, ay1, ax2, ay2] = *a;
    let [bx1, by1, bx2, by2] = *b;
    let left = bx2 < ax1;
    let right = ax2 < bx1;
    let bottom = by2 < ay1;
    let top = ay2 < by1;
    match (left, right, bottom, top) {
        (true, _, _, true) => (ax1 - bx2).hypot(ay2 - by1),
        (true, _, true, _) => (ax1 - bx2).hypot(ay1 - by2),
        (_, true, true, _) => (ax2 - bx1).hypot(ay1 - by2),
        (_, true, _, true) => (ax2 - bx1).hypot(ay2 - by1),
        (true, ..) => ax1 - bx2,
        (_, true, ..) => bx1 - ax2,
        (_, _, true, _) => ay1 - by2,
        (.., true) => by1 - ay2,
        _ => 0.0,
    }
}

/// The first `width` characters of `n` in decimal, left-padded with zeros (JavaScript's
/// `n.toString().slice(0, width).padStart(width, '0')`).
fn field(n: u64, width: usize) -> String {
    let s = n.to_string();
    let cut: String = s.chars().take(width).collect();
    format!("{cut:0>width$}")
}

/// Zotero's `annotationSortIndex` of a PDF annotation, `ppppp|oooooo|ttttt`: the page index;
/// the index of the page's glyph nearest the rectangle chosen below; the distance from the
/// page's top to that rectangle's top, in whole points.
///
/// The rectangle is the one `getTopMostRectFromPosition` picks. Its comment says "the highest
/// y2" but it sorts on index 2, which is x2: the rectangle reaching furthest right. Zotero
/// sorts its own annotations by this index, so it is followed as written; for one-line
/// quotes (the common case) both readings agree.
pub(crate) fn sort_index(page: &Page, rects: &[Rect]) -> String {
    let mut chosen: Option<&Rect> = None;
    for r in rects {
        // Stable descending sort then [0]: the first of the largest.
        if chosen.is_none_or(|c| r[2] > c[2]) {
            chosen = Some(r);
        }
    }
    let (offset, top) = match chosen {
        Some(rect) => {
            let mut best = f64::INFINITY;
            let mut offset = 0usize;
            for (i, g) in page.glyphs.iter().enumerate() {
                let d = rects_dist(&g.rect, rect);
                if d < best {
                    best = d;
                    offset = i;
                }
            }
            let height = page.view_box[3] - page.view_box[1];
            (offset, (height - rect[3]).max(0.0).floor())
        }
        None => (0, 0.0),
    };
    format!(
        "{}|{}|{}",
        field(u64::from(page.index), 5),
        field(offset as u64, 6),
        field(top as u64, 5)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_index_fields_are_cut_then_padded_like_javascript() {
        assert_eq!(field(7, 5), "00007");
        assert_eq!(field(1234567, 6), "123456");
    }

    #[test]
    fn rects_dist_is_zero_inside_and_euclidean_at_corners() {
        let a = [0.0, 0.0, 10.0, 10.0];
        assert_eq!(rects_dist(&a, &[2.0, 2.0, 3.0, 3.0]), 0.0);
        assert_eq!(rects_dist(&a, &[13.0, 14.0, 15.0, 15.0]), 5.0);
        assert_eq!(rects_dist(&a, &[12.0, 2.0, 15.0, 3.0]), 2.0);
    }
}
