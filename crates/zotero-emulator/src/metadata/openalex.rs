//! The fake OpenAlex works API: `GET /works/{id}` (an OpenAlex id `W…`, its URL, `doi:…` or
//! a DOI URL) and `GET /works?filter=…` with the filters a citation graph uses (`cites:`,
//! `cited_by:`, `openalex:`/`ids.openalex:`, `doi:`; `|` ORs values, `,` ANDs filters),
//! `sort` (`cited_by_count`, `publication_year`, `:desc`), `per-page` (1–200), `cursor`
//! paging (`*`, then `meta.next_cursor`; `null` once a page comes back empty, as the
//! documentation's loop reads) and `select`. Works are kept as OpenAlex writes them
//! (`id` `https://openalex.org/W…`, `doi` `https://doi.org/…` in lower case,
//! `referenced_works` as id URLs).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::super::util::percent_decode;
use super::super::{Answer, Recorded};
use super::{query as param, MetaState};

const ID_ROOT: &str = "https://openalex.org/";
const DOI_ROOT: &str = "https://doi.org/";

/// The root fields a `select` may name (a work's fields in OpenAlex's schema).
const FIELDS: &[&str] = &[
    "id",
    "doi",
    "title",
    "display_name",
    "publication_year",
    "publication_date",
    "ids",
    "language",
    "primary_location",
    "type",
    "open_access",
    "authorships",
    "cited_by_count",
    "is_retracted",
    "is_paratext",
    "referenced_works",
    "referenced_works_count",
    "related_works",
    "counts_by_year",
    "updated_date",
    "created_date",
];

fn json_answer(status: u16, v: &Value) -> Answer {
    Answer::raw(status, serde_json::to_vec(v).unwrap(), "application/json")
}

fn invalid(message: String) -> Answer {
    json_answer(
        400,
        &json!({"error": "Invalid query parameters error.", "message": message}),
    )
}

/// `W123` from any way of writing an OpenAlex work id, upper-cased.
fn short_id(s: &str) -> String {
    s.trim()
        .trim_start_matches(ID_ROOT)
        .trim_start_matches("https://openalex.org/works/")
        .to_ascii_uppercase()
}

/// A DOI as OpenAlex keys it: lower case, without `https://doi.org/` or `doi:`.
fn bare_doi(s: &str) -> String {
    let s = s.trim();
    let s = s.strip_prefix(DOI_ROOT).unwrap_or(s);
    let s = s.strip_prefix("doi:").unwrap_or(s);
    s.to_lowercase()
}

impl MetaState {
    pub(crate) fn add_openalex(&mut self, work: Value) {
        let id = short_id(work["id"].as_str().expect("an OpenAlex work has an id"));
        self.openalex.insert(id, work);
    }

    fn openalex_by_doi(&self, doi: &str) -> Option<&Value> {
        let doi = bare_doi(doi);
        self.openalex
            .values()
            .find(|w| w["doi"].as_str().is_some_and(|d| bare_doi(d) == doi))
    }
}

/// Answers `GET {root}/works…`.
pub(crate) fn works(meta: &MetaState, req: &Recorded, rest: &str) -> Answer {
    let select = match selection(req) {
        Ok(s) => s,
        Err(a) => return a,
    };
    let rest = percent_decode(rest);
    if let Some(id) = rest.strip_prefix("/works/") {
        let work = if id.starts_with("doi:") || id.starts_with(DOI_ROOT) {
            meta.openalex_by_doi(id)
        } else {
            meta.openalex.get(&short_id(id))
        };
        return match work {
            Some(w) => json_answer(200, &selected(w, &select)),
            None => json_answer(
                404,
                &json!({"error": "404 Not Found",
                        "message": format!("The requested work ({id}) was not found.")}),
            ),
        };
    }
    if rest.trim_end_matches('/') != "/works" {
        return json_answer(
            404,
            &json!({"error": "404 Not Found", "message": "The requested URL was not found on the server."}),
        );
    }
    list(meta, req, &select)
}

fn selection(req: &Recorded) -> Result<Option<Vec<String>>, Answer> {
    let Some(s) = param(req, "select") else {
        return Ok(None);
    };
    let fields: Vec<String> = s.split(',').map(|f| f.trim().to_string()).collect();
    if let Some(bad) = fields.iter().find(|f| !FIELDS.contains(&f.as_str())) {
        return Err(invalid(format!(
            "{bad} is not a valid select field. Valid fields for select are: {}.",
            FIELDS.join(", ")
        )));
    }
    Ok(Some(fields))
}

fn selected(work: &Value, select: &Option<Vec<String>>) -> Value {
    match select {
        None => work.clone(),
        Some(fields) => {
            let mut out = Map::new();
            for f in fields {
                out.insert(f.clone(), work.get(f).cloned().unwrap_or(Value::Null));
            }
            Value::Object(out)
        }
    }
}

fn list(meta: &MetaState, req: &Recorded, select: &Option<Vec<String>>) -> Answer {
    let per_page = match param(req, "per-page").or(param(req, "per_page")) {
        None => 25,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=200).contains(&n) => n,
            _ => return invalid("per-page parameter must be between 1 and 200".into()),
        },
    };
    let mut matched: Vec<&Value> = meta.openalex.values().collect();
    for filter in param(req, "filter")
        .unwrap_or("")
        .split(',')
        .filter(|f| !f.is_empty())
    {
        let Some((key, value)) = filter.split_once(':') else {
            return invalid(format!("Invalid filter: {filter}"));
        };
        let values: Vec<&str> = value.split('|').collect();
        let keep: Box<dyn Fn(&Value) -> bool> = match key {
            "cites" => {
                let ids: Vec<String> = values.iter().map(|v| short_id(v)).collect();
                Box::new(move |w: &Value| {
                    w["referenced_works"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .any(|r| ids.contains(&short_id(r)))
                })
            }
            "cited_by" => {
                let cited: Vec<String> = values
                    .iter()
                    .filter_map(|v| meta.openalex.get(&short_id(v)))
                    .flat_map(|w| {
                        w["referenced_works"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(short_id)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                Box::new(move |w: &Value| {
                    w["id"]
                        .as_str()
                        .is_some_and(|i| cited.contains(&short_id(i)))
                })
            }
            "openalex" | "ids.openalex" | "openalex_id" => {
                let ids: Vec<String> = values.iter().map(|v| short_id(v)).collect();
                Box::new(move |w: &Value| {
                    w["id"].as_str().is_some_and(|i| ids.contains(&short_id(i)))
                })
            }
            "doi" => {
                let dois: Vec<String> = values.iter().map(|v| bare_doi(v)).collect();
                Box::new(move |w: &Value| {
                    w["doi"]
                        .as_str()
                        .is_some_and(|d| dois.contains(&bare_doi(d)))
                })
            }
            other => {
                return invalid(format!(
                    "{other} is not a valid field. Valid fields are listed at \
                     https://docs.openalex.org/api-entities/works/filter-works"
                ))
            }
        };
        matched.retain(|w| keep(w));
    }
    if let Some(sort) = param(req, "sort") {
        let (field, desc) = match sort.split_once(':') {
            Some((f, dir)) => (f, dir == "desc"),
            None => (sort, false),
        };
        if !matches!(
            field,
            "cited_by_count" | "publication_year" | "display_name"
        ) {
            return invalid(format!("{field} is not a valid sort field."));
        }
        // Ties keep the id order, so that pages never overlap.
        matched.sort_by(|a, b| {
            let ord = match field {
                "display_name" => a[field].as_str().cmp(&b[field].as_str()),
                _ => a[field].as_u64().cmp(&b[field].as_u64()),
            };
            if desc {
                ord.reverse()
            } else {
                ord
            }
        });
    }
    let count = matched.len();
    let offset = match param(req, "cursor") {
        None => {
            // Basic paging: `page`, the first 10,000 results only.
            let page = param(req, "page")
                .and_then(|p| p.parse::<usize>().ok())
                .unwrap_or(1);
            if page == 0 || page * per_page > 10_000 {
                return invalid("Maximum results size of 10,000 records is exceeded. Cursor pagination is required for records beyond 10,000.".into());
            }
            (page - 1) * per_page
        }
        Some("*") => 0,
        Some(c) => match decode_cursor(c) {
            Some(o) => o,
            None => return invalid("cursor is not valid".into()),
        },
    };
    let results: Vec<Value> = matched
        .iter()
        .skip(offset)
        .take(per_page)
        .map(|w| selected(w, select))
        .collect();
    let next_cursor = (param(req, "cursor").is_some() && !results.is_empty())
        .then(|| encode_cursor(offset + results.len()));
    json_answer(
        200,
        &json!({
            "meta": {
                "count": count,
                "db_response_time_ms": 12,
                "page": if param(req, "cursor").is_some() { Value::Null } else { json!(offset / per_page + 1) },
                "per_page": per_page,
                "next_cursor": next_cursor,
                "groups_count": null,
            },
            "results": results,
            "group_by": [],
        }),
    )
}

/// An opaque cursor, base64 as OpenAlex's are.
fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("[\"emulator\", {offset}]"))
}

fn decode_cursor(c: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(c).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let n = text.strip_prefix("[\"emulator\", ")?.strip_suffix(']')?;
    n.parse().ok()
}

/// A work in OpenAlex's shape, for tests: `id` `W…`, the DOI (or none), title, year,
/// citation count, authors' display names, and the ids of the works it cites.
pub fn openalex_work(
    id: &str,
    doi: Option<&str>,
    title: &str,
    year: u32,
    cited_by_count: u64,
    authors: &[&str],
    references: &[&str],
) -> Value {
    let n = authors.len();
    let authorships: Vec<Value> = authors
        .iter()
        .enumerate()
        .map(|(i, a)| {
            json!({
                "author_position": if i == 0 { "first" } else if i + 1 == n { "last" } else { "middle" },
                "author": {"id": format!("{ID_ROOT}A{}{i}", id.trim_start_matches('W')), "display_name": a, "orcid": null},
                "institutions": [],
                "countries": [],
                "is_corresponding": i == 0,
                "raw_author_name": a,
                "raw_affiliation_strings": [],
            })
        })
        .collect();
    let referenced: Vec<String> = references.iter().map(|r| format!("{ID_ROOT}{r}")).collect();
    let doi_url = doi.map(|d| format!("{DOI_ROOT}{}", d.to_lowercase()));
    json!({
        "id": format!("{ID_ROOT}{id}"),
        "doi": doi_url,
        "title": title,
        "display_name": title,
        "publication_year": year,
        "publication_date": format!("{year}-01-01"),
        "ids": {"openalex": format!("{ID_ROOT}{id}"), "doi": doi_url},
        "type": "article",
        "authorships": authorships,
        "cited_by_count": cited_by_count,
        "is_retracted": false,
        "is_paratext": false,
        "referenced_works_count": referenced.len(),
        "referenced_works": referenced,
    })
}

/// Keeps `BTreeMap` in this module's vocabulary (the store of works by short id).
pub(crate) type Works = BTreeMap<String, Value>;
