//! The links that carry an identifier: doi.org, arxiv.org (and export.arxiv.org), PubMed and
//! PubMed Central, each read down to the identifier in its path.

use super::arxiv::parse_arxiv;
use super::doi::{parse_doi, EXPECTED_DOI};
use super::pubmed::{parse_pmcid, parse_pmid, EXPECTED_PMCID, EXPECTED_PMID};
use super::{strip_prefix_ci, Identifier, IdentifierError, IdentifierKind};

/// `(lower-case host, path after the host including query)` of an `http(s)://` link, or of a
/// scheme-less one on a host this parser knows (`doi.org/…`).
pub(super) fn split_url(s: &str) -> Option<(String, &str)> {
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

pub(super) fn parse_url(
    s: &str,
    host: &str,
    path: &str,
    shown: &str,
) -> Result<Identifier, IdentifierError> {
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
pub(super) fn percent_decode(s: &str) -> Option<String> {
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

pub(super) fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}
