//! The fake doi.org (content negotiation redirects to the registration agency), Crossref's
//! REST API (`/works/{doi}`, its `transform` and `agency` routes) and DataCite's
//! (`/dois/{doi}` and its content resolver).

use serde_json::{json, Value};

use super::super::util::percent_decode;
use super::super::{Answer, Recorded};
use super::{csl, MetaState};

/// CSL-JSON's media type, and the older name content negotiation also accepts.
pub(crate) const CSL: &str = "application/vnd.citationstyles.csl+json";
const CITEPROC: &str = "application/citeproc+json";

/// The metadata media types content negotiation knows (the agencies answer more than CSL; the
/// fakes only CSL).
const METADATA_TYPES: &[&str] = &[
    CSL,
    CITEPROC,
    "application/x-bibtex",
    "application/x-research-info-systems",
    "text/x-bibliography",
    "application/rdf+xml",
    "text/turtle",
    "application/vnd.crossref.unixref+xml",
    "application/vnd.crossref.unixsd+xml",
    "application/vnd.datacite.datacite+xml",
    "application/vnd.datacite.datacite+json",
    "application/vnd.schemaorg.ld+json",
    "application/ld+json",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Agency {
    Crossref,
    DataCite,
}

fn agency(meta: &MetaState, doi: &str) -> Option<Agency> {
    let d = doi.to_lowercase();
    if meta.crossref.contains_key(&d) {
        Some(Agency::Crossref)
    } else if meta.datacite.contains_key(&d) {
        Some(Agency::DataCite)
    } else if meta.csl.contains_key(&d) {
        Some(Agency::Crossref)
    } else {
        None
    }
}

/// The media types of an `Accept` header with their `q`, best first (`q=0` dropped).
pub(crate) fn accepted(req: &Recorded) -> Vec<String> {
    let Some(accept) = req.header("accept") else {
        return Vec::new();
    };
    let mut types: Vec<(String, f32, usize)> = accept
        .split(',')
        .enumerate()
        .filter_map(|(i, part)| {
            let mut it = part.split(';');
            let mt = it.next()?.trim().to_ascii_lowercase();
            let q = it
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (!mt.is_empty() && q > 0.0).then_some((mt, q, i))
        })
        .collect();
    types.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    types.into_iter().map(|(t, _, _)| t).collect()
}

fn wants_csl(req: &Recorded) -> bool {
    accepted(req).iter().any(|t| t == CSL || t == CITEPROC)
}

/// The DOI as a path: reserved characters other than `/` and `:` percent-encoded.
pub(crate) fn doi_path(doi: &str) -> String {
    let mut out = String::new();
    for b in doi.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn html(status: u16, body: &str) -> Answer {
    Answer::raw(status, body.as_bytes().to_vec(), "text/html;charset=utf-8")
}

fn doi_not_found(doi: &str) -> Answer {
    let doi = super::super::util::html_escape(doi);
    html(
        404,
        &format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><title>Error: DOI Not Found</title></head>\
             <body><h1>DOI Not Found</h1><p>{doi}</p><p>This DOI cannot be found in the DOI \
             System. Possible reasons are:</p><ul><li>The DOI is incorrect in your source.</li>\
             <li>The DOI was copied incorrectly.</li><li>The DOI has not been activated yet.</li>\
             </ul></body></html>\n"
        ),
    )
}

fn redirect(status: u16, location: &str) -> Answer {
    let esc = super::super::util::html_escape(location);
    html(
        status,
        &format!(
            "<html><head><title>Handle Redirect</title></head>\n<body><a href=\"{esc}\">{esc}</a></body></html>\n"
        ),
    )
    .header("Location", location)
    .header("Vary", "Accept")
}

/// `GET {doi}/{doi}`: content-negotiated requests for a metadata type go to the agency's
/// service; others to the registered landing page.
pub(crate) fn resolver(meta: &MetaState, base: &str, req: &Recorded, rest: &str) -> Answer {
    let doi = percent_decode(rest.trim_start_matches('/'));
    let Some(agency) = agency(meta, &doi) else {
        return doi_not_found(&doi);
    };
    let types = accepted(req);
    let first_metadata = types.iter().find(|t| METADATA_TYPES.contains(&t.as_str()));
    let html_first = types
        .first()
        .is_some_and(|t| t == "text/html" || t == "application/xhtml+xml");
    let status = meta.doi_redirect;
    let path = doi_path(&doi);
    match first_metadata {
        Some(_) if !html_first => {
            let ct = if wants_csl(req) {
                CSL.to_string()
            } else {
                first_metadata.cloned().unwrap_or_default()
            };
            let location = match agency {
                Agency::Crossref => format!("{base}/crossref/works/{path}/transform/{ct}"),
                Agency::DataCite => format!("{base}/datacite/{ct}/{path}"),
            };
            redirect(status, &location)
        }
        _ => redirect(status, &landing_page(meta, &doi)),
    }
}

/// The URL a DOI is registered with.
fn landing_page(meta: &MetaState, doi: &str) -> String {
    let d = doi.to_lowercase();
    let url = meta
        .crossref
        .get(&d)
        .and_then(|m| m["resource"]["primary"]["URL"].as_str())
        .or_else(|| {
            meta.datacite
                .get(&d)
                .and_then(|r| r["attributes"]["url"].as_str())
        });
    url.map_or_else(
        || format!("https://example.org/{}", doi_path(doi)),
        str::to_string,
    )
}

fn crossref_not_found() -> Answer {
    Answer::text(404, "Resource not found.")
}

fn json(status: u16, v: &Value, content_type: &str) -> Answer {
    Answer::raw(status, serde_json::to_vec(v).unwrap(), content_type)
}

/// The CSL-JSON content negotiation answers for a DOI.
fn csl_of(meta: &MetaState, doi: &str) -> Option<Value> {
    let d = doi.to_lowercase();
    if let Some(c) = meta.csl.get(&d) {
        return Some(c.clone());
    }
    if let Some(m) = meta.crossref.get(&d) {
        return Some(csl::from_crossref(m));
    }
    meta.datacite.get(&d).map(csl::from_datacite)
}

/// The Crossref REST API: `/works/{doi}`, `/works/{doi}/agency`, `/works/{doi}/transform[/{type}]`
/// (also under `/v1`).
pub(crate) fn crossref(meta: &MetaState, req: &Recorded, rest: &str) -> Answer {
    let rest = rest.strip_prefix("/v1").unwrap_or(rest);
    if rest == "/works" || rest == "/works/" {
        return works_list(meta, req);
    }
    let Some(tail) = rest.strip_prefix("/works/") else {
        return crossref_not_found();
    };
    let tail = percent_decode(tail);
    let transform = tail
        .rmatch_indices("/transform")
        .map(|(i, _)| i)
        .find(|&i| {
            let after = &tail[i + "/transform".len()..];
            after.is_empty() || after.starts_with('/')
        });
    let (doi, route) = if let Some(i) = transform {
        let ct = tail[i + "/transform".len()..].trim_start_matches('/');
        (&tail[..i], Some(ct.to_string()))
    } else if let Some(d) = tail.strip_suffix("/agency") {
        if let Some(ag) = agency(meta, d) {
            let (id, label) = match ag {
                Agency::Crossref => ("crossref", "Crossref"),
                Agency::DataCite => ("datacite", "DataCite"),
            };
            let body = json!({
                "status": "ok",
                "message-type": "work-agency",
                "message-version": "1.0.0",
                "message": {"DOI": d.to_lowercase(), "agency": {"id": id, "label": label}},
            });
            return json(200, &body, "application/json");
        }
        return crossref_not_found();
    } else {
        (tail.as_str(), None)
    };
    let d = doi.to_lowercase();
    match route {
        None => match meta.crossref.get(&d) {
            Some(m) => json(
                200,
                &json!({"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": m}),
                "application/json",
            ),
            None => crossref_not_found(),
        },
        Some(ct) => {
            if !meta.crossref.contains_key(&d) && !meta.csl.contains_key(&d) {
                return crossref_not_found();
            }
            let ct = if ct.is_empty() {
                // `/transform` without a type: the `Accept` header says which.
                if wants_csl(req) {
                    CSL.to_string()
                } else {
                    accepted(req).into_iter().next().unwrap_or_default()
                }
            } else {
                ct
            };
            if ct == CSL || ct == CITEPROC {
                json(200, &csl_of(meta, doi).unwrap_or(Value::Null), CSL)
            } else {
                Answer::text(406, "Not Acceptable")
            }
        }
    }
}

/// Crossref's refusal of a query it cannot run (`validation-failure`).
fn crossref_invalid(kind: &str, value: &str, message: String) -> Answer {
    json(
        400,
        &json!({
            "status": "failed",
            "message-type": "validation-failure",
            "message": [{"type": kind, "value": value, "message": message}],
        }),
        "application/json",
    )
}

/// `GET /works?filter=doi:a,doi:b[,updates:c]&rows=&select=`: the works the filter names
/// (values of one filter are ORed, as Crossref does; `updates:{doi}` finds the notices whose
/// `update-to` names that DOI), `select` keeping only the fields listed. Only these two
/// filters are emulated: any other is refused as Crossref refuses an unknown one.
fn works_list(meta: &MetaState, req: &Recorded) -> Answer {
    let mut dois: Vec<String> = Vec::new();
    let mut updates: Vec<String> = Vec::new();
    if let Some(filter) = super::query(req, "filter") {
        for part in filter.split(',').filter(|p| !p.is_empty()) {
            let Some((name, value)) = part.split_once(':') else {
                return crossref_invalid(
                    "filter-not-available",
                    part,
                    format!("Filter {part} specified but there is no such filter for this route."),
                );
            };
            match name {
                "doi" => dois.push(value.to_lowercase()),
                "updates" => updates.push(value.to_lowercase()),
                _ => {
                    return crossref_invalid(
                        "filter-not-available",
                        name,
                        format!(
                            "Filter {name} specified but there is no such filter for this route."
                        ),
                    )
                }
            }
        }
    }
    let rows = match super::query(req, "rows").map(str::parse::<usize>) {
        None => 20,
        Some(Ok(n)) if n <= 1000 => n,
        Some(_) => {
            let v = super::query(req, "rows").unwrap_or_default();
            return crossref_invalid(
                "integer-not-valid",
                v,
                format!("Integer specified as {v} but must be a positive integer less than or equal to 1000."),
            );
        }
    };
    let names_update = |w: &Value| {
        w["update-to"].as_array().into_iter().flatten().any(|u| {
            u["DOI"]
                .as_str()
                .is_some_and(|d| updates.contains(&d.to_lowercase()))
        })
    };
    let matching: Vec<&Value> = meta
        .crossref
        .iter()
        .filter(|(doi, w)| {
            (dois.is_empty() && updates.is_empty())
                || dois.contains(doi)
                || (!updates.is_empty() && names_update(w))
        })
        .map(|(_, w)| w)
        .collect();
    let select: Option<Vec<&str>> = super::query(req, "select").map(|s| s.split(',').collect());
    let items: Vec<Value> = matching
        .iter()
        .take(rows)
        .map(|w| match (&select, w.as_object()) {
            (Some(fields), Some(o)) => Value::Object(
                o.iter()
                    .filter(|(k, _)| fields.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => (*w).clone(),
        })
        .collect();
    json(
        200,
        &json!({
            "status": "ok",
            "message-type": "work-list",
            "message-version": "1.0.0",
            "message": {
                "facets": {},
                "total-results": matching.len(),
                "items": items,
                "items-per-page": rows,
                "query": {"start-index": 0, "search-terms": null},
            },
        }),
        "application/json",
    )
}

fn datacite_not_found() -> Answer {
    json(
        404,
        &json!({"errors": [{"status": "404", "title": "The resource you are looking for doesn't exist."}]}),
        "application/vnd.api+json; charset=utf-8",
    )
}

/// DataCite: `/dois/{doi}` (JSON:API, or CSL-JSON when `Accept` asks for it) and the content
/// resolver `/{media type}/{doi}`.
pub(crate) fn datacite(meta: &MetaState, req: &Recorded, rest: &str) -> Answer {
    let rest = percent_decode(rest.trim_start_matches('/'));
    if let Some(doi) = rest.strip_prefix("dois/") {
        let Some(data) = meta.datacite.get(&doi.to_lowercase()) else {
            return datacite_not_found();
        };
        if wants_csl(req) {
            return json(200, &csl_of(meta, doi).unwrap_or(Value::Null), CSL);
        }
        return json(
            200,
            &json!({"data": data}),
            "application/vnd.api+json; charset=utf-8",
        );
    }
    // The content resolver: `application/vnd.citationstyles.csl+json/10.5281/…`.
    let (ct, doi) = match rest.split_once("/10.") {
        Some((ct, d)) => (ct.to_string(), format!("10.{d}")),
        None => return datacite_not_found(),
    };
    if !meta.datacite.contains_key(&doi.to_lowercase()) {
        return datacite_not_found();
    }
    if ct == CSL || ct == CITEPROC {
        json(200, &csl_of(meta, &doi).unwrap_or(Value::Null), CSL)
    } else {
        Answer::text(406, "Not Acceptable")
    }
}
