//! DOIs: `10.<registrant>/<suffix>`, compared without regard to case, and the arXiv id
//! inside an arXiv DOI.

use std::fmt;
use std::hash::{Hash, Hasher};

use zotero_sources::ArxivId;

use super::{strip_prefix_ci, tidy, IdentifierError, IdentifierKind};

pub(super) const EXPECTED_DOI: &str =
    "a DOI: 10.<registrant>/<suffix>, such as 10.1038/nature12373, \
     bare, after doi:, or in a https://doi.org/ link";

/// The prefix of every arXiv DOI, lower case (`10.48550/arXiv.1706.03762`).
pub(super) const ARXIV_DOI_PREFIX: &str = "10.48550/arxiv.";

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

/// `10.` + registrant code (digits, dot-separated sub-codes) + `/` + a suffix of printable
/// characters without spaces. The same trailing punctuation as around any input is dropped,
/// so that the DOI reads back as itself.
pub(super) fn parse_doi(doi: &str, shown: &str) -> Result<Doi, IdentifierError> {
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

/// The links and the label a DOI is written after in a record's field, in the order they are
/// taken off.
const DOI_WRAPPERS: [&str; 5] = [
    "https://doi.org/",
    "http://doi.org/",
    "https://dx.doi.org/",
    "http://dx.doi.org/",
    "doi:",
];

/// `https://doi.org/10.1/X`, `doi:10.1/X`, ` 10.1/X ` → `10.1/X`: the DOI without the link or
/// label it was written after (any case) and the spaces around it. Nothing is checked.
pub fn bare_doi(raw: &str) -> &str {
    let mut d = raw.trim();
    for wrapper in DOI_WRAPPERS {
        if let Some(rest) = strip_prefix_ci(d, wrapper) {
            d = rest.trim();
        }
    }
    d
}

/// A DOI as compared with another (DOIs ignore case): [`bare_doi`] in lower case. Whatever is
/// given folds, a DOI or not, so that two records' fields can be compared as they are.
pub fn fold_doi(raw: &str) -> String {
    bare_doi(raw).to_lowercase()
}

/// The DOI a record's field holds, as written ([`bare_doi`]), when it has a DOI's shape:
/// `10.<registrant>/<suffix>` without spaces; `None` otherwise. Looser than [`super::parse`]
/// (the registrant code is not checked, nothing around it is tidied away): a record's DOI is
/// taken as Zotero keeps it.
pub fn doi_shaped(raw: &str) -> Option<&str> {
    let d = bare_doi(raw);
    let (prefix, suffix) = d.split_once('/')?;
    let ok = prefix.starts_with("10.")
        && prefix.len() > 3
        && !suffix.is_empty()
        && !d.chars().any(char::is_whitespace);
    ok.then_some(d)
}

/// Digits and dots, a `/`, anything: a DOI without its `10.`.
pub(super) fn looks_like_doi(s: &str) -> bool {
    s.split_once('/').is_some_and(|(head, _)| {
        !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_records_doi_is_read_in_its_usual_spellings() {
        assert_eq!(
            doi_shaped(" https://doi.org/10.1000/XYZ "),
            Some("10.1000/XYZ")
        );
        assert_eq!(doi_shaped("doi:10.1/a"), Some("10.1/a"));
        assert_eq!(doi_shaped("DOI:10.1/a"), Some("10.1/a"));
        assert_eq!(doi_shaped("HTTP://DX.DOI.ORG/10.1/a"), Some("10.1/a"));
        assert_eq!(doi_shaped("10.1/a b"), None);
        assert_eq!(doi_shaped("11.1/a"), None);
        assert_eq!(doi_shaped("10./a"), None);
        assert_eq!(doi_shaped("10.1000"), None);
        assert_eq!(doi_shaped("10.1000/"), None);
    }

    #[test]
    fn dois_fold_without_their_link_label_or_case() {
        assert_eq!(
            fold_doi("https://doi.org/10.1109/CVPR.2016.90"),
            "10.1109/cvpr.2016.90"
        );
        assert_eq!(fold_doi("doi:10.1038/NATURE14539"), "10.1038/nature14539");
        assert_eq!(fold_doi(" DOI: 10.1/A "), "10.1/a");
        assert_eq!(fold_doi("not a doi"), "not a doi");
        assert_eq!(bare_doi("http://dx.doi.org/10.1/X"), "10.1/X");
    }
}
