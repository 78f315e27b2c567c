//! An Open Library book (`GET openlibrary.org/api/books?bibkeys=ISBN:{isbn}&format=json&jscmd=data`)
//! → `book`. Zotero's The Open Library.js reads the edition's RDF instead, but keeps the same
//! things, and its choices are followed: authors split with cleanAuthor, the page count
//! without its "p." suffix, the place, `Open Library ID: OL…M` in `extra`, " :" in titles
//! closed up. From the `jscmd=data` record: title and subtitle, authors, first publisher,
//! first place, publish date as written, number of pages (else the pagination), the
//! ISBN-13s then ISBN-10s (space-separated), the record's URL.

use serde_json::Value;

use super::{first_str, scalar_str};
use crate::csl::join_subtitle;
use crate::mapping_error::MappingError;
use crate::schema::schema;
use crate::text::{clean_author, trim_internal};
use crate::zotero_item::{DraftCreator, ZoteroItemDraft};

const SOURCE: &str = "Open Library";

/// The names of a list of `{name}` objects (publishers, places, authors).
fn names(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.get("name").and_then(Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

fn record<'a>(answer: &'a Value, isbn: &str) -> Result<&'a Value, MappingError> {
    let obj = answer
        .as_object()
        .ok_or_else(|| MappingError::shape(SOURCE, "not a JSON object"))?;
    // A record passed directly.
    if obj.contains_key("title") || obj.contains_key("key") {
        return Ok(answer);
    }
    let key = format!("ISBN:{isbn}");
    match obj.get(&key) {
        Some(r) if r.is_object() => Ok(r),
        Some(_) => Err(MappingError::shape(
            SOURCE,
            format!("`{key}` is not an object"),
        )),
        None => Err(MappingError::NotFound {
            source_name: SOURCE,
            identifier: key,
        }),
    }
}

/// Maps the `jscmd=data` answer for `ISBN:{isbn}` (or the record itself) to a `book`.
/// An answer without that key (`{}`: Open Library does not know the ISBN) is
/// `MappingError::NotFound`.
pub fn from_open_library(answer: &Value, isbn: &str) -> Result<ZoteroItemDraft, MappingError> {
    let r = record(answer, isbn)?;
    let schema = schema()?;
    let mut d = ZoteroItemDraft::new("book");
    let title = r.get("title").and_then(Value::as_str).map(trim_internal);
    if let Some(title) = title {
        let title = match r.get("subtitle").and_then(Value::as_str).map(trim_internal) {
            Some(sub) => join_subtitle(&title, &sub),
            None => title,
        };
        d.set(schema, "title", &title.replace(" :", ":"));
    }
    for name in names(r.get("authors")) {
        let (first, last) = clean_author(name, false);
        d.push_creator(schema, DraftCreator::split("author", &first, &last));
    }
    if let Some(p) = names(r.get("publishers")).first() {
        d.set(schema, "publisher", p);
    }
    if let Some(p) = names(r.get("publish_places")).first() {
        d.set(schema, "place", p);
    }
    if let Some(date) = first_str(r.get("publish_date")) {
        d.set(schema, "date", date);
    }
    let pages = scalar_str(r.get("number_of_pages")).or_else(|| {
        first_str(r.get("pagination")).map(|p| {
            let p = p.trim();
            match p.find("p.") {
                Some(i) => p.get(..i).unwrap_or(p).trim().to_owned(),
                None => p.to_owned(),
            }
        })
    });
    if let Some(p) = pages {
        d.set(schema, "numPages", &p);
    }
    let ids = r.get("identifiers");
    let isbns: Vec<&str> = ["isbn_13", "isbn_10"]
        .iter()
        .flat_map(|k| {
            ids.and_then(|i| i.get(*k))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        })
        .collect();
    if isbns.is_empty() {
        d.set(schema, "ISBN", isbn);
    } else {
        d.set(schema, "ISBN", &isbns.join(" "));
    }
    if let Some(url) = r.get("url").and_then(Value::as_str) {
        d.set(schema, "url", url);
    }
    if let Some(olid) = r
        .get("key")
        .and_then(Value::as_str)
        .and_then(|k| k.rsplit('/').next())
        .filter(|k| k.starts_with("OL"))
    {
        d.extra_lines.push(format!("Open Library ID: {olid}"));
    }
    d.set(schema, "libraryCatalog", "Open Library");
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fields;
    use serde_json::json;

    /// `api/books?bibkeys=ISBN:9780306406157&format=json&jscmd=data`, in the shape the Books
    /// API documents for `jscmd=data`; the values are Open Library's for this ISBN (the
    /// ISBN-13 example of the ISBN standard).
    fn answer() -> Value {
        json!({
            "ISBN:9780306406157": {
                "url": "https://openlibrary.org/books/OL2864398M/Theory_of_wing_sections",
                "key": "/books/OL2864398M",
                "title": "Theory of wing sections",
                "subtitle": "including a summary of airfoil data",
                "authors": [
                    {"url": "https://openlibrary.org/authors/OL1234567A/Ira_H._Abbott", "name": "Ira H. Abbott"},
                    {"url": "https://openlibrary.org/authors/OL1234568A/Albert_E._von_Doenhoff", "name": "Albert E. von Doenhoff"}
                ],
                "number_of_pages": 693,
                "pagination": "viii, 693 p.",
                "identifiers": {
                    "isbn_10": ["0306406152"],
                    "isbn_13": ["9780306406157"],
                    "lccn": ["59002421"],
                    "openlibrary": ["OL2864398M"]
                },
                "publishers": [{"name": "Dover Publications"}],
                "publish_places": [{"name": "New York"}],
                "publish_date": "1959",
                "subjects": [{"name": "Aerofoils", "url": "https://openlibrary.org/subjects/aerofoils"}]
            }
        })
    }

    #[test]
    fn book() {
        let d = from_open_library(&answer(), "9780306406157").unwrap();
        assert_eq!(d.item_type, "book");
        assert_eq!(
            d.fields,
            fields(&[
                ("ISBN", "9780306406157 0306406152"),
                ("date", "1959"),
                ("libraryCatalog", "Open Library"),
                ("numPages", "693"),
                ("place", "New York"),
                ("publisher", "Dover Publications"),
                (
                    "title",
                    "Theory of wing sections: including a summary of airfoil data"
                ),
                (
                    "url",
                    "https://openlibrary.org/books/OL2864398M/Theory_of_wing_sections"
                ),
            ])
        );
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("author", "Ira H.", "Abbott"),
                DraftCreator::split("author", "Albert E. von", "Doenhoff"),
            ]
        );
        assert_eq!(d.extra_lines, vec!["Open Library ID: OL2864398M"]);
        // The record alone.
        let rec = answer()["ISBN:9780306406157"].clone();
        assert_eq!(from_open_library(&rec, "9780306406157").unwrap(), d);
    }

    #[test]
    fn sparse_and_missing() {
        let d = from_open_library(
            &json!({"ISBN:0306406152": {"title": "Notes :  a book", "pagination": "xii, 200 p. :"}}),
            "0306406152",
        )
        .unwrap();
        assert_eq!(
            d.fields,
            fields(&[
                ("ISBN", "0306406152"),
                ("libraryCatalog", "Open Library"),
                ("numPages", "xii, 200"),
                ("title", "Notes: a book"),
            ])
        );
        assert!(d.creators.is_empty());
        assert!(d.extra_lines.is_empty());
        assert!(matches!(
            from_open_library(&json!({}), "1"),
            Err(MappingError::NotFound { .. })
        ));
        assert!(from_open_library(&json!([]), "1").is_err());
        assert!(from_open_library(&json!({"ISBN:1": 3}), "1").is_err());
    }
}
