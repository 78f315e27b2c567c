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

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use zotero_sources::{ArxivId, SourceError};

/// Longer inputs are refused unread.
pub const MAX_INPUT_CHARS: usize = 2_000;

/// At most this many characters of the input are repeated in an error.
pub const EXCERPT_CHARS: usize = 64;

const EXPECTED_ANY: &str =
    "one of: DOI, arXiv id, ISBN-10/13, PMID, PMCID, or a doi.org / arxiv.org / PubMed URL \
     (such as 10.1038/nature12373, arXiv:1706.03762, 978-0-306-40615-7, PMID:31452104, PMC6784890)";
const EXPECTED_DOI: &str = "a DOI: 10.<registrant>/<suffix>, such as 10.1038/nature12373, \
     bare, after doi:, or in a https://doi.org/ link";
const EXPECTED_ARXIV: &str = "an arXiv id: YYMM.NNNNN or archive/YYMMNNN with an optional \
     version, such as 1706.03762v5 or hep-th/9901001, bare, after arXiv:, or in an \
     https://arxiv.org/abs/ or /pdf/ link";
const EXPECTED_ISBN: &str = "an ISBN-10 or an ISBN-13 starting 978 or 979, hyphens and spaces \
     allowed, such as 978-0-306-40615-7 or 0-306-40615-2";
const EXPECTED_PMID: &str = "a PMID: 1 to 8 digits without a leading zero, such as 31452104, \
     bare, after PMID:, or in a https://pubmed.ncbi.nlm.nih.gov/<PMID>/ link";
const EXPECTED_PMCID: &str = "a PMCID: PMC and 1 to 9 digits, such as PMC6784890, bare, after \
     PMCID:, or in a https://pmc.ncbi.nlm.nih.gov/articles/<PMCID>/ link";

/// The prefix of every arXiv DOI, lower case (`10.48550/arXiv.1706.03762`).
const ARXIV_DOI_PREFIX: &str = "10.48550/arxiv.";

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

/// A DOI. Equality and hashing ignore case, as DOIs do (the DOI Handbook: case-insensitive
/// for ASCII letters); `Display` shows it as it was given.
#[derive(Debug, Clone)]
pub struct Doi {
    doi: String,
    canonical: String,
}

impl Doi {
    /// The DOI as given (after its prefix or link was taken off): `10.1038/Nature12373`.
    pub fn as_str(&self) -> &str {
        &self.doi
    }

    /// Lower case, for recognising duplicates: `10.1038/nature12373`.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// `10.1038`: `10.` and the registrant code.
    pub fn prefix(&self) -> &str {
        self.doi
            .split_once('/')
            .map_or(&self.doi, |(prefix, _)| prefix)
    }

    /// The arXiv id of an arXiv DOI (`10.48550/arXiv.1706.03762` → `1706.03762`), to recognise
    /// the same paper given both ways; `None` for other DOIs.
    pub fn arxiv_id(&self) -> Option<ArxivId> {
        if !self.canonical.starts_with(ARXIV_DOI_PREFIX) {
            return None;
        }
        // The canonical form is the ASCII lower case of `doi`: the same byte offsets.
        let id = self.doi.get(ARXIV_DOI_PREFIX.len()..)?;
        ArxivId::parse(id).ok()
    }
}

impl PartialEq for Doi {
    fn eq(&self, other: &Self) -> bool {
        self.canonical == other.canonical
    }
}

impl Eq for Doi {}

impl Hash for Doi {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.canonical.hash(state);
    }
}

impl fmt::Display for Doi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.doi)
    }
}

/// An ISBN, kept as its ISBN-13 (an ISBN-10 becomes the 978-prefixed ISBN-13 it is part of).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Isbn {
    /// 13 ASCII digits.
    isbn13: String,
}

impl Isbn {
    /// The 13 digits of the ISBN-13, without hyphens: `9780306406157`.
    pub fn canonical(&self) -> &str {
        &self.isbn13
    }

    /// Same as [`Isbn::canonical`].
    pub fn isbn13(&self) -> &str {
        &self.isbn13
    }

    /// The ISBN-10 (`0306406152`, check digit possibly `X`) for a 978 ISBN; `None` for 979
    /// ones, which have no ISBN-10.
    pub fn isbn10(&self) -> Option<String> {
        let nine = self.isbn13.strip_prefix("978")?.get(..9)?;
        let digits: Vec<u32> = nine.chars().filter_map(|c| c.to_digit(10)).collect();
        let check = isbn10_check(&digits)?;
        Some(format!("{nine}{check}"))
    }
}

/// The ISBN-13 digits, which [`parse`] reads back.
impl fmt::Display for Isbn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.isbn13)
    }
}

/// A PubMed id: 1 to 8 digits, no leading zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pmid(u32);

impl Pmid {
    pub fn value(self) -> u32 {
        self.0
    }

    /// The digits: `31452104`.
    pub fn canonical(self) -> String {
        self.0.to_string()
    }
}

impl fmt::Display for Pmid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A PubMed Central id: `PMC` and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pmcid(u32);

impl Pmcid {
    /// The number after `PMC`.
    pub fn value(self) -> u32 {
        self.0
    }

    /// Upper case `PMC` and the digits: `PMC6784890`.
    pub fn canonical(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Pmcid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PMC{}", self.0)
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

/// What follows `ISBN`, `ISBN-10`, `ISBN-13`, `ISBN10`, `ISBN13` and `:` or a space.
fn isbn_label(s: &str) -> Option<&str> {
    let rest = strip_prefix_ci(s, "isbn")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let rest = rest
        .strip_prefix("10")
        .or_else(|| rest.strip_prefix("13"))
        .unwrap_or(rest);
    label(rest, "")
}

/// `(lower-case host, path after the host including query)` of an `http(s)://` link, or of a
/// scheme-less one on a host this parser knows (`doi.org/…`).
fn split_url(s: &str) -> Option<(String, &str)> {
    const KNOWN_HOSTS: &[&str] = &[
        "doi.org",
        "dx.doi.org",
        "www.doi.org",
        "arxiv.org",
        "www.arxiv.org",
        "export.arxiv.org",
        "pubmed.ncbi.nlm.nih.gov",
        "www.ncbi.nlm.nih.gov",
        "ncbi.nlm.nih.gov",
        "pmc.ncbi.nlm.nih.gov",
    ];
    let with_scheme = strip_prefix_ci(s, "https://").or_else(|| strip_prefix_ci(s, "http://"));
    let rest = with_scheme.unwrap_or(s);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest.get(..end)?.to_ascii_lowercase();
    let path = rest.get(end..)?;
    if with_scheme.is_some() || (KNOWN_HOSTS.contains(&host.as_str()) && path.starts_with('/')) {
        Some((host, path))
    } else {
        None
    }
}

fn parse_url(s: &str, host: &str, path: &str, shown: &str) -> Result<Identifier, IdentifierError> {
    let malformed = |kind, problem: &str, expected| IdentifierError::Malformed {
        kind,
        input: shown.to_string(),
        problem: problem.to_string(),
        expected,
    };
    // The query and the fragment are cut before `%`-escapes are decoded, so an escaped `?`
    // or `#` stays in the DOI.
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match host {
        "doi.org" | "dx.doi.org" | "www.doi.org" => {
            let encoded = path.trim_start_matches('/');
            let doi = percent_decode(encoded).ok_or_else(|| {
                malformed(
                    IdentifierKind::Doi,
                    "its %-escapes are not UTF-8 text",
                    EXPECTED_DOI,
                )
            })?;
            parse_doi(&doi, shown).map(Identifier::Doi)
        }
        "arxiv.org" | "www.arxiv.org" | "export.arxiv.org" => {
            parse_arxiv(s, shown).map(Identifier::Arxiv)
        }
        "pubmed.ncbi.nlm.nih.gov" => match segments.as_slice() {
            [pmid] => parse_pmid(pmid, shown).map(Identifier::Pmid),
            _ => Err(malformed(
                IdentifierKind::Pmid,
                "the link is not https://pubmed.ncbi.nlm.nih.gov/<PMID>/",
                EXPECTED_PMID,
            )),
        },
        "www.ncbi.nlm.nih.gov" | "ncbi.nlm.nih.gov" => match segments.as_slice() {
            [pubmed, pmid] if pubmed.eq_ignore_ascii_case("pubmed") => {
                parse_pmid(pmid, shown).map(Identifier::Pmid)
            }
            [pmc, articles, pmcid, ..]
                if pmc.eq_ignore_ascii_case("pmc") && articles.eq_ignore_ascii_case("articles") =>
            {
                parse_pmcid(pmcid, shown).map(Identifier::Pmcid)
            }
            [pmc, ..] if pmc.eq_ignore_ascii_case("pmc") => Err(malformed(
                IdentifierKind::Pmcid,
                "the link is not https://www.ncbi.nlm.nih.gov/pmc/articles/<PMCID>/",
                EXPECTED_PMCID,
            )),
            _ => Err(malformed(
                IdentifierKind::Pmid,
                "the link is not https://www.ncbi.nlm.nih.gov/pubmed/<PMID>",
                EXPECTED_PMID,
            )),
        },
        "pmc.ncbi.nlm.nih.gov" => match segments.as_slice() {
            [articles, pmcid, ..] if articles.eq_ignore_ascii_case("articles") => {
                parse_pmcid(pmcid, shown).map(Identifier::Pmcid)
            }
            _ => Err(malformed(
                IdentifierKind::Pmcid,
                "the link is not https://pmc.ncbi.nlm.nih.gov/articles/<PMCID>/",
                EXPECTED_PMCID,
            )),
        },
        _ => Err(IdentifierError::Unrecognised {
            input: shown.to_string(),
            hint: " (only doi.org, arxiv.org, PubMed and PubMed Central links are read; for \
                   another site, give the DOI on its page)"
                .to_string(),
        }),
    }
}

/// `%XX` escapes decoded; a `%` not followed by two hex digits is kept as it is. `None` when
/// the bytes are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escaped = match (b, bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&hi), Some(&lo)) => hex(hi).zip(hex(lo)).map(|(hi, lo)| hi * 16 + lo),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// `10.` + registrant code (digits, dot-separated sub-codes) + `/` + a suffix of printable
/// characters without spaces. The same trailing punctuation as around any input is dropped,
/// so that the DOI reads back as itself.
fn parse_doi(doi: &str, shown: &str) -> Result<Doi, IdentifierError> {
    let doi = tidy(doi);
    let malformed = |problem: &str| IdentifierError::Malformed {
        kind: IdentifierKind::Doi,
        input: shown.to_string(),
        problem: problem.to_string(),
        expected: EXPECTED_DOI,
    };
    if doi.is_empty() {
        return Err(malformed("there is nothing after the prefix"));
    }
    if doi.contains(char::is_whitespace) {
        return Err(malformed("it contains a space"));
    }
    if doi.contains(char::is_control) {
        return Err(malformed("it contains a control character"));
    }
    let Some(rest) = doi.strip_prefix("10.") else {
        return Err(malformed("it does not start with 10."));
    };
    let Some((registrant, suffix)) = rest.split_once('/') else {
        return Err(malformed(
            "it has no / between the registrant code and the suffix",
        ));
    };
    let registrant_ok = registrant
        .split('.')
        .all(|code| !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit()));
    if !registrant_ok {
        return Err(malformed(
            "the registrant code after 10. is not digits with dot-separated sub-codes \
             (such as 10.1000 or 10.1000.10)",
        ));
    }
    if suffix.is_empty() {
        return Err(malformed("there is nothing after the /"));
    }
    Ok(Doi {
        doi: doi.to_string(),
        canonical: doi.to_ascii_lowercase(),
    })
}

fn parse_arxiv(s: &str, shown: &str) -> Result<ArxivId, IdentifierError> {
    ArxivId::parse(s).map_err(|err| {
        let problem = match err {
            // A reason that quotes the input (its archive or subject class) is repeated only
            // when the quote is short, as a mistyped archive is; the excerpt shows the rest.
            SourceError::InvalidArxivId { reason, .. } if !reason.contains('"') => reason,
            SourceError::InvalidArxivId { reason, .. } if reason.chars().count() <= 80 => reason,
            _ => "the part before the / is not an arXiv archive with an optional subject class \
                  (such as hep-th or math.CA)"
                .to_string(),
        };
        IdentifierError::Malformed {
            kind: IdentifierKind::Arxiv,
            input: shown.to_string(),
            problem,
            expected: EXPECTED_ARXIV,
        }
    })
}

/// `YYMM.N…` (new ids) or `archive(.SC)/N…` (old ids), with or without version.
fn looks_like_arxiv(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() > 5
        && b.iter().take(4).all(u8::is_ascii_digit)
        && b.get(4) == Some(&b'.')
        && b.get(5).is_some_and(u8::is_ascii_digit)
    {
        return true;
    }
    let Some((archive, number)) = s.split_once('/') else {
        return false;
    };
    let archive_shaped = archive.len() <= 24
        && archive.starts_with(|c: char| c.is_ascii_alphabetic())
        && archive.matches('.').count() <= 1
        && archive
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '.');
    archive_shaped && number.starts_with(|c: char| c.is_ascii_digit())
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

/// Digits and dots, a `/`, anything: a DOI without its `10.`.
fn looks_like_doi(s: &str) -> bool {
    s.split_once('/').is_some_and(|(head, _)| {
        !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit() || b == b'.')
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

fn parse_pmid(s: &str, shown: &str) -> Result<Pmid, IdentifierError> {
    let malformed = |problem: &str| IdentifierError::Malformed {
        kind: IdentifierKind::Pmid,
        input: shown.to_string(),
        problem: problem.to_string(),
        expected: EXPECTED_PMID,
    };
    if s.is_empty() {
        return Err(malformed("there is no number"));
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed("it is not only digits"));
    }
    if s.starts_with('0') {
        return Err(malformed("it starts with 0"));
    }
    if s.len() > 8 {
        return Err(malformed("it has more than 8 digits"));
    }
    s.parse()
        .map(Pmid)
        .map_err(|_| malformed("it is not a number"))
}

/// `PMC` (any case) and digits.
fn parse_pmcid(s: &str, shown: &str) -> Result<Pmcid, IdentifierError> {
    match strip_prefix_ci(s, "pmc") {
        Some(number) => parse_pmcid_number(number, shown),
        None => Err(IdentifierError::Malformed {
            kind: IdentifierKind::Pmcid,
            input: shown.to_string(),
            problem: "it does not start with PMC".to_string(),
            expected: EXPECTED_PMCID,
        }),
    }
}

/// The digits after `PMC`.
fn parse_pmcid_number(s: &str, shown: &str) -> Result<Pmcid, IdentifierError> {
    let malformed = |problem: &str| IdentifierError::Malformed {
        kind: IdentifierKind::Pmcid,
        input: shown.to_string(),
        problem: problem.to_string(),
        expected: EXPECTED_PMCID,
    };
    if s.is_empty() {
        return Err(malformed("there are no digits after PMC"));
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed("PMC is not followed by digits only"));
    }
    if s.starts_with('0') {
        return Err(malformed("its number starts with 0"));
    }
    if s.len() > 9 {
        return Err(malformed("its number has more than 9 digits"));
    }
    s.parse()
        .map(Pmcid)
        .map_err(|_| malformed("its number is not a number"))
}

/// ISBN-10 or ISBN-13, hyphens and spaces anywhere, check digit verified.
fn parse_isbn(s: &str, shown: &str) -> Result<Isbn, IdentifierError> {
    let malformed = |problem: String| IdentifierError::Malformed {
        kind: IdentifierKind::Isbn,
        input: shown.to_string(),
        problem,
        expected: EXPECTED_ISBN,
    };
    let chars: Vec<char> = s
        .chars()
        .filter(|c| !is_hyphen(*c) && !c.is_whitespace())
        .collect();
    let (last, body) = chars
        .split_last()
        .ok_or_else(|| malformed("there is no number".to_string()))?;
    let mut digits = Vec::with_capacity(13);
    for c in body {
        match c.to_digit(10) {
            Some(d) => digits.push(d),
            None => {
                return Err(malformed(
                    "it has a character that is not a digit, a hyphen or a space".to_string(),
                ))
            }
        }
    }
    let check_given = last.to_ascii_uppercase();
    match chars.len() {
        10 => {
            if !check_given.is_ascii_digit() && check_given != 'X' {
                return Err(malformed("an ISBN-10 ends in a digit or X".to_string()));
            }
            let expected = isbn10_check(&digits)
                .ok_or_else(|| malformed("it has no check digit".to_string()))?;
            if expected != check_given {
                return Err(IdentifierError::IsbnCheckDigit {
                    input: shown.to_string(),
                    length: 10,
                    expected,
                    got: check_given,
                });
            }
            let mut isbn13: Vec<u32> = vec![9, 7, 8];
            isbn13.extend_from_slice(&digits);
            let check13 = isbn13_check(&isbn13);
            let mut text: String = isbn13
                .iter()
                .filter_map(|d| char::from_digit(*d, 10))
                .collect();
            text.push(check13);
            Ok(Isbn { isbn13: text })
        }
        13 => {
            if !check_given.is_ascii_digit() {
                return Err(malformed("an ISBN-13 ends in a digit".to_string()));
            }
            if !(digits.starts_with(&[9, 7, 8]) || digits.starts_with(&[9, 7, 9])) {
                return Err(malformed("an ISBN-13 starts with 978 or 979".to_string()));
            }
            let expected = isbn13_check(&digits);
            if expected != check_given {
                return Err(IdentifierError::IsbnCheckDigit {
                    input: shown.to_string(),
                    length: 13,
                    expected,
                    got: check_given,
                });
            }
            let mut text: String = digits
                .iter()
                .filter_map(|d| char::from_digit(*d, 10))
                .collect();
            text.push(check_given);
            Ok(Isbn { isbn13: text })
        }
        n => Err(malformed(format!(
            "it has {n} digits; an ISBN has 10 or 13"
        ))),
    }
}

/// The check character of an ISBN-10 from its first nine digits: weights 10 down to 2, the
/// sum plus the check a multiple of 11, 10 written `X`.
fn isbn10_check(nine: &[u32]) -> Option<char> {
    if nine.len() != 9 {
        return None;
    }
    let sum: u32 = nine.iter().zip((2..=10).rev()).map(|(d, w)| d * w).sum();
    match (11 - sum % 11) % 11 {
        10 => Some('X'),
        check => char::from_digit(check, 10),
    }
}

/// The check digit of an ISBN-13 from its first twelve digits: weights 1 and 3 alternating,
/// the sum plus the check a multiple of 10.
fn isbn13_check(twelve: &[u32]) -> char {
    let sum: u32 = twelve
        .iter()
        .zip([1, 3].iter().cycle())
        .map(|(d, w)| d * w)
        .sum();
    char::from_digit((10 - sum % 10) % 10, 10).unwrap_or('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(input: &str) -> Identifier {
        parse(input).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    fn err(input: &str) -> IdentifierError {
        match parse(input) {
            Ok(id) => panic!("{input}: accepted as {:?}", id),
            Err(e) => e,
        }
    }

    #[test]
    fn dois_in_every_form() {
        for input in [
            "10.1038/nature12373",
            "  10.1038/nature12373\n",
            "doi:10.1038/nature12373",
            "DOI: 10.1038/nature12373",
            "Doi:10.1038/nature12373",
            "doi 10.1038/nature12373",
            "https://doi.org/10.1038/nature12373",
            "http://dx.doi.org/10.1038/nature12373",
            "https://www.doi.org/10.1038/nature12373",
            "doi.org/10.1038/nature12373",
            "dx.doi.org/10.1038/nature12373",
            "HTTPS://DOI.ORG/10.1038/NATURE12373",
            "https://doi.org/10.1038%2Fnature12373",
            "https://doi.org/10.1038%2fnature12373?utm_source=x#top",
            "10.1038/nature12373.",
            "10.1038/nature12373,",
            "(10.1038/nature12373)",
            "[10.1038/nature12373]",
            "<https://doi.org/10.1038/nature12373>",
            "\"10.1038/nature12373\"",
            "10.1038/nature12373);",
        ] {
            let id = ok(input);
            assert_eq!(id.kind(), IdentifierKind::Doi, "{input}");
            assert_eq!(id.canonical(), "10.1038/nature12373", "{input}");
        }
    }

    #[test]
    fn dois_keep_their_case_for_display_and_their_own_parentheses() {
        let Identifier::Doi(doi) =
            ok("doi:10.1002/(SICI)1097-4636(199706)35:4<409::AID-JBM1>3.0.CO;2-X")
        else {
            panic!("not a DOI");
        };
        assert_eq!(
            doi.as_str(),
            "10.1002/(SICI)1097-4636(199706)35:4<409::AID-JBM1>3.0.CO;2-X"
        );
        assert_eq!(
            doi.canonical(),
            "10.1002/(sici)1097-4636(199706)35:4<409::aid-jbm1>3.0.co;2-x"
        );
        assert_eq!(doi.prefix(), "10.1002");
        let Identifier::Doi(doi) = ok("https://doi.org/10.1007/978-3-540-74958-5_14)") else {
            panic!("not a DOI");
        };
        assert_eq!(doi.as_str(), "10.1007/978-3-540-74958-5_14");
        assert_eq!(ok("10.1000.10/ABC").to_string(), "10.1000.10/ABC");
        assert_eq!(ok("10.1000/ABC"), ok("10.1000/abc"));
        // An escaped ? in a link is part of the DOI, an unescaped one starts the query.
        assert_eq!(
            ok("https://doi.org/10.1000/a%3Fb?c").canonical(),
            "10.1000/a?b"
        );
    }

    #[test]
    fn the_arxiv_doi_stays_a_doi_and_knows_its_arxiv_id() {
        let id = ok("10.48550/arXiv.1706.03762");
        assert_eq!(id.kind(), IdentifierKind::Doi);
        assert_eq!(id.canonical(), "10.48550/arxiv.1706.03762");
        assert_eq!(id.to_string(), "10.48550/arXiv.1706.03762");
        let arxiv = id.arxiv_id().unwrap();
        assert_eq!(arxiv.canonical(), "1706.03762");
        assert_eq!(Some(arxiv), ok("arXiv:1706.03762").arxiv_id());
        let id = ok("https://doi.org/10.48550/ARXIV.HEP-TH/9901001");
        assert_eq!(id.arxiv_id().unwrap().canonical(), "hep-th/9901001");
        assert_eq!(ok("10.1038/nature12373").arxiv_id(), None);
    }

    #[test]
    fn malformed_dois_say_what_a_doi_is() {
        for (input, problem) in [
            ("doi:", "nothing after the prefix"),
            ("doi:11.1038/nature12373", "does not start with 10."),
            ("1038/nature12373", "does not start with 10."),
            ("https://doi.org/nature12373", "does not start with 10."),
            ("10.1038nature12373", "no /"),
            ("10.1038", "no /"),
            ("10.1038/", "nothing after the /"),
            ("10./x", "registrant code"),
            ("10.10a38/x", "registrant code"),
            ("10.1038..1/x", "registrant code"),
            ("10.1038/nature 12373", "a space"),
            ("https://doi.org/10.1038/nature%2012373", "a space"),
            ("doi:10.1038/na\u{7}ture", "control character"),
            ("https://doi.org/10.1038/%FF", "not UTF-8"),
        ] {
            let e = err(input);
            assert_eq!(e.looks_like(), Some(IdentifierKind::Doi), "{input}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(problem), "{input}: {msg}");
            assert!(msg.contains("a DOI: 10.<registrant>/<suffix>"), "{msg}");
        }
    }

    #[test]
    fn arxiv_ids_in_every_form() {
        for (input, shown, canonical) in [
            ("1706.03762", "1706.03762", "1706.03762"),
            ("1706.03762v5", "1706.03762v5", "1706.03762"),
            ("arXiv:1706.03762v5", "1706.03762v5", "1706.03762"),
            ("ARXIV:1706.03762", "1706.03762", "1706.03762"),
            ("arXiv 1706.03762", "1706.03762", "1706.03762"),
            (
                "https://arxiv.org/abs/1706.03762v5",
                "1706.03762v5",
                "1706.03762",
            ),
            (
                "https://arxiv.org/pdf/1706.03762v5.pdf",
                "1706.03762v5",
                "1706.03762",
            ),
            (
                "https://arxiv.org/pdf/1706.03762",
                "1706.03762",
                "1706.03762",
            ),
            (
                "http://export.arxiv.org/abs/1706.03762",
                "1706.03762",
                "1706.03762",
            ),
            ("arxiv.org/abs/1706.03762.", "1706.03762", "1706.03762"),
            ("0704.0001", "0704.0001", "0704.0001"),
            ("hep-th/9901001", "hep-th/9901001", "hep-th/9901001"),
            (
                "arXiv:hep-th/9901001v1",
                "hep-th/9901001v1",
                "hep-th/9901001",
            ),
            ("math.CA/0611800v2", "math.CA/0611800v2", "math/0611800"),
            (
                "https://arxiv.org/abs/math.CA/0611800v2",
                "math.CA/0611800v2",
                "math/0611800",
            ),
            (
                "https://export.arxiv.org/pdf/cond-mat/0102536v1.pdf",
                "cond-mat/0102536v1",
                "cond-mat/0102536",
            ),
        ] {
            let id = ok(input);
            assert_eq!(id.kind(), IdentifierKind::Arxiv, "{input}");
            assert_eq!(id.to_string(), shown, "{input}");
            assert_eq!(id.canonical(), canonical, "{input}");
        }
    }

    #[test]
    fn malformed_arxiv_ids_say_why() {
        for (input, problem) in [
            ("1713.01234", "13 is not a month"),
            ("arXiv:1700.01234", "00 is not a month"),
            ("https://arxiv.org/abs/1713.01234", "not a month"),
            ("1706.0376", "four-digit"),
            ("1412.00001", "five-digit"),
            ("hep-xx/9901001", "not an arXiv archive"),
            ("hep-th/9913001", "not a month"),
            ("https://arxiv.org/list/cs.AI", "/abs/"),
            ("arXiv:", "YYMM"),
        ] {
            let e = err(input);
            assert_eq!(e.looks_like(), Some(IdentifierKind::Arxiv), "{input}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(problem), "{input}: {msg}");
            assert!(msg.contains("an arXiv id: YYMM.NNNNN"), "{msg}");
        }
    }

    #[test]
    fn isbns_in_every_form_become_isbn13() {
        for (input, isbn13, isbn10) in [
            ("978-0-306-40615-7", "9780306406157", Some("0306406152")),
            ("9780306406157", "9780306406157", Some("0306406152")),
            (
                "ISBN 978-0-306-40615-7",
                "9780306406157",
                Some("0306406152"),
            ),
            (
                "ISBN: 978 0 306 40615 7",
                "9780306406157",
                Some("0306406152"),
            ),
            (
                "ISBN-13: 978-0-306-40615-7",
                "9780306406157",
                Some("0306406152"),
            ),
            ("isbn13 9780306406157", "9780306406157", Some("0306406152")),
            ("0-306-40615-2", "9780306406157", Some("0306406152")),
            ("0306406152", "9780306406157", Some("0306406152")),
            (
                "ISBN-10: 0-306-40615-2",
                "9780306406157",
                Some("0306406152"),
            ),
            ("ISBN 0‐306‐40615‐2.", "9780306406157", Some("0306406152")),
            ("080442957X", "9780804429573", Some("080442957X")),
            ("0-8044-2957-x", "9780804429573", Some("080442957X")),
            ("979-10-90636-07-1", "9791090636071", None),
        ] {
            let id = ok(input);
            assert_eq!(id.kind(), IdentifierKind::Isbn, "{input}");
            assert_eq!(id.canonical(), isbn13, "{input}");
            assert_eq!(id.to_string(), isbn13, "{input}");
            let Identifier::Isbn(isbn) = id else {
                panic!("{input}: not an ISBN");
            };
            assert_eq!(isbn.isbn10().as_deref(), isbn10, "{input}");
        }
    }

    #[test]
    fn isbns_with_a_wrong_check_digit_name_the_right_one() {
        for (input, length, expected, got) in [
            ("978-0-306-40615-3", 13, '7', '3'),
            ("9780306406153", 13, '7', '3'),
            ("0-306-40615-3", 10, '2', '3'),
            ("ISBN 0306406153", 10, '2', '3'),
            ("0804429571", 10, 'X', '1'),
            ("030640615X", 10, '2', 'X'),
        ] {
            let e = err(input);
            assert_eq!(
                e,
                IdentifierError::IsbnCheckDigit {
                    input: tidy(input).to_string(),
                    length,
                    expected,
                    got
                },
                "{input}"
            );
            assert!(e.to_string().contains(&format!(
                "an ISBN-{length} whose check digit is {expected}, got {got}"
            )));
        }
        for input in [
            "123-4567890123",
            "ISBN 12345",
            "ISBN 978-0-306-4061X-7",
            "978030640615X",
            "ISBN: abc",
            "ISBN",
        ] {
            let e = err(input);
            assert_eq!(e.looks_like(), Some(IdentifierKind::Isbn), "{input}: {e}");
        }
    }

    #[test]
    fn pmids_and_pmcids_in_every_form() {
        for input in [
            "31452104",
            "PMID:31452104",
            "PMID: 31452104",
            "pmid 31452104",
            "https://pubmed.ncbi.nlm.nih.gov/31452104/",
            "https://pubmed.ncbi.nlm.nih.gov/31452104",
            "pubmed.ncbi.nlm.nih.gov/31452104/?from=x",
            "https://www.ncbi.nlm.nih.gov/pubmed/31452104",
            "http://ncbi.nlm.nih.gov/pubmed/31452104/",
        ] {
            assert_eq!(ok(input), Identifier::Pmid(Pmid(31452104)), "{input}");
        }
        assert_eq!(ok("1").canonical(), "1");
        for input in [
            "PMC6784890",
            "pmc6784890",
            "PMCID: PMC6784890",
            "PMCID:6784890",
            "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC6784890/",
            "https://www.ncbi.nlm.nih.gov/pmc/articles/pmc6784890/pdf/main.pdf",
            "https://pmc.ncbi.nlm.nih.gov/articles/PMC6784890/",
            "pmc.ncbi.nlm.nih.gov/articles/PMC6784890",
        ] {
            let id = ok(input);
            assert_eq!(id, Identifier::Pmcid(Pmcid(6784890)), "{input}");
            assert_eq!(id.canonical(), "PMC6784890", "{input}");
        }
    }

    #[test]
    fn malformed_pmids_and_pmcids() {
        for (input, kind) in [
            ("PMID:", IdentifierKind::Pmid),
            ("PMID: 0123", IdentifierKind::Pmid),
            ("PMID: 123456789", IdentifierKind::Pmid),
            ("PMID: 12a", IdentifierKind::Pmid),
            ("0123", IdentifierKind::Pmid),
            (
                "https://pubmed.ncbi.nlm.nih.gov/?term=cancer",
                IdentifierKind::Pmid,
            ),
            (
                "https://www.ncbi.nlm.nih.gov/pubmed/abc",
                IdentifierKind::Pmid,
            ),
            ("PMC", IdentifierKind::Pmcid),
            ("PMCID: PMC", IdentifierKind::Pmcid),
            ("PMC12x", IdentifierKind::Pmcid),
            ("PMC0123", IdentifierKind::Pmcid),
            ("PMC1234567890", IdentifierKind::Pmcid),
            (
                "https://pmc.ncbi.nlm.nih.gov/articles/PMC/",
                IdentifierKind::Pmcid,
            ),
            (
                "https://pmc.ncbi.nlm.nih.gov/search/",
                IdentifierKind::Pmcid,
            ),
            ("https://www.ncbi.nlm.nih.gov/pmc/", IdentifierKind::Pmcid),
        ] {
            let e = err(input);
            assert_eq!(e.looks_like(), Some(kind), "{input}: {e}");
        }
    }

    #[test]
    fn numbers_are_pmids_or_isbns_by_their_length() {
        assert_eq!(ok("12345678").kind(), IdentifierKind::Pmid);
        assert_eq!(ok("0306406152").kind(), IdentifierKind::Isbn);
        assert_eq!(ok("9780306406157").kind(), IdentifierKind::Isbn);
        for input in ["123456789", "12345678901", "123456789012", "12345678901234"] {
            let e = err(input);
            assert!(
                matches!(e, IdentifierError::Unrecognised { .. }),
                "{input}: {e}"
            );
            assert!(e.to_string().contains("1 to 8 digits"), "{e}");
        }
        // 13 digits not starting 978/979, and 10 digits with a wrong check digit: ISBN errors.
        assert_eq!(
            err("1234567890123").looks_like(),
            Some(IdentifierKind::Isbn)
        );
        assert_eq!(err("1234567890").looks_like(), Some(IdentifierKind::Isbn));
    }

    #[test]
    fn unrecognised_inputs_list_what_is_accepted() {
        for input in [
            "hello world",
            "https://example.org/paper/10.1000/xyz",
            "ftp://doi.org/10.1000/xyz",
            "foo/bar",
            "ISSN 0028-0836",
        ] {
            let e = err(input);
            assert_eq!(e.looks_like(), None, "{input}: {e}");
            assert!(
                e.to_string()
                    .contains("one of: DOI, arXiv id, ISBN-10/13, PMID, PMCID"),
                "{e}"
            );
        }
        assert_eq!(err(""), IdentifierError::Empty);
        assert_eq!(err(" .;\n"), IdentifierError::Empty);
    }

    #[test]
    fn long_inputs_are_refused_unread_and_never_echoed_whole() {
        let long = format!("10.1000/{}", "a".repeat(MAX_INPUT_CHARS));
        assert_eq!(err(&long), IdentifierError::TooLong);
        let just_fits = format!("10.1000/{}", "a".repeat(MAX_INPUT_CHARS - 8));
        assert_eq!(ok(&just_fits).kind(), IdentifierKind::Doi);
        let bad = format!("10.1000/{} x", "b".repeat(500));
        let msg = err(&bad).to_string();
        assert!(!msg.contains(&"b".repeat(EXCERPT_CHARS)), "{msg}");
        assert!(msg.contains('…'), "{msg}");
        for bad_archive in [
            format!("{}/9901001", "q".repeat(200)),
            format!("arXiv:{}/9901001", "q".repeat(60)),
            format!("arXiv:math.{}/9901001", "Q".repeat(60)),
        ] {
            let e = err(&bad_archive);
            assert_eq!(
                e.looks_like().is_some(),
                bad_archive.starts_with("arXiv"),
                "{e}"
            );
            let msg = e.to_string();
            assert!(msg.matches(['q', 'Q']).count() < EXCERPT_CHARS, "{msg}");
        }
    }

    #[test]
    fn kinds_have_names() {
        let names: Vec<&str> = [
            "10.1000/x",
            "1706.03762",
            "0306406152",
            "31452104",
            "PMC6784890",
        ]
        .into_iter()
        .map(|s| ok(s).kind().name())
        .collect();
        assert_eq!(names, ["doi", "arxiv", "isbn", "pmid", "pmcid"]);
        assert_eq!(IdentifierKind::Arxiv.to_string(), "arxiv");
        assert_eq!("PMC6784890".parse::<Identifier>(), Ok(ok("PMC6784890")));
    }
}
