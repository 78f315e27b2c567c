//! A Crossref REST work (`GET api.crossref.org/works/{doi}` → `message`), for when DOI content
//! negotiation is unavailable. The message is rewritten as the CSL-JSON Crossref itself
//! serves for the work (its type as a CSL type, arrays flattened) and mapped by `csl`, so a
//! DOI gives the same item whichever way it was fetched. Where Zotero's Crossref REST.js
//! reads the message differently from the CSL output, it is followed: the print date before
//! the issue date, `article-number` for missing pages, the primary resource as URL, the
//! first licence as rights, the event's or institution's place, chairs as contributors,
//! names in capitals recapitalised, the thesis date from `approved` and its degree,
//! `group-title` as the repository of a preprint, `[No title found]` for a missing title,
//! and `libraryCatalog: Crossref`.

use serde_json::{json, Map, Value};

use super::first_str;
use crate::csl::from_csl_json;
use crate::mapping_error::MappingError;
use crate::schema::schema;
use crate::text::decode_entities;
use crate::zotero_item::ZoteroItemDraft;

const SOURCE: &str = "Crossref";

/// The CSL type for a Crossref work type (`api.crossref.org/types`): the type Crossref's CSL
/// output uses where it has one, else the one matching the Zotero type Crossref REST.js
/// chooses. `None` for types neither knows (`grant`, `component`, `other`, …), which then
/// become `document` as an unknown CSL type does.
pub fn crossref_type_to_csl(crossref_type: &str) -> Option<&'static str> {
    Some(match crossref_type {
        "journal-article" | "journal" | "journal-volume" | "journal-issue" => "article-journal",
        "book-chapter" | "book-part" | "book-section" | "reference-entry" => "chapter",
        "book" | "book-series" | "book-set" | "book-track" | "monograph" | "reference-book"
        | "edited-book" => "book",
        "proceedings-article" | "proceedings" | "proceedings-series" => "paper-conference",
        "posted-content" => "article",
        "dataset" | "database" => "dataset",
        "report" | "report-series" | "report-component" => "report",
        "dissertation" => "thesis",
        "standard" | "standard-series" => "standard",
        "peer-review" => "manuscript",
        _ => return None,
    })
}

/// A name in capitals ("KUCSKO") recapitalised ("Kucsko"), as Crossref REST.js does.
fn fix_capitalization(s: &str) -> String {
    if !s.chars().any(char::is_alphabetic) || s.to_uppercase() != s {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
        start = c.is_whitespace() || c == '-' || c == '\'';
    }
    out
}

/// Crossref contributors as CSL names (`name` → `literal`).
fn names(list: Option<&Value>) -> Vec<Value> {
    let Some(list) = list.and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(Value::as_object)
        .filter_map(|p| {
            let s = |k: &str| {
                p.get(k)
                    .and_then(Value::as_str)
                    .map(decode_entities)
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty())
            };
            let mut n = Map::new();
            if let Some(name) = s("name") {
                n.insert("literal".into(), Value::String(name));
            } else {
                if let Some(f) = s("family") {
                    n.insert("family".into(), Value::String(fix_capitalization(&f)));
                }
                if let Some(g) = s("given") {
                    n.insert("given".into(), Value::String(fix_capitalization(&g)));
                }
                if let Some(x) = s("suffix") {
                    n.insert("suffix".into(), Value::String(x));
                }
            }
            (!n.is_empty()).then_some(Value::Object(n))
        })
        .collect()
}

/// A Crossref date with at least a year (`{"date-parts": [[2013, 7, 31]]}`).
fn dated(v: Option<&Value>) -> Option<&Value> {
    let v = v?;
    let year = v
        .get("date-parts")?
        .as_array()?
        .first()?
        .as_array()?
        .first()?;
    let has_year = match year {
        Value::Number(n) => n.as_i64().is_some_and(|y| y != 0),
        Value::String(s) => !s.is_empty(),
        _ => false,
    };
    has_year.then_some(v)
}

/// The work itself, given the whole answer (`{"status", "message-type": "work", "message"}`)
/// or its `message`.
fn message(answer: &Value) -> Result<&Map<String, Value>, MappingError> {
    let obj = answer
        .as_object()
        .ok_or_else(|| MappingError::shape(SOURCE, "not a JSON object"))?;
    match obj.get("message") {
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(MappingError::shape(SOURCE, "`message` is not an object")),
        None => Ok(obj),
    }
}

/// A Crossref work as the CSL-JSON item `from_crossref_work` maps, section by section (a
/// later section may replace what an earlier one set: the publisher by the institution).
pub fn crossref_work_to_csl(answer: &Value) -> Result<Value, MappingError> {
    let m = message(answer)?;
    let cr_type = m.get("type").and_then(Value::as_str).unwrap_or("");
    let csl_type = csl_type(m, cr_type);
    let mut c = Map::new();
    c.insert(
        "type".into(),
        Value::String(csl_type.unwrap_or("document").to_owned()),
    );
    insert_titles(&mut c, m, cr_type, csl_type);
    insert_names(&mut c, m);
    insert_numbers(&mut c, m);
    insert_place_and_institution(&mut c, m, csl_type);
    insert_by_crossref_type(&mut c, m, cr_type);
    insert_issued(&mut c, m, cr_type);
    insert_links(&mut c, m);
    Ok(Value::Object(c))
}

/// A text property (or the first of a list), entities decoded.
fn text(m: &Map<String, Value>, k: &str) -> Option<String> {
    first_str(m.get(k)).map(decode_entities)
}

/// The CSL type; Crossref REST.js takes an `other` with an ISBN and a container for a book
/// section.
fn csl_type(m: &Map<String, Value>, cr_type: &str) -> Option<&'static str> {
    if cr_type == "other" && m.get("ISBN").is_some() && m.get("container-title").is_some() {
        return Some("chapter");
    }
    crossref_type_to_csl(cr_type)
}

/// The title (`[No title found]` without one), subtitle and abstract, which keep their markup
/// here (`csl` cleans it), and the container: for an `other` taken for a chapter with two
/// container titles, the series first, then the book (Crossref REST.js).
fn insert_titles(
    c: &mut Map<String, Value>,
    m: &Map<String, Value>,
    cr_type: &str,
    csl_type: Option<&str>,
) {
    let title = first_str(m.get("title")).map(str::to_owned);
    c.insert(
        "title".into(),
        Value::String(title.unwrap_or_else(|| "[No title found]".to_owned())),
    );
    if let Some(sub) = first_str(m.get("subtitle")) {
        c.insert("subtitle".into(), Value::String(sub.to_owned()));
    }
    if let Some(abs) = first_str(m.get("abstract")) {
        c.insert("abstract".into(), Value::String(abs.to_owned()));
    }
    let containers: Vec<&str> = m
        .get("container-title")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if cr_type == "other" && csl_type == Some("chapter") && containers.len() >= 2 {
        if let (Some(series), Some(book)) = (containers.first(), containers.get(1)) {
            c.insert("collection-title".into(), json!(series));
            c.insert("container-title".into(), json!(book));
        }
    } else if let Some(ct) = first_str(m.get("container-title")) {
        c.insert("container-title".into(), Value::String(ct.to_owned()));
    }
    if let Some(short) = first_str(m.get("short-container-title")) {
        c.insert(
            "container-title-short".into(),
            Value::String(short.to_owned()),
        );
    }
}

/// Authors, editors, translators, and chairs as contributors.
fn insert_names(c: &mut Map<String, Value>, m: &Map<String, Value>) {
    for (cr, var) in [
        ("author", "author"),
        ("editor", "editor"),
        ("translator", "translator"),
        ("chair", "contributor"),
    ] {
        let list = names(m.get(cr));
        if !list.is_empty() {
            c.insert(var.into(), Value::Array(list));
        }
    }
}

/// Volume, issue, language, edition, publisher, DOI; the page, else the article number; the
/// ISBNs and ISSNs, each list joined.
fn insert_numbers(c: &mut Map<String, Value>, m: &Map<String, Value>) {
    for (cr, var) in [
        ("volume", "volume"),
        ("issue", "issue"),
        ("language", "language"),
        ("edition-number", "edition"),
        ("publisher", "publisher"),
        ("DOI", "DOI"),
    ] {
        if let Some(v) = text(m, cr) {
            c.insert(var.into(), Value::String(v));
        }
    }
    if let Some(p) = text(m, "page").or_else(|| text(m, "article-number")) {
        c.insert("page".into(), Value::String(p));
    }
    for k in ["ISBN", "ISSN"] {
        if let Some(a) = m.get(k).and_then(Value::as_array) {
            let list: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            if !list.is_empty() {
                c.insert(k.into(), Value::String(list.join(", ")));
            }
        }
    }
}

/// The event's name; the place: the event's, else the first institution's, else the
/// publisher's; the institution as a report's or thesis's publisher (Crossref REST.js).
fn insert_place_and_institution(
    c: &mut Map<String, Value>,
    m: &Map<String, Value>,
    csl_type: Option<&str>,
) {
    let event = m.get("event").and_then(Value::as_object);
    if let Some(name) = event.and_then(|e| first_str(e.get("name"))) {
        c.insert("event-title".into(), Value::String(decode_entities(name)));
    }
    let institution = m
        .get("institution")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_object);
    let institution_place = institution
        .and_then(|i| i.get("place"))
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|p| !p.is_empty());
    let place = event
        .and_then(|e| first_str(e.get("location")))
        .map(str::to_owned)
        .or(institution_place)
        .or_else(|| text(m, "publisher-location"));
    if let Some(p) = place {
        c.insert("publisher-place".into(), Value::String(decode_entities(&p)));
    }
    if matches!(csl_type, Some("report") | Some("thesis")) {
        if let Some(name) = institution.and_then(|i| first_str(i.get("name"))) {
            c.insert("publisher".into(), Value::String(decode_entities(name)));
        }
    }
}

/// What Crossref REST.js reads for one Crossref type: a preprint's `group-title` as its
/// publisher, a dissertation's degree (without its parenthesis) and a peer review as genre.
fn insert_by_crossref_type(c: &mut Map<String, Value>, m: &Map<String, Value>, cr_type: &str) {
    if cr_type == "posted-content" {
        if let Some(g) = text(m, "group-title") {
            c.insert("publisher".into(), Value::String(g));
        }
    }
    if cr_type == "dissertation" {
        if let Some(degree) = first_str(m.get("degree")) {
            let degree = match (degree.find('('), degree.rfind(')')) {
                (Some(a), Some(b)) if a < b => {
                    format!(
                        "{}{}",
                        degree.get(..a).unwrap_or(""),
                        degree.get(b + 1..).unwrap_or("")
                    )
                }
                _ => degree.to_owned(),
            };
            c.insert("genre".into(), Value::String(degree.trim().to_owned()));
        }
    }
    if cr_type == "peer-review" {
        c.insert("genre".into(), Value::String("peer review".into()));
    }
}

/// The date: a dissertation's `approved`, else the print date, else `issued`.
fn insert_issued(c: &mut Map<String, Value>, m: &Map<String, Value>, cr_type: &str) {
    let date = if cr_type == "dissertation" {
        dated(m.get("approved"))
    } else {
        None
    }
    .or_else(|| dated(m.get("published-print")))
    .or_else(|| dated(m.get("issued")));
    if let Some(d) = date {
        let parts = d.get("date-parts").cloned().unwrap_or(Value::Null);
        c.insert("issued".into(), json!({ "date-parts": parts }));
    }
}

/// The primary resource as URL, the first licence's URL as licence.
fn insert_links(c: &mut Map<String, Value>, m: &Map<String, Value>) {
    if let Some(url) = m
        .get("resource")
        .and_then(|r| r.get("primary"))
        .and_then(|p| p.get("URL"))
        .and_then(Value::as_str)
    {
        c.insert("URL".into(), Value::String(url.to_owned()));
    }
    if let Some(url) = m
        .get("license")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(|l| l.get("URL"))
        .and_then(Value::as_str)
    {
        c.insert("license".into(), Value::String(url.to_owned()));
    }
}

/// Maps a Crossref work (the whole answer or its `message`) to a draft.
pub fn from_crossref_work(answer: &Value) -> Result<ZoteroItemDraft, MappingError> {
    let csl = crossref_work_to_csl(answer)?;
    let mut draft = from_csl_json(&csl)?;
    draft.set(schema()?, "libraryCatalog", "Crossref");
    Ok(draft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fields;
    use crate::zotero_item::DraftCreator;

    /// `api.crossref.org/works/10.1038/nature12373`, in the documented shape (api_format.md),
    /// with the values Crossref lists for the work; long lists shortened.
    fn nature12373() -> Value {
        json!({
            "status": "ok",
            "message-type": "work",
            "message-version": "1.0.0",
            "message": {
                "indexed": {"date-parts": [[2024, 3, 1]], "date-time": "2024-03-01T12:00:00Z", "timestamp": 1709294400000u64},
                "reference-count": 30,
                "publisher": "Springer Science and Business Media LLC",
                "issue": "7460",
                "license": [{"start": {"date-parts": [[2013, 8, 1]]}, "content-version": "tdm", "delay-in-days": 1, "URL": "https://www.springer.com/tdm"}],
                "content-domain": {"domain": [], "crossmark-restriction": false},
                "short-container-title": ["Nature"],
                "published-print": {"date-parts": [[2013, 8]]},
                "abstract": "<jats:p>Sensitive probing of temperature variations on nanometre scales is an outstanding challenge in many areas of modern science and technology.</jats:p>",
                "DOI": "10.1038/nature12373",
                "type": "journal-article",
                "created": {"date-parts": [[2013, 7, 31]], "date-time": "2013-07-31T16:03:24Z", "timestamp": 1375286604000u64},
                "page": "54-58",
                "source": "Crossref",
                "is-referenced-by-count": 1500,
                "title": ["Nanometre-scale thermometry in a living cell"],
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
                "published-online": {"date-parts": [[2013, 7, 31]]},
                "container-title": ["Nature"],
                "original-title": [],
                "language": "en",
                "link": [{"URL": "http://www.nature.com/articles/nature12373.pdf", "content-type": "application/pdf", "content-version": "vor", "intended-application": "text-mining"}],
                "deposited": {"date-parts": [[2023, 1, 2]], "date-time": "2023-01-02T12:00:00Z", "timestamp": 1672660800000u64},
                "score": 1,
                "resource": {"primary": {"URL": "https://www.nature.com/articles/nature12373"}},
                "subtitle": [],
                "short-title": [],
                "issued": {"date-parts": [[2013, 7, 31]]},
                "references-count": 30,
                "journal-issue": {"issue": "7460", "published-print": {"date-parts": [[2013, 8]]}},
                "URL": "https://doi.org/10.1038/nature12373",
                "relation": {},
                "ISSN": ["0028-0836", "1476-4687"],
                "issn-type": [{"type": "print", "value": "0028-0836"}, {"type": "electronic", "value": "1476-4687"}],
                "published": {"date-parts": [[2013, 7, 31]]}
            }
        })
    }

    #[test]
    fn journal_article() {
        let d = from_crossref_work(&nature12373()).unwrap();
        assert_eq!(d.item_type, "journalArticle");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.1038/nature12373"),
                ("ISSN", "0028-0836, 1476-4687"),
                ("abstractNote", "Sensitive probing of temperature variations on nanometre scales is an outstanding challenge in many areas of modern science and technology."),
                ("date", "2013-08"),
                ("issue", "7460"),
                ("language", "en"),
                ("libraryCatalog", "Crossref"),
                ("pages", "54-58"),
                ("publicationTitle", "Nature"),
                ("publisher", "Springer Science and Business Media LLC"),
                ("rights", "https://www.springer.com/tdm"),
                ("title", "Nanometre-scale thermometry in a living cell"),
                ("url", "https://www.nature.com/articles/nature12373"),
                ("volume", "500"),
            ])
        );
        assert_eq!(d.creators.len(), 8);
        assert_eq!(d.creators[0], DraftCreator::split("author", "G.", "Kucsko"));
        assert_eq!(
            d.creators[7],
            DraftCreator::split("author", "M. D.", "Lukin")
        );
        // The message alone works too.
        let only = nature12373()["message"].clone();
        assert_eq!(from_crossref_work(&only).unwrap(), d);
    }

    #[test]
    fn chapter_proceedings_preprint_thesis() {
        let chapter = json!({"message": {
            "type": "book-chapter",
            "title": ["Graph &amp; network models"],
            "subtitle": ["An overview"],
            "container-title": ["Handbook of Networks"],
            "author": [{"given": "JANE", "family": "DOE"}, {"name": "The Network Group"}],
            "editor": [{"given": "Rick", "family": "Roe"}],
            "publisher": "Springer International Publishing",
            "publisher-location": "Cham",
            "ISBN": ["9783030000000", "9783030000017"],
            "article-number": "e12",
            "issued": {"date-parts": [[2020]]},
            "published-print": {"date-parts": [[null]]}
        }});
        let d = from_crossref_work(&chapter).unwrap();
        assert_eq!(d.item_type, "bookSection");
        assert_eq!(
            d.fields,
            fields(&[
                ("ISBN", "9783030000000, 9783030000017"),
                ("bookTitle", "Handbook of Networks"),
                ("date", "2020"),
                ("libraryCatalog", "Crossref"),
                ("pages", "e12"),
                ("place", "Cham"),
                ("publisher", "Springer International Publishing"),
                ("title", "Graph & network models: An overview"),
            ])
        );
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("author", "Jane", "Doe"),
                DraftCreator::single("author", "The Network Group"),
                DraftCreator::split("editor", "Rick", "Roe"),
            ]
        );

        let paper = json!({
            "type": "proceedings-article",
            "title": ["BERT"],
            "container-title": ["Proceedings of NAACL"],
            "event": {"name": "NAACL 2019", "location": "Minneapolis"},
            "chair": [{"given": "Jill", "family": "Burstein"}],
            "author": [{"given": "Jacob", "family": "Devlin"}],
            "issued": {"date-parts": [[2019, 6]]}
        });
        let d = from_crossref_work(&paper).unwrap();
        assert_eq!(d.item_type, "conferencePaper");
        assert_eq!(
            d.fields.get("proceedingsTitle").map(String::as_str),
            Some("Proceedings of NAACL")
        );
        assert_eq!(
            d.fields.get("conferenceName").map(String::as_str),
            Some("NAACL 2019")
        );
        assert_eq!(
            d.fields.get("place").map(String::as_str),
            Some("Minneapolis")
        );
        assert_eq!(d.fields.get("date").map(String::as_str), Some("2019-06"));
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("author", "Jacob", "Devlin"),
                DraftCreator::split("contributor", "Jill", "Burstein"),
            ]
        );

        let preprint = json!({
            "type": "posted-content", "subtype": "preprint",
            "title": ["A preprint"], "group-title": "Life Sciences",
            "publisher": "openRxiv", "issued": {"date-parts": [[2021, 2, 3]]}
        });
        let d = from_crossref_work(&preprint).unwrap();
        assert_eq!(d.item_type, "preprint");
        assert_eq!(
            d.fields.get("repository").map(String::as_str),
            Some("Life Sciences")
        );

        let thesis = json!({
            "type": "dissertation",
            "title": ["On things"],
            "degree": ["PhD (Physics)"],
            "institution": [{"name": "MIT", "place": ["Cambridge, MA"]}],
            "approved": {"date-parts": [[2018, 5, 20]]},
            "issued": {"date-parts": [[2019]]},
            "publisher": "Massachusetts Institute of Technology",
            "author": [{"given": "Ann", "family": "Lee"}]
        });
        let d = from_crossref_work(&thesis).unwrap();
        assert_eq!(d.item_type, "thesis");
        assert_eq!(
            d.fields,
            fields(&[
                ("date", "2018-05-20"),
                ("libraryCatalog", "Crossref"),
                ("place", "Cambridge, MA"),
                ("thesisType", "PhD"),
                ("title", "On things"),
                ("university", "MIT"),
            ])
        );
    }

    #[test]
    fn an_other_with_an_isbn_is_a_chapter_of_the_second_container_in_the_first() {
        let work = json!({
            "type": "other",
            "title": ["T"],
            "ISBN": ["9783030000000"],
            "container-title": ["Series X", "Book Y"],
            "translator": [{"given": "Tom", "family": "TRAN"}],
            "edition-number": "3",
            "resource": {"primary": {"URL": "https://example.org/r"}},
            "license": [{"URL": "https://example.org/l1"}, {"URL": "https://example.org/l2"}]
        });
        assert_eq!(
            crossref_work_to_csl(&work).unwrap(),
            json!({
                "type": "chapter",
                "title": "T",
                "collection-title": "Series X",
                "container-title": "Book Y",
                "translator": [{"family": "Tran", "given": "Tom"}],
                "edition": "3",
                "ISBN": "9783030000000",
                "URL": "https://example.org/r",
                "license": "https://example.org/l1"
            })
        );
    }

    #[test]
    fn a_reports_institution_is_its_publisher_and_a_peer_review_its_genre() {
        let report = json!({
            "type": "report",
            "publisher": "P",
            "institution": [{"name": "Inst &amp; Co"}]
        });
        assert_eq!(
            crossref_work_to_csl(&report).unwrap(),
            json!({"type": "report", "title": "[No title found]", "publisher": "Inst & Co"})
        );
        let review = json!({"type": "peer-review", "title": ["Review of X"]});
        assert_eq!(
            crossref_work_to_csl(&review).unwrap(),
            json!({"type": "manuscript", "title": "Review of X", "genre": "peer review"})
        );
    }

    #[test]
    fn unknown_type_and_missing_fields() {
        let d = from_crossref_work(&json!({"message": {"type": "grant"}})).unwrap();
        assert_eq!(d.item_type, "document");
        assert_eq!(
            d.fields,
            fields(&[
                ("libraryCatalog", "Crossref"),
                ("title", "[No title found]")
            ])
        );
        assert!(d.creators.is_empty());
        let d = from_crossref_work(&json!({"message": {}})).unwrap();
        assert_eq!(d.item_type, "document");
        assert!(from_crossref_work(&json!({"message": "x"})).is_err());
        assert!(from_crossref_work(&json!([1])).is_err());
    }

    #[test]
    fn type_table_reaches_known_item_types() {
        let s = schema().unwrap();
        for t in [
            "journal-article",
            "book-chapter",
            "proceedings-article",
            "posted-content",
            "book",
            "monograph",
            "edited-book",
            "dataset",
            "report",
            "dissertation",
            "standard",
            "peer-review",
            "reference-entry",
            "journal-issue",
        ] {
            let csl = crossref_type_to_csl(t).unwrap();
            assert!(s.item_type_for_csl(csl).is_some(), "{t} → {csl}");
        }
        assert_eq!(
            crossref_type_to_csl("journal-article"),
            Some("article-journal")
        );
        assert_eq!(crossref_type_to_csl("posted-content"), Some("article"));
        assert_eq!(crossref_type_to_csl("other"), None);
    }
}
