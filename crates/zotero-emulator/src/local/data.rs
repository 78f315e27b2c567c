//! The local API's data answers (`LocalAPIEndpoint._initInternal` and
//! `makeDataObjectResponse`): `since`, sort checks, paging without a default limit,
//! `Total-Results`, `Link` built from the `Host` header, `Last-Modified-Version`,
//! `If-Modified-Since-Version`, and the `format`/`include` outputs.

use serde_json::{json, Map, Value};

use super::super::libs::{Lib, LibraryId};
use super::super::{cite, export, Answer, Recorded, USER_ID};
use super::{parse_int, query, text, Desktop};

/// One request's context: what the desktop holds, the library, its own API URL.
pub(crate) struct Ctx<'a> {
    pub(crate) desktop: Desktop<'a>,
    pub(crate) lib: LibraryId,
    /// `http://localhost:PORT/api`, as the desktop writes its own links.
    pub(crate) api: String,
    pub(crate) req: &'a Recorded,
}

impl Ctx<'_> {
    pub(crate) fn lib(&self) -> &Lib {
        &self.desktop.libs[&self.lib]
    }
}

/// A data object of an answer: its key and version (tags have neither, groups no key) and
/// its JSON.
pub(crate) struct Obj {
    pub(crate) key: Option<String>,
    pub(crate) version: Option<u64>,
    pub(crate) json: Value,
}

/// The values `sort` may have (checked only when there is more than one object).
const SORTS: &[&str] = &[
    "dateAdded",
    "dateModified",
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "addedBy",
    "numItems",
];

/// `sort` and `direction` as the desktop checks them.
pub(crate) fn sort_error(req: &Recorded) -> Option<Answer> {
    let sort = query(req, "sort").unwrap_or("dateModified");
    if !SORTS.contains(&sort) {
        return Some(text(400, &format!("Invalid 'sort' value '{sort}'")));
    }
    match query(req, "direction") {
        None | Some("asc" | "desc") => None,
        Some(d) => Some(text(400, &format!("Invalid 'direction' value '{d}'"))),
    }
}

/// JSON as the desktop writes it (`JSON.stringify(…, null, 4)`).
pub(crate) fn json_answer(v: &Value) -> Answer {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(v, &mut ser).unwrap();
    Answer::raw(200, out, "application/json")
}

/// A multi-object answer; `lmv`: the library version it carries.
pub(crate) fn many(ctx: &Ctx, mut objs: Vec<Obj>, lmv: Option<u64>) -> Answer {
    let req = ctx.req;
    if req.query.iter().any(|(k, _)| k == "since") {
        let raw = query(req, "since").unwrap_or("");
        let Some(since) = parse_int(raw) else {
            return text(400, &format!("Invalid 'since' value '{raw}'"));
        };
        if since != 0 {
            // Objects without a version (tags) never pass.
            objs.retain(|o| o.version.is_some_and(|v| v as i64 > since));
        }
    }
    if objs.len() > 1 {
        if let Some(e) = sort_error(req) {
            return e;
        }
    }
    let total = objs.len();
    let start = query(req, "start")
        .and_then(parse_int)
        .unwrap_or(0)
        .clamp(0, total as i64) as usize;
    // No default limit: everything from `start` on.
    let limit = match query(req, "limit").and_then(parse_int) {
        Some(l) if l != 0 => l.max(0) as usize,
        _ => total - start,
    };
    let shown: Vec<Obj> = objs.into_iter().skip(start).take(limit).collect();
    let headers = vec![
        ("Total-Results".to_string(), total.to_string()),
        ("Link".to_string(), links(req, start, limit, total)),
    ];
    finish(ctx, Output::Many(shown), headers, lmv)
}

/// A single-object answer; its version is `Last-Modified-Version`.
pub(crate) fn one(ctx: &Ctx, obj: Obj) -> Answer {
    let headers = vec![
        ("Total-Results".to_string(), "1".to_string()),
        ("Link".to_string(), links(ctx.req, 0, 0, 1)),
    ];
    let lmv = obj.version;
    finish(ctx, Output::One(obj), headers, lmv)
}

enum Output {
    One(Obj),
    Many(Vec<Obj>),
}

fn finish(ctx: &Ctx, out: Output, mut headers: Vec<(String, String)>, lmv: Option<u64>) -> Answer {
    let req = ctx.req;
    if let Some(v) = lmv {
        headers.push(("Last-Modified-Version".into(), v.to_string()));
    }
    let ims = req
        .header("if-modified-since-version")
        .filter(|v| !v.is_empty());
    if let (Some(ims), Some(v)) = (ims.map(parse_int), lmv) {
        // `parseInt` of garbage is NaN, and nothing is <= NaN.
        if ims.is_some_and(|n| n != 0 && v as i64 <= n) {
            return with_headers(Answer::empty(304), headers);
        }
    }
    let format = query(req, "format");
    let answer = match format {
        Some("atom") => return text(501, "Local API does not support Atom output"),
        Some("keys") => match out {
            Output::One(_) => {
                return text(400, "Only multi-object requests can output keys");
            }
            Output::Many(objs) => {
                // `undefined` keys join as empty strings.
                let keys: Vec<String> = objs
                    .iter()
                    .map(|o| o.key.clone().unwrap_or_default())
                    .collect();
                Answer::raw(200, keys.join("\n").into_bytes(), "text/plain")
            }
        },
        Some("versions") => match out {
            Output::One(_) => {
                return text(400, "Only multi-object requests can output versions");
            }
            Output::Many(objs) => {
                let mut m = Map::new();
                for o in objs {
                    // JavaScript: a missing key is "undefined"; a missing version is dropped.
                    let key = o.key.unwrap_or_else(|| "undefined".into());
                    match o.version {
                        Some(v) => m.insert(key, json!(v)),
                        None => m.remove(&key),
                    };
                }
                json_answer(&Value::Object(m))
            }
        },
        None | Some("json") => {
            let include = query(req, "include").unwrap_or("data");
            let parts: Vec<&str> = include.split(',').collect();
            let keep_data = parts.contains(&"data");
            // `toResponseJSON`: each include added to each object; unknown ones ignored.
            let dress = |mut v: Value| -> Result<Value, Answer> {
                let item = v.clone();
                for p in &parts {
                    match *p {
                        "bib" => v["bib"] = json!(cite(req)?.bibliography_of(&[&item])),
                        "citation" => v["citation"] = json!(cite(req)?.citation_of(&item)),
                        f if export::LOCAL_FORMATS.contains(&f) => {
                            v[f] = json!(export::export(f, &[&item], &csl_id));
                        }
                        _ => {}
                    }
                }
                if !keep_data {
                    if let Some(m) = v.as_object_mut() {
                        m.remove("data");
                    }
                }
                Ok(v)
            };
            let dressed = match out {
                Output::One(o) => dress(o.json),
                Output::Many(objs) => objs
                    .into_iter()
                    .map(|o| dress(o.json))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array),
            };
            match dressed {
                Ok(v) => json_answer(&v),
                Err(a) => return a,
            }
        }
        Some("bib") => {
            let c = match cite(req) {
                Ok(c) => c,
                Err(a) => return a,
            };
            let items: Vec<Value> = match out {
                Output::One(o) => vec![o.json],
                Output::Many(objs) => objs.into_iter().map(|o| o.json).collect(),
            };
            let refs: Vec<&Value> = items.iter().collect();
            Answer::raw(200, c.bibliography_of(&refs).into_bytes(), "text/html")
        }
        Some(f) if export::LOCAL_FORMATS.contains(&f) => {
            let items: Vec<Value> = match out {
                Output::One(o) => vec![o.json],
                Output::Many(objs) => objs.into_iter().map(|o| o.json).collect(),
            };
            let refs: Vec<&Value> = items.iter().collect();
            // Exports come back as text/plain.
            Answer::raw(
                200,
                export::export(f, &refs, &csl_id).into_bytes(),
                "text/plain",
            )
        }
        Some(f) => return text(400, &format!("Invalid 'format' value '{f}'")),
    };
    with_headers(answer, headers)
}

/// The desktop's citeproc for this request (`citeprocToHTML`): its default style, a
/// style it cannot find or download is `400 Invalid style: …`.
fn cite(req: &Recorded) -> Result<LocalCite, Answer> {
    let style = cite::local_style(query(req, "style")).map_err(|e| text(400, e.body()))?;
    let locale = cite::local_locale(query(req, "locale"));
    let linkwrap = query(req, "linkwrap") == Some("1");
    Ok(LocalCite(cite::Cite::new(
        style,
        &locale,
        linkwrap,
        cite::Renderer::Local,
    )))
}

/// The desktop's renderings, which leave out what is not a regular item.
struct LocalCite(cite::Cite);

impl LocalCite {
    fn bibliography_of(&self, items: &[&Value]) -> String {
        let citable: Vec<&Value> = items
            .iter()
            .copied()
            .filter(|i| self.0.citable(i))
            .collect();
        if citable.is_empty() {
            return String::new();
        }
        self.0.bibliography(&citable)
    }

    fn citation_of(&self, item: &Value) -> String {
        if self.0.citable(item) {
            self.0.citation(item)
        } else {
            String::new()
        }
    }
}

/// The CSL JSON id the desktop's translator gives an item: its URI.
fn csl_id(item: &Value) -> String {
    let lib = &item["library"];
    let kind = if lib["type"] == "group" {
        "groups"
    } else {
        "users"
    };
    format!(
        "http://zotero.org/{kind}/{}/items/{}",
        lib["id"]
            .as_u64()
            .map_or(USER_ID, |id| if id == 0 { USER_ID } else { id }),
        item["key"].as_str().unwrap_or("")
    )
}

fn with_headers(mut a: Answer, headers: Vec<(String, String)>) -> Answer {
    a.headers.extend(headers);
    a
}

/// `URLSearchParams.toString()`: form encoding, `*-._` and alphanumerics kept.
fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The `Link` header (`LocalAPIEndpoint.buildLinks`): every request parameter kept, URLs on
/// the request's own `Host`, `alternate` on zotero.org with the real user id.
fn links(req: &Recorded, start: usize, limit: usize, total: usize) -> String {
    let host = req.header("host").unwrap_or("localhost");
    let url = |params: &[(String, String)]| {
        let q: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect();
        let search = if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        };
        format!("http://{host}{}{search}", req.path)
    };
    let with_start = |s: Option<usize>| {
        let mut p: Vec<(String, String)> = Vec::new();
        let mut placed = false;
        for (k, v) in &req.query {
            if k == "start" {
                if let (Some(s), false) = (s, placed) {
                    p.push((k.clone(), s.to_string()));
                    placed = true;
                }
            } else {
                p.push((k.clone(), v.clone()));
            }
        }
        if let (Some(s), false) = (s, placed) {
            p.push(("start".into(), s.to_string()));
        }
        p
    };
    let (start_i, limit_i, total_i) = (start as i64, limit as i64, total as i64);
    let mut out: Vec<(&str, String)> = Vec::new();
    if start != 0 {
        out.push(("first", url(&with_start(None))));
        let prev = start_i - limit_i;
        let prev = (prev > 0).then_some(prev as usize);
        out.push(("prev", url(&with_start(prev))));
    }
    if start == 0 && limit >= total {
        out.push(("last", url(&req.query)));
    } else if limit != 0 {
        let last_start = if start_i >= total_i {
            total_i - limit_i
        } else {
            let ls = total_i - total_i % limit_i;
            if ls == total_i {
                total_i - limit_i
            } else {
                ls
            }
        };
        let last = (last_start > 0).then_some(last_start as usize);
        out.push(("last", url(&with_start(last))));
        let next = start + limit;
        if next < total {
            // `p` still holds the last page's `start`, which `set` replaces in place.
            let mut p = with_start(last);
            match p.iter_mut().find(|(k, _)| k == "start") {
                Some(kv) => kv.1 = next.to_string(),
                None => p.push(("start".into(), next.to_string())),
            }
            out.push(("next", url(&p)));
        }
    }
    let rest = req.path.get(5..).unwrap_or("");
    let rest = rest.replacen("users/0/", &format!("users/{USER_ID}/"), 1);
    out.push(("alternate", format!("https://www.zotero.org/{rest}")));
    out.iter()
        .map(|(rel, u)| format!("<{u}>; rel=\"{rel}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
