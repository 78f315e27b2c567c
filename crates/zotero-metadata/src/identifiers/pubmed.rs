//! PubMed ids (PMID) and PubMed Central ids (PMCID).

use std::fmt;
use std::hash::Hash;

use super::{strip_prefix_ci, IdentifierError, IdentifierKind};

pub(super) const EXPECTED_PMID: &str =
    "a PMID: 1 to 8 digits without a leading zero, such as 31452104, \
     bare, after PMID:, or in a https://pubmed.ncbi.nlm.nih.gov/<PMID>/ link";

pub(super) const EXPECTED_PMCID: &str =
    "a PMCID: PMC and 1 to 9 digits, such as PMC6784890, bare, after \
     PMCID:, or in a https://pmc.ncbi.nlm.nih.gov/articles/<PMCID>/ link";

/// A PubMed id: 1 to 8 digits, no leading zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pmid(pub(super) u32);

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
pub struct Pmcid(pub(super) u32);

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

pub(super) fn parse_pmid(s: &str, shown: &str) -> Result<Pmid, IdentifierError> {
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
pub(super) fn parse_pmcid(s: &str, shown: &str) -> Result<Pmcid, IdentifierError> {
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
pub(super) fn parse_pmcid_number(s: &str, shown: &str) -> Result<Pmcid, IdentifierError> {
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
