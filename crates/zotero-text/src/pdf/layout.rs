//! From glyphs as drawn to a page's text: glyphs joined into runs along their baseline,
//! runs put in reading order by cutting the page along its widest gaps (columns before the
//! lines inside them), words spaced, lines broken, line-end hyphenation joined, text NFKC.
//! Works in the page's displayed frame, so a `/Rotate`d page reads as it is seen.

use super::interp::RawGlyph;
use crate::budget::Budget;
use crate::document::{Glyph, TextError};
use crate::nfkc::push_nfkc;

/// A gap along the baseline wider than this (in em) ends a run (a column gutter, a table
/// cell); narrower than `SPACE` it is inside a word.
const RUN_GAP: f64 = 1.2;
const SPACE: f64 = 0.17;
/// Leaving the baseline by more than this (in em) ends a run (a new line).
const OFF_LINE: f64 = 0.5;

/// A glyph in the displayed frame.
struct Placed {
    origin: (f64, f64),
    /// Unit vector along the baseline.
    dir: (f64, f64),
    len: f64,
    size: f64,
    bbox: [f64; 4],
}

/// A run of glyphs on one baseline, in stream order.
struct Run {
    glyphs: Vec<usize>,
    /// Whether a space goes before each glyph (by the gap before it).
    spaced: Vec<bool>,
    bbox: [f64; 4],
    /// The font size of its first glyph, on the page.
    size: f64,
}

/// The text of a page from its glyphs, and each glyph's byte range in it.
pub(crate) fn layout(
    raw: &[RawGlyph],
    rotation: u16,
    budget: &Budget,
) -> Result<(String, Vec<Glyph>), TextError> {
    let placed: Vec<Placed> = raw.iter().map(|g| display(g, rotation)).collect();
    let runs = runs(&placed, budget)?;
    let order = reading_order(&runs, budget)?;
    let mut out = Writer::default();
    let mut prev: Option<&Run> = None;
    for i in order {
        let Some(run) = runs.get(i) else { continue };
        if let Some(p) = prev {
            out.separate(same_line(p, run, &placed));
        }
        for (k, gi) in run.glyphs.iter().enumerate() {
            budget.tick()?;
            let Some(g) = raw.get(*gi) else { continue };
            if k == 0 {
                if let Some(first) = g.text.chars().next() {
                    out.join_hyphen(first);
                }
            } else if run.spaced.get(k).copied().unwrap_or(false) {
                out.space();
            }
            out.glyph(g);
        }
        prev = Some(run);
    }
    out.trim_end();
    Ok((out.text, out.glyphs))
}

/// A glyph's position in the displayed frame (the page turned by its `/Rotate`, clockwise).
fn display(g: &RawGlyph, rotation: u16) -> Placed {
    let turn = |(x, y): (f64, f64)| match rotation {
        90 => (y, -x),
        180 => (-x, -y),
        270 => (-y, x),
        _ => (x, y),
    };
    let origin = turn(g.origin);
    let adv = turn(g.adv);
    let up = turn(g.up);
    let size = (up.0 * up.0 + up.1 * up.1).sqrt().max(1e-6);
    let len = (adv.0 * adv.0 + adv.1 * adv.1).sqrt();
    // A zero-width glyph still has a direction: across its up vector.
    let dir = if len > 1e-9 {
        (adv.0 / len, adv.1 / len)
    } else {
        (up.1 / size, -up.0 / size)
    };
    let [x1, y1, x2, y2] = g.rect;
    let corners = [turn((x1, y1)), turn((x2, y2))];
    let bbox = [
        corners[0].0.min(corners[1].0),
        corners[0].1.min(corners[1].1),
        corners[0].0.max(corners[1].0),
        corners[0].1.max(corners[1].1),
    ];
    Placed {
        origin,
        dir,
        len,
        size,
        bbox,
    }
}

/// Where `b` sits after `a` ends, in `a`'s baseline frame: (along, across), in em of the
/// larger size.
fn offset(a: &Placed, b: &Placed) -> (f64, f64) {
    let end = (a.origin.0 + a.dir.0 * a.len, a.origin.1 + a.dir.1 * a.len);
    let d = (b.origin.0 - end.0, b.origin.1 - end.1);
    let size = a.size.max(b.size);
    (
        (d.0 * a.dir.0 + d.1 * a.dir.1) / size,
        (d.1 * a.dir.0 - d.0 * a.dir.1) / size,
    )
}

fn runs(placed: &[Placed], budget: &Budget) -> Result<Vec<Run>, TextError> {
    let mut runs: Vec<Run> = Vec::new();
    let mut last: Option<usize> = None;
    for (i, g) in placed.iter().enumerate() {
        budget.tick()?;
        let cont = last.and_then(|l| placed.get(l)).and_then(|p| {
            let same_dir = p.dir.0 * g.dir.0 + p.dir.1 * g.dir.1 > 0.9;
            let (along, across) = offset(p, g);
            (same_dir && across.abs() < OFF_LINE && along > -0.6 && along < RUN_GAP)
                .then_some(along > SPACE)
        });
        match (cont, runs.last_mut()) {
            (Some(spaced), Some(run)) => {
                run.glyphs.push(i);
                run.spaced.push(spaced);
                run.bbox = union(&run.bbox, &g.bbox);
            }
            _ => runs.push(Run {
                glyphs: vec![i],
                spaced: vec![false],
                bbox: g.bbox,
                size: g.size,
            }),
        }
        last = Some(i);
    }
    Ok(runs)
}

fn union(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// Whether `b` continues `a`'s line (a space between them) rather than starting a new line.
fn same_line(a: &Run, b: &Run, placed: &[Placed]) -> bool {
    let (Some(x), Some(y)) = (
        a.glyphs.last().and_then(|i| placed.get(*i)),
        b.glyphs.first().and_then(|i| placed.get(*i)),
    ) else {
        return false;
    };
    let (along, across) = offset(x, y);
    across.abs() < OFF_LINE && along > -0.6
}

/// Runs in reading order: the region is cut along its widest empty band, a vertical band
/// (between columns) read left then right, a horizontal one top then bottom; a horizontal
/// band at least a line high (a header above the text, a title above two columns) is cut
/// first. A region with no band keeps the stream's order. Iterative, so no input can
/// exhaust the stack.
fn reading_order(runs: &[Run], budget: &Budget) -> Result<Vec<usize>, TextError> {
    if !interleaved(runs) {
        return Ok((0..runs.len()).collect());
    }
    let mut sizes: Vec<f64> = runs.iter().map(|r| r.size).collect();
    sizes.sort_by(f64::total_cmp);
    let line = sizes.get(sizes.len() / 2).copied().unwrap_or(0.0);
    let mut out = Vec::with_capacity(runs.len());
    let mut stack: Vec<(Vec<usize>, u32)> = vec![((0..runs.len()).collect(), 0)];
    while let Some((mut items, depth)) = stack.pop() {
        budget.tick()?;
        let bbox = |i: &usize| runs.get(*i).map_or([0.0; 4], |r| r.bbox);
        let gx = if items.len() > 1 {
            widest_gap(&items, |i| (bbox(i)[0], bbox(i)[2]))
        } else {
            None
        };
        let gy = if items.len() > 1 {
            widest_gap(&items, |i| (bbox(i)[1], bbox(i)[3]))
        } else {
            None
        };
        let cut = match (gx, gy) {
            _ if depth > 200 => None,
            (Some(x), Some(y)) if x.0 >= y.0 && y.0 < line => Some((true, x.1)),
            (_, Some(y)) => Some((false, y.1)),
            (Some(x), None) => Some((true, x.1)),
            (None, None) => None,
        };
        match cut {
            Some((true, at)) => {
                let (left, right): (Vec<usize>, Vec<usize>) =
                    items.into_iter().partition(|i| bbox(i)[2] <= at);
                stack.push((right, depth + 1));
                stack.push((left, depth + 1));
            }
            Some((false, at)) => {
                let (top, bottom): (Vec<usize>, Vec<usize>) =
                    items.into_iter().partition(|i| bbox(i)[1] >= at);
                stack.push((bottom, depth + 1));
                stack.push((top, depth + 1));
            }
            None => {
                items.sort_unstable();
                out.extend(items);
            }
        }
    }
    Ok(out)
}

/// Whether the stream's own order is not a reading order: it goes back up the page (or
/// sideways along a line) between runs more than a column change or a superscript explains,
/// as when columns are drawn line by line. Otherwise the stream's order is kept, as pdf.js
/// (Zotero's reader) keeps it, running headers and footers where the file put them.
fn interleaved(runs: &[Run]) -> bool {
    let jumps = runs
        .windows(2)
        .filter(|w| matches!(w, [a, b] if b.bbox[3] > a.bbox[1]))
        .count();
    jumps > 3 && jumps * 4 > runs.len()
}

/// The widest empty band between the items' extents on one axis: (width, middle).
fn widest_gap(items: &[usize], extent: impl Fn(&usize) -> (f64, f64)) -> Option<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = items.iter().map(&extent).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<(f64, f64)> = None;
    let mut reach = f64::MIN;
    for (lo, hi) in spans {
        if reach > f64::MIN && lo > reach && best.is_none_or(|(w, _)| lo - reach > w) {
            best = Some((lo - reach, (lo + reach) / 2.0));
        }
        reach = reach.max(hi);
    }
    best
}

/// The page's text as it is written, with each glyph's byte range.
#[derive(Default)]
struct Writer {
    text: String,
    glyphs: Vec<Glyph>,
}

impl Writer {
    fn glyph(&mut self, g: &RawGlyph) {
        let text = if g.text == " " || g.text.trim().is_empty() {
            " "
        } else {
            g.text.as_str()
        };
        if text == " " && (self.text.is_empty() || self.text.ends_with([' ', '\n'])) {
            return;
        }
        let start = self.text.len();
        push_nfkc(&mut self.text, text);
        if self.text.len() > start {
            self.glyphs.push(Glyph {
                start: start as u32,
                end: self.text.len() as u32,
                rect: g.rect,
            });
        }
    }

    fn space(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
    }

    /// Between two runs: a space on the same line; else a line break, or nothing when the
    /// line ends in a hyphen that splits a word (the hyphen is dropped with its glyph).
    fn separate(&mut self, same_line: bool) {
        self.trim_end();
        if self.text.is_empty() {
            return;
        }
        if same_line {
            self.text.push(' ');
        } else {
            self.text.push('\n');
        }
    }

    /// Joins a word hyphenated across lines: called when the next run starts with `next`.
    fn join_hyphen(&mut self, next: char) {
        if !next.is_lowercase() || !self.text.ends_with('\n') {
            return;
        }
        let body = self.text.trim_end_matches('\n');
        let mut tail = body.chars().rev();
        let (Some(h), Some(before)) = (tail.next(), tail.next()) else {
            return;
        };
        if !matches!(h, '-' | '\u{2010}' | '\u{00ad}') || !before.is_alphabetic() {
            return;
        }
        let cut = body.len().saturating_sub(h.len_utf8());
        self.truncate(cut);
    }

    fn trim_end(&mut self) {
        let keep = self.text.trim_end_matches([' ', '\n']).len();
        self.truncate(keep);
    }

    /// Cuts the text to `len` bytes, dropping the glyphs past it.
    fn truncate(&mut self, len: usize) {
        self.text.truncate(len);
        while self.glyphs.last().is_some_and(|g| g.start as usize >= len) {
            self.glyphs.pop();
        }
        if let Some(g) = self.glyphs.last_mut() {
            g.end = g.end.min(len as u32);
        }
    }
}
