//! arXiv identifiers: the forms people paste (bare ids, `arXiv:` prefixes, abs/pdf links)
//! reduced to the id, its version, the PDF URL and a file name.

use std::fmt;

use super::error::SourceError;

/// The archives of old-style identifiers (`archive[.SC]/YYMMNNN`, used until March 2007).
const OLD_ARCHIVES: &[&str] = &[
    "acc-phys", "adap-org", "alg-geom", "ao-sci", "astro-ph", "atom-ph", "bayes-an", "chao-dyn",
    "chem-ph", "cmp-lg", "comp-gas", "cond-mat", "cs", "dg-ga", "funct-an", "gr-qc", "hep-ex",
    "hep-lat", "hep-ph", "hep-th", "math", "math-ph", "mtrl-th", "nlin", "nucl-ex", "nucl-th",
    "patt-sol", "physics", "plasm-ph", "q-alg", "q-bio", "quant-ph", "solv-int", "supr-con",
];

/// Equality is of the id as written (two versions of one paper differ); compare
/// [`ArxivId::canonical`] to recognise the same paper.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArxivId {
    /// The id as fetched: with the version when one was given (`1706.03762v1`,
    /// `hep-th/9901001`).
    pub id: String,
    /// The id without version (`1706.03762`, `math.CA/0611800`).
    pub base: String,
    pub version: Option<u32>,
}

impl ArxivId {
    /// Parses `1706.03762`, `1706.03762v2`, `arXiv:1706.03762`, `hep-th/9901001`,
    /// `math.CA/0611800v2`, and `http(s)://(www.|export.)arxiv.org/abs|pdf/<id>[.pdf]`
    /// links (with a trailing slash, query or fragment).
    pub fn parse(input: &str) -> Result<ArxivId, SourceError> {
        let invalid = |reason: &str| SourceError::InvalidArxivId {
            input: input.chars().take(200).collect(),
            reason: reason.to_string(),
        };
        let mut s = input.trim();
        if s.is_empty() {
            return Err(invalid("it is empty"));
        }
        if let Some(rest) = strip_prefix_ci(s, "arxiv:") {
            s = rest.trim_start();
        } else if let Some(path) = link_path(s).map_err(&invalid)? {
            s = path;
        }
        let s = s.trim_end_matches('/');
        let s = strip_suffix_ci(s, ".pdf").unwrap_or(s);
        let (base, version) = split_version(s).map_err(&invalid)?;
        let base = if base.contains('/') {
            old_style(base).map_err(|r| invalid(&r.to_string()))?
        } else {
            new_style(base).map_err(|r| invalid(&r.to_string()))?
        };
        let id = match version {
            Some(v) => format!("{base}v{v}"),
            None => base.clone(),
        };
        Ok(ArxivId { id, base, version })
    }

    /// The paper whatever its version and however it was written, for recognising duplicates:
    /// the id without version and, for old-style ids, without the subject class, which arXiv
    /// says is not part of the identifier (`math.CA/0611800v2` is `arXiv:math/0611800v2`
    /// externally, and its API answers `math/0611800`). `1706.03762v5` → `1706.03762`.
    pub fn canonical(&self) -> String {
        match self.base.split_once('/') {
            Some((archive, number)) => {
                let archive = archive.split_once('.').map_or(archive, |(a, _)| a);
                format!("{archive}/{number}")
            }
            None => self.base.clone(),
        }
    }

    /// `{arxiv_base}/pdf/{id}`.
    pub fn pdf_url(&self, arxiv_base: &str) -> String {
        format!("{}/pdf/{}", arxiv_base.trim_end_matches('/'), self.id)
    }

    /// `<id>.pdf` with `/` replaced by `_` (`hep-th_9901001.pdf`).
    pub fn filename(&self) -> String {
        format!("{}.pdf", self.id.replace('/', "_"))
    }
}

/// The id as fetched (`1706.03762v5`, `math.CA/0611800`), which [`ArxivId::parse`] reads back.
impl fmt::Display for ArxivId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s.get(prefix.len()..))
        .flatten()
}

fn strip_suffix_ci<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    let cut = s.len().checked_sub(suffix.len())?;
    let tail = s.get(cut..)?;
    tail.eq_ignore_ascii_case(suffix)
        .then(|| s.get(..cut))
        .flatten()
}

/// The part after `/abs/` or `/pdf/` of an arXiv link, `None` when `s` is not a link.
fn link_path(s: &str) -> Result<Option<&str>, &'static str> {
    let with_scheme = strip_prefix_ci(s, "https://").or_else(|| strip_prefix_ci(s, "http://"));
    let is_link = with_scheme.is_some();
    let rest = with_scheme.unwrap_or(s);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let Some((host, path)) = rest.split_once('/') else {
        return if is_link {
            Err("a link must be https://arxiv.org/abs/<id> or https://arxiv.org/pdf/<id>")
        } else {
            Ok(None)
        };
    };
    let host = host.to_ascii_lowercase();
    let is_arxiv = matches!(
        host.as_str(),
        "arxiv.org" | "www.arxiv.org" | "export.arxiv.org"
    );
    if !is_arxiv {
        if is_link {
            return Err("only arxiv.org links are understood");
        }
        // Not a link: an old-style id such as hep-th/9901001.
        return Ok(None);
    }
    let path = path.trim_start_matches('/');
    let id = strip_prefix_ci(path, "abs/").or_else(|| strip_prefix_ci(path, "pdf/"));
    id.map(Some)
        .ok_or("only /abs/<id> and /pdf/<id> links are understood")
}

fn split_version(s: &str) -> Result<(&str, Option<u32>), &'static str> {
    let Some((base, digits)) = s.rsplit_once(['v', 'V']) else {
        return Ok((s, None));
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || base.is_empty() {
        return Ok((s, None));
    }
    if base.ends_with('/') {
        return Ok((s, None));
    }
    match digits.parse::<u32>() {
        Ok(v) if v >= 1 => Ok((base, Some(v))),
        _ => Err("the version after 'v' must be a number from 1"),
    }
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Why a bare id has neither arXiv shape, said so that the caller can correct it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotAnId {
    #[error("expected YYMM.NNNNN or archive/YYMMNNN")]
    NoDot,
    #[error("expected YYMM.NNNNN: four digits, a dot, four or five digits")]
    NewShape,
    #[error("{0:02} is not a month")]
    Month(u32),
    #[error("four-digit numbers were used from 0704 to 1412; later ids have five digits")]
    FourDigitsLate,
    #[error("five-digit numbers are used from 1501 on; earlier ids have four digits")]
    FiveDigitsEarly,
    #[error("the number after the dot has four or five digits")]
    NumberLength,
    #[error("expected archive/YYMMNNN")]
    NoSlash,
    #[error("{0:?} is not an arXiv archive of old-style ids (such as hep-th, math, cond-mat)")]
    Archive(String),
    #[error("{0:?} is not a subject class (such as CA in math.CA)")]
    Class(String),
    #[error("old-style ids end in seven digits, YYMMNNN")]
    OldDigits,
    #[error("old-style ids run from 1991 to 2007")]
    OldRange,
}

/// `YYMM.NNNN` (April 2007 to December 2014) or `YYMM.NNNNN` (from January 2015).
fn new_style(s: &str) -> Result<String, NotAnId> {
    let Some((yymm, number)) = s.split_once('.') else {
        return Err(NotAnId::NoDot);
    };
    if yymm.len() != 4 || !all_digits(yymm) || !all_digits(number) {
        return Err(NotAnId::NewShape);
    }
    let ym: u32 = yymm.parse().map_err(|_| NotAnId::NewShape)?;
    let month = ym % 100;
    if !(1..=12).contains(&month) {
        return Err(NotAnId::Month(month));
    }
    match number.len() {
        4 if (704..=1412).contains(&ym) => Ok(s.to_string()),
        4 => Err(NotAnId::FourDigitsLate),
        5 if ym >= 1501 => Ok(s.to_string()),
        5 => Err(NotAnId::FiveDigitsEarly),
        _ => Err(NotAnId::NumberLength),
    }
}

/// `archive[.SC]/YYMMNNN`, e.g. `hep-th/9901001`, `math.CA/0611800`.
fn old_style(s: &str) -> Result<String, NotAnId> {
    let Some((archive_full, number)) = s.split_once('/') else {
        return Err(NotAnId::NoSlash);
    };
    let (archive, class) = match archive_full.split_once('.') {
        Some((a, c)) => (a, Some(c)),
        None => (archive_full, None),
    };
    let archive = archive.to_ascii_lowercase();
    if !OLD_ARCHIVES.contains(&archive.as_str()) {
        return Err(NotAnId::Archive(archive));
    }
    if let Some(class) = class {
        let ok = (1..=10).contains(&class.len())
            && class.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-');
        if !ok {
            return Err(NotAnId::Class(class.to_string()));
        }
    }
    if number.len() != 7 || !all_digits(number) {
        return Err(NotAnId::OldDigits);
    }
    let n: u32 = number.parse().map_err(|_| NotAnId::OldDigits)?;
    let (yy, mm) = (n / 100_000, (n / 1000) % 100);
    if !(1..=12).contains(&mm) {
        return Err(NotAnId::Month(mm));
    }
    if !(91..=99).contains(&yy) && yy > 7 {
        return Err(NotAnId::OldRange);
    }
    Ok(match class {
        Some(class) => format!("{archive}.{class}/{number}"),
        None => format!("{archive}/{number}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accepted_forms() {
        for (input, id, base, version) in [
            ("1706.03762", "1706.03762", "1706.03762", None),
            ("1706.03762v1", "1706.03762v1", "1706.03762", Some(1)),
            ("  1706.03762V7 ", "1706.03762v7", "1706.03762", Some(7)),
            ("0704.0001", "0704.0001", "0704.0001", None),
            ("1412.9999v3", "1412.9999v3", "1412.9999", Some(3)),
            ("1501.00001", "1501.00001", "1501.00001", None),
            ("2301.12345v12", "2301.12345v12", "2301.12345", Some(12)),
            ("arXiv:1706.03762", "1706.03762", "1706.03762", None),
            ("ARXIV: 1706.03762v2", "1706.03762v2", "1706.03762", Some(2)),
            (
                "arxiv:hep-th/9901001",
                "hep-th/9901001",
                "hep-th/9901001",
                None,
            ),
            ("hep-th/9901001", "hep-th/9901001", "hep-th/9901001", None),
            (
                "math.CA/0611800v2",
                "math.CA/0611800v2",
                "math.CA/0611800",
                Some(2),
            ),
            (
                "cond-mat/0102536v1",
                "cond-mat/0102536v1",
                "cond-mat/0102536",
                Some(1),
            ),
            (
                "solv-int/9901001",
                "solv-int/9901001",
                "solv-int/9901001",
                None,
            ),
            ("HEP-TH/9901001", "hep-th/9901001", "hep-th/9901001", None),
            (
                "https://arxiv.org/abs/1706.03762",
                "1706.03762",
                "1706.03762",
                None,
            ),
            (
                "http://arxiv.org/abs/1706.03762v5",
                "1706.03762v5",
                "1706.03762",
                Some(5),
            ),
            (
                "https://www.arxiv.org/pdf/1706.03762",
                "1706.03762",
                "1706.03762",
                None,
            ),
            (
                "https://arxiv.org/pdf/1706.03762v1.pdf",
                "1706.03762v1",
                "1706.03762",
                Some(1),
            ),
            (
                "https://arxiv.org/pdf/1706.03762.PDF",
                "1706.03762",
                "1706.03762",
                None,
            ),
            (
                "https://export.arxiv.org/abs/hep-th/9901001v2",
                "hep-th/9901001v2",
                "hep-th/9901001",
                Some(2),
            ),
            (
                "https://arxiv.org/abs/math.CA/0611800/",
                "math.CA/0611800",
                "math.CA/0611800",
                None,
            ),
            (
                "https://arxiv.org/abs/1706.03762?context=cs#x",
                "1706.03762",
                "1706.03762",
                None,
            ),
            (
                "HTTPS://ArXiv.Org/ABS/1706.03762/",
                "1706.03762",
                "1706.03762",
                None,
            ),
            ("arxiv.org/abs/1706.03762", "1706.03762", "1706.03762", None),
            ("1706.03762.pdf", "1706.03762", "1706.03762", None),
        ] {
            let got = ArxivId::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.id, id, "{input}");
            assert_eq!(got.base, base, "{input}");
            assert_eq!(got.version, version, "{input}");
        }
    }

    #[test]
    fn refused_forms_say_what_is_accepted() {
        for input in [
            "",
            "   ",
            "1706.0376",
            "1706.037622",
            "1501.0001",
            "1412.00001",
            "0703.0001",
            "1713.00001",
            "1700.00001",
            "17060.3762",
            "1706.03762v0",
            "1706.03762v",
            "1706.03762vx",
            "hep-xx/9901001",
            "hep-th/990100",
            "hep-th/9913001",
            "hep-th/0801001",
            "math.C4/0611800",
            "https://example.org/abs/1706.03762",
            "https://arxiv.org/list/cs.AI",
            "https://arxiv.org",
            "doi:10.1000/xyz",
            "arXiv:",
            "not an id",
        ] {
            let err = ArxivId::parse(input).unwrap_err();
            assert_eq!(err.field(), Some("arxiv_id"), "{input}");
            let msg = err.to_string();
            assert!(
                msg.contains("hep-th/9901001") && msg.contains("arXiv:1706.03762"),
                "{msg}"
            );
        }
    }

    #[test]
    fn urls_and_file_names() {
        let id = ArxivId::parse("hep-th/9901001v2").unwrap();
        assert_eq!(
            id.pdf_url("https://arxiv.org"),
            "https://arxiv.org/pdf/hep-th/9901001v2"
        );
        assert_eq!(
            id.pdf_url("http://127.0.0.1:9/"),
            "http://127.0.0.1:9/pdf/hep-th/9901001v2"
        );
        assert_eq!(id.filename(), "hep-th_9901001v2.pdf");
        let id = ArxivId::parse("arXiv:1706.03762").unwrap();
        assert_eq!(id.filename(), "1706.03762.pdf");
    }

    #[test]
    fn canonical_drops_version_and_subject_class() {
        for (input, canonical) in [
            ("1706.03762v5", "1706.03762"),
            ("https://arxiv.org/pdf/1706.03762v1.pdf", "1706.03762"),
            ("hep-th/9901001v2", "hep-th/9901001"),
            ("math.CA/0611800v2", "math/0611800"),
            ("arXiv:MATH.ca/0611800", "math/0611800"),
        ] {
            let id = ArxivId::parse(input).unwrap();
            assert_eq!(id.canonical(), canonical, "{input}");
            assert_eq!(ArxivId::parse(&id.to_string()).unwrap(), id, "{input}");
        }
    }

    proptest! {
        #[test]
        fn every_new_style_id_round_trips(
            yy in 15u32..=99, mm in 1u32..=12, n in 0u32..100_000, v in proptest::option::of(1u32..1000),
            prefix in prop_oneof![
                Just(""), Just("arXiv:"), Just("https://arxiv.org/abs/"),
                Just("http://www.arxiv.org/pdf/"), Just("https://export.arxiv.org/abs/")
            ],
            suffix in prop_oneof![Just(""), Just("/"), Just("?x=1"), Just("#y")],
        ) {
            let base = format!("{yy:02}{mm:02}.{n:05}");
            let id = match v { Some(v) => format!("{base}v{v}"), None => base.clone() };
            let suffix = if prefix.starts_with("http") { suffix } else { "" };
            let got = ArxivId::parse(&format!("{prefix}{id}{suffix}")).unwrap();
            prop_assert_eq!(got.base, base);
            prop_assert_eq!(got.version, v);
            prop_assert_eq!(got.id, id);
        }

        #[test]
        fn parsing_never_panics(s in ".{0,64}") {
            let _ = ArxivId::parse(&s);
        }
    }
}
