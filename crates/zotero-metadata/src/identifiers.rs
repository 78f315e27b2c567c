//! The identifiers a researcher hands over, parsed into one of five kinds with one canonical
//! form each, so that the same work is recognised however it was written.
//!
//! | kind    | accepted                                                                   | canonical (duplicates)        |
//! |---------|----------------------------------------------------------------------------|-------------------------------|
//! | `doi`   | `10.1000/xyz`, `doi:` / `DOI ` before it, `https://doi.org/…`, `http://dx.doi.org/…`, `doi.org/…` (`%`-escapes decoded) | lower case (DOIs are case-insensitive) |
//! | `arxiv` | `1706.03762v5`, `hep-th/9901001`, `math.CA/0611800v2`, `arXiv:…`, `https://arxiv.org/abs/…`, `…/pdf/…(.pdf)`, on `export.arxiv.org` too | no version, no subject class: `1706.03762`, `math/0611800` |
//! | `isbn`  | ISBN-10 (check `X`) and ISBN-13 (978/979), hyphens and spaces, `ISBN:`, `ISBN-13:`, `ISBN ` | the 13 digits of the ISBN-13 |
//! | `pmid`  | `31452104`, `PMID:` / `PMID `, `https://pubmed.ncbi.nlm.nih.gov/<pmid>/`, `https://www.ncbi.nlm.nih.gov/pubmed/<pmid>` | the digits |
//! | `pmcid` | `PMC6784890` (any case), `PMCID:`, `https://www.ncbi.nlm.nih.gov/pmc/articles/PMC…/`, `https://pmc.ncbi.nlm.nih.gov/articles/PMC…/` | `PMC` + digits |
//!
//! Around any of them, whitespace, a final `.`, `,` or `;`, a final `)` or `]` without its
//! opening one (copied with the sentence around it), and enclosing quotes, `<…>`, `(…)` or
//! `[…]` are dropped. The kind is decided by the first of: a label (`doi:`, `arXiv:`, `ISBN`,
//! `PMID:`, `PMCID:`), a link's host, `10.` (DOI), `PMC`, the shape of an arXiv id, digits.
//!
//! A label is read for what it says the kind is, not checked against the rest (`ISBN-13:`
//! before an ISBN-10 is read as the ISBN-10).
//!
//! Bare numbers: 1 to 8 digits without a leading zero are a PMID (NLM: "a 1- to 8-digit accession
//! number with no leading zeros"); 10 digits (or 9 and `X`) are an ISBN-10 and 13 digits an
//! ISBN-13 (978/979), their check digit verified — no PMID is that long, so there is nothing to
//! choose; a number of 9, 11, 12 or more than 13 digits, or one with hyphens or spaces that is
//! not a valid ISBN, is refused with what was expected. A PMCID has 1 to 9 digits (PMC has no
//! documented length; today's have 7 or 8). An arXiv DOI (`10.48550/arXiv.1706.03762`) stays a DOI: [`Doi::arxiv_id`] gives
//! the arXiv id for recognising the same paper.
//!
//! Inputs over [`MAX_INPUT_CHARS`] are refused before anything else, and no error repeats more
//! than [`EXCERPT_CHARS`] characters of the input.

mod arxiv;
mod doi;
mod isbn;
mod pubmed;
#[cfg(test)]
mod tests;
mod url;

pub use doi::{bare_doi, doi_shaped, fold_doi, Doi};
pub use isbn::Isbn;
pub use pubmed::{Pmcid, Pmid};

use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use zotero_sources::ArxivId;

use arxiv::{looks_like_arxiv, parse_arxiv};
use doi::{looks_like_doi, parse_doi};
use isbn::{isbn_label, parse_isbn};
use pubmed::{parse_pmcid_number, parse_pmid};
use url::{parse_url, split_url};

/// Longer inputs are refused unread.
pub const MAX_INPUT_CHARS: usize = 2_000;

/// At most this many characters of the input are repeated in an error.
pub const EXCERPT_CHARS: usize = 64;

const EXPECTED_ANY: &str =
    "one of: DOI, arXiv id, ISBN-10/13, PMID, PMCID, or a doi.org / arxiv.org / PubMed URL \
     (such as 10.1038/nature12373, arXiv:1706.03762, 978-0-306-40615-7, PMID:31452104, PMC6784890)";

/// What kind of identifier a string is, or looked like it was meant to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdentifierKind {
    Doi,
    Arxiv,
    Isbn,
    Pmid,
    Pmcid,
}

impl IdentifierKind {
    /// `doi`, `arxiv`, `isbn`, `pmid`, `pmcid`.
    pub fn name(self) -> &'static str {
        match self {
            IdentifierKind::Doi => "doi",
            IdentifierKind::Arxiv => "arxiv",
            IdentifierKind::Isbn => "isbn",
            IdentifierKind::Pmid => "pmid",
            IdentifierKind::Pmcid => "pmcid",
        }
    }

    /// How an error names it: `a DOI`, `an arXiv id`…
    fn described(self) -> &'static str {
        match self {
            IdentifierKind::Doi => "a DOI",
            IdentifierKind::Arxiv => "an arXiv id",
            IdentifierKind::Isbn => "an ISBN",
            IdentifierKind::Pmid => "a PMID",
            IdentifierKind::Pmcid => "a PMCID",
        }
    }
}

impl fmt::Display for IdentifierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a string is not an identifier. The messages say what the input looked like and what
/// was expected, and repeat at most [`EXCERPT_CHARS`] characters of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentifierError {
    #[error("the identifier is empty; expected {EXPECTED_ANY}")]
    Empty,

    #[error(
        "the identifier is longer than {MAX_INPUT_CHARS} characters, which no identifier is; \
         expected {EXPECTED_ANY}"
    )]
    TooLong,

    /// Nothing about it says which kind it was meant to be.
    #[error("{input:?} is not an identifier{hint}; expected {EXPECTED_ANY}")]
    Unrecognised {
        /// At most [`EXCERPT_CHARS`] characters of the input.
        input: String,
        /// Empty, or ` (…)` saying why it was not taken for the kind it came closest to.
        hint: String,
    },

    /// It looks like `kind` but is not a well-formed one.
    #[error("{input:?} looks like {} but {problem}; expected {expected}", kind.described())]
    Malformed {
        kind: IdentifierKind,
        /// At most [`EXCERPT_CHARS`] characters of the input.
        input: String,
        problem: String,
        expected: &'static str,
    },

    /// A well-formed ISBN whose check digit does not match its other digits.
    #[error(
        "{input:?} looks like an ISBN-{length} but its check digit is wrong (a digit was \
         mistyped): expected an ISBN-{length} whose check digit is {expected}, got {got}"
    )]
    IsbnCheckDigit {
        /// At most [`EXCERPT_CHARS`] characters of the input.
        input: String,
        /// 10 or 13.
        length: u8,
        expected: char,
        got: char,
    },
}

impl IdentifierError {
    /// The kind the input looked like it was meant to be, when it looked like one.
    pub fn looks_like(&self) -> Option<IdentifierKind> {
        match self {
            IdentifierError::Malformed { kind, .. } => Some(*kind),
            IdentifierError::IsbnCheckDigit { .. } => Some(IdentifierKind::Isbn),
            _ => None,
        }
    }
}

/// What identifies a work. `parse(&id.to_string()) == Ok(id)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identifier {
    Doi(Doi),
    Arxiv(ArxivId),
    Isbn(Isbn),
    Pmid(Pmid),
    Pmcid(Pmcid),
}

impl Identifier {
    pub fn kind(&self) -> IdentifierKind {
        match self {
            Identifier::Doi(_) => IdentifierKind::Doi,
            Identifier::Arxiv(_) => IdentifierKind::Arxiv,
            Identifier::Isbn(_) => IdentifierKind::Isbn,
            Identifier::Pmid(_) => IdentifierKind::Pmid,
            Identifier::Pmcid(_) => IdentifierKind::Pmcid,
        }
    }

    /// The string duplicates are recognised by, within its kind: the DOI in lower case, the
    /// arXiv id without version or subject class, the ISBN-13 digits, the PMID digits,
    /// `PMC` + digits.
    pub fn canonical(&self) -> String {
        match self {
            Identifier::Doi(doi) => doi.canonical().to_string(),
            Identifier::Arxiv(id) => id.canonical(),
            Identifier::Isbn(isbn) => isbn.canonical().to_string(),
            Identifier::Pmid(pmid) => pmid.canonical(),
            Identifier::Pmcid(pmcid) => pmcid.canonical(),
        }
    }

    /// The arXiv id of an arXiv id or of an arXiv DOI.
    pub fn arxiv_id(&self) -> Option<ArxivId> {
        match self {
            Identifier::Arxiv(id) => Some(id.clone()),
            Identifier::Doi(doi) => doi.arxiv_id(),
            _ => None,
        }
    }
}

/// The DOI as given, the arXiv id with its version, the ISBN-13 digits, the PMID, `PMC…`:
/// each without prefix, and each read back by [`parse`] as itself.
impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identifier::Doi(doi) => doi.fmt(f),
            Identifier::Arxiv(id) => id.fmt(f),
            Identifier::Isbn(isbn) => isbn.fmt(f),
            Identifier::Pmid(pmid) => pmid.fmt(f),
            Identifier::Pmcid(pmcid) => pmcid.fmt(f),
        }
    }
}

impl FromStr for Identifier {
    type Err = IdentifierError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// Reads one identifier in any of the forms of the module documentation.
pub fn parse(input: &str) -> Result<Identifier, IdentifierError> {
    if input.chars().nth(MAX_INPUT_CHARS).is_some() {
        return Err(IdentifierError::TooLong);
    }
    let s = tidy(input);
    if s.is_empty() {
        return Err(IdentifierError::Empty);
    }
    let shown = excerpt(s);

    if let Some(rest) = label(s, "doi") {
        return parse_doi(rest, &shown).map(Identifier::Doi);
    }
    if let Some(rest) = label(s, "arxiv") {
        return parse_arxiv(rest, &shown).map(Identifier::Arxiv);
    }
    if let Some(rest) = isbn_label(s) {
        return parse_isbn(rest, &shown).map(Identifier::Isbn);
    }
    if let Some(rest) = label(s, "pmid") {
        return parse_pmid(rest, &shown).map(Identifier::Pmid);
    }
    if let Some(rest) = label(s, "pmcid") {
        let rest = strip_prefix_ci(rest, "pmc").unwrap_or(rest);
        return parse_pmcid_number(rest, &shown).map(Identifier::Pmcid);
    }
    if let Some((host, path)) = split_url(s) {
        return parse_url(s, &host, path, &shown);
    }
    if s.starts_with("10.") {
        return parse_doi(s, &shown).map(Identifier::Doi);
    }
    if let Some(rest) = strip_prefix_ci(s, "pmc") {
        return parse_pmcid_number(rest, &shown).map(Identifier::Pmcid);
    }
    if looks_like_arxiv(s) {
        return parse_arxiv(s, &shown).map(Identifier::Arxiv);
    }
    if looks_like_number(s) {
        return parse_number(s, &shown);
    }
    if looks_like_doi(s) {
        return parse_doi(s, &shown).map(Identifier::Doi);
    }
    Err(IdentifierError::Unrecognised {
        input: shown,
        hint: String::new(),
    })
}

/// Whitespace, a final `.`, `,`, `;`, an unmatched final `)` or `]`, enclosing quotes,
/// `<…>`, `(…)` or `[…]`, over and over until none is left.
fn tidy(input: &str) -> &str {
    let mut s = input;
    loop {
        let before = s.len();
        s = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}' || c == '\u{200b}');
        s = s.trim_end_matches(['.', ',', ';']);
        if s.ends_with(')') && s.matches(')').count() > s.matches('(').count() {
            s = s.get(..s.len() - 1).unwrap_or(s);
        }
        if s.ends_with(']') && s.matches(']').count() > s.matches('[').count() {
            s = s.get(..s.len() - 1).unwrap_or(s);
        }
        // No identifier starts with one of these, so an enclosing pair is never its own.
        for (open, close) in [
            ('"', '"'),
            ('\'', '\''),
            ('`', '`'),
            ('“', '”'),
            ('<', '>'),
            ('(', ')'),
            ('[', ']'),
        ] {
            if let Some(inner) = s.strip_prefix(open).and_then(|t| t.strip_suffix(close)) {
                s = inner;
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// The first [`EXCERPT_CHARS`] characters (the last of them `…` when cut).
fn excerpt(s: &str) -> String {
    if s.chars().nth(EXCERPT_CHARS).is_none() {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(EXCERPT_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s.get(prefix.len()..))
        .flatten()
}

/// What follows `name:` or `name ` (any case, spaces after it allowed), or `""` for `name`
/// alone.
fn label<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    let rest = strip_prefix_ci(s, name)?;
    let after = rest
        .strip_prefix(':')
        .or_else(|| (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest))?;
    Some(after.trim_start())
}

/// Hyphens a copy-paste may bring instead of `-`.
fn is_hyphen(c: char) -> bool {
    matches!(c, '-' | '\u{2010}'..='\u{2015}' | '\u{2212}')
}

/// Digits, possibly with hyphens or spaces and a final `X`: a PMID or an ISBN.
fn looks_like_number(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| {
            c.is_ascii_digit() || is_hyphen(c) || c.is_whitespace() || c == 'X' || c == 'x'
        })
}

/// A bare number: 1–8 digits are a PMID, 10 or 13 an ISBN, other lengths neither; with
/// hyphens, spaces or an `X`, an ISBN.
fn parse_number(s: &str, shown: &str) -> Result<Identifier, IdentifierError> {
    let plain = s.bytes().all(|b| b.is_ascii_digit());
    if plain && s.len() <= 8 {
        return parse_pmid(s, shown).map(Identifier::Pmid);
    }
    if !plain || matches!(s.len(), 10 | 13) {
        return parse_isbn(s, shown).map(Identifier::Isbn);
    }
    Err(IdentifierError::Unrecognised {
        input: shown.to_string(),
        hint: " (a number is a PMID when it has 1 to 8 digits and an ISBN when it has 10 or \
               13)"
        .to_string(),
    })
}
