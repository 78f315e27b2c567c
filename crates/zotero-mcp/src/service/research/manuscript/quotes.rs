//! The quotations of a draft attributed to a citation: an inline quotation (`“…”`, `"…"`,
//! LaTeX's ``` ``…'' ``` and `\enquote{…}`) with a citation right after it (or right before it
//! in the same sentence), and a block quotation (Markdown `>` lines; LaTeX `quote`,
//! `quotation`, `displayquote`) with a citation inside it, right after it, or on the line
//! that introduces it. Pure: text and citations in, quotations with byte spans out.

use super::cites::{Cite, Format};
use super::work::Work;

/// A quotation shorter than this many words is not checked (scare quotes, a term).
const MIN_WORDS: usize = 4;
/// The most bytes between a quotation and a citation after it.
const AFTER_GAP: usize = 60;
/// The most bytes between a citation and a quotation after it in the same sentence.
const BEFORE_GAP: usize = 80;

/// A quotation and the citation it is attributed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// The quoted words as written (block markers and citations taken out).
    pub text: String,
    /// Byte span in the draft.
    pub start: usize,
    pub end: usize,
    /// The citation group it is attributed to.
    pub group: usize,
    /// A block quotation rather than one inside a sentence.
    pub block: bool,
}

/// A citation group's byte span and number.
#[derive(Debug, Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
    id: usize,
}

fn groups(cites: &[Cite]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for c in cites {
        if out.last().is_some_and(|g| g.id == c.group) {
            continue;
        }
        out.push(Group {
            start: c.group_start,
            end: c.group_end,
            id: c.group,
        });
    }
    out
}

fn word_count(s: &str) -> usize {
    s.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

fn has_blank_line(s: &str) -> bool {
    let lines: Vec<&str> = s.split('\n').collect();
    lines
        .get(1..lines.len().saturating_sub(1))
        .is_some_and(|inner| inner.iter().any(|l| l.trim().is_empty()))
}

/// The citation attributed to the span `start..end`: one inside it (a block's own), else the
/// first group starting soon after it (nothing but a little text and no other quotation
/// between), else the last one ending shortly before it in the same sentence (for a block:
/// on the lines that introduce it). The groups are in the order of the text and disjoint
/// (each parser goes on after the citation it read), so their ends are in order too and
/// each is found by a binary search.
fn attribute(text: &str, groups: &[Group], start: usize, end: usize, block: bool) -> Option<usize> {
    let inside = within(groups, start, end)
        .iter()
        .rev()
        .find(|g| g.end <= end);
    if let Some(g) = inside {
        return Some(g.id);
    }
    let after_gap = if block { AFTER_GAP + 40 } else { AFTER_GAP };
    let first_after = groups.partition_point(|g| g.start < end);
    let after = groups.get(first_after).filter(|g| {
        text.get(end..g.start).is_some_and(|gap| {
            gap.len() <= after_gap && !has_blank_line(gap) && !gap.contains(['“', '"'])
        })
    });
    if let Some(g) = after {
        return Some(g.id);
    }
    let before = groups.partition_point(|g| g.end <= start).checked_sub(1)?;
    groups
        .get(before)
        .filter(|g| {
            text.get(g.end..start).is_some_and(|gap| {
                if gap.len() > BEFORE_GAP {
                    return false;
                }
                let sentence_ends = gap.contains(". ") || gap.contains("? ") || gap.contains("! ");
                let other_quote = if block {
                    gap.contains("\n>") || gap.contains("\\begin{") || gap.contains("\\end{")
                } else {
                    gap.contains(['\n', '”', '"'])
                };
                !sentence_ends && !other_quote
            })
        })
        .map(|g| g.id)
}

/// The groups starting within `start..=end`.
fn within(groups: &[Group], start: usize, end: usize) -> &[Group] {
    let from = groups.partition_point(|g| g.start < start);
    let to = groups.partition_point(|g| g.start <= end);
    groups.get(from..to.max(from)).unwrap_or_default()
}

/// The text of `start..end` without the citations in it.
fn without_cites(text: &str, groups: &[Group], start: usize, end: usize) -> String {
    let mut out = String::new();
    let mut at = start;
    for g in within(groups, start, end).iter().filter(|g| g.end <= end) {
        out.push_str(text.get(at..g.start).unwrap_or(""));
        at = g.end;
    }
    out.push_str(text.get(at..end).unwrap_or(""));
    out
}

/// The quotations of `text` attributed to one of `cites`, in the order of the text.
pub fn find(text: &str, format: Format, cites: &[Cite]) -> Vec<Quote> {
    find_with(text, format, cites, &Work::unlimited())
}

/// [`find`], metered by `work`: stops (with the quotations found so far) once it is
/// cancelled.
pub fn find_with(text: &str, format: Format, cites: &[Cite], work: &Work) -> Vec<Quote> {
    if work.cancelled() {
        return Vec::new();
    }
    let groups = groups(cites);
    let mut out = Vec::new();
    let blocks = match format {
        Format::Latex => latex_blocks(text),
        _ => markdown_blocks(text),
    };
    // The furthest end of the blocks so far (sorted by start; LaTeX's may nest): a span is
    // inside a block when a block starting before it reaches past it.
    let reach: Vec<usize> = blocks
        .iter()
        .scan(0, |r, (_, e, _)| {
            *r = (*r).max(*e);
            Some(*r)
        })
        .collect();
    for (start, end, body) in &blocks {
        if !work.go(body.len()) {
            break;
        }
        let Some(group) = attribute(text, &groups, *start, *end, true) else {
            continue;
        };
        let inner = strip_markup(
            &without_cites(
                body.as_str(),
                &shift(&groups, (*start, *end), body, text),
                0,
                body.len(),
            ),
            format,
        );
        if word_count(&inner) >= MIN_WORDS {
            out.push(Quote {
                text: inner.trim().to_string(),
                start: *start,
                end: *end,
                group,
                block: true,
            });
        }
    }
    for (start, end) in inline_spans(text, format, work) {
        if !work.go(end - start) {
            break;
        }
        let before = blocks.partition_point(|(s, _, _)| *s <= start);
        let inside = before
            .checked_sub(1)
            .and_then(|b| reach.get(b))
            .is_some_and(|r| end <= *r);
        if inside {
            // Inside a block quotation: the block is checked whole.
            continue;
        }
        let (open_len, close_len) = delimiters(text, start, end);
        let inner = text.get(start + open_len..end - close_len).unwrap_or("");
        if word_count(inner) < MIN_WORDS {
            continue;
        }
        let Some(group) = attribute(text, &groups, start, end, false) else {
            continue;
        };
        let inner = strip_markup(
            &without_cites(text, &groups, start + open_len, end - close_len),
            format,
        );
        out.push(Quote {
            text: inner.trim().to_string(),
            start,
            end,
            group,
            block: false,
        });
    }
    out.sort_by_key(|q| q.start);
    out
}

/// For a Markdown block, the citation groups inside it as offsets into its body (which has
/// the `>` markers removed); groups are found again in the body by their text, each no
/// further into the body than it is into the block (the body is the block, shortened).
fn shift(
    groups: &[Group],
    (block_start, block_end): (usize, usize),
    body: &str,
    text: &str,
) -> Vec<Group> {
    let mut out = Vec::new();
    let mut from = 0;
    for g in within(groups, block_start, block_end)
        .iter()
        .filter(|g| g.end <= block_end)
    {
        let Some(cite) = text.get(g.start..g.end) else {
            continue;
        };
        let mut to = (g.end - block_start).min(body.len());
        while !body.is_char_boundary(to) {
            to -= 1;
        }
        if let Some(p) = body.get(from..to).and_then(|b| b.find(cite)) {
            out.push(Group {
                start: from + p,
                end: from + p + cite.len(),
                id: g.id,
            });
            from += p + cite.len();
        }
    }
    out
}

/// The lengths of the opening and closing delimiters of an inline quotation.
fn delimiters(text: &str, start: usize, end: usize) -> (usize, usize) {
    let s = text.get(start..end).unwrap_or("");
    if s.starts_with("\\enquote{") {
        return ("\\enquote{".len(), 1);
    }
    let open = s.chars().next().map_or(0, char::len_utf8);
    let open = if s.starts_with("``") { 2 } else { open };
    let close = s.chars().next_back().map_or(0, char::len_utf8);
    let close = if s.ends_with("''") { 2 } else { close };
    (open, close.min(s.len().saturating_sub(open)))
}

/// Byte spans (delimiters included) of inline quotations within a paragraph.
fn inline_spans(text: &str, format: Format, work: &Work) -> Vec<(usize, usize)> {
    let blank = blank_lines(text, work);
    let mut closers = [
        Next::new(text, "”"),
        Next::new(text, "»"),
        Next::new(text, "\""),
        Next::new(text, "''"),
        Next::new(text, "}"),
    ];
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = text.get(i..).and_then(|r| r.chars().next()) {
        if !work.go(1) {
            break;
        }
        let rest = text.get(i..).unwrap_or("");
        let [curly, guillemet, straight, latex_close, brace] = &mut closers;
        let close = if c == '“' {
            curly.from(i, work)
        } else if c == '«' {
            guillemet.from(i, work)
        } else if c == '"' {
            straight.from(i + 1, work)
        } else if format == Format::Latex && rest.starts_with("``") {
            latex_close.from(i, work)
        } else if format == Format::Latex && rest.starts_with("\\enquote{") {
            brace.from(i, work)
        } else {
            None
        };
        // The paragraph's end: the first blank line starting after `i`.
        let par_end = blank
            .get(blank.partition_point(|&b| b <= i))
            .copied()
            .unwrap_or(text.len());
        match close {
            Some((at, len)) if at + len <= par_end => {
                out.push((i, at + len));
                i = at + len;
            }
            _ => i += c.len_utf8(),
        }
    }
    out
}

/// The next `pattern` at or after a position, remembered: the positions asked only grow, so
/// each stretch of the text is searched once, however many quotations open unclosed.
struct Next<'a> {
    text: &'a str,
    pattern: &'static str,
    /// The last one found, or `None` when there is none from `searched` on.
    found: Option<usize>,
    searched: usize,
}

impl<'a> Next<'a> {
    fn new(text: &'a str, pattern: &'static str) -> Next<'a> {
        Next {
            text,
            pattern,
            found: None,
            searched: usize::MAX,
        }
    }

    /// The byte offset and length of the first `pattern` at or after `at`.
    fn from(&mut self, at: usize, work: &Work) -> Option<(usize, usize)> {
        let known = match self.found {
            Some(f) => f >= at,
            None => self.searched <= at,
        };
        if !known {
            let rest = self.text.get(at..).unwrap_or("");
            let n = rest.find(self.pattern);
            work.go(n.map_or(rest.len(), |n| n + self.pattern.len()));
            self.found = n.map(|n| at + n);
            self.searched = at;
        }
        self.found.map(|f| (f, self.pattern.len()))
    }
}

/// The start of each blank line (a line of whitespace only, its line break included) but
/// the first line, in order: a paragraph started at `from` ends at the first after `from`.
fn blank_lines(text: &str, work: &Work) -> Vec<usize> {
    work.go(text.len());
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if at > 0 && line.trim().is_empty() {
            out.push(at);
        }
        at += line.len();
    }
    out
}

/// Markdown block quotations: runs of lines starting with `>` (up to three spaces before
/// it), with their byte span and their text without the markers.
fn markdown_blocks(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize, String)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let marker = line.len() - trimmed.len() <= 3 && trimmed.starts_with('>');
        if marker {
            let body = trimmed.strip_prefix('>').unwrap_or(trimmed);
            let body = body.strip_prefix(' ').unwrap_or(body);
            let block = current.get_or_insert((at, at, String::new()));
            block.1 = at + line.trim_end().len();
            block.2.push_str(body);
        } else if let Some(done) = current.take() {
            out.push(done);
        }
        at += line.len();
    }
    out.extend(current);
    out
}

/// LaTeX block quotations: `quote`, `quotation` and `displayquote` environments.
fn latex_blocks(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for env in ["quote", "quotation", "displayquote"] {
        let open = format!("\\begin{{{env}}}");
        let close = format!("\\end{{{env}}}");
        let mut i = 0;
        while let Some(p) = text.get(i..).and_then(|r| r.find(&open)) {
            let start = i + p;
            let body_start = start + open.len();
            let Some(q) = text.get(body_start..).and_then(|r| r.find(&close)) else {
                break;
            };
            let body_end = body_start + q;
            let end = body_end + close.len();
            out.push((start, end, text.get(start..end).unwrap_or("").to_string()));
            i = end;
        }
    }
    out.sort_by_key(|b| b.0);
    out
}

/// The words of a quotation without the markup around them: LaTeX commands (their
/// arguments kept), braces, `~` and `\\`; Markdown emphasis.
fn strip_markup(s: &str, format: Format) -> String {
    match format {
        Format::Latex => {
            let mut out = String::with_capacity(s.len());
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        let mut name = String::new();
                        while let Some(n) = chars.peek().copied().filter(char::is_ascii_alphabetic)
                        {
                            name.push(n);
                            chars.next();
                        }
                        if name == "begin" || name == "end" {
                            // The environment's name, and displayquote's optional argument.
                            for n in chars.by_ref() {
                                if n == '}' {
                                    break;
                                }
                            }
                            if chars.peek() == Some(&'[') {
                                for n in chars.by_ref() {
                                    if n == ']' {
                                        break;
                                    }
                                }
                            }
                        } else if name.is_empty() {
                            // `\\`, `\%`, `\&`: the character, or a space for a line break.
                            match chars.next() {
                                Some('\\') | None => out.push(' '),
                                Some(other) => out.push(other),
                            }
                        }
                    }
                    '{' | '}' => {}
                    '~' => out.push(' '),
                    _ => out.push(c),
                }
            }
            out
        }
        _ => s.replace(['*'], ""),
    }
}

#[cfg(test)]
mod tests {
    use super::super::cites::parse;
    use super::*;

    fn quotes(text: &str, format: Format) -> Vec<(String, usize, bool)> {
        let cites = parse(text, format);
        find(text, format, &cites)
            .into_iter()
            .map(|q| (q.text, q.group, q.block))
            .collect()
    }

    #[test]
    fn inline_quotations_take_the_citation_after_or_before_them() {
        let t = "They say “attention is all you need” [@vaswani2017, p. 2]. \
                 As @smith2020 put it, \"the model is very good indeed\". \
                 A \"scare quote\" [@x] is not checked. \"No citation near this one at all\".";
        assert_eq!(
            quotes(t, Format::Markdown),
            vec![
                (
                    "“attention is all you need”"
                        .trim_matches(['“', '”'])
                        .to_string(),
                    0,
                    false
                ),
                ("the model is very good indeed".to_string(), 1, false),
            ]
        );
    }

    #[test]
    fn markdown_block_quotations_with_the_citation_inside_after_or_before() {
        let t = "Intro.\n\n> First quoted line of text\n> and the second line [@a, p. 3]\n\n\
                 Then [-@b] writes:\n\n> Another quotation of several words\n\n\
                 > A third block with no citation anywhere\n\nFar below.\n";
        let q = quotes(t, Format::Markdown);
        assert_eq!(q.len(), 2, "{q:?}");
        assert_eq!(q[0].0, "First quoted line of text\nand the second line");
        assert_eq!((q[0].1, q[0].2), (0, true));
        assert_eq!(q[1].0, "Another quotation of several words");
        assert_eq!(q[1].1, 1);
    }

    #[test]
    fn latex_quotations() {
        let t = "As \\citet{a} notes, ``the \\emph{whole} point is this''.\n\
                 \\begin{quote}\nSome quoted~text in a block\\\\ second line\n\\end{quote}\n\\cite[p.~4]{b}\n\
                 \\enquote{four words in here} \\citep{c}\n\
                 \\begin{displayquote}[\\cite{d}]\nCited within the optional argument\n\\end{displayquote}";
        let q = quotes(t, Format::Latex);
        assert_eq!(
            q.iter().map(|q| (q.0.as_str(), q.1)).collect::<Vec<_>>(),
            vec![
                ("the whole point is this", 0),
                ("Some quoted text in a block  second line", 1),
                ("four words in here", 2),
                ("Cited within the optional argument", 3),
            ]
        );
    }
}
