//! A draft read once, on a blocking thread: its format, its citations and quotations with
//! where each is (line, column, character offset), and its `.bib` file's entries.

use std::collections::HashMap;

use super::cites::{self, Cite, Format};
use super::library::{self, BibEntry};
use super::quotes::{self, Quote};
use super::work::Work;

/// (line, column, character offset), each from 1 but the offset (from 0).
pub type Place = (u64, u64, u64);

/// What was read of a draft.
pub struct Parsed {
    pub format: Format,
    pub cites: Vec<Cite>,
    /// Where each of `cites` starts.
    pub cite_at: Vec<Place>,
    pub quotes: Vec<Quote>,
    /// Where each of `quotes` starts.
    pub quote_at: Vec<Place>,
    /// The `.bib` file's entries by key.
    pub bib: Option<HashMap<String, BibEntry>>,
}

/// Reads `text` (as `format`, detected when `None`) and `bib`; once `work` is cancelled, what
/// it answers is partial (the caller answers the cancellation).
pub fn parse(text: &str, format: Option<Format>, bib: Option<&str>, work: &Work) -> Parsed {
    let format = format.unwrap_or_else(|| Format::detect_with(text, work));
    let cites = cites::parse_with(text, format, work);
    let quotes = quotes::find_with(text, format, &cites, work);
    if work.cancelled() {
        // What was read is dropped: the caller answers the cancellation.
        return Parsed {
            format,
            cites: Vec::new(),
            cite_at: Vec::new(),
            quotes: Vec::new(),
            quote_at: Vec::new(),
            bib: None,
        };
    }
    let positions = Positions::new(text, work);
    let cite_at = cites
        .iter()
        .map(|c| positions.of(text, c.start, work))
        .collect();
    let quote_at = quotes
        .iter()
        .map(|q| positions.of(text, q.start, work))
        .collect();
    let bib = bib.map(|b| {
        work.go(b.len());
        library::parse_bib(b)
            .into_iter()
            .map(|e| (e.key.clone(), e))
            .collect()
    });
    Parsed {
        format,
        cites,
        cite_at,
        quotes,
        quote_at,
        bib,
    }
}

/// Byte offset → line, column and character offset, for a text read once: the character
/// offset of each line's start and of a mark every [`MARK_BYTES`] bytes, so that a place
/// costs a binary search and the characters from the mark before it.
struct Positions {
    /// Byte offset of each line's start.
    lines: Vec<usize>,
    /// (byte offset, character offset) of each line's start and of each mark, in order.
    marks: Vec<(usize, usize)>,
}

/// The most bytes counted through for one place.
const MARK_BYTES: usize = 4_096;

impl Positions {
    fn new(text: &str, work: &Work) -> Positions {
        work.go(text.len());
        let mut lines = vec![0];
        let mut marks = vec![(0, 0)];
        let mut next_mark = MARK_BYTES;
        for (chars, (at, c)) in text.char_indices().enumerate() {
            if at >= next_mark {
                marks.push((at, chars));
                next_mark = at + MARK_BYTES;
            }
            if c == '\n' {
                lines.push(at + 1);
                marks.push((at + 1, chars + 1));
                next_mark = at + 1 + MARK_BYTES;
            }
        }
        Positions { lines, marks }
    }

    /// The character offset of byte `at`.
    fn chars(&self, text: &str, at: usize, work: &Work) -> usize {
        let n = self.marks.partition_point(|(b, _)| *b <= at);
        let (byte, chars) = n
            .checked_sub(1)
            .and_then(|n| self.marks.get(n))
            .copied()
            .unwrap_or((0, 0));
        work.go(at - byte);
        chars + text.get(byte..at).map_or(0, |s| s.chars().count())
    }

    /// (line, column, character offset) of byte `at`.
    fn of(&self, text: &str, at: usize, work: &Work) -> Place {
        let line = self.lines.partition_point(|s| *s <= at).max(1);
        let line_start = self.lines.get(line - 1).copied().unwrap_or(0);
        let offset = self.chars(text, at, work);
        let column = offset - self.chars(text, line_start, work) + 1;
        (line as u64, column as u64, offset as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_lines_columns_and_characters() {
        let t = "ab\nçd [@x]\n";
        let w = Work::unlimited();
        let p = Positions::new(t, &w);
        let at = t.find('[').unwrap();
        assert_eq!(p.of(t, at, &w), (2, 4, 6));
        assert_eq!(p.of(t, 0, &w), (1, 1, 0));
    }

    #[test]
    fn positions_in_long_lines_are_counted_from_marks() {
        let t = format!("{}\n{}é\nz", "aé漢🙂 ".repeat(3_000), "b".repeat(9_000));
        let w = Work::unlimited();
        let p = Positions::new(&t, &w);
        for (at, _) in t.char_indices().step_by(97).chain([(t.len(), ' ')]) {
            let line = t[..at].matches('\n').count() + 1;
            let start = t[..at].rfind('\n').map_or(0, |n| n + 1);
            let want = (
                line as u64,
                t[start..at].chars().count() as u64 + 1,
                t[..at].chars().count() as u64,
            );
            assert_eq!(p.of(&t, at, &w), want, "at {at}");
        }
    }

    /// The steps of reading `text`.
    fn steps(text: &str, format: Option<Format>) -> u64 {
        let work = Work::unlimited();
        let _ = parse(text, format, None, &work);
        work.steps()
    }

    /// `unit` repeated into one paragraph (no blank line) of at least `bytes` bytes.
    fn paragraph(unit: &str, bytes: usize) -> String {
        unit.repeat(bytes.div_ceil(unit.len()))
    }

    /// The work of reading a one-paragraph draft grows with its size, not its square:
    /// twice the text, at most 2.2 times the steps, whatever it holds.
    #[test]
    fn reading_a_one_paragraph_draft_is_linear_in_its_size() {
        let units: &[(&str, Option<Format>)] = &[
            ("A short line of prose, no citation at all\n", None),
            (
                "As “four words quoted here” [@key2020, p. 3] and @lee [p. 4] say\n",
                Some(Format::Markdown),
            ),
            ("An “opening quote never closed `tick [see @x\n", None),
            (
                "As \\citet{a} notes, ``the whole point is this'' \\cite[p.~3]{b,c} % no\n",
                Some(Format::Latex),
            ),
            (
                "See doi:10.1000/xyz123 and (10.1016/S0140(20)) “x\n",
                Some(Format::Text),
            ),
            (
                "[[ [see @a, p. 3 [[ @{an unclosed key `x [y]\n",
                Some(Format::Markdown),
            ),
            (
                "> A quoted line of the block [@key, p. 2] goes on\n",
                Some(Format::Markdown),
            ),
        ];
        for (unit, format) in units {
            let small = steps(&paragraph(unit, 40_000), *format);
            let large = steps(&paragraph(unit, 80_000), *format);
            assert!(
                large as f64 <= 2.2 * small as f64,
                "{unit:?}: {small} steps for 40 kB, {large} for 80 kB"
            );
        }
    }

    /// A read cancelled before it starts stops at once: a few steps, not the draft's size.
    #[test]
    fn a_cancelled_read_stops() {
        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let work = Work::new(cancel);
        let text = paragraph("As “four words quoted here” [@key2020] say\n", 200_000);
        let parsed = parse(&text, None, None, &work);
        assert!(work.steps() < 20_000, "{} steps", work.steps());
        assert!(parsed.quotes.is_empty());
    }

    /// A read cancelled mid-way stops soon after: well before the work of a whole read.
    #[test]
    fn a_read_cancelled_mid_way_stops() {
        for (unit, format) in [
            ("A short line of prose, no citation at all\n", None),
            (
                "An “opening quote never closed [@x] and “one closed here now” [@y]\n",
                None,
            ),
            (
                "\\citep[p.~3]{a,b} ``quoted words here yes'' \\cite{c}\n",
                Some(Format::Latex),
            ),
        ] {
            let text = paragraph(unit, 400_000);
            let whole = steps(&text, format);
            let work = Work::cancelled_after(whole / 10);
            let _ = parse(&text, format, None, &work);
            assert!(work.cancelled());
            assert!(
                work.steps() < whole / 2,
                "{unit:?}: {} steps cancelled at {}, {whole} for the whole read",
                work.steps(),
                whole / 10
            );
        }
    }
}
