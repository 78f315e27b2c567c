//! The CSL-JSON the agencies' content negotiation answers, derived from their records the way
//! they derive it: Crossref's "extended citeproc" (the REST record with `title` and
//! `container-title` made strings, the type mapped, its other arrays left as they are) and
//! DataCite's citeproc (built from the `attributes`, DOI in upper case). `fixtures/metadata/csl/`
//! holds the result for each catalogue DOI; the self-tests check they agree.

use serde_json::{json, Map, Value};

/// Crossref's work types → CSL types, as its citeproc output maps them (types not listed,
/// e.g. `dissertation`, pass through unchanged, as Crossref's do).
fn csl_type(crossref_type: &str) -> &str {
    match crossref_type {
        "journal-article" => "article-journal",
        "book-chapter" | "book-part" | "book-section" => "chapter",
        "proceedings-article" => "paper-conference",
        "posted-content" => "article",
        "book" | "monograph" | "edited-book" | "reference-book" | "book-set" | "book-series" => {
            "book"
        }
        "reference-entry" => "entry",
        "dataset" => "dataset",
        "report" | "report-series" => "report",
        "component" => "article",
        "standard" => "standard",
        "peer-review" => "review",
        other => other,
    }
}

/// Crossref's content negotiation answer for a work (`message` of `/works/{doi}`).
pub(crate) fn from_crossref(message: &Value) -> Value {
    let mut c: Map<String, Value> = message.as_object().cloned().unwrap_or_default();
    let first = |v: Option<&Value>| -> Option<Value> { v?.as_array()?.first().cloned() };
    match first(c.get("title")) {
        Some(t) => {
            c.insert("title".into(), t);
        }
        None => {
            c.remove("title");
        }
    }
    let containers: Vec<Value> = c
        .get("container-title")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if containers.len() >= 2 {
        // A chapter in a series: the series first, the book last.
        c.insert("collection-title".into(), containers[0].clone());
    }
    match containers.last() {
        Some(t) => {
            c.insert("container-title".into(), t.clone());
        }
        None => {
            c.remove("container-title");
        }
    }
    if let Some(short) = first(c.get("short-container-title")) {
        c.insert("container-title-short".into(), short);
    }
    if let Some(t) = c.get("type").and_then(Value::as_str) {
        let mapped = csl_type(t).to_string();
        c.insert("type".into(), Value::String(mapped));
    }
    Value::Object(c)
}

/// A DataCite name as a CSL name.
fn name(person: &Value) -> Value {
    match person["familyName"].as_str() {
        Some(family) => {
            json!({"family": family, "given": person["givenName"].as_str().unwrap_or("")})
        }
        None => json!({"literal": person["name"]}),
    }
}

/// DataCite's content negotiation answer for a DOI (`data` of `/dois/{doi}`).
pub(crate) fn from_datacite(data: &Value) -> Value {
    let a = &data["attributes"];
    let mut c = Map::new();
    let ty = a["types"]["citeproc"].as_str().unwrap_or("article");
    c.insert("type".into(), json!(ty));
    let doi = a["doi"].as_str().unwrap_or_default();
    c.insert("id".into(), json!(format!("https://doi.org/{doi}")));
    let cats: Vec<Value> = a["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["subject"].clone())
        .collect();
    if !cats.is_empty() {
        c.insert("categories".into(), Value::Array(cats));
    }
    if let Some(l) = a["language"].as_str() {
        c.insert("language".into(), json!(l));
    }
    let authors: Vec<Value> = a["creators"]
        .as_array()
        .into_iter()
        .flatten()
        .map(name)
        .collect();
    if !authors.is_empty() {
        c.insert("author".into(), Value::Array(authors));
    }
    let editors: Vec<Value> = a["contributors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["contributorType"] == "Editor")
        .map(name)
        .collect();
    if !editors.is_empty() {
        c.insert("editor".into(), Value::Array(editors));
    }
    let year = match &a["publicationYear"] {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    if let Some(y) = year {
        c.insert("issued".into(), json!({"date-parts": [[y]]}));
    }
    let abstract_ = a["descriptions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["descriptionType"] == "Abstract");
    if let Some(d) = abstract_ {
        c.insert("abstract".into(), d["description"].clone());
    }
    c.insert("DOI".into(), json!(doi.to_uppercase()));
    let publisher = match &a["publisher"] {
        Value::Object(p) => p.get("name").cloned(),
        Value::String(s) if !s.is_empty() => Some(json!(s)),
        _ => None,
    };
    if let Some(p) = publisher {
        c.insert("publisher".into(), p);
    }
    let title = a["titles"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t.get("titleType").is_none());
    if let Some(t) = title {
        c.insert("title".into(), t["title"].clone());
    }
    if let Some(u) = a["url"].as_str() {
        c.insert("URL".into(), json!(u));
    }
    if let Some(r) = a["rightsList"].as_array().and_then(|l| l.first()) {
        c.insert("copyright".into(), r["rights"].clone());
    }
    if let Some(v) = a["version"].as_str() {
        c.insert("version".into(), json!(v));
    }
    if let Some(t) = a["container"]["title"].as_str() {
        c.insert("container-title".into(), json!(t));
    }
    Value::Object(c)
}
