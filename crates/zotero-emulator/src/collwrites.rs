//! Collection and tag writes: `POST {prefix}/collections` (create or update up to 50),
//! `PUT|PATCH|DELETE {prefix}/collections/{key}`, `DELETE {prefix}/collections?collectionKey=`,
//! `DELETE {prefix}/tags?tag=a || b`, as `CollectionsController`, `TagsController`,
//! `Zotero_Collections::updateFromJSON`/`validateJSONCollection`, `Zotero_Collection::save` and
//! `Zotero_DataObjects::delete` (zotero/dataserver) do them.

use serde_json::{json, Map, Value};

use super::apply::Written;
use super::libs::Lib;
use super::props::is_object_uri;
use super::util::{html_escape, is_valid_key, random_key};
use super::validate::{check_key_and_version, isset, Fail};
use super::writes::{decode, library_unmodified, remember_token, single_write_version};
use super::{Answer, Recorded, State};

/// The most objects one write may carry (`Zotero_API::$maxWriteCollections`).
const MAX_WRITE_COLLECTIONS: usize = 50;

/// `Zotero_Relations::$allowedCollectionPredicates`
const COLLECTION_PREDICATES: [&str; 2] = ["owl:sameAs", "mendeleyDB:remoteFolderUUID"];

/// PHP `gettype`.
fn gettype(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// PHP `empty`.
fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty() || s == "0",
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

/// `validateJSONCollection`
fn validate(json: &Map<String, Value>, partial: bool) -> Result<(), Fail> {
    if !partial && !isset(json, "name") {
        return Err(Fail::bad("'name' property not provided"));
    }
    for (k, v) in json {
        match k.as_str() {
            "key" | "version" | "collectionKey" | "collectionVersion" => {}
            "name" => {
                let Some(name) = v.as_str() else {
                    return Err(Fail::bad("'name' must be a string"));
                };
                if name.is_empty() {
                    return Err(Fail::bad("Collection name cannot be empty"));
                }
                if name.chars().count() > 255 {
                    let short: String = name.chars().take(50).collect();
                    let mut f = Fail::new(413, format!("Collection name '{short}…' too long"));
                    f.data = Some(json!({"value": format!("{short}…")}));
                    return Err(f);
                }
            }
            "parent" => return Err(Fail::bad("'parent' property is now 'parentCollection'")),
            "parentCollection" => {
                if !v.is_string() && !empty(v) {
                    return Err(Fail::bad(format!(
                        "'{k}' must be a collection key or FALSE ({})",
                        gettype(v)
                    )));
                }
            }
            "relations" => {
                let empty_array = v.as_array().is_some_and(|a| a.is_empty());
                let Some(rels) = v.as_object() else {
                    if empty_array {
                        continue;
                    }
                    return Err(Fail::bad("'relations' property must be an object"));
                };
                for (pred, obj) in rels {
                    if !COLLECTION_PREDICATES.contains(&pred.as_str()) {
                        return Err(Fail::bad(format!("Unsupported predicate '{pred}'")));
                    }
                    let uris = match obj {
                        Value::Array(a) => a.clone(),
                        other => vec![other.clone()],
                    };
                    for uri in uris {
                        if !is_object_uri(uri.as_str().unwrap_or(""), "collections") {
                            return Err(Fail::bad(
                                "'relations' values currently must be Zotero collection URIs",
                            ));
                        }
                    }
                }
            }
            "deleted" => {
                let ok = v.is_boolean() || *v == json!(0) || *v == json!(1);
                if !ok {
                    // A plain `Exception` without a code: the server's 500.
                    return Err(Fail::new(500, "'deleted' must be a boolean"));
                }
            }
            _ => return Err(Fail::bad(format!("Invalid property '{k}'"))),
        }
    }
    Ok(())
}

fn index(lib: &Lib, key: &str) -> Option<usize> {
    lib.collections.iter().position(|c| c["key"] == key)
}

/// The keys of the collections below `key` (children, their children, ...).
fn descendants(lib: &Lib, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![key.to_string()];
    while let Some(k) = todo.pop() {
        for c in &lib.collections {
            if c["data"]["parentCollection"] == k.as_str() {
                let ck = c["key"].as_str().unwrap_or("").to_string();
                if !out.contains(&ck) && ck != key {
                    out.push(ck.clone());
                    todo.push(ck);
                }
            }
        }
    }
    out
}

/// `Zotero_Collections::updateFromJSON` + `Zotero_Collection::save` at library version `version`.
pub(crate) fn write_collection(
    lib: &mut Lib,
    raw: &Value,
    url_key: Option<&str>,
    partial: bool,
    require: u8,
    version: u64,
) -> Result<Written, Fail> {
    let json = raw.get("data").filter(|d| d.is_object()).unwrap_or(raw);
    let Some(json) = json.as_object() else {
        return Err(Fail::bad(format!(
            "Invalid collection object (found {} '{raw}')",
            gettype(raw)
        )));
    };
    let key = match json.get("key").and_then(Value::as_str) {
        Some(k) => Some(k.to_string()),
        None => url_key.map(str::to_string),
    };
    let idx = key.as_deref().and_then(|k| index(lib, k));
    let stored_version = idx.map(|i| lib.collections[i]["version"].as_u64().unwrap_or(0));
    check_key_and_version("collection", json, url_key, stored_version, require)?;
    let exists = idx.is_some();
    let partial = partial && exists;
    validate(json, partial)?;

    let old = idx.map(|i| lib.collections[i]["data"].clone());
    let mut data = match (&old, partial) {
        (Some(o), true) => o.as_object().cloned().unwrap_or_default(),
        _ => Map::new(),
    };
    data.remove("version");
    if let Some(n) = json.get("name").filter(|v| !v.is_null()) {
        data.insert("name".into(), n.clone());
    }
    match json.get("parentCollection").filter(|v| !v.is_null()) {
        Some(p) if !empty(p) => {
            data.insert("parentCollection".into(), p.clone());
        }
        Some(_) => {
            data.insert("parentCollection".into(), json!(false));
        }
        None if !partial => {
            data.insert("parentCollection".into(), json!(false));
        }
        None => {}
    }
    match json.get("relations").filter(|v| !v.is_null()) {
        Some(r) if r.is_object() => {
            data.insert("relations".into(), r.clone());
        }
        Some(_) => {
            data.insert("relations".into(), json!({}));
        }
        None if !partial => {
            data.insert("relations".into(), json!({}));
        }
        None => {}
    }
    if isset(json, "deleted") || !partial {
        if json.get("deleted").is_some_and(|v| !empty(v)) {
            data.insert("deleted".into(), json!(true));
        } else {
            data.remove("deleted");
        }
    }
    data.entry("parentCollection").or_insert(json!(false));
    data.entry("relations").or_insert(json!({}));

    let key = match key {
        Some(k) => k,
        None => loop {
            let k = random_key();
            if index(lib, &k).is_none() {
                break k;
            }
        },
    };
    data.insert("key".into(), json!(key));
    // `Zotero_Collection::save`: the parent must exist; a parent below this collection is
    // moved to the top level first.
    if let Some(p) = data["parentCollection"].as_str().map(str::to_string) {
        let Some(pi) = index(lib, &p) else {
            let mut f = Fail::new(409, format!("Parent collection {p} not found"));
            f.data = Some(json!({"collection": p}));
            return Err(f);
        };
        if exists {
            if p == key {
                // `trigger_error(E_USER_ERROR)`: the request dies.
                return Err(Fail::new(500, "An error occurred"));
            }
            if descendants(lib, &key).contains(&p) {
                let c = &mut lib.collections[pi];
                c["data"]["parentCollection"] = json!(false);
                c["version"] = json!(version);
                c["data"]["version"] = json!(version);
            }
        }
    }
    if let Some(o) = &old {
        let mut before = o.clone();
        if let Some(m) = before.as_object_mut() {
            m.remove("version");
        }
        if before == Value::Object(data.clone()) {
            return Ok(Written::Unchanged(key));
        }
    }
    data.insert("version".into(), json!(version));
    // "Remove from delete log if it's there" (`Zotero_Collection::save`).
    lib.delete_log
        .retain(|(k, x, _)| !(*k == "collections" && *x == key));
    let mut obj = lib.wrap("collections", &key, version, json!({}), Value::Object(data));
    if let Some(i) = idx {
        obj["meta"] = lib.collections[i]["meta"].clone();
        lib.collections[i] = obj;
        Ok(Written::Changed(i))
    } else {
        obj["meta"] = json!({"numCollections": 0, "numItems": 0});
        lib.collections.push(obj);
        Ok(Written::Changed(lib.collections.len() - 1))
    }
}

/// Deletes a collection: its subcollections go with it (`ON DELETE CASCADE`), its items stay,
/// minus the membership (`collectionItems` rows cascade; the items' versions do not change).
/// Only the named collection enters the delete log, as `Zotero_DataObjects::delete` logs it.
pub(crate) fn delete_collection(lib: &mut Lib, key: &str) {
    if index(lib, key).is_none() {
        return;
    }
    let mut gone = descendants(lib, key);
    gone.push(key.to_string());
    lib.collections
        .retain(|c| !gone.iter().any(|g| c["key"] == g.as_str()));
    for item in &mut lib.items {
        if let Some(cs) = item["data"]["collections"].as_array_mut() {
            cs.retain(|c| !gone.iter().any(|g| c == g.as_str()));
        }
    }
    lib.log_delete("collections", key);
}

fn failure(f: &Fail, obj: &Value) -> Value {
    let mut e = json!({"code": f.code, "message": html_escape(&f.message)});
    let key = obj
        .get("data")
        .filter(|d| d.is_object())
        .unwrap_or(obj)
        .get("key");
    match key {
        None | Some(Value::Null) => {}
        Some(k) if *k == json!("") => {}
        Some(k) => e["key"] = k.clone(),
    }
    if let Some(d) = &f.data {
        e["data"] = d.clone();
    }
    e
}

/// `POST {prefix}/collections`
pub(crate) fn post_collections(
    st: &mut State,
    lib_id: super::libs::LibraryId,
    base: &str,
    req: &Recorded,
    body: &[u8],
) -> Answer {
    let State {
        libs, write_tokens, ..
    } = st;
    let lib = libs.get_mut(&lib_id).unwrap();
    let require = match library_unmodified(req, lib, false) {
        Ok(checked) => u8::from(!checked),
        Err(a) => return a,
    };
    let json = match decode(body) {
        Ok(v) => v,
        Err(a) => return a,
    };
    let Some(objects) = json.as_array() else {
        return Answer::text(400, "Uploaded data must be a JSON array");
    };
    if objects.len() > MAX_WRITE_COLLECTIONS {
        return Answer::text(
            413,
            &format!("Cannot add more than {MAX_WRITE_COLLECTIONS} collections at a time"),
        );
    }
    let (mut successful, mut success, mut unchanged, mut failed) =
        (Map::new(), Map::new(), Map::new(), Map::new());
    for (i, obj) in objects.iter().enumerate() {
        let idx = i.to_string();
        // Each object bumps the library version in its own transaction (rolled back on failure).
        lib.version += 1;
        if !obj.is_object() {
            lib.version -= 1;
            let msg = format!(
                "Invalid value for index {i} in uploaded data; expected JSON collection object"
            );
            failed.insert(idx, json!({"code": 400, "message": msg}));
            continue;
        }
        let version = lib.version;
        match write_collection(lib, obj, None, true, require, version) {
            Ok(Written::Changed(at)) => {
                let c = super::library::render_collection(lib, &lib.collections[at], base);
                success.insert(idx.clone(), c["key"].clone());
                successful.insert(idx, c);
            }
            Ok(Written::Unchanged(key)) => {
                unchanged.insert(idx, json!(key));
            }
            Err(f) => {
                lib.version -= 1;
                failed.insert(idx, failure(&f, obj));
            }
        }
    }
    remember_token(write_tokens, req);
    let report = json!({
        "successful": successful, "success": success,
        "unchanged": unchanged, "failed": failed,
    });
    Answer::json(&report).header("Last-Modified-Version", lib.version)
}

/// `PUT|PATCH|DELETE {prefix}/collections/{key}` (`handleObjectWrite`).
pub(crate) fn write_single(
    st: &mut State,
    lib_id: super::libs::LibraryId,
    req: &Recorded,
    body: &[u8],
    key: &str,
) -> Answer {
    if !is_valid_key(key) {
        return Answer::text(404, "Not found");
    }
    let State {
        libs, write_tokens, ..
    } = st;
    let lib = libs.get_mut(&lib_id).unwrap();
    let stored = index(lib, key).map(|i| lib.collections[i]["version"].as_u64().unwrap_or(0));
    let json = if !body.is_empty() {
        match decode(body) {
            Ok(v) => Some(v),
            Err(a) => return a,
        }
    } else {
        None
    };
    if let Err(a) = single_write_version("collection", req, json.as_ref(), stored) {
        return a;
    }
    let original = lib.version;
    lib.version += 1;
    if req.method == "DELETE" {
        delete_collection(lib, key);
        return Answer::empty(204).header("Last-Modified-Version", lib.version);
    }
    let json = json.unwrap_or(Value::Bool(false));
    let version = lib.version;
    match write_collection(lib, &json, Some(key), req.method == "PATCH", 0, version) {
        Ok(w) => {
            remember_token(write_tokens, req);
            let header = match w {
                Written::Changed(_) => lib.version,
                Written::Unchanged(_) => original,
            };
            Answer::empty(204).header("Last-Modified-Version", header)
        }
        Err(f) => {
            lib.version = original;
            Answer::text(f.code, &html_escape(&f.message))
        }
    }
}

/// `DELETE {prefix}/collections?collectionKey=A,B` (the header is checked when given).
pub(crate) fn delete_collections(lib: &mut Lib, req: &Recorded) -> Answer {
    if let Err(a) = library_unmodified(req, lib, false) {
        return a;
    }
    lib.version += 1;
    for key in super::writes::key_list(req, "collectionKey") {
        delete_collection(lib, &key);
    }
    Answer::empty(204).header("Last-Modified-Version", lib.version)
}

/// `DELETE {prefix}/tags?tag=a || b`: `If-Unmodified-Since-Version` required; each named tag
/// (case-sensitive, every type) leaves every item that has it, and those items get the
/// request's new version (dataserver's `test_deleting_a_tag_should_update_a_linked_item`).
/// Deleted names enter the delete log as `tags`.
pub(crate) fn delete_tags(lib: &mut Lib, req: &Recorded) -> Answer {
    if let Err(a) = library_unmodified(req, lib, true) {
        return a;
    }
    lib.version += 1;
    let version = lib.version;
    let names: Vec<String> = req
        .query
        .iter()
        .rev()
        .find(|(k, v)| k == "tag" && !v.is_empty())
        .map(|(_, v)| v.split(" || ").map(str::to_string).collect())
        .unwrap_or_default();
    for name in names {
        let mut found = false;
        for item in &mut lib.items {
            let Some(tags) = item["data"]["tags"].as_array_mut() else {
                continue;
            };
            let before = tags.len();
            tags.retain(|t| t["tag"] != name.as_str());
            if tags.len() < before {
                found = true;
                item["version"] = json!(version);
                item["data"]["version"] = json!(version);
            }
        }
        if found {
            lib.log_delete("tags", &name);
        }
    }
    Answer::empty(204).header("Last-Modified-Version", version)
}

/// `GET {prefix}/deleted?since=N` (`DeletedController`).
pub(crate) fn deleted(lib: &Lib, req: &Recorded) -> Answer {
    let since = req
        .query
        .iter()
        .rev()
        .find(|(k, v)| k == "since" && !v.is_empty())
        .map(|(_, v)| v.as_str());
    let Some(since) = since else {
        return Answer::text(400, "'since' parameter must be provided");
    };
    if !super::util::php_is_numeric(since) {
        return Answer::text(400, "Invalid value for 'since' parameter");
    }
    let since = since.trim().parse::<f64>().unwrap_or(0.0);
    let keys = |kind: &str| -> Vec<Value> {
        lib.delete_log
            .iter()
            .filter(|(k, _, v)| *k == kind && *v as f64 > since)
            .map(|(_, key, _)| json!(key))
            .collect()
    };
    let body = json!({
        "collections": keys("collections"), "items": keys("items"),
        "searches": [], "tags": keys("tags"), "settings": [],
    });
    Answer::json(&body).header("Last-Modified-Version", lib.version)
}
