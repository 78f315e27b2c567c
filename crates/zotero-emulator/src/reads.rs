//! The web API's read handlers for one library: items (all, top, trash, children, of a
//! collection), single items, collections and tags, with the paging headers they share.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::library::{render_collection, render_item, render_item_among, Kids, Visible};
use super::libs::Lib;
use super::params::{self, Action, Params};
use super::search::{self, Scope};
use super::{formats, schema, Answer, Recorded};

fn if_modified_since(req: &Recorded) -> Option<u64> {
    req.header("if-modified-since-version")
        .and_then(|v| v.trim().parse().ok())
}

/// Every item type of the schema (`itemType` filters accept all of them).
pub(crate) fn valid_item_types() -> Vec<String> {
    schema::schema()
        .types
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

fn find(objs: &[Value], key: &str) -> Option<usize> {
    objs.iter().position(|o| o["key"] == key)
}

/// `GET {prefix}/…` of a library the key may read; `vis`: what it may see of it.
pub(crate) fn library_read(
    lib: &Lib,
    vis: Visible,
    base: &str,
    req: &Recorded,
    rest: &[&str],
) -> Answer {
    let st = lib;
    match rest {
        ["items"] => items_list(st, vis, base, req, Scope::All, false),
        ["items", "top"] => items_list(st, vis, base, req, Scope::All, true),
        ["items", "trash"] => items_list(st, vis, base, req, Scope::Trash, false),
        // Tags within items (`TagsController`, scope `items`), before `items/{key}`.
        ["items", "tags"] => items_tags(st, vis, base, req, Scope::All, false),
        ["items", "top", "tags"] => items_tags(st, vis, base, req, Scope::All, true),
        ["items", "trash", "tags"] => items_tags(st, vis, base, req, Scope::Trash, false),
        ["items", key] => {
            let Some(i) = find(&st.items, key) else {
                return Answer::text(404, "Not found");
            };
            if !vis.notes && is_note(&st.items[i]) {
                // No access to the object: the server does not say it exists.
                return Answer::text(404, "Not found");
            }
            let p = match params::parse(&req.query, Action::Items, true) {
                Ok(p) => p,
                Err(e) => return Answer::text(400, e.body()),
            };
            let version = st.items[i]["version"].as_u64().unwrap_or(0);
            if if_modified_since(req).is_some_and(|n| version <= n) {
                return Answer::text(304, "");
            }
            let body = render_item(st, &st.items[i], base, vis);
            let answer = formats::items_answer(st, vec![body], 1, true, &p);
            if answer.status != 200 {
                return answer;
            }
            answer.header("Last-Modified-Version", st.version)
        }
        ["items", key, "children"] => {
            if find(&st.items, key).is_none() {
                return Answer::text(404, "Item not found");
            }
            items_list(st, vis, base, req, Scope::Children(key.to_string()), false)
        }
        ["items", key, "fulltext"] => super::fulltext::item_content(st, key),
        ["fulltext"] => super::fulltext::versions(st, req),
        ["deleted"] => super::collwrites::deleted(st, req),
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
            let body = render_collection(st, &st.collections[i], base);
            Answer::json(&body).header("Last-Modified-Version", st.version)
        }
        ["collections", key, "collections"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Collection not found");
            }
            collections_list(st, base, req, Some(Some(key)))
        }
        ["collections", key, "items", "tags"] | ["collections", key, "items", "top", "tags"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Not found");
            }
            let top = rest.len() == 5;
            items_tags(st, vis, base, req, Scope::Collection(key.to_string()), top)
        }
        ["collections", key, "tags"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Not found");
            }
            // `Zotero_Collection::getTagItemCounts`: the collection's items, trashed too.
            let within: Vec<usize> = st
                .items
                .iter()
                .enumerate()
                .filter(|(_, i)| {
                    i["data"]["collections"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|c| c == *key))
                })
                .map(|(n, _)| n)
                .collect();
            tags_list(st, vis, base, req, &within)
        }
        ["collections", key, "items"] | ["collections", key, "items", "top"] => {
            if find(&st.collections, key).is_none() {
                return Answer::text(404, "Collection not found");
            }
            let top = rest.len() == 4;
            items_list(st, vis, base, req, Scope::Collection(key.to_string()), top)
        }
        ["tags"] => {
            // Every tag with an item, trashed items too (`Zotero_Tags::search` joins
            // `itemTags` and `items` only).
            let all: Vec<usize> = (0..st.items.len()).collect();
            tags_list(st, vis, base, req, &all)
        }
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
fn paged(st: &Lib, base: &str, req: &Recorded, p: &Params, total: usize, body: Answer) -> Answer {
    body.header("Total-Results", total)
        .header("Last-Modified-Version", st.version)
        .header("Link", params::link_header(base, &req.path, total, p))
}

pub(crate) fn page<T: Clone>(all: &[T], p: &Params) -> Vec<T> {
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

fn items_list(
    st: &Lib,
    vis: Visible,
    base: &str,
    req: &Recorded,
    scope: Scope,
    top: bool,
) -> Answer {
    let p = match params::parse(&req.query, Action::Items, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, e.body()),
    };
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    let mut all = match search::search_items(st, &scope, top, &p, &valid_item_types()) {
        Ok(v) => v,
        Err(e) => return Answer::text(400, e.body()),
    };
    if !vis.notes {
        // `Zotero_Items::search` leaves notes out without note access.
        all.retain(|i| !is_note(&st.items[*i]));
    }
    let shown = page(&all, &p);
    if matches!(p.format.as_str(), "keys" | "versions") {
        let body = keyed_answer(&st.items, &shown, &p);
        return paged(st, base, req, &p, all.len(), body);
    }
    let kids = Kids::mapped(&st.items);
    let rendered: Vec<Value> = shown
        .iter()
        .map(|i| render_item_among(st, &st.items[*i], base, vis, &kids))
        .collect();
    let body = formats::items_answer(st, rendered, all.len(), false, &p);
    if body.status != 200 {
        return body;
    }
    if p.format == "bib" {
        // A bibliography is one document: no paging headers (`generateMultiResponse`).
        return body.header("Last-Modified-Version", st.version);
    }
    paged(st, base, req, &p, all.len(), body)
}

fn collections_list(st: &Lib, base: &str, req: &Recorded, parent: Option<Option<&str>>) -> Answer {
    let p = match params::parse(&req.query, Action::Collections, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, e.body()),
    };
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    let all = match search::search_collections(st, parent, &p) {
        Ok(v) => v,
        Err(e) => return Answer::text(400, e.body()),
    };
    let shown = page(&all, &p);
    let body = if p.format == "json" {
        let arr: Vec<Value> = shown
            .iter()
            .map(|i| render_collection(st, &st.collections[*i], base))
            .collect();
        Answer::json(&Value::Array(arr))
    } else {
        keyed_answer(&st.collections, &shown, &p)
    };
    paged(st, base, req, &p, all.len(), body)
}

/// The item filters of a tags-within-items request, under the names the item search reads
/// (`TagsController` proxies `itemQ`, `itemQMode`, `itemKey`, `itemType`, `itemTag`,
/// `includeTrashed`).
fn item_query(req: &Recorded) -> Vec<(String, String)> {
    req.query
        .iter()
        .filter_map(|(k, v)| {
            let name = match k.as_str() {
                "itemQ" => "q",
                "itemKey" => "itemKey",
                "itemType" => "itemType",
                "itemTag" => "tag",
                "includeTrashed" => "includeTrashed",
                _ => return None,
            };
            Some((name.to_string(), v.clone()))
        })
        .collect()
}

/// `…/items[/top|/trash]/tags`: the tags of the items the `item*` parameters find.
fn items_tags(
    st: &Lib,
    vis: Visible,
    base: &str,
    req: &Recorded,
    scope: Scope,
    top: bool,
) -> Answer {
    let mut ip = match params::parse(&item_query(req), Action::Items, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, e.body()),
    };
    // `itemQMode` is passed on unchecked, and the search compares it with `everything`
    // as written.
    let mode = req.query.iter().rev().find(|(k, _)| k == "itemQMode");
    if mode.is_some_and(|(_, v)| v == "everything") {
        ip.qmode = "everything".into();
    }
    if scope == Scope::Trash {
        ip.include_trashed = true;
    }
    let mut within = match search::search_items(st, &scope, top, &ip, &valid_item_types()) {
        Ok(v) => v,
        Err(e) => return Answer::text(400, e.body()),
    };
    if !vis.notes {
        within.retain(|i| !is_note(&st.items[*i]));
    }
    tags_list(st, vis, base, req, &within)
}

/// The tags of the items `within` (indices into the library's items), filtered by `tag` and
/// `q`, sorted and paged as `Zotero_Tags::search` does; `numItems` counts the whole library
/// (`Zotero_Tag::toResponseJSON`: the JSON answer never gets the collection's counts).
fn tags_list(st: &Lib, vis: Visible, base: &str, req: &Recorded, within: &[usize]) -> Answer {
    let p = match params::parse(&req.query, Action::Tags, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, e.body()),
    };
    if p.format != "json" {
        return not_emulated(&p.format);
    }
    if if_modified_since(req).is_some_and(|n| st.version <= n) {
        return Answer::text(304, "");
    }
    let visible = |i: &Value| vis.notes || !is_note(i);
    // (name, type, items within carrying it)
    let mut tags: Vec<(String, u64, usize)> = Vec::new();
    // Where each (name, type) is in `tags`: libraries with thousands of tags stay quick.
    let mut at: HashMap<(String, u64), usize> = HashMap::new();
    for item in within.iter().map(|i| &st.items[*i]).filter(|i| visible(i)) {
        for t in item["data"]["tags"].as_array().into_iter().flatten() {
            let name = t["tag"].as_str().unwrap_or("").to_string();
            let ty = t["type"].as_u64().unwrap_or(0);
            match at.get(&(name.clone(), ty)) {
                Some(e) => tags[*e].2 += 1,
                None => {
                    at.insert((name.clone(), ty), tags.len());
                    tags.push((name, ty, 1));
                }
            }
        }
    }
    // `tag=a || b`: those names exactly (`name IN (…)`, utf8mb4_bin); given twice, refused.
    if p.tag.len() > 1 {
        return Answer::text(400, "Cannot specify 'tag' more than once");
    }
    if let Some(names) = p.tag.first().filter(|t| !t.is_empty() && *t != "0") {
        let names: Vec<&str> = names.split(" || ").collect();
        tags.retain(|(n, _, _)| names.contains(&n.as_str()));
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
    // `GROUP BY tagID ORDER BY COUNT(tagID)`: the count within the items asked about.
    // Stable sorts by keys computed once per tag.
    if p.sort == "numItems" {
        tags.sort_by_cached_key(|t| (t.2, search::fold(&t.0)));
    } else {
        tags.sort_by_cached_key(|t| (search::fold(&t.0), t.1));
    }
    // Without `sort` or `direction` the real server orders by the tags' own modification
    // dates, which the emulator does not keep: it answers by name then.
    let asked = req
        .query
        .iter()
        .any(|(k, _)| k == "direction" || k == "sort" || k == "order");
    if asked && p.desc {
        tags.reverse();
    }
    let total = tags.len();
    let shown = page(&tags, &p);
    let lib_path = st.id().path();
    let arr: Vec<Value> = shown
        .iter()
        .map(|(name, ty, _)| {
            let num_items = st
                .items
                .iter()
                .filter(|i| visible(i))
                .filter(|i| {
                    i["data"]["tags"].as_array().is_some_and(|ts| {
                        ts.iter().any(|t| {
                            t["tag"] == name.as_str() && t["type"].as_u64().unwrap_or(0) == *ty
                        })
                    })
                })
                .count();
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
                    "self": {"href": format!("{base}/{lib_path}/tags/{enc}"), "type": "application/json"},
                    "alternate": {"href": format!("https://www.zotero.org/{lib_path}/tags/{enc}"), "type": "text/html"},
                },
                "meta": {"type": ty, "numItems": num_items},
            })
        })
        .collect();
    paged(st, base, req, &p, total, Answer::json(&Value::Array(arr)))
}

fn is_note(item: &Value) -> bool {
    item["data"]["itemType"] == "note"
}
