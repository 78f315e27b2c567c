//! arXiv ids, new (`YYMM.NNNNN`) and old (`archive/YYMMNNN`), read by `zotero_sources::ArxivId`.

use zotero_sources::{ArxivId, SourceError};

use super::{IdentifierError, IdentifierKind};

pub(super) const EXPECTED_ARXIV: &str =
    "an arXiv id: YYMM.NNNNN or archive/YYMMNNN with an optional \
     version, such as 1706.03762v5 or hep-th/9901001, bare, after arXiv:, or in an \
     https://arxiv.org/abs/ or /pdf/ link";

pub(super) fn parse_arxiv(s: &str, shown: &str) -> Result<ArxivId, IdentifierError> {
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
pub(super) fn looks_like_arxiv(s: &str) -> bool {
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
