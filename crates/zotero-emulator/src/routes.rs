//! Request dispatch: authentication, routing on method and path, and the read handlers
//! (`/keys/current`, items, collections, tags, item types and fields).

use serde_json::{json, Value};

use super::files::{self, BUCKET_PATH};
use super::library::{render_collection, render_item, KEYS_CURRENT_JSON};
use super::params::{self, Action, Params};
use super::search::{self, Scope};
use super::{mappings, s3, schema, web, writes};
use super::{Answer, Recorded, State, API_KEY, USER_ID};

/// What the request's credentials amount to.
enum Auth {
    None,
    Valid,
}

fn authenticate(req: &Recorded) -> Result<Auth, Answer> {
    let mut key = req.header("zotero-api-key").map(str::to_string);
    if key.is_none() {
        key = req
            .query
            .iter()
            .find(|(k, _)| k == "key")
            .map(|(_, v)| v.clone());
    }
    if key.is_none() {
        if let Some(v) = req.header("authorization") {
            if v.len() >= 6 && v[..6].eq_ignore_ascii_case("bearer") {
                let rest = v[6..].trim_start_matches(' ');
                let ok = v[6..].starts_with(' ')
                    && !rest.is_empty()
                    && rest.bytes().all(|b| b.is_ascii_alphanumeric());
                if !ok {
                    return Err(Answer::text(400, "Invalid Authorization header format"));
                }
                key = Some(rest.to_string());
            }
        }
    }
    match key {
        None => Ok(Auth::None),
        Some(k) if k == API_KEY => Ok(Auth::Valid),
        Some(_) => Err(Answer::text(403, "Invalid key")),
    }
}

/// Answers one request (faults are handled by the caller). `body` is the full body.
pub(crate) fn handle(st: &mut State, base: &str, req: &Recorded, body: &[u8]) -> Answer {
    // Hosts that are not the API: the S3 bucket, the web host, arXiv.
    let path = req.path.as_str();
    let get = req.method == "GET" || req.method == "HEAD";
    if path == BUCKET_PATH || path == BUCKET_PATH.trim_end_matches('/') {
        return match req.method.as_str() {
            "POST" => s3::post_object(st, base, req, body),
            _ => Answer::text(405, "Method Not Allowed"),
        };
    }
    if let Some(key) = path.strip_prefix(BUCKET_PATH) {
        return if get {
            s3::get_object(st, req, key)
        } else {
            Answer::text(405, "Method Not Allowed")
        };
    }
    if path.starts_with("/web/") {
        return if get {
            web::web_get(st, req)
        } else {
            Answer::text(405, "Method Not Allowed")
        };
    }
    if path.starts_with("/arxiv/") {
        return web::arxiv_get(st, base, req);
    }
    if let Some(v) = req.header("zotero-api-version") {
        if !matches!(v.trim(), "1" | "2" | "3") {
            return Answer::text(400, &format!("Invalid API version '{v}'"));
        }
    }
    let auth = match authenticate(req) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let is_read = req.method == "GET" || req.method == "HEAD";
    if !is_read && matches!(auth, Auth::None) {
        return Answer::text(403, "An API key is required for write requests.");
    }
    if !is_read {
        if let Err(a) = writes::check_write_token(st, req) {
            return a;
        }
    }
    let segs: Vec<&str> = req.path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["items", "new"] => return schema::new_item(st.schema(), &req.query),
        ["itemTypes"] => return mappings::item_types(),
        ["itemFields"] => return mappings::item_fields(st.schema()),
        ["keys", k] => {
            if !is_read {
                return Answer::text(405, "Method not allowed");
            }
            let ok = matches!(auth, Auth::Valid) && (*k == "current" || *k == API_KEY);
            if !ok {
                return Answer::text(
                    403,
                    if *k == "current" {
                        "Forbidden"
                    } else {
                        "Invalid key"
                    },
                );
            }
            let mut v: Value = serde_json::from_str(KEYS_CURRENT_JSON).unwrap();
            v["key"] = json!(API_KEY);
            v["userID"] = json!(USER_ID);
            return Answer::json(&v);
        }
        ["users", id, rest @ ..] => {
            if id.parse::<u64>().ok() != Some(USER_ID) || matches!(auth, Auth::None) {
                return Answer::text(403, "Forbidden");
            }
            if let ["items", key, "file", ..] = rest {
                return files::file_request(st, base, req, body, key);
            }
            if !is_read {
                return library_write(st, base, req, body, rest);
            }
            return library_read(st, base, req, rest);
        }
        _ => {}
    }
    Answer::text(404, "Not found")
}

fn library_write(st: &mut State, base: &str, req: &Recorded, body: &[u8], rest: &[&str]) -> Answer {
    match (req.method.as_str(), rest) {
        ("POST", ["items"]) => writes::create_items(st, base, req, body),
        ("PUT" | "PATCH" | "DELETE", ["items", key]) => writes::write_single(st, req, body, key),
        ("POST", ["collections", key, "items"]) => writes::add_to_collection(st, body, key),
        (_, ["items", _]) => Answer::text(405, "Method not allowed"),
        _ => Answer::text(501, "The emulator does not implement this write"),
    }
}

fn if_modified_since(req: &Recorded) -> Option<u64> {
    req.header("if-modified-since-version")
        .and_then(|v| v.trim().parse().ok())
}

/// Every item type of the schema (`itemType` filters accept all of them).
fn valid_item_types() -> Vec<String> {
    schema::schema()
        .types
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

fn find(objs: &[Value], key: &str) -> Option<usize> {
    objs.iter().position(|o| o["key"] == key)
}

fn library_read(st: &mut State, base: &str, req: &Recorded, rest: &[&str]) -> Answer {
    match rest {
        ["items"] => items_list(st, base, req, Scope::All, false),
        ["items", "top"] => items_list(st, base, req, Scope::All, true),
        ["items", "trash"] => items_list(st, base, req, Scope::Trash, false),
        ["items", key] => {
            let Some(i) = find(&st.items, key) else {
                return Answer::text(404, "Not found");
            };
            let p = match params::parse(&req.query, Action::Items, true) {
                Ok(p) => p,
                Err(e) => return Answer::text(400, &e),
            };
            if p.format != "json" {
                return not_emulated(&p.format);
            }
            let version = st.items[i]["version"].as_u64().unwrap_or(0);
            if if_modified_since(req).is_some_and(|n| version <= n) {
                return Answer::text(304, "");
            }
            let body = render_item(&st.items, &st.items[i], base);
            Answer::json(&body).header("Last-Modified-Version", st.version)
        }
        ["items", key, "children"] => {
            if find(&st.items, key).is_none() {
                return Answer::text(404, "Item not found");
            }
            items_list(st, base, req, Scope::Children(key.to_string()), false)
        }
        ["collections"] => collections_list(st, base, req, None),
        ["collections", "top"] => collections_list(st, base, req, Some(None)),
        ["collections", key] => {
            let Some(i) = find(&st.collections, key) else {
                return Answer::text(404, "Collection not found");
            };
            let version = st.collections[i]["version"].as_u64().unwrap_or(0);
            if if_modified_since(req).is_some_and(|n| version <= n) {
                return Answer::text(304, "");
            }
            let body = render_collection(&st.items, &st.collections, &st.collections[i], base);
            Answer::json(&body).header("Last-Modified-Version", st.version)
        }
        ["collections", key, "collections"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Collection not found");
            }
            collections_list(st, base, req, Some(Some(key)))
        }
        ["collections", key, "items"] | ["collections", key, "items", "top"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Collection not found");
            }
            let top = rest.len() == 4;
            items_list(st, base, req, Scope::Collection(key.to_string()), top)
        }
        ["tags"] => tags_list(st, base, req),
        _ => Answer::text(404, "Not found"),
    }
}

fn not_emulated(format: &str) -> Answer {
    Answer::text(
        501,
        &format!("The emulator does not render format={format}"),
    )
}

/// Headers and paging shared by every multi-object answer.
fn paged(st: &State, base: &str, req: &Recorded, p: &Params, total: usize, body: Answer) -> Answer {
    body.header("Total-Results", total)
        .header("Last-Modified-Version", st.version)
        .header("Link", params::link_header(base, &req.path, total, p))
}

fn page<T: Clone>(all: &[T], p: &Params) -> Vec<T> {
    let end = if p.limit == 0 {
        all.len()
    } else {
        all.len().min(p.start.saturating_add(p.limit))
    };
    all.get(p.start.min(all.len())..end).unwrap_or(&[]).to_vec()
}

fn keyed_answer(objs: &[Value], idx: &[usize], p: &Params) -> Answer {
    if p.format == "keys" {
        let mut s = String::new();
        for i in idx {
            s.push_str(objs[*i]["key"].as_str().unwrap_or(""));
            s.push('\n');
        }
        Answer::raw(200, s.into_bytes(), "text/plain")
    } else {
        let mut m = serde_json::Map::new();
        for i in idx {
            m.insert(
                objs[*i]["key"].as_str().unwrap_or("").to_string(),
                objs[*i]["version"].clone(),
            );
        }
        Answer::json(&Value::Object(m))
    }
}

fn items_list(st: &mut State, base: &str, req: &Recorded, scope: Scope, top: bool) -> Answer {
    let p = match params::parse(&req.query, Action::Items, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, &e),
    };
    if !matches!(p.format.as_str(), "json" | "keys" | "versions") {
        return not_emulated(&p.format);
    }
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    let all = match search::search_items(st, &scope, top, &p, &valid_item_types()) {
        Ok(v) => v,
        Err(e) => return Answer::text(400, &e),
    };
    let shown = page(&all, &p);
    let body = if p.format == "json" {
        let arr: Vec<Value> = shown
            .iter()
            .map(|i| render_item(&st.items, &st.items[*i], base))
            .collect();
        Answer::json(&Value::Array(arr))
    } else {
        keyed_answer(&st.items, &shown, &p)
    };
    paged(st, base, req, &p, all.len(), body)
}

fn collections_list(
    st: &mut State,
    base: &str,
    req: &Recorded,
    parent: Option<Option<&str>>,
) -> Answer {
    let p = match params::parse(&req.query, Action::Collections, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, &e),
    };
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    let all = match search::search_collections(st, parent, &p) {
        Ok(v) => v,
        Err(e) => return Answer::text(400, &e),
    };
    let shown = page(&all, &p);
    let body = if p.format == "json" {
        let arr: Vec<Value> = shown
            .iter()
            .map(|i| render_collection(&st.items, &st.collections, &st.collections[*i], base))
            .collect();
        Answer::json(&Value::Array(arr))
    } else {
        keyed_answer(&st.collections, &shown, &p)
    };
    paged(st, base, req, &p, all.len(), body)
}

fn tags_list(st: &mut State, base: &str, req: &Recorded) -> Answer {
    let p = match params::parse(&req.query, Action::Tags, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, &e),
    };
    if p.format != "json" {
        return not_emulated(&p.format);
    }
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    // (name, type) -> number of items
    let mut tags: Vec<(String, u64, usize)> = Vec::new();
    for item in st.items.iter().filter(|i| !super::library::is_deleted(i)) {
        for t in item["data"]["tags"].as_array().into_iter().flatten() {
            let name = t["tag"].as_str().unwrap_or("").to_string();
            let ty = t["type"].as_u64().unwrap_or(0);
            match tags.iter_mut().find(|(n, y, _)| *n == name && *y == ty) {
                Some(e) => e.2 += 1,
                None => tags.push((name, ty, 1)),
            }
        }
    }
    if let Some(q) = &p.q {
        let q = search::fold(q);
        let starts = p.qmode == "startswith";
        tags.retain(|(n, _, _)| {
            let n = search::fold(n);
            if starts {
                n.starts_with(&q)
            } else {
                n.contains(&q)
            }
        });
    }
    if p.sort == "numItems" {
        tags.sort_by(|a, b| {
            a.2.cmp(&b.2)
                .then(search::fold(&a.0).cmp(&search::fold(&b.0)))
        });
    } else {
        tags.sort_by(|a, b| {
            search::fold(&a.0)
                .cmp(&search::fold(&b.0))
                .then(a.1.cmp(&b.1))
        });
    }
    let explicit_desc = req
        .query
        .iter()
        .any(|(k, v)| (k == "direction" || k == "sort") && v == "desc");
    if explicit_desc {
        tags.reverse();
    }
    let total = tags.len();
    let shown = page(&tags, &p);
    let arr: Vec<Value> = shown
        .iter()
        .map(|(name, ty, n)| {
            let enc: String = name
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                        (b as char).to_string()
                    }
                    b' ' => "+".into(),
                    _ => format!("%{b:02X}"),
                })
                .collect();
            json!({
                "tag": name,
                "links": {
                    "self": {"href": format!("{base}/users/{USER_ID}/tags/{enc}"), "type": "application/json"},
                    "alternate": {"href": format!("https://www.zotero.org/users/{USER_ID}/tags/{enc}"), "type": "text/html"},
                },
                "meta": {"type": ty, "numItems": n},
            })
        })
        .collect();
    paged(st, base, req, &p, total, Answer::json(&Value::Array(arr)))
}
