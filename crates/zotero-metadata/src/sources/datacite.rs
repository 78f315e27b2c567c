//! A DataCite record (`GET api.datacite.org/dois/{doi}` → `data.attributes`), read as
//! Datacite JSON.js reads the same record (DataCite's JSON from content negotiation has the
//! same keys): the type from `types.citeproc` through the schema's `csl.types` (software by
//! its schema.org type, `BookChapter` as a book section, `journalArticle` when there is no
//! usable citeproc type); titles with their subtitle; creators and contributors (`Personal`
//! names split, others in one field; editors and producers by role); the publisher; the
//! first of the Issued, Updated, Available, Accepted, Submitted, Created dates, else the
//! publication year; subjects as tags; the abstract; the container (a series or the
//! `IsPublishedIn` related item) with its volume, issue, pages, ISSN/ISBN; duplicate
//! creators removed.

use serde_json::{Map, Value};

use super::scalar_str;
use crate::mapping_error::MappingError;
use crate::schema::{schema, Schema};
use crate::text::{clean_author, clean_markup, clean_title, trim_internal};
use crate::zotero_item::{DraftCreator, ZoteroItemDraft};

const SOURCE: &str = "DataCite";

const SOFTWARE: &[&str] = &[
    "softwaresourcecode",
    "softwareapplication",
    "mobileapplication",
    "videogame",
    "webapplication",
];

/// The record's attributes, given the whole answer (`{"data": {"attributes": …}}`), its
/// `data`, or the attributes themselves.
fn attributes(answer: &Value) -> Result<&Map<String, Value>, MappingError> {
    let mut v = answer;
    if let Some(d) = v.get("data") {
        v = d;
    }
    if let Some(a) = v.get("attributes") {
        v = a;
    }
    v.as_object()
        .ok_or_else(|| MappingError::shape(SOURCE, "no `data.attributes` object"))
}

fn item_type(schema: &Schema, a: &Map<String, Value>) -> String {
    let types = a.get("types");
    let t = |k: &str| types.and_then(|t| t.get(k)).and_then(Value::as_str);
    let mut item_type = t("citeproc")
        .and_then(|c| schema.item_type_for_csl(c))
        .unwrap_or("journalArticle");
    if t("schemaOrg").is_some_and(|s| SOFTWARE.contains(&s.to_ascii_lowercase().as_str())) {
        item_type = "computerProgram";
    }
    if t("resourceTypeGeneral") == Some("BookChapter") {
        item_type = "bookSection";
    }
    item_type.to_owned()
}

fn str_of<'a>(o: &'a Value, k: &str) -> Option<&'a str> {
    o.get(k)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// One DataCite person or organisation as a creator of `role`; `use_comma` as Datacite
/// JSON.js passes it to cleanAuthor for personal names without parts.
fn person(role: &str, p: &Value, use_comma: bool) -> Option<DraftCreator> {
    if let (Some(family), Some(given)) = (str_of(p, "familyName"), str_of(p, "givenName")) {
        return Some(DraftCreator::split(role, given, family));
    }
    let name = str_of(p, "name")?;
    if str_of(p, "nameType") == Some("Personal") {
        let (first, last) = clean_author(name, use_comma);
        return Some(DraftCreator::split(role, &first, &last));
    }
    Some(DraftCreator::single(role, name))
}

fn contributor_role(p: &Value) -> &'static str {
    match str_of(p, "contributorType")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("editor") => "editor",
        Some("producer") => "producer",
        _ => "contributor",
    }
}

fn pages(first: Option<String>, last: Option<String>) -> Option<String> {
    match (first, last) {
        (Some(f), Some(l)) => Some(format!("{f}-{l}")),
        (f, l) => f.or(l),
    }
}

/// Maps a DataCite record to a draft, section by section in Datacite JSON.js's order (a
/// later section may overwrite what an earlier one set: the related item's volume the
/// series').
pub fn from_datacite(answer: &Value) -> Result<ZoteroItemDraft, MappingError> {
    let a = attributes(answer)?;
    let schema = schema()?;
    let mut d = ZoteroItemDraft::new(&item_type(schema, a));
    d.set(schema, "title", &clean_title(&title(a)));
    let mut creators = creators(a);
    set_publisher_and_date(&mut d, schema, a);
    set_identity(&mut d, schema, a);
    set_description(&mut d, schema, a);
    set_container(&mut d, schema, a);
    if let Some(r) =
        list(a.get("relatedItems")).find(|r| str_of(r, "relationType") == Some("IsPublishedIn"))
    {
        set_published_in(&mut d, schema, r);
        creators.extend(published_in_contributors(r));
    }
    for rel in list(a.get("relatedIdentifiers")) {
        if let Some((kind, v)) = standard_number(rel, "relatedIdentifier") {
            d.set_if_absent(schema, kind, v);
        }
    }
    let mut seen: Vec<DraftCreator> = Vec::new();
    for c in creators {
        if !seen.contains(&c) {
            seen.push(c.clone());
            d.push_creator(schema, c);
        }
    }
    d.set(schema, "libraryCatalog", "DataCite");
    Ok(d)
}

/// The entries of a JSON array (none when it is missing or not an array).
fn list(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
}

/// The title: untyped titles make it, a subtitle is appended, else the first other title.
fn title(a: &Map<String, Value>) -> String {
    let mut title = String::new();
    let mut alternate = String::new();
    for t in list(a.get("titles")) {
        let Some(text) = str_of(t, "title") else {
            continue;
        };
        match str_of(t, "titleType") {
            None => title = format!("{text}{title}"),
            Some(tt) if tt.eq_ignore_ascii_case("subtitle") => {
                title = format!("{title}: {text}");
            }
            Some(_) if alternate.is_empty() => alternate = text.to_owned(),
            Some(_) => {}
        }
    }
    if title.is_empty() {
        alternate
    } else {
        title
    }
}

/// The creators (authors), then the contributors by their role.
fn creators(a: &Map<String, Value>) -> Vec<DraftCreator> {
    let authors = list(a.get("creators")).filter_map(|c| person("author", c, true));
    let contributors =
        list(a.get("contributors")).filter_map(|c| person(contributor_role(c), c, false));
    authors.chain(contributors).collect()
}

/// The publisher (a name or `{name}`), and the first of the Issued, Updated, Available,
/// Accepted, Submitted, Created dates, else the publication year.
fn set_publisher_and_date(d: &mut ZoteroItemDraft, schema: &Schema, a: &Map<String, Value>) {
    let publisher = match a.get("publisher") {
        Some(Value::Object(p)) => p.get("name").and_then(Value::as_str),
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    if let Some(p) = publisher {
        d.set(schema, "publisher", p);
    }
    let dates: Vec<(&str, &str)> = list(a.get("dates"))
        .filter_map(|x| Some((str_of(x, "dateType")?, str_of(x, "date")?)))
        .collect();
    let date = [
        "Issued",
        "Updated",
        "Available",
        "Accepted",
        "Submitted",
        "Created",
    ]
    .iter()
    .find_map(|ty| {
        dates
            .iter()
            .find(|(t, _)| t == ty)
            .map(|(_, v)| (*v).to_owned())
    })
    .or_else(|| scalar_str(a.get("publicationYear")));
    if let Some(date) = date {
        d.set(schema, "date", &date);
    }
}

/// The DOI (in Extra when the type has no DOI field), the URL, the language, the version.
fn set_identity(d: &mut ZoteroItemDraft, schema: &Schema, a: &Map<String, Value>) {
    if let Some(doi) = a.get("doi").and_then(Value::as_str).map(str::trim) {
        d.set_or_extra(schema, "DOI", doi);
    }
    for (k, field) in [
        ("url", "url"),
        ("language", "language"),
        ("version", "versionNumber"),
    ] {
        if let Some(v) = scalar_str(a.get(k)) {
            d.set(schema, field, &v);
        }
    }
}

/// The subjects as tags (each once), the formats, sizes and rights, the abstract.
fn set_description(d: &mut ZoteroItemDraft, schema: &Schema, a: &Map<String, Value>) {
    for subject in list(a.get("subjects")).filter_map(|s| str_of(s, "subject")) {
        if !d.tags.iter().any(|t| t == subject) {
            d.tags.push(subject.to_owned());
        }
    }
    let joined = |k: &str, sep: &str| {
        let list: Vec<&str> = list(a.get(k)).filter_map(Value::as_str).collect();
        (!list.is_empty()).then(|| list.join(sep))
    };
    if let Some(formats) = joined("formats", ",") {
        d.set(schema, "medium", &formats);
    }
    if let Some(sizes) = joined("sizes", ", ") {
        d.set(schema, "pages", &sizes);
        d.set(schema, "artworkSize", &sizes);
    }
    let rights: Vec<&str> = list(a.get("rightsList"))
        .filter_map(|r| str_of(r, "rights"))
        .collect();
    if !rights.is_empty() {
        d.set(schema, "rights", &rights.join(", "));
    }
    for desc in list(a.get("descriptions")) {
        if str_of(desc, "descriptionType") == Some("Abstract") {
            if let Some(text) = str_of(desc, "description") {
                d.set(schema, "abstractNote", &clean_markup(text));
            }
        }
    }
}

/// The container: a series' title, volume and pages (pages only when the sizes gave none),
/// and its ISSN or ISBN.
fn set_container(d: &mut ZoteroItemDraft, schema: &Schema, a: &Map<String, Value>) {
    let Some(container) = a.get("container").filter(|c| c.is_object()) else {
        return;
    };
    if str_of(container, "type") == Some("Series") {
        if let Some(t) = str_of(container, "title") {
            d.set(schema, "publicationTitle", &trim_internal(t));
        }
        if let Some(v) = scalar_str(container.get("volume")) {
            d.set(schema, "volume", &v);
        }
        if let Some(p) = pages(
            scalar_str(container.get("firstPage")),
            scalar_str(container.get("lastPage")),
        ) {
            d.set_if_absent(schema, "pages", &p);
        }
    }
    if let Some((kind, id)) = standard_number(container, "identifier") {
        d.set(schema, kind, id);
    }
}

/// An ISSN or ISBN given as `{<key>, <key>Type}`: its kind and value.
fn standard_number<'a>(o: &'a Value, key: &str) -> Option<(&'a str, &'a str)> {
    let v = str_of(o, key)?;
    let kind = str_of(o, &format!("{key}Type"))?;
    (kind == "ISSN" || kind == "ISBN").then_some((kind, v))
}

/// The `IsPublishedIn` related item: volume, title, ISSN/ISBN, issue, year, pages, edition.
fn set_published_in(d: &mut ZoteroItemDraft, schema: &Schema, r: &Value) {
    if let Some(v) = scalar_str(r.get("volume")) {
        d.set(schema, "volume", &v);
    }
    let container_title = match r.get("titles") {
        Some(Value::Array(ts)) => ts.first().and_then(|t| str_of(t, "title")),
        Some(t @ Value::Object(_)) => str_of(t, "title"),
        _ => None,
    };
    if let Some(t) = container_title {
        d.set(schema, "publicationTitle", &trim_internal(t));
    }
    if let Some((kind, v)) = r
        .get("relatedItemIdentifier")
        .and_then(|id| standard_number(id, "relatedItemIdentifier"))
    {
        d.set(schema, kind, v);
    }
    for (k, field) in [("issue", "issue"), ("publicationYear", "date")] {
        if let Some(v) = scalar_str(r.get(k)) {
            d.set(schema, field, &v);
        }
    }
    if let Some(p) = pages(
        scalar_str(r.get("firstPage")),
        scalar_str(r.get("lastPage")),
    ) {
        d.set(schema, "pages", &p);
    }
    if let Some(e) = scalar_str(r.get("edition")) {
        d.set(schema, "edition", &e);
    }
}

/// The related item's contributors: its editors as editors, the others as contributors.
fn published_in_contributors(r: &Value) -> Vec<DraftCreator> {
    list(r.get("contributor"))
        .filter_map(|c| {
            let role = if str_of(c, "contributorType") == Some("Editor") {
                "editor"
            } else {
                "contributor"
            };
            person(role, c, true)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fields;
    use serde_json::json;

    /// A DataCite dataset in the shape `api.datacite.org/dois/{doi}` answers with (REST API
    /// docs, metadata schema 4.4 attribute names); values written for the test.
    fn dataset() -> Value {
        json!({
            "data": {
                "id": "10.5061/dryad.8515",
                "type": "dois",
                "attributes": {
                    "doi": "10.5061/dryad.8515",
                    "identifiers": [],
                    "creators": [
                        {"name": "Ollomo, Benjamin", "nameType": "Personal", "givenName": "Benjamin", "familyName": "Ollomo", "affiliation": [], "nameIdentifiers": []},
                        {"name": "Durand, Patrick", "nameType": "Personal", "affiliation": [], "nameIdentifiers": []},
                        {"name": "Centre International de Recherches Médicales de Franceville", "nameType": "Organizational", "affiliation": [], "nameIdentifiers": []}
                    ],
                    "titles": [
                        {"title": "Data from: A new malaria agent in African hominids", "lang": "en"},
                        {"title": "Supplementary tables", "titleType": "Subtitle"},
                        {"title": "Plasmodium data", "titleType": "AlternativeTitle"}
                    ],
                    "publisher": "Dryad",
                    "container": {},
                    "publicationYear": 2011,
                    "subjects": [{"subject": "Plasmodium"}, {"subject": "malaria"}, {"subject": "Plasmodium"}],
                    "contributors": [
                        {"name": "Renaud, François", "nameType": "Personal", "contributorType": "Editor", "givenName": "François", "familyName": "Renaud"},
                        {"name": "Data Curation Team", "nameType": "Organizational", "contributorType": "DataCurator"}
                    ],
                    "dates": [
                        {"date": "2011-02-01", "dateType": "Available"},
                        {"date": "2011", "dateType": "Issued"}
                    ],
                    "language": "en",
                    "types": {"ris": "DATA", "bibtex": "misc", "citeproc": "dataset", "schemaOrg": "Dataset", "resourceType": "Dataset", "resourceTypeGeneral": "Dataset"},
                    "relatedIdentifiers": [{"relationType": "IsCitedBy", "relatedIdentifier": "10.1371/journal.ppat.1000446", "relatedIdentifierType": "DOI"}],
                    "sizes": ["2.5 MB"],
                    "formats": ["text/csv", "application/zip"],
                    "version": "1",
                    "rightsList": [{"rights": "Creative Commons Zero v1.0 Universal", "rightsUri": "https://creativecommons.org/publicdomain/zero/1.0/legalcode"}],
                    "descriptions": [
                        {"description": "Plasmodium falciparum is the major human malaria agent.", "descriptionType": "Abstract"},
                        {"description": "Funding: none", "descriptionType": "Other"}
                    ],
                    "geoLocations": [],
                    "fundingReferences": [],
                    "url": "https://datadryad.org/stash/dataset/doi:10.5061/dryad.8515",
                    "state": "findable",
                    "schemaVersion": "http://datacite.org/schema/kernel-4"
                }
            }
        })
    }

    #[test]
    fn dataset_like_datacite_json() {
        let d = from_datacite(&dataset()).unwrap();
        assert_eq!(d.item_type, "dataset");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.5061/dryad.8515"),
                (
                    "abstractNote",
                    "Plasmodium falciparum is the major human malaria agent."
                ),
                ("date", "2011"),
                ("format", "text/csv,application/zip"),
                ("language", "en"),
                ("libraryCatalog", "DataCite"),
                ("repository", "Dryad"),
                ("rights", "Creative Commons Zero v1.0 Universal"),
                (
                    "title",
                    "Data from: A new malaria agent in African hominids: Supplementary tables"
                ),
                (
                    "url",
                    "https://datadryad.org/stash/dataset/doi:10.5061/dryad.8515"
                ),
                ("versionNumber", "1"),
            ])
        );
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("author", "Benjamin", "Ollomo"),
                DraftCreator::split("author", "Patrick", "Durand"),
                DraftCreator::single(
                    "author",
                    "Centre International de Recherches Médicales de Franceville"
                ),
                // A dataset has no editor: contributor.
                DraftCreator::split("contributor", "François", "Renaud"),
                DraftCreator::single("contributor", "Data Curation Team"),
            ]
        );
        assert_eq!(d.tags, vec!["Plasmodium", "malaria"]);
    }

    #[test]
    fn article_with_container_and_fallbacks() {
        let rec = json!({
            "doi": "10.1234/abc",
            "types": {"citeproc": "article-journal", "resourceTypeGeneral": "JournalArticle"},
            "titles": [{"title": "Only an alternative", "titleType": "AlternativeTitle"}],
            "creators": [{"name": "Doe, J.A.", "nameType": "Personal"}, {"name": "Doe, J.A.", "nameType": "Personal"}],
            "publisher": {"name": "Some Press"},
            "publicationYear": "2020",
            "relatedItems": [{
                "relationType": "IsPublishedIn",
                "relatedItemType": "Journal",
                "titles": [{"title": "Journal of Tests"}],
                "volume": "4", "issue": "2", "firstPage": "10", "lastPage": "19",
                "relatedItemIdentifier": {"relatedItemIdentifier": "1234-5678", "relatedItemIdentifierType": "ISSN"}
            }]
        });
        let d = from_datacite(&rec).unwrap();
        assert_eq!(d.item_type, "journalArticle");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.1234/abc"),
                ("ISSN", "1234-5678"),
                ("date", "2020"),
                ("issue", "2"),
                ("libraryCatalog", "DataCite"),
                ("pages", "10-19"),
                ("publicationTitle", "Journal of Tests"),
                ("publisher", "Some Press"),
                ("title", "Only an alternative"),
                ("volume", "4"),
            ])
        );
        assert_eq!(
            d.creators,
            vec![DraftCreator::split("author", "J. A.", "Doe")]
        );
    }

    #[test]
    fn a_chapter_in_a_series_takes_the_series_and_the_books_editors() {
        let rec = json!({
            "types": {"citeproc": "chapter", "resourceTypeGeneral": "BookChapter"},
            "titles": [{"title": "A Chapter"}],
            "container": {
                "type": "Series", "title": "Lecture  Notes in Tests", "volume": "12",
                "firstPage": "5", "lastPage": "9",
                "identifier": "978-3-16-148410-0", "identifierType": "ISBN"
            },
            "relatedItems": [{
                "relationType": "IsPublishedIn", "edition": "2",
                "contributor": [
                    {"name": "Roe, Ann", "nameType": "Personal", "contributorType": "Editor"},
                    {"name": "Some Lab", "nameType": "Organizational", "contributorType": "Other"}
                ]
            }],
            "relatedIdentifiers": [
                {"relatedIdentifier": "0-306-40615-2", "relatedIdentifierType": "ISBN"}
            ]
        });
        let d = from_datacite(&rec).unwrap();
        assert_eq!(d.item_type, "bookSection");
        assert_eq!(
            d.fields,
            fields(&[
                ("ISBN", "978-3-16-148410-0"),
                ("bookTitle", "Lecture Notes in Tests"),
                ("edition", "2"),
                ("libraryCatalog", "DataCite"),
                ("pages", "5-9"),
                ("title", "A Chapter"),
                ("volume", "12"),
            ])
        );
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("editor", "Ann", "Roe"),
                DraftCreator::single("contributor", "Some Lab"),
            ]
        );
    }

    #[test]
    fn sizes_are_the_pages_and_a_related_issn_fills_an_empty_one() {
        let rec = json!({
            "types": {"citeproc": "article-journal"},
            "sizes": ["12 pages"],
            "container": {"type": "Series", "firstPage": "1", "lastPage": "2"},
            "relatedItems": [{"relationType": "References", "volume": "9"}],
            "relatedIdentifiers": [
                {"relatedIdentifier": "10.1/x", "relatedIdentifierType": "DOI"},
                {"relatedIdentifier": "1234-5679", "relatedIdentifierType": "ISSN"}
            ]
        });
        let d = from_datacite(&rec).unwrap();
        assert_eq!(
            d.fields,
            fields(&[
                ("ISSN", "1234-5679"),
                ("libraryCatalog", "DataCite"),
                ("pages", "12 pages"),
            ])
        );
    }

    #[test]
    fn types_and_bad_shapes() {
        let t = |types: Value| from_datacite(&json!({"types": types})).unwrap().item_type;
        assert_eq!(t(json!({"citeproc": "article"})), "preprint");
        assert_eq!(t(json!({"citeproc": "nonsense"})), "journalArticle");
        assert_eq!(t(json!({})), "journalArticle");
        assert_eq!(
            t(json!({"citeproc": "article", "schemaOrg": "SoftwareSourceCode"})),
            "computerProgram"
        );
        assert_eq!(
            t(json!({"citeproc": "article", "resourceTypeGeneral": "BookChapter"})),
            "bookSection"
        );
        assert!(from_datacite(&json!("x")).is_err());
        assert!(from_datacite(&json!({"data": []})).is_err());
        let d = from_datacite(&json!({"data": {"attributes": {}}})).unwrap();
        assert_eq!(d.fields, fields(&[("libraryCatalog", "DataCite")]));
    }
}
