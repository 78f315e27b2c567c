//! The citations of a draft: Pandoc/Markdown (`[@a; @b, p. 4]`, `[-@a]`, `@a` in the text,
//! `@a [p. 3]`), LaTeX (`\cite`, `\citep[p.~3]{a,b}`, `\citet`, `\parencite`, `\autocite`,
//! `\textcite` and kin) or DOIs in plain text. Pure: text in, citations with byte spans out;
//! broken ones (an unterminated `[@`, `\cite{` without `}`) come back with the problem said.

mod latex;
mod pandoc;

use zotero_metadata::identifiers::fold_doi;

use super::work::Work;

/// How the draft is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Latex,
    Text,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Latex => "latex",
            Format::Text => "text",
        }
    }

    /// The format a file name says (`.tex`, `.md`, `.txt`, …), if it says one.
    pub fn of_file_name(name: &str) -> Option<Format> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "tex" | "ltx" | "latex" => Some(Format::Latex),
            "md" | "markdown" | "qmd" | "rmd" | "pandoc" | "mdown" => Some(Format::Markdown),
            "txt" | "text" => Some(Format::Text),
            _ => None,
        }
    }

    /// The format the text looks like: LaTeX citation commands, else Pandoc citations, else
    /// plain text.
    pub fn detect(text: &str) -> Format {
        Format::detect_with(text, &Work::unlimited())
    }

    /// [`Format::detect`], metered by `work`.
    pub fn detect_with(text: &str, work: &Work) -> Format {
        if work.cancelled() {
            return Format::Text;
        }
        let latex = CITE_COMMANDS
            .iter()
            .any(|c| text.contains(&format!("\\{c}{{")) || text.contains(&format!("\\{c}[")))
            || text.contains("\\begin{document}");
        if latex {
            return Format::Latex;
        }
        let parsed = parse_with(text, Format::Markdown, work);
        if parsed.iter().any(|c| c.syntax != Syntax::InText) || parsed.len() >= 2 {
            Format::Markdown
        } else {
            Format::Text
        }
    }
}

/// What a citation names: a citation key, or a DOI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    CitationKey,
    Doi,
}

/// How a citation is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Syntax {
    /// `[@key]`, `[see @a; @b, p. 4]`
    Bracketed,
    /// `[-@key]`: the author left out
    SuppressAuthor,
    /// `@key` in the text
    InText,
    /// `\citep` and the other commands (the command's name, without `\`)
    Latex(String),
    /// A DOI in plain text
    Doi,
}

impl Syntax {
    pub fn label(&self) -> String {
        match self {
            Syntax::Bracketed => "[@key]".into(),
            Syntax::SuppressAuthor => "[-@key]".into(),
            Syntax::InText => "@key".into(),
            Syntax::Latex(c) => format!("\\{c}"),
            Syntax::Doi => "doi".into(),
        }
    }
}

/// One cited key (a citation group `[@a; @b]` gives two, with the same `group`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cite {
    /// The key as written, or the DOI (lower case).
    pub key: String,
    pub kind: KeyKind,
    pub syntax: Syntax,
    /// Byte span of the key in the text.
    pub start: usize,
    pub end: usize,
    /// Byte span of the whole citation (`[...]`, `\cite[...]{...}`) it belongs to.
    pub group_start: usize,
    pub group_end: usize,
    /// The citation it belongs to, numbered from 0 in the order of the text.
    pub group: usize,
    /// The page or other locator given with it (`p. 4`).
    pub locator: Option<String>,
    /// What is wrong with how it is written, when something is.
    pub problem: Option<String>,
}

/// LaTeX commands that cite (natbib, biblatex), lower case; a capital first letter is read too.
pub const CITE_COMMANDS: &[&str] = &[
    "cite",
    "citep",
    "citet",
    "citealp",
    "citealt",
    "citeauthor",
    "citeyear",
    "citeyearpar",
    "citetitle",
    "parencite",
    "autocite",
    "textcite",
    "footcite",
    "footcitetext",
    "smartcite",
    "supercite",
    "fullcite",
    "nocite",
];

/// Where a `[`, `{` or key stops being looked for: a citation does not cross a blank line,
/// nor run longer than this many bytes.
const MAX_GROUP_BYTES: usize = 2_000;

/// The citations of `text` read as `format`, in the order of the text.
pub fn parse(text: &str, format: Format) -> Vec<Cite> {
    parse_with(text, format, &Work::unlimited())
}

/// [`parse`], metered by `work`: stops (with the citations found so far) once it is
/// cancelled.
pub fn parse_with(text: &str, format: Format, work: &Work) -> Vec<Cite> {
    if work.cancelled() {
        return Vec::new();
    }
    let mut cites = match format {
        Format::Markdown => pandoc::markdown(text, work),
        Format::Latex => latex::latex(text, work),
        Format::Text => dois(text, work),
    };
    mark_duplicates(&mut cites);
    cites
}

/// A key cited twice within one citation is flagged on its second mention. A citation's
/// keys are next to each other, so only its earlier keys are looked at.
fn mark_duplicates(cites: &mut [Cite]) {
    for i in 0..cites.len() {
        let Some(c) = cites.get(i) else { continue };
        let dup = !c.key.is_empty()
            && cites
                .get(..i)
                .unwrap_or_default()
                .iter()
                .rev()
                .take_while(|p| p.group == c.group)
                .any(|p| p.key == c.key);
        if dup {
            if let Some(c) = cites.get_mut(i) {
                c.problem
                    .get_or_insert_with(|| "the same key twice in one citation".into());
            }
        }
    }
}

/// The byte at `i`, or 0 past the end.
fn byte(text: &str, i: usize) -> u8 {
    text.as_bytes().get(i).copied().unwrap_or(0)
}

/// Where each paragraph ends: the line breaks that start a blank line (two line breaks with
/// only spaces, tabs or carriage returns between, or with only those up to the end), found
/// in one pass so that asking for a paragraph's end costs a binary search, not a scan to it.
pub(super) struct Paragraphs {
    ends: Vec<usize>,
}

impl Paragraphs {
    pub(super) fn new(text: &str, work: &Work) -> Paragraphs {
        work.go(text.len());
        let bytes = text.as_bytes();
        let ends = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i)
            .filter(|&i| {
                let rest = bytes.get(i + 1..).unwrap_or_default();
                rest.iter()
                    .position(|b| !matches!(b, b' ' | b'\t' | b'\r'))
                    .is_none_or(|n| rest.get(n) == Some(&b'\n'))
            })
            .collect();
        Paragraphs { ends }
    }

    /// The first blank line's line break at or after `from`, or the end of `text`.
    pub(super) fn end(&self, text: &str, from: usize) -> usize {
        let n = self.ends.partition_point(|&e| e < from);
        self.ends.get(n).copied().unwrap_or(text.len())
    }
}

/// The end of the span of `spans` (sorted, disjoint) that holds `i`, if one does.
fn in_spans(spans: &[(usize, usize)], i: usize) -> Option<usize> {
    let n = spans.partition_point(|(s, _)| *s <= i);
    let (_, e) = spans.get(n.checked_sub(1)?)?;
    (i < *e).then_some(*e)
}

/// DOIs in plain text: `10.NNNN/suffix`, bare or after `doi:` or `https://doi.org/`; the
/// sentence's punctuation after it is not part of it (a closing bracket is when the DOI
/// opened one).
fn dois(text: &str, work: &Work) -> Vec<Cite> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = text.get(i..).and_then(|r| r.find("10.")) {
        let at = i + p;
        if !work.go(p + 3) {
            break;
        }
        i = at + 3;
        let prev = text.get(..at).and_then(|s| s.chars().next_back());
        if prev.is_some_and(|c| c.is_alphanumeric() || c == '.') {
            continue;
        }
        let digits = text
            .get(at + 3..)
            .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
        if !(4..=9).contains(&digits) || byte(text, at + 3 + digits) != b'/' {
            continue;
        }
        let suffix_start = at + 3 + digits + 1;
        let mut end = suffix_start;
        for (n, c) in text.get(suffix_start..).unwrap_or("").char_indices() {
            if c.is_whitespace() || "\"<>{}|\\^`“”‘’«»".contains(c) {
                break;
            }
            end = suffix_start + n + c.len_utf8();
        }
        if !work.go(end - at) {
            break;
        }
        // The brackets counted once, then as the end is trimmed.
        let doi = text.get(at..end).unwrap_or("");
        let count = |c: u8| doi.bytes().filter(|b| *b == c).count();
        let (mut parens, mut brackets) = ((count(b'('), count(b')')), (count(b'['), count(b']')));
        while let Some(last) = text.get(at..end).and_then(|d| d.chars().next_back()) {
            let unbalanced = match last {
                ')' => parens.0 < parens.1,
                ']' => brackets.0 < brackets.1,
                _ => false,
            };
            if ".,;:!?'".contains(last) || unbalanced {
                end -= last.len_utf8();
                match last {
                    ')' => parens.1 -= 1,
                    ']' => brackets.1 -= 1,
                    _ => {}
                }
            } else {
                break;
            }
        }
        if end <= suffix_start {
            continue;
        }
        out.push(Cite {
            key: fold_doi(text.get(at..end).unwrap_or("")),
            kind: KeyKind::Doi,
            syntax: Syntax::Doi,
            start: at,
            end,
            group_start: at,
            group_end: end,
            group: out.len(),
            locator: None,
            problem: None,
        });
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str, format: Format) -> Vec<(String, Option<String>, String)> {
        parse(text, format)
            .into_iter()
            .map(|c| (c.key, c.locator, c.syntax.label()))
            .collect()
    }

    fn k(key: &str, loc: Option<&str>, syntax: &str) -> (String, Option<String>, String) {
        (key.into(), loc.map(Into::into), syntax.into())
    }

    #[test]
    fn pandoc_bracketed_groups_locators_and_suppressed_authors() {
        let t = "As shown [@smith2020] and [see @doe99, pp. 33-35; also @lee:2001, chap. 1]. \
                 Later [-@kim.2019].";
        assert_eq!(
            keys(t, Format::Markdown),
            vec![
                k("smith2020", None, "[@key]"),
                k("doe99", Some("pp. 33-35"), "[@key]"),
                k("lee:2001", Some("chap. 1"), "[@key]"),
                k("kim.2019", None, "[-@key]"),
            ]
        );
        let c = parse(t, Format::Markdown);
        assert_eq!(c[1].group, c[2].group);
        assert_ne!(c[0].group, c[1].group);
        assert_eq!(&t[c[0].start..c[0].end], "smith2020");
        assert_eq!(&t[c[0].group_start..c[0].group_end], "[@smith2020]");
    }

    #[test]
    fn pandoc_in_text_with_a_locator_not_emails_code_or_links() {
        let t = "@smith2020 [p. 33] says so; mail me@example.org. `@notakey` and\n\
                 ```\n@alsonot\n```\n[a link](http://x/@y) and @{odd key!}.";
        assert_eq!(
            keys(t, Format::Markdown),
            vec![
                k("smith2020", Some("p. 33"), "@key"),
                k("odd key!", None, "@key")
            ]
        );
    }

    #[test]
    fn an_unterminated_bracket_is_reported_and_ends_at_its_paragraph() {
        let t = "Text [@smith2020, p. 4\n\nNext paragraph [@doe99].";
        let c = parse(t, Format::Markdown);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].key, "smith2020");
        assert!(c[0].problem.as_deref().unwrap().contains("unterminated"));
        assert_eq!(c[1].key, "doe99");
        assert!(c[1].problem.is_none());
    }

    #[test]
    fn a_key_twice_in_one_citation_is_flagged_once() {
        let c = parse("[@a; @b; @a] and [@a]", Format::Markdown);
        let flagged: Vec<bool> = c.iter().map(|c| c.problem.is_some()).collect();
        assert_eq!(flagged, [false, false, true, false]);
    }

    #[test]
    fn latex_commands_with_optional_arguments() {
        let t = "\\cite{a, b} \\citep[p.~3]{c} \\citet*{d} \\parencite[see][12]{e}\n\
                 \\autocite{f} \\Textcite{g} % \\cite{commented}\n100\\% \\nocite{*}";
        assert_eq!(
            keys(t, Format::Latex),
            vec![
                k("a", None, "\\cite"),
                k("b", None, "\\cite"),
                k("c", Some("p. 3"), "\\citep"),
                k("d", None, "\\citet"),
                k("e", Some("12"), "\\parencite"),
                k("f", None, "\\autocite"),
                k("g", None, "\\textcite"),
            ]
        );
        let c = parse(t, Format::Latex);
        assert_eq!(&t[c[1].start..c[1].end], "b");
    }

    #[test]
    fn latex_broken_commands_are_reported() {
        let c = parse(
            "\\cite{a, b\n\nmore \\citep[p. 2] text \\cite{c \\emph{x}}",
            Format::Latex,
        );
        let problems: Vec<&str> = c.iter().filter_map(|c| c.problem.as_deref()).collect();
        assert_eq!(problems.len(), 3, "{c:?}");
        assert!(problems[0].contains("unterminated"));
        assert!(problems[1].contains("no {keys}"));
        assert!(problems[2].contains("before the next command"));
    }

    #[test]
    fn dois_in_plain_text() {
        let t = "See doi:10.1000/xyz123. Also (https://doi.org/10.1016/S0140-6736(20)30183-5), \
                 and 10.12/short, and x10.1234/no.";
        assert_eq!(
            keys(t, Format::Text),
            vec![
                k("10.1000/xyz123", None, "doi"),
                k("10.1016/s0140-6736(20)30183-5", None, "doi"),
            ]
        );
    }

    #[test]
    fn formats_are_detected() {
        assert_eq!(Format::detect("as \\citep{x} shows"), Format::Latex);
        assert_eq!(Format::detect("as [@x] shows"), Format::Markdown);
        assert_eq!(Format::detect("doi 10.1000/x"), Format::Text);
        assert_eq!(Format::of_file_name("draft.TEX"), Some(Format::Latex));
        assert_eq!(Format::of_file_name("draft.qmd"), Some(Format::Markdown));
        assert_eq!(Format::of_file_name("draft"), None);
    }
}
