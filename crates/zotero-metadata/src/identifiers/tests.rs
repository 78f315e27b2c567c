//! Every accepted form of each kind, canonical forms, and the refusals with what was expected.

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
