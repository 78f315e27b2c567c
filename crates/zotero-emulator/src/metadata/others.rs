//! The fake Open Library (`/api/books`), NCBI (E-utilities `esummary.fcgi` and the PMC id
//! converter), Unpaywall (`/v2/{doi}`) and the host of the open-access copies (`/oa/…`).

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::super::util::{percent_decode, xml_escape};
use super::super::{Answer, Recorded, State};
use super::{query as param, MetaState, MetadataHost};

fn json_answer(status: u16, v: &Value) -> Answer {
    Answer::raw(status, serde_json::to_vec(v).unwrap(), "application/json")
}

/// An ISBN without hyphens or spaces, `x` upper case.
pub(crate) fn normalize_isbn(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// `GET /api/books?bibkeys=ISBN:…[,…]&format=json&jscmd=data`. Without `format=json` the
/// answer is JavaScript (`var _OLBookInfo = {…};`); without `jscmd=data` it is the default
/// `viewapi` shape.
pub(crate) fn openlibrary(meta: &MetaState, req: &Recorded, rest: &str) -> Answer {
    if rest.trim_end_matches('/') != "/api/books" {
        return Answer::raw(
            404,
            b"<html><body>404 Not Found</body></html>".to_vec(),
            "text/html; charset=utf-8",
        );
    }
    let data = param(req, "jscmd") == Some("data");
    let mut out = Map::new();
    for key in param(req, "bibkeys")
        .unwrap_or("")
        .split(',')
        .filter(|k| !k.is_empty())
    {
        let (kind, value) = key.split_once(':').unwrap_or(("ISBN", key));
        let book = match kind.to_ascii_uppercase().as_str() {
            "ISBN" => meta
                .isbns
                .get(&normalize_isbn(value))
                .and_then(|&i| meta.books.get(i)),
            "OLID" => meta
                .books
                .iter()
                .find(|b| b["key"].as_str() == Some(&format!("/books/{value}"))),
            _ => None,
        };
        let Some(book) = book else { continue };
        let entry = if data {
            book.clone()
        } else {
            let olid = book["key"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("/books/");
            json!({
                "bib_key": key,
                "info_url": book["url"],
                "preview": "noview",
                "preview_url": book["url"],
                "thumbnail_url": format!("https://covers.openlibrary.org/b/olid/{olid}-S.jpg"),
            })
        };
        out.insert(key.to_string(), entry);
    }
    let body = Value::Object(out);
    if param(req, "format") == Some("json") {
        return json_answer(200, &body);
    }
    let js = match param(req, "callback") {
        Some(cb) => format!("{cb}({body});"),
        None => format!("var _OLBookInfo = {body};"),
    };
    Answer::raw(200, js.into_bytes(), "application/javascript")
}

/// NCBI: `/entrez/eutils/esummary.fcgi` and the PMC id converter (`/pmc/utils/idconv/v1.0/`,
/// and its newer path `/tools/idconv/api/v1/articles/`).
pub(crate) fn ncbi(st: &State, req: &Recorded, rest: &str) -> Answer {
    let limit: usize = if param(req, "api_key").is_some() {
        10
    } else {
        3
    };
    let recent = st
        .requests
        .iter()
        .filter(|r| MetadataHost::of_path(&r.path) == Some(MetadataHost::Ncbi))
        .filter(|r| req.at.saturating_duration_since(r.at) < Duration::from_secs(1))
        .count();
    let answer = match rest.trim_end_matches('/') {
        "/entrez/eutils/esummary.fcgi" => esummary(&st.meta, req),
        "/pmc/utils/idconv/v1.0" | "/tools/idconv/api/v1/articles" => idconv(&st.meta, req),
        _ => {
            return Answer::raw(
                404,
                b"<html><body>Not Found</body></html>".to_vec(),
                "text/html",
            )
        }
    };
    answer
        .header("X-RateLimit-Limit", limit)
        .header("X-RateLimit-Remaining", limit.saturating_sub(recent))
}

const ESUMMARY_HEADER: &str = r#"{"type":"esummary","version":"0.3"}"#;

fn esummary(meta: &MetaState, req: &Recorded) -> Answer {
    let header: Value = serde_json::from_str(ESUMMARY_HEADER).unwrap();
    let db = param(req, "db").unwrap_or("pubmed");
    let json = param(req, "retmode") == Some("json");
    if db != "pubmed" {
        let msg = format!("Invalid db name specified: {db}");
        return if json {
            json_answer(200, &json!({"header": header, "error": msg}))
        } else {
            xml(&format!(
                "<eSummaryResult>\n<ERROR>{}</ERROR>\n</eSummaryResult>\n",
                xml_escape(&msg)
            ))
        };
    }
    let ids: Vec<&str> = param(req, "id")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if ids.is_empty() {
        let msg = "Empty id list - nothing todo";
        return if json {
            json_answer(200, &json!({"header": header, "esummaryresult": [msg]}))
        } else {
            xml(&format!(
                "<eSummaryResult>\n<ERROR>{msg}</ERROR>\n</eSummaryResult>\n"
            ))
        };
    }
    let mut result = Map::new();
    result.insert("uids".into(), json!(ids));
    for id in &ids {
        let doc = meta
            .pubmed
            .get(*id)
            .cloned()
            .unwrap_or_else(|| json!({"uid": id, "error": "cannot get document summary"}));
        result.insert((*id).to_string(), doc);
    }
    if json {
        return json_answer(200, &json!({"header": header, "result": result}));
    }
    // `retmode=xml` (the default): the DocSum shape, with the main items.
    let mut x = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<!DOCTYPE eSummaryResult PUBLIC \"-//NLM//DTD esummary v1 20041029//EN\" \"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20041029/esummary-v1.dtd\">\n<eSummaryResult>\n",
    );
    for id in &ids {
        let Some(d) = meta.pubmed.get(*id) else {
            x.push_str(&format!(
                "<ERROR>UID={id}: cannot get document summary</ERROR>\n"
            ));
            continue;
        };
        let item = |name: &str, key: &str| {
            format!(
                "\t<Item Name=\"{name}\" Type=\"String\">{}</Item>\n",
                xml_escape(d[key].as_str().unwrap_or(""))
            )
        };
        x.push_str(&format!("<DocSum>\n\t<Id>{id}</Id>\n"));
        x.push_str(&item("PubDate", "pubdate"));
        x.push_str(&item("EPubDate", "epubdate"));
        x.push_str(&item("Source", "source"));
        x.push_str("\t<Item Name=\"AuthorList\" Type=\"List\">\n");
        for a in d["authors"].as_array().into_iter().flatten() {
            x.push_str(&format!(
                "\t\t<Item Name=\"Author\" Type=\"String\">{}</Item>\n",
                xml_escape(a["name"].as_str().unwrap_or(""))
            ));
        }
        x.push_str("\t</Item>\n");
        x.push_str(&item("Title", "title"));
        x.push_str(&item("Volume", "volume"));
        x.push_str(&item("Issue", "issue"));
        x.push_str(&item("Pages", "pages"));
        x.push_str(&item("FullJournalName", "fulljournalname"));
        x.push_str("</DocSum>\n");
    }
    x.push_str("</eSummaryResult>\n");
    xml(&x)
}

fn xml(body: &str) -> Answer {
    Answer::raw(200, body.as_bytes().to_vec(), "text/xml; charset=UTF-8")
}

/// The PMC id converter: each id (PMCID, PMID, DOI or manuscript id) → its record, or one with
/// `"status": "error"`.
fn idconv(meta: &MetaState, req: &Recorded) -> Answer {
    let ids_param = param(req, "ids").unwrap_or("");
    let idtype = param(req, "idtype");
    let format = param(req, "format").unwrap_or("xml");
    let mut records = Vec::new();
    for id in ids_param
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let up = id.to_ascii_uppercase();
        let as_pmcid = if up.starts_with("PMC") {
            Some(up.clone())
        } else if idtype == Some("pmcid") && up.bytes().all(|b| b.is_ascii_digit()) {
            Some(format!("PMC{up}"))
        } else {
            None
        };
        let found = meta.pmc.iter().find(|r| {
            let s = |k: &str| match &r[k] {
                Value::String(s) => s.to_ascii_uppercase(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            };
            match &as_pmcid {
                Some(p) => s("pmcid") == *p,
                None if id.starts_with("10.") => s("doi") == up,
                None if up.starts_with("NIHMS") => s("mid") == up,
                None => s("pmid") == up,
            }
        });
        let valid = as_pmcid
            .as_deref()
            .is_some_and(|p| p.len() > 3 && p[3..].bytes().all(|b| b.is_ascii_digit()))
            || id.starts_with("10.")
            || up.starts_with("NIHMS")
            || (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        let rec = match found {
            Some(r) => {
                let mut r = r.clone();
                r["requested-id"] = json!(id);
                r
            }
            None if valid => {
                let mut r = json!({"requested-id": id, "status": "error", "errmsg": "Identifier not found in PMC"});
                // A PMID PubMed knows keeps its pmid in the error record.
                if meta.pubmed.contains_key(id) {
                    r["pmid"] = json!(id.parse::<u64>().unwrap_or(0));
                }
                r
            }
            None => json!({"requested-id": id, "status": "error", "errmsg": "Not a valid ID"}),
        };
        records.push(rec);
    }
    let now = super::super::util::iso_now();
    let date = format!(
        "{} {}",
        now.get(..10).unwrap_or(""),
        now.get(11..19).unwrap_or("")
    );
    let mut request = format!("ids={ids_param};format={format}");
    if let Some(t) = idtype {
        request.push_str(&format!(";idtype={t}"));
    }
    if format == "json" {
        return json_answer(
            200,
            &json!({"status": "ok", "responseDate": date, "request": request, "records": records}),
        );
    }
    let mut x = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<pmcids status=\"ok\">\n<request{}>\n<echo>{}</echo>\n</request>\n",
        idtype.map(|t| format!(" idtype=\"{t}\"")).unwrap_or_default(),
        xml_escape(&request)
    );
    for r in &records {
        x.push_str("<record");
        for k in ["requested-id", "pmcid", "pmid", "doi", "status"] {
            let v = match &r[k] {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => continue,
            };
            x.push_str(&format!(" {k}=\"{}\"", xml_escape(&v)));
        }
        match r["errmsg"].as_str() {
            Some(e) => x.push_str(&format!(
                ">\n<errmsg>{}</errmsg>\n</record>\n",
                xml_escape(e)
            )),
            None => x.push_str("/>\n"),
        }
    }
    x.push_str("</pmcids>\n");
    xml(&x)
}

/// Whether Unpaywall takes this as a contact address (it refuses none, malformed ones and the
/// placeholders of its own documentation).
fn acceptable_email(e: &str) -> bool {
    let Some((user, domain)) = e.split_once('@') else {
        return false;
    };
    let domain = domain.to_ascii_lowercase();
    !user.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !matches!(
            domain.as_str(),
            "example.com" | "example.org" | "example.net"
        )
        && !e.eq_ignore_ascii_case("YOUR_EMAIL")
}

fn unpaywall_error(status: u16, message: &str) -> Answer {
    json_answer(
        status,
        &json!({"HTTP_status_code": status, "error": true, "message": message}),
    )
}

/// `GET /v2/{doi}?email=…`.
pub(crate) fn unpaywall(meta: &MetaState, base: &str, req: &Recorded, rest: &str) -> Answer {
    let Some(doi) = rest.strip_prefix("/v2/") else {
        return unpaywall_error(404, "Not found");
    };
    let doi = percent_decode(doi);
    match param(req, "email") {
        None => {
            return unpaywall_error(
                422,
                "Email address required. Please add ?email=YOUR_EMAIL to your API call.",
            )
        }
        Some(e) if !acceptable_email(e) => return unpaywall_error(
            422,
            "Please use your own email address in API calls. See http://unpaywall.org/products/api",
        ),
        Some(_) => {}
    }
    if !doi.starts_with("10.") || !doi.contains('/') {
        return unpaywall_error(
            404,
            &format!("'{doi}' is an invalid doi. See https://doi.org/{doi}"),
        );
    }
    let d = doi.to_lowercase();
    let record = match meta.unpaywall.get(&d) {
        Some(r) => r.clone(),
        // Unpaywall covers every Crossref DOI: one without an open copy is closed.
        None => match meta.crossref.get(&d) {
            Some(m) => closed_record(&d, m),
            None => {
                return unpaywall_error(
                    404,
                    &format!("'{doi}' isn't in Unpaywall. See https://support.unpaywall.org/a/solutions/articles/44001900286"),
                )
            }
        },
    };
    let text = serde_json::to_string(&record)
        .unwrap()
        .replace("{EMU}", base);
    Answer::raw(200, text.into_bytes(), "application/json")
}

/// The Unpaywall record of a Crossref work without an open-access copy.
fn closed_record(doi: &str, m: &Value) -> Value {
    let year = m["issued"]["date-parts"][0][0].as_i64();
    let issns: Vec<&str> = m["ISSN"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    json!({
        "doi": doi,
        "doi_url": format!("https://doi.org/{doi}"),
        "title": m["title"][0],
        "genre": m["type"],
        "is_paratext": false,
        "published_date": year.map(|y| format!("{y}-01-01")),
        "year": year,
        "journal_name": m["container-title"][0],
        "journal_issns": if issns.is_empty() { Value::Null } else { json!(issns.join(",")) },
        "journal_issn_l": issns.first(),
        "journal_is_oa": false,
        "journal_is_in_doaj": false,
        "publisher": m["publisher"],
        "is_oa": false,
        "oa_status": "closed",
        "has_repository_copy": false,
        "best_oa_location": null,
        "first_oa_location": null,
        "oa_locations": [],
        "oa_locations_embargoed": [],
        "updated": "2024-11-02T08:14:31.502344",
        "data_standard": 2,
        "z_authors": m["author"].as_array().map(|a| a.iter().map(|p| json!({
            "given": p["given"], "family": p["family"], "sequence": p["sequence"],
        })).collect::<Vec<_>>()),
    })
}

/// `GET /oa/{path}`: the open-access copies.
pub(crate) fn open_access(meta: &MetaState, rest: &str) -> Answer {
    let path = rest.trim_start_matches('/');
    let Some(f) = meta.oa.get(path) else {
        return Answer::raw(
            404,
            b"<html><body><h1>404 Not Found</h1></body></html>".to_vec(),
            "text/html; charset=utf-8",
        );
    };
    let mut a = Answer::raw(
        f.status,
        f.body.clone(),
        f.content_type.as_deref().unwrap_or(""),
    );
    if let Some(cd) = &f.content_disposition {
        a = a.header("Content-Disposition", cd);
    }
    if f.chunked {
        a = a.header("Transfer-Encoding", "chunked");
    }
    a
}
