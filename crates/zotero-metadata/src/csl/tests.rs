//! The CSL-JSON mapping on recorded records: types, names, dates, and odd or missing fields.

use super::*;
use crate::test_support::fields;
use crate::zotero_item::CreatorName;
use serde_json::json;

/// The CSL-JSON Crossref serves for 10.1038/nature12373 through doi.org, in its shape
/// (values as Crossref lists them for that work; some optional keys left out).
fn nature12373() -> Value {
    json!({
        "indexed": {"date-parts": [[2024, 3, 1]], "date-time": "2024-03-01T12:00:00Z", "timestamp": 1709294400000u64},
        "reference-count": 30,
        "publisher": "Springer Science and Business Media LLC",
        "issue": "7460",
        "license": [{"start": {"date-parts": [[2013, 8, 1]]}, "content-version": "tdm", "delay-in-days": 0, "URL": "https://www.springer.com/tdm"}],
        "content-domain": {"domain": [], "crossmark-restriction": false},
        "short-container-title": ["Nature"],
        "DOI": "10.1038/nature12373",
        "type": "article-journal",
        "created": {"date-parts": [[2013, 7, 31]]},
        "page": "54-58",
        "source": "Crossref",
        "is-referenced-by-count": 1500,
        "title": "Nanometre-scale thermometry in a living cell",
        "prefix": "10.1038",
        "volume": "500",
        "author": [
            {"given": "G.", "family": "Kucsko", "sequence": "first", "affiliation": []},
            {"given": "P. C.", "family": "Maurer", "sequence": "additional", "affiliation": []},
            {"given": "N. Y.", "family": "Yao", "sequence": "additional", "affiliation": []},
            {"given": "M.", "family": "Kubo", "sequence": "additional", "affiliation": []},
            {"given": "H. J.", "family": "Noh", "sequence": "additional", "affiliation": []},
            {"given": "P. K.", "family": "Lo", "sequence": "additional", "affiliation": []},
            {"given": "H.", "family": "Park", "sequence": "additional", "affiliation": []},
            {"given": "M. D.", "family": "Lukin", "sequence": "additional", "affiliation": []}
        ],
        "member": "297",
        "container-title": "Nature",
        "language": "en",
        "link": [{"URL": "http://www.nature.com/articles/nature12373.pdf", "content-type": "application/pdf"}],
        "original-title": [],
        "deposited": {"date-parts": [[2023, 1, 2]]},
        "score": 1,
        "subtitle": [],
        "short-title": [],
        "issued": {"date-parts": [[2013, 7, 31]]},
        "references-count": 30,
        "journal-issue": {"issue": "7460", "published-print": {"date-parts": [[2013, 8]]}},
        "URL": "https://doi.org/10.1038/nature12373",
        "relation": {},
        "ISSN": ["0028-0836", "1476-4687"],
        "container-title-short": "Nature",
        "published": {"date-parts": [[2013, 7, 31]]},
        "abstract": "<jats:p>Sensitive probing of temperature variations on nanometre scales is an outstanding challenge.</jats:p>"
    })
}

#[test]
fn crossref_csl_journal_article() {
    let d = from_doi_csl_json(&nature12373()).unwrap();
    assert_eq!(d.item_type, "journalArticle");
    assert_eq!(
        d.fields,
        fields(&[
            ("DOI", "10.1038/nature12373"),
            ("ISSN", "0028-0836, 1476-4687"),
            ("abstractNote", "Sensitive probing of temperature variations on nanometre scales is an outstanding challenge."),
            ("date", "2013-07-31"),
            ("issue", "7460"),
            ("language", "en"),
            ("libraryCatalog", "DOI.org (CSL JSON)"),
            ("pages", "54-58"),
            ("publicationTitle", "Nature"),
            ("publisher", "Springer Science and Business Media LLC"),
            ("title", "Nanometre-scale thermometry in a living cell"),
            ("url", "https://doi.org/10.1038/nature12373"),
            ("volume", "500"),
        ])
    );
    let names: Vec<(&str, &str, &str)> = d
        .creators
        .iter()
        .map(|c| match &c.name {
            CreatorName::Split {
                first_name,
                last_name,
            } => (
                c.creator_type.as_str(),
                first_name.as_str(),
                last_name.as_str(),
            ),
            CreatorName::Single { name } => (c.creator_type.as_str(), "", name.as_str()),
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("author", "G.", "Kucsko"),
            ("author", "P. C.", "Maurer"),
            ("author", "N. Y.", "Yao"),
            ("author", "M.", "Kubo"),
            ("author", "H. J.", "Noh"),
            ("author", "P. K.", "Lo"),
            ("author", "H.", "Park"),
            ("author", "M. D.", "Lukin"),
        ]
    );
    assert!(d.extra_lines.is_empty());
    assert!(d.tags.is_empty());
}

#[test]
fn chapter_and_conference_paper_use_their_own_fields() {
    let chapter = json!({
        "type": "chapter",
        "title": "Deep <i>learning</i> for graphs",
        "container-title": ["Handbook of Graphs", "Lecture Notes"],
        "collection-title": "Lecture Notes in Computer Science",
        "publisher": "Springer",
        "publisher-place": "Cham",
        "ISBN": ["978-3-030-00000-0"],
        "page": "1-20",
        "author": [{"family": "Doe", "given": "Jane"}],
        "editor": [{"family": "Roe", "given": "Rick"}],
        "container-author": [{"family": "Major", "given": "Mia"}],
        "translator": [{"literal": "Translation Bureau"}],
        "issued": {"date-parts": [["2019", "5"]]},
        "number-of-pages": "400"
    });
    let d = from_csl_json(&chapter).unwrap();
    assert_eq!(d.item_type, "bookSection");
    assert_eq!(
        d.fields,
        fields(&[
            ("ISBN", "978-3-030-00000-0"),
            ("bookTitle", "Handbook of Graphs"),
            ("date", "2019-05"),
            ("pages", "1-20"),
            ("place", "Cham"),
            ("publisher", "Springer"),
            ("series", "Lecture Notes in Computer Science"),
            ("title", "Deep <i>learning</i> for graphs"),
        ])
    );
    // The schema's creator-type order: author, bookAuthor (container-author), …, editor,
    // …, translator; the answer's order within each.
    let types: Vec<&str> = d.creators.iter().map(|c| c.creator_type.as_str()).collect();
    assert_eq!(types, vec!["author", "bookAuthor", "editor", "translator"]);
    assert_eq!(
        d.creators[3],
        DraftCreator::single("translator", "Translation Bureau")
    );

    let paper = json!({
        "type": "paper-conference",
        "title": "Attention",
        "container-title": "Proceedings of NeurIPS",
        "event-title": "NeurIPS 2017",
        "event-place": "Long Beach",
        "publisher-place": "Red Hook",
        "container-author": [{"family": "Major", "given": "Mia"}],
        "author": [{"family": "Vaswani", "given": "Ashish"}]
    });
    let d = from_csl_json(&paper).unwrap();
    assert_eq!(d.item_type, "conferencePaper");
    assert_eq!(
        d.fields,
        fields(&[
            ("conferenceName", "NeurIPS 2017"),
            ("eventPlace", "Long Beach"),
            ("place", "Red Hook"),
            ("proceedingsTitle", "Proceedings of NeurIPS"),
            ("title", "Attention"),
        ])
    );
    // conferencePaper has no bookAuthor: the primary type, as itemFromCSLJSON does.
    let types: Vec<&str> = d.creators.iter().map(|c| c.creator_type.as_str()).collect();
    assert_eq!(types, vec!["author", "author"]);
}

#[test]
fn unknown_missing_and_special_types() {
    let d = from_csl_json(&json!({"type": "pamphlet", "title": "P"})).unwrap();
    assert_eq!(d.item_type, "document");
    let d = from_csl_json(&json!({"title": "No type"})).unwrap();
    assert_eq!(d.item_type, "preprint");
    let d = from_csl_json(&json!({"type": 7, "title": "Odd"})).unwrap();
    assert_eq!(d.item_type, "document");
    let d = from_csl_json(&json!({"type": "", "title": "Empty"})).unwrap();
    assert_eq!(d.item_type, "preprint");
    let d = from_csl_json(&json!({"type": "article", "title": "A", "publisher": "bioRxiv", "number": "2020.01.01.123"})).unwrap();
    assert_eq!(d.item_type, "preprint");
    assert_eq!(
        d.fields.get("repository").map(String::as_str),
        Some("bioRxiv")
    );
    assert_eq!(
        d.fields.get("archiveID").map(String::as_str),
        Some("2020.01.01.123")
    );
    let d = from_csl_json(&json!({"type": "book", "version": "2.1"})).unwrap();
    assert_eq!(d.item_type, "computerProgram");
    assert_eq!(
        d.fields.get("versionNumber").map(String::as_str),
        Some("2.1")
    );
    let d = from_csl_json(&json!({"type": "bill", "publisher": "GPO"})).unwrap();
    assert_eq!(d.item_type, "hearing");
    let d = from_csl_json(&json!({"type": "broadcast", "container-title": "News"})).unwrap();
    assert_eq!(d.item_type, "tvBroadcast");
    let d = from_csl_json(&json!({"type": "broadcast"})).unwrap();
    assert_eq!(d.item_type, "podcast");
    let d = from_csl_json(&json!({"type": "motion_picture", "ISBN": "1"})).unwrap();
    assert_eq!(d.item_type, "videoRecording");
    let d = from_csl_json(&json!({"type": "song", "number": "3"})).unwrap();
    assert_eq!(d.item_type, "podcast");
    assert!(from_csl_json(&json!(["not", "an", "object"])).is_err());
    assert!(from_csl_json(&json!(null)).is_err());
}

#[test]
fn missing_and_odd_fields() {
    let d = from_csl_json(&json!({
        "type": "article-journal",
        "title": "",
        "volume": 12,
        "page": null,
        "author": [{"given": "", "family": ""}, {"foo": 1}, "x", {"family": "Solo"}],
        "editor": "not a list",
        "issued": {"date-parts": [[null]]},
        "note": "First line\nSecond line",
        "number-of-pages": "10"
    }))
    .unwrap();
    assert_eq!(d.fields, fields(&[("volume", "12")]));
    assert_eq!(d.creators, vec![DraftCreator::split("author", "", "Solo")]);
    assert_eq!(d.extra_lines, vec!["First line", "Second line"]);
}

#[test]
fn names_with_particles_and_suffixes() {
    let d = from_csl_json(&json!({
        "type": "book",
        "author": [
            {"family": "Gogh", "given": "Vincent", "non-dropping-particle": "van"},
            {"family": "King", "given": "Martin Luther", "suffix": "Jr."},
            {"literal": "World Health Organization"}
        ]
    }))
    .unwrap();
    assert_eq!(
        d.creators,
        vec![
            DraftCreator::split("author", "Vincent", "van Gogh"),
            DraftCreator::split("author", "Martin Luther, Jr.", "King"),
            DraftCreator::single("author", "World Health Organization"),
        ]
    );
}

#[test]
fn dates_like_item_from_csl_json() {
    let date = |v: Value| csl_date(&v, false);
    assert_eq!(
        date(json!({"date-parts": [[2021], [2026]]})).as_deref(),
        Some("2021/2026")
    );
    assert_eq!(
        date(json!({"date-parts": [[-429]], "circa": true})).as_deref(),
        Some("-0429~")
    );
    assert_eq!(
        date(json!({"date-parts": [[2021, 5], [2021, 6]]})).as_deref(),
        Some("2021-05/2021-06")
    );
    assert_eq!(
        date(json!({"date-parts": [[-1], [0]]})).as_deref(),
        Some("-0001/0000")
    );
    assert_eq!(
        date(json!({"date-parts": [[2021]], "season": "Spring", "circa": true})).as_deref(),
        Some("Spring 2021")
    );
    assert_eq!(
        date(json!({"date-parts": [[2026], [2021]]})).as_deref(),
        Some("2026")
    );
    assert_eq!(
        date(json!({"literal": "1637 and 1662"})).as_deref(),
        Some("\"1637 and 1662\"")
    );
    assert_eq!(date(json!({"literal": "n.d."})).as_deref(), Some("n.d."));
    assert_eq!(
        date(json!({"raw": "2013-07-31"})).as_deref(),
        Some("2013-07-31")
    );
    assert_eq!(
        date(json!({"date-parts": [[2013, 7, 31]]})).as_deref(),
        Some("2013-07-31")
    );
    assert_eq!(
        date(json!({"date-parts": [["2013", "07"]]})).as_deref(),
        Some("2013-07")
    );
    assert_eq!(
        date(json!({"date-parts": [[2013, 2, 30], [2013, 3]]})).as_deref(),
        Some("2013-02-30")
    );
    assert_eq!(
        date(json!({"date-parts": [[2013, 21]]})).as_deref(),
        Some("2013")
    );
    assert_eq!(date(json!({"date-parts": []})), None);
    assert_eq!(date(json!({"date-parts": [[0]]})), None);
    assert_eq!(date(json!(17)), None);
    assert_eq!(
        csl_date(&json!({"date-parts": [[2024, 3, 5]]}), true).as_deref(),
        Some("2024-03-05")
    );
    assert_eq!(
        csl_date(&json!({"raw": "2024-03-05T10:00:00Z"}), true).as_deref(),
        Some("2024-03-05")
    );

    let d = from_csl_json(&json!({
        "type": "webpage",
        "title": "Page",
        "accessed": {"date-parts": [[2024, 3, 5]]},
        "issued": {"date-parts": [[2020]]}
    }))
    .unwrap();
    assert_eq!(
        d.fields.get("accessDate").map(String::as_str),
        Some("2024-03-05")
    );
    assert_eq!(d.fields.get("date").map(String::as_str), Some("2020"));
    // A type whose date field is its own (case: dateDecided).
    let d = from_csl_json(
        &json!({"type": "legal_case", "title": "Roe", "issued": {"date-parts": [[1973, 1, 22]]}}),
    )
    .unwrap();
    assert_eq!(
        d.fields.get("dateDecided").map(String::as_str),
        Some("1973-01-22")
    );
    assert_eq!(d.fields.get("caseName").map(String::as_str), Some("Roe"));
}

#[test]
fn subtitle_and_abbreviation() {
    let d = from_csl_json(&json!({
        "type": "article-journal",
        "title": "Deep learning",
        "subtitle": ["A review"],
        "container-title": "Journal of Things",
        "container-title-short": "J. Things"
    }))
    .unwrap();
    assert_eq!(
        d.fields.get("title").map(String::as_str),
        Some("Deep learning: A review")
    );
    assert_eq!(
        d.fields.get("journalAbbreviation").map(String::as_str),
        Some("J. Things")
    );
    assert_eq!(join_subtitle("Title:", "Sub"), "Title: Sub");
    assert_eq!(
        join_subtitle("Title: Sub and more", "sub"),
        "Title: Sub and more"
    );
    let d = from_csl_json(&json!({"type": "article-journal", "title": "T", "container-title": "Nature", "container-title-short": "Nature"})).unwrap();
    assert_eq!(d.fields.get("journalAbbreviation"), None);
}

#[test]
fn event_place_becomes_place_for_presentations() {
    let d = from_csl_json(
        &json!({"type": "speech", "title": "Talk", "event-place": "Berlin", "event-title": "Conf"}),
    )
    .unwrap();
    assert_eq!(d.item_type, "presentation");
    assert_eq!(d.fields.get("place").map(String::as_str), Some("Berlin"));
    assert_eq!(
        d.fields.get("meetingName").map(String::as_str),
        Some("Conf")
    );
}

/// Every CSL type of the shipped `csl.types` maps to Zotero item types the shipped
/// templates have, and the first of each is what `item_type_for_csl` answers.
#[test]
fn csl_type_table_matches_the_templates() {
    let s = schema().unwrap();
    let mut n = 0;
    for (csl_type, zotero_types) in s.csl_types() {
        assert!(!zotero_types.is_empty(), "{csl_type}");
        for z in zotero_types {
            assert!(
                s.item_type(z).is_some(),
                "{csl_type} → {z} not in templates.json"
            );
        }
        assert_eq!(
            s.item_type_for_csl(csl_type),
            zotero_types.first().map(String::as_str)
        );
        let d = from_csl_json(&json!({"type": csl_type, "title": "T"})).unwrap();
        assert!(s.item_type(&d.item_type).is_some());
        n += 1;
    }
    assert_eq!(n, 32);
    for (var, fields) in s.csl_text() {
        for f in fields {
            let known = s
                .csl_types()
                .flat_map(|(_, z)| z.iter())
                .any(|t| s.field_for_type(t, f).is_some());
            assert!(known, "csl.fields.text {var} → {f} is no field of any type");
        }
    }
}
