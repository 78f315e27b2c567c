//! Property tests of the identifier parser: every valid form it is meant to read, generated
//! at random in every wrapper, reads as the expected identifier with the expected canonical
//! form and reads back from its display; near-misses (one ISBN digit changed, a DOI without
//! `10.`, without `/` or with a space, an arXiv id with a bad month, a PMCID without digits)
//! are refused; and no error repeats more than 64 characters of the input.

use proptest::prelude::*;
use zotero_metadata::identifiers::{
    parse, Identifier, IdentifierError, IdentifierKind, EXCERPT_CHARS,
};

// ---- what copy-paste puts around an identifier -------------------------------------------

fn decoration() -> impl Strategy<Value = (&'static str, &'static str)> {
    (
        prop_oneof![Just(""), Just(" "), Just("\t"), Just("\n  ")],
        prop_oneof![
            Just(""),
            Just("."),
            Just(","),
            Just(";"),
            Just(")"),
            Just(")."),
            Just(" "),
            Just(".\n")
        ],
    )
}

fn decorate(form: &str, (before, after): (&str, &str)) -> String {
    format!("{before}{form}{after}")
}

// ---- DOIs -----------------------------------------------------------------------------------

/// `10.<registrant>(.<sub>)*/<suffix>`, the suffix of printable characters without `(`, so
/// that a `)` added after it is never its own, ending in a letter or digit.
fn doi() -> impl Strategy<Value = String> {
    (
        "[1-9][0-9]{3,4}",
        prop::collection::vec("[0-9]{1,3}", 0..3),
        "[A-Za-z0-9][A-Za-z0-9._;)/:<>-]{0,30}[A-Za-z0-9]|[A-Za-z0-9]",
    )
        .prop_map(|(head, subs, suffix)| {
            let mut doi = format!("10.{head}");
            for sub in subs {
                doi.push('.');
                doi.push_str(&sub);
            }
            format!("{doi}/{suffix}")
        })
}

/// Every byte outside `A-Za-z0-9-._~` as `%XX`.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn doi_form(doi: &str, form: usize) -> String {
    match form {
        0 => doi.to_string(),
        1 => format!("doi:{doi}"),
        2 => format!("DOI: {doi}"),
        3 => format!("Doi {doi}"),
        4 => format!("https://doi.org/{doi}"),
        5 => format!("http://dx.doi.org/{doi}"),
        6 => format!("doi.org/{doi}"),
        7 => format!("HTTPS://DOI.ORG/{doi}"),
        8 => format!("https://doi.org/{}", doi.replace('/', "%2F")),
        _ => format!("https://doi.org/{}?utm=x#frag", percent_encode(doi)),
    }
}
const DOI_FORMS: usize = 10;

// ---- arXiv ids ------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Arxiv {
    /// As written, with version and subject class.
    id: String,
    version: Option<u32>,
    canonical: String,
}

/// New ids (`YYMM.NNNN` from 0704 to 1412, `YYMM.NNNNN` from 1501), old ids
/// (`archive(.SC)/YYMMNNN`, 1991 to 2006), each with or without a version.
fn arxiv() -> impl Strategy<Value = Arxiv> {
    let four = (7u32..=14, 1u32..=12, 0u32..10_000)
        .prop_filter("from 0704", |(yy, mm, _)| (*yy, *mm) >= (7, 4))
        .prop_map(|(yy, mm, n)| format!("{yy:02}{mm:02}.{n:04}"));
    let five = (15u32..=99, 1u32..=12, 0u32..100_000)
        .prop_map(|(yy, mm, n)| format!("{yy:02}{mm:02}.{n:05}"));
    let new = prop_oneof![four, five].prop_map(|id| (id.clone(), id));
    let old = (
        prop::sample::select(vec![
            "hep-th", "hep-ph", "astro-ph", "cond-mat", "gr-qc", "quant-ph", "math", "cs", "nlin",
            "q-bio", "physics", "math-ph",
        ]),
        prop::option::of("[A-Z]{2}"),
        prop_oneof![91u32..=99, 0u32..=6],
        1u32..=12,
        0u32..1000,
    )
        .prop_map(|(archive, class, yy, mm, n)| {
            let number = format!("{yy:02}{mm:02}{n:03}");
            let written = match class {
                Some(class) => format!("{archive}.{class}/{number}"),
                None => format!("{archive}/{number}"),
            };
            (written, format!("{archive}/{number}"))
        });
    (prop_oneof![new, old], prop::option::of(1u32..=30)).prop_map(|((base, canonical), version)| {
        Arxiv {
            id: match version {
                Some(v) => format!("{base}v{v}"),
                None => base,
            },
            version,
            canonical,
        }
    })
}

fn arxiv_form(id: &str, form: usize) -> String {
    match form {
        0 => id.to_string(),
        1 => format!("arXiv:{id}"),
        2 => format!("ARXIV: {id}"),
        3 => format!("https://arxiv.org/abs/{id}"),
        4 => format!("http://www.arxiv.org/abs/{id}/"),
        5 => format!("https://export.arxiv.org/abs/{id}"),
        6 => format!("arxiv.org/abs/{id}"),
        7 => format!("https://arxiv.org/pdf/{id}"),
        8 => format!("https://arxiv.org/pdf/{id}.pdf"),
        _ => format!("https://arxiv.org/abs/{id}?context=cs#x"),
    }
}
const ARXIV_FORMS: usize = 10;

// ---- ISBNs ----------------------------------------------------------------------------------

// (Helpers outside `#[test]` functions may not unwrap; a `?` would fail every check.)

fn check10(nine: &[u32]) -> char {
    let sum: u32 = nine.iter().zip((2..=10).rev()).map(|(d, w)| d * w).sum();
    match (11 - sum % 11) % 11 {
        10 => 'X',
        c => char::from_digit(c, 10).unwrap_or('?'),
    }
}

fn check13(twelve: &[u32]) -> char {
    let sum: u32 = twelve
        .iter()
        .enumerate()
        .map(|(i, d)| if i % 2 == 0 { *d } else { d * 3 })
        .sum();
    char::from_digit((10 - sum % 10) % 10, 10).unwrap_or('?')
}

fn digits_text(digits: &[u32]) -> String {
    digits
        .iter()
        .map(|d| char::from_digit(*d, 10).unwrap_or('?'))
        .collect()
}

#[derive(Debug, Clone)]
struct IsbnCase {
    /// The ISBN's characters, without separators (10 or 13).
    chars: Vec<char>,
    isbn13: String,
    isbn10: Option<String>,
}

fn isbn() -> impl Strategy<Value = IsbnCase> {
    let ten = prop::collection::vec(0u32..10, 9).prop_map(|nine| {
        let check = check10(&nine);
        let mut chars: Vec<char> = digits_text(&nine).chars().collect();
        chars.push(check);
        let mut twelve = vec![9, 7, 8];
        twelve.extend_from_slice(&nine);
        let isbn13 = format!("{}{}", digits_text(&twelve), check13(&twelve));
        let isbn10: String = chars.iter().collect();
        IsbnCase {
            chars,
            isbn13,
            isbn10: Some(isbn10),
        }
    });
    let thirteen =
        (prop::bool::ANY, prop::collection::vec(0u32..10, 9)).prop_map(|(is_978, nine)| {
            let mut twelve = if is_978 { vec![9, 7, 8] } else { vec![9, 7, 9] };
            twelve.extend_from_slice(&nine);
            let isbn13 = format!("{}{}", digits_text(&twelve), check13(&twelve));
            let isbn10 = is_978.then(|| format!("{}{}", digits_text(&nine), check10(&nine)));
            IsbnCase {
                chars: isbn13.chars().collect(),
                isbn13,
                isbn10,
            }
        });
    prop_oneof![ten, thirteen]
}

/// The characters with `separators[i]` after the i-th one (hyphens, spaces, nothing), and
/// the check `X` in either case.
fn hyphenate(chars: &[char], separators: &[&str], lower_x: bool) -> String {
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        out.push(if lower_x && *c == 'X' { 'x' } else { *c });
        if i + 1 < chars.len() {
            out.push_str(separators.get(i).copied().unwrap_or(""));
        }
    }
    out
}

fn separators() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(
        prop_oneof![4 => Just(""), 2 => Just("-"), 1 => Just(" "), 1 => Just("\u{2010}")],
        12,
    )
}

const ISBN_PREFIXES: &[&str] = &[
    "",
    "ISBN ",
    "ISBN:",
    "ISBN: ",
    "isbn ",
    "ISBN-13: ",
    "ISBN-10: ",
    "ISBN13 ",
];

// ---- PMIDs and PMCIDs -----------------------------------------------------------------------

fn pmid_form(pmid: u32, form: usize) -> String {
    match form {
        0 => pmid.to_string(),
        1 => format!("PMID:{pmid}"),
        2 => format!("PMID: {pmid}"),
        3 => format!("pmid {pmid}"),
        4 => format!("https://pubmed.ncbi.nlm.nih.gov/{pmid}/"),
        5 => format!("https://pubmed.ncbi.nlm.nih.gov/{pmid}"),
        6 => format!("pubmed.ncbi.nlm.nih.gov/{pmid}/?from_single_result=x"),
        7 => format!("https://www.ncbi.nlm.nih.gov/pubmed/{pmid}"),
        _ => format!("http://ncbi.nlm.nih.gov/pubmed/{pmid}/"),
    }
}
const PMID_FORMS: usize = 9;

fn pmcid_form(pmc: &str, number: &str, form: usize) -> String {
    match form {
        0 => format!("{pmc}{number}"),
        1 => format!("PMCID: {pmc}{number}"),
        2 => format!("PMCID:{number}"),
        3 => format!("https://www.ncbi.nlm.nih.gov/pmc/articles/{pmc}{number}/"),
        4 => format!("https://www.ncbi.nlm.nih.gov/pmc/articles/{pmc}{number}"),
        5 => format!("https://pmc.ncbi.nlm.nih.gov/articles/{pmc}{number}/"),
        6 => format!("https://pmc.ncbi.nlm.nih.gov/articles/{pmc}{number}/pdf/x.pdf"),
        _ => format!("pmc.ncbi.nlm.nih.gov/articles/{pmc}{number}"),
    }
}
const PMCID_FORMS: usize = 8;

fn pmc_spelling() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["PMC", "pmc", "Pmc", "pMc"])
}

// ---- shared checks --------------------------------------------------------------------------

/// What every accepted identifier satisfies: it reads back from its display and from its
/// canonical form as the same work.
fn reads_back(id: &Identifier) -> Result<(), TestCaseError> {
    let again = parse(&id.to_string());
    prop_assert_eq!(again.as_ref(), Ok(id));
    let canonical = parse(&id.canonical());
    prop_assert!(canonical.is_ok(), "{}: {:?}", id.canonical(), canonical);
    if let Ok(again) = canonical {
        prop_assert_eq!(again.kind(), id.kind());
        prop_assert_eq!(again.canonical(), id.canonical());
    }
    Ok(())
}

fn refused(input: &str) -> Result<IdentifierError, TestCaseError> {
    match parse(input) {
        Ok(id) => Err(TestCaseError::fail(format!("{input:?} accepted as {id:?}"))),
        Err(e) => Ok(e),
    }
}

proptest! {

    #[test]
    fn every_doi_form_reads_as_the_doi(
        doi in doi(), form in 0..DOI_FORMS, deco in decoration(), shout in prop::bool::ANY,
    ) {
        let doi = if shout { doi.to_ascii_uppercase() } else { doi };
        let input = decorate(&doi_form(&doi, form), deco);
        let id = parse(&input).map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
        let Identifier::Doi(got) = &id else {
            return Err(TestCaseError::fail(format!("{input:?} read as {id:?}")));
        };
        prop_assert_eq!(got.as_str(), doi.as_str(), "{:?}", input);
        prop_assert_eq!(got.canonical(), doi.to_ascii_lowercase());
        prop_assert_eq!(id.canonical(), doi.to_ascii_lowercase());
        prop_assert_eq!(id.kind(), IdentifierKind::Doi);
        reads_back(&id)?;
    }

    #[test]
    fn dois_without_10_without_a_slash_or_with_a_space_are_refused(
        doi in doi(), form in 0..DOI_FORMS, at in any::<prop::sample::Index>(),
        other_start in prop::sample::select(vec!["", "11.", "1.", "100.", "10"]),
    ) {
        let without_10 = format!("{other_start}{}", doi.strip_prefix("10.").unwrap());
        refused(&doi_form(&without_10, form))?;
        let without_slash = doi.replace('/', "");
        let e = refused(&doi_form(&without_slash, form))?;
        prop_assert_eq!(e.looks_like(), Some(IdentifierKind::Doi), "{}", e);
        // A space anywhere inside (not at either end, where it is only trimmed).
        let cut = 1 + at.index(doi.len() - 1);
        let (head, tail) = doi.split_at(cut);
        let spaced = format!("{head} {tail}");
        refused(&doi_form(&spaced, form))?;
        if form != 0 {
            prop_assert_eq!(
                refused(&doi_form(&spaced, form))?.looks_like(),
                Some(IdentifierKind::Doi)
            );
        }
    }

    #[test]
    fn every_arxiv_form_reads_as_the_arxiv_id(
        arxiv in arxiv(), form in 0..ARXIV_FORMS, deco in decoration(),
    ) {
        let input = decorate(&arxiv_form(&arxiv.id, form), deco);
        let id = parse(&input).map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
        let Identifier::Arxiv(got) = &id else {
            return Err(TestCaseError::fail(format!("{input:?} read as {id:?}")));
        };
        prop_assert_eq!(&got.id, &arxiv.id);
        prop_assert_eq!(got.version, arxiv.version);
        prop_assert_eq!(id.canonical(), arxiv.canonical.clone());
        prop_assert_eq!(id.kind(), IdentifierKind::Arxiv);
        // The arXiv DOI of the same paper is a DOI that knows it.
        let as_doi = parse(&format!("10.48550/arXiv.{}", arxiv.id)).unwrap();
        prop_assert_eq!(as_doi.kind(), IdentifierKind::Doi);
        prop_assert_eq!(as_doi.arxiv_id().map(|a| a.canonical()), Some(arxiv.canonical.clone()));
        reads_back(&id)?;
    }

    #[test]
    fn arxiv_ids_with_a_bad_month_are_refused(
        yy in 0u32..100, mm in prop_oneof![Just(0u32), 13u32..100], n in 0u32..100_000,
        old in prop::bool::ANY, version in prop::option::of(1u32..10), form in 0..ARXIV_FORMS,
    ) {
        let base = if old {
            format!("hep-th/{yy:02}{mm:02}{:03}", n % 1000)
        } else {
            format!("{yy:02}{mm:02}.{n:05}")
        };
        let id = match version { Some(v) => format!("{base}v{v}"), None => base };
        let e = refused(&arxiv_form(&id, form))?;
        prop_assert_eq!(e.looks_like(), Some(IdentifierKind::Arxiv), "{}", e);
    }

    #[test]
    fn every_isbn_form_reads_as_its_isbn13(
        case in isbn(), separators in separators(), lower_x in prop::bool::ANY,
        prefix in prop::sample::select(ISBN_PREFIXES), deco in decoration(),
    ) {
        let input = decorate(&format!("{prefix}{}", hyphenate(&case.chars, &separators, lower_x)), deco);
        let id = parse(&input).map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
        let Identifier::Isbn(got) = &id else {
            return Err(TestCaseError::fail(format!("{input:?} read as {id:?}")));
        };
        prop_assert_eq!(got.canonical(), case.isbn13.as_str());
        prop_assert_eq!(got.isbn10(), case.isbn10.clone());
        prop_assert_eq!(id.canonical(), case.isbn13.clone());
        prop_assert_eq!(id.kind(), IdentifierKind::Isbn);
        if let Some(isbn10) = &case.isbn10 {
            let from_isbn10 = parse(isbn10);
            prop_assert_eq!(from_isbn10.as_ref(), Ok(&id));
        }
        reads_back(&id)?;
    }

    #[test]
    fn isbns_with_one_digit_changed_are_refused(
        case in isbn(), separators in separators(), prefix in prop::sample::select(ISBN_PREFIXES),
        at in any::<prop::sample::Index>(), digit in 0u32..10,
    ) {
        let mut chars = case.chars.clone();
        let i = at.index(chars.len());
        let original = chars[i];
        let mut new = char::from_digit(digit, 10).unwrap();
        if new == original {
            new = char::from_digit((digit + 1) % 10, 10).unwrap();
        }
        chars[i] = new;
        let input = format!("{prefix}{}", hyphenate(&chars, &separators, false));
        let e = refused(&input)?;
        prop_assert_eq!(e.looks_like(), Some(IdentifierKind::Isbn), "{}", e);
        // A changed check digit: the error names the right one.
        if i == chars.len() - 1 {
            let is_check_digit_error = matches!(
                e,
                IdentifierError::IsbnCheckDigit { expected, got, .. }
                    if expected == original && got == new
            );
            prop_assert!(is_check_digit_error, "{}", e);
        }
    }

    #[test]
    fn every_pmid_form_reads_as_the_pmid(
        pmid in 1u32..=99_999_999, form in 0..PMID_FORMS, deco in decoration(),
    ) {
        let input = decorate(&pmid_form(pmid, form), deco);
        let id = parse(&input).map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
        let Identifier::Pmid(got) = &id else {
            return Err(TestCaseError::fail(format!("{input:?} read as {id:?}")));
        };
        prop_assert_eq!(got.value(), pmid);
        prop_assert_eq!(id.canonical(), pmid.to_string());
        prop_assert_eq!(id.kind(), IdentifierKind::Pmid);
        reads_back(&id)?;
    }

    #[test]
    fn every_pmcid_form_reads_as_the_pmcid(
        number in 1u32..=999_999_999, pmc in pmc_spelling(), form in 0..PMCID_FORMS,
        deco in decoration(),
    ) {
        let input = decorate(&pmcid_form(pmc, &number.to_string(), form), deco);
        let id = parse(&input).map_err(|e| TestCaseError::fail(format!("{input:?}: {e}")))?;
        let Identifier::Pmcid(got) = &id else {
            return Err(TestCaseError::fail(format!("{input:?} read as {id:?}")));
        };
        prop_assert_eq!(got.value(), number);
        prop_assert_eq!(id.canonical(), format!("PMC{number}"));
        prop_assert_eq!(id.kind(), IdentifierKind::Pmcid);
        reads_back(&id)?;
    }

    #[test]
    fn pmcids_without_digits_are_refused(
        pmc in pmc_spelling(), junk in "|[a-zA-Z]{1,6}|x[0-9]{1,4}", form in 0..PMCID_FORMS,
    ) {
        let e = refused(&pmcid_form(pmc, &junk, form))?;
        prop_assert_eq!(e.looks_like(), Some(IdentifierKind::Pmcid), "{}", e);
    }

    #[test]
    fn errors_never_repeat_more_than_64_characters_of_the_input(
        input in "[a-z0-9/.:%-]{65,400}",
        form in prop::sample::select(vec!["", "doi:10.1000/", "https://doi.org/10.1/ ", "arXiv:", "ISBN ", "https://arxiv.org/abs/", "PMC"]),
    ) {
        let input = format!("{form}{input} z");
        if let Err(e) = parse(&input) {
            let msg = e.to_string();
            let chars: Vec<char> = input.chars().collect();
            for window in chars.windows(EXCERPT_CHARS + 1) {
                let window: String = window.iter().collect();
                prop_assert!(!msg.contains(&window), "{} repeats {}", msg, window);
            }
        }
    }

    #[test]
    fn parsing_never_panics(input in "\\PC{0,200}") {
        let _ = parse(&input);
    }
}
