//! Item write requests: `POST {prefix}/items` (create or update up to 50 objects),
//! `PUT|PATCH|DELETE {prefix}/items/{key}`, the old `POST {prefix}/collections/{key}/items`,
//! and `Zotero-Write-Token` bookkeeping, with the statuses and messages of
//! `ItemsController`/`ApiController` (zotero/dataserver).

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::apply::{invalid_object, write_object, Written};
use super::library::{render_item, Visible};
use super::libs::{Lib, LibraryId};
use super::schema::SchemaView;
use super::util::{html_escape, is_valid_key, php_is_numeric};
use super::validate::{Fail, KeyOrder};
use super::{Answer, Recorded, State, API_KEY};

/// The most objects one write may carry (`Zotero_API::$maxWriteItems`).
const MAX_WRITE_ITEMS: usize = 50;

fn fail_answer(f: &Fail) -> Answer {
    Answer::text(f.code, &html_escape(&f.message))
}

/// `json_decode` + `checkJSONError`.
pub(crate) fn decode(body: &[u8]) -> Result<Value, Answer> {
    serde_json::from_slice(body).map_err(|e| {
        let what = if std::str::from_utf8(body).is_err() {
            "Malformed UTF-8 characters"
        } else if e.to_string().contains("control character") {
            "Unexpected control character found"
        } else {
            "Syntax error, malformed JSON"
        };
        Answer::text(400, &format!("JSON Error: {what}"))
    })
}

/// The write token of a request, checked (`ApiController::getWriteTokenCacheKey`).
pub(crate) fn write_token(req: &Recorded) -> Result<Option<String>, Answer> {
    let Some(t) = req.header("zotero-write-token").filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if t.len() < 5 || t.len() > 32 {
        return Err(Answer::text(
            400,
            "Write token must be 5-32 characters in length",
        ));
    }
    Ok(Some(format!("{API_KEY}\u{0}{t}")))
}

/// `412 Write token already used` for a token a successful write already carried.
pub(crate) fn check_write_token(st: &State, req: &Recorded) -> Result<(), Answer> {
    if let Some(t) = write_token(req)? {
        if st.write_tokens.contains(&t) {
            return Err(Answer::text(412, "Write token already used"));
        }
    }
    Ok(())
}

pub(crate) fn remember_token(tokens: &mut HashSet<String>, req: &Recorded) {
    if let Ok(Some(t)) = write_token(req) {
        tokens.insert(t);
    }
}

fn unmodified_since(req: &Recorded) -> Option<&str> {
    req.header("if-unmodified-since-version")
}

/// `POST {prefix}/items`
pub(crate) fn create_items(
    st: &mut State,
    (lib, vis): (LibraryId, Visible),
    base: &str,
    req: &Recorded,
    body: &[u8],
) -> Answer {
    let State {
        libs,
        dropped_fields,
        write_tokens,
        ..
    } = st;
    let lib = libs.get_mut(&lib).unwrap();
    let view = SchemaView::new(dropped_fields);
    let require = match library_unmodified(req, lib, false) {
        Ok(checked) => u8::from(!checked),
        Err(a) => return a,
    };
    let json = match decode(body) {
        Ok(v) => v,
        Err(a) => return a,
    };
    if json.get("url").is_some() && json.is_object() {
        // Server-side translation of a URL: not emulated (the real server answers this too
        // when it has no translator).
        return Answer::text(501, "No translators found for URL");
    }
    let Some(objects) = json.as_array() else {
        return Answer::text(400, "Uploaded data must be a JSON array");
    };
    if objects.len() > MAX_WRITE_ITEMS {
        return Answer::text(
            413,
            &format!("Cannot add more than {MAX_WRITE_ITEMS} items at a time"),
        );
    }
    let orders: Vec<KeyOrder> = serde_json::from_slice(body).unwrap_or_default();
    let (mut successful, mut success, mut unchanged, mut failed) =
        (Map::new(), Map::new(), Map::new(), Map::new());
    for (i, obj) in objects.iter().enumerate() {
        let idx = i.to_string();
        if !obj.is_object() {
            let msg =
                format!("Invalid value for index {i} in uploaded data; expected JSON item object");
            failed.insert(idx, json!({"code": 400, "message": msg}));
            continue;
        }
        // Each object bumps the library version in its own transaction.
        lib.version += 1;
        let order = orders.get(i).cloned().unwrap_or_default();
        let version = lib.version;
        match write_object(lib, view, obj, &order, None, true, require, version) {
            Ok(Written::Changed(at)) => {
                let item = render_item(lib, &lib.items[at], base, vis);
                success.insert(idx.clone(), item["key"].clone());
                successful.insert(idx, item);
            }
            Ok(Written::Unchanged(key)) => {
                unchanged.insert(idx, json!(key));
            }
            Err(f) => {
                lib.version -= 1;
                let mut e = json!({"code": f.code, "message": html_escape(&f.message)});
                match obj.get("key") {
                    None | Some(Value::Null) => {}
                    Some(k) if *k == json!("") => {}
                    Some(k) => e["key"] = k.clone(),
                }
                if let Some(d) = f.data {
                    e["data"] = d;
                }
                failed.insert(idx, e);
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

/// `checkSingleObjectWriteVersion`: the version a single-object write names must be current.
pub(crate) fn single_write_version(
    kind: &str,
    req: &Recorded,
    json: Option<&Value>,
    stored: Option<u64>,
) -> Result<(), Answer> {
    let header = unmodified_since(req);
    let editable = json.map(|j| j.get("data").filter(|d| d.is_object()).unwrap_or(j));
    let prop = editable
        .and_then(|j| j.get("version"))
        .filter(|v| !v.is_null());
    if req.method == "DELETE" && header.is_none() {
        return Err(Answer::text(
            428,
            "If-Unmodified-Since-Version must be provided for delete requests",
        ));
    }
    let num = |v: &Value| {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    };
    let header_v = match header {
        Some(h) if !php_is_numeric(h) => {
            return Err(Answer::text(
                400,
                &format!("Invalid If-Unmodified-Since-Version value '{h}'"),
            ))
        }
        Some(h) => Some(h.trim().parse::<f64>().unwrap_or(0.0) as i64),
        None => None,
    };
    let prop_v = match prop {
        Some(p) if !(p.is_number() || p.as_str().is_some_and(php_is_numeric)) => {
            let shown = super::validate::php_str(p);
            return Err(Answer::text(
                400,
                &format!("Invalid JSON 'version' property value '{shown}'"),
            ));
        }
        Some(p) => Some(num(p).unwrap_or(0.0) as i64),
        None => None,
    };
    if let (Some(h), Some(p)) = (header_v, prop_v) {
        if h != p {
            return Err(Answer::text(
                400,
                &format!("If-Unmodified-Since-Version value does not match JSON 'version' property ({h} != {p})"),
            ));
        }
    }
    let version = header_v.or(prop_v);
    let title = super::validate::ucwords(kind);
    let Some(found) = stored else {
        if req.method == "PATCH" && version.is_none() {
            return Err(Answer::text(
                404,
                &format!("{title} not found (to create, use If-Unmodified-Since-Version: 0, JSON 'version' 0, or PUT method)"),
            ));
        }
        if let Some(v) = version.filter(|v| *v > 0) {
            return Err(Answer::text(
                412,
                &format!("{title} not found (expected version {v})"),
            ));
        }
        return Ok(());
    };
    let Some(v) = version else {
        return Err(Answer::text(
            428,
            "Either If-Unmodified-Since-Version or object version property must be provided for key-based writes",
        ));
    };
    if found as i64 > v {
        return Err(Answer::text(
            412,
            &format!(
                "{title} has been modified since specified version (expected {v}, found {found})"
            ),
        )
        .header("Last-Modified-Version", found));
    }
    Ok(())
}

/// `PUT|PATCH|DELETE {prefix}/items/{key}`
pub(crate) fn write_single(
    st: &mut State,
    lib: LibraryId,
    req: &Recorded,
    body: &[u8],
    key: &str,
) -> Answer {
    if !is_valid_key(key) {
        return Answer::text(404, "Not found");
    }
    let State {
        libs,
        dropped_fields,
        write_tokens,
        ..
    } = st;
    let lib = libs.get_mut(&lib).unwrap();
    let view = SchemaView::new(dropped_fields);
    let idx = lib.item_index(key);
    let stored = idx.map(|i| lib.items[i]["version"].as_u64().unwrap_or(0));
    let json = if req.method != "DELETE" && !body.is_empty() {
        match decode(body) {
            Ok(v) => Some(v),
            Err(a) => return a,
        }
    } else {
        None
    };
    if let Err(a) = single_write_version("item", req, json.as_ref(), stored) {
        return a;
    }
    let original = lib.version;
    lib.version += 1;
    if req.method == "DELETE" {
        delete_item(lib, key);
        return Answer::empty(204).header("Last-Modified-Version", lib.version);
    }
    let Some(json) = json else {
        lib.version = original;
        return fail_answer(&invalid_object(&Value::Bool(false)));
    };
    let order: KeyOrder = serde_json::from_slice(body).unwrap_or_default();
    let partial = req.method == "PATCH";
    let version = lib.version;
    match write_object(lib, view, &json, &order, Some(key), partial, 0, version) {
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
            fail_answer(&f)
        }
    }
}

/// Deletes an item with its children (notes, attachments, their annotations) and files.
pub(crate) fn delete_item(lib: &mut Lib, key: &str) {
    let children: Vec<String> = lib
        .items
        .iter()
        .filter(|i| i["data"]["parentItem"] == key)
        .filter_map(|i| i["key"].as_str().map(str::to_string))
        .collect();
    for c in children {
        delete_item(lib, &c);
    }
    let before = lib.items.len();
    lib.items.retain(|i| i["key"] != key);
    lib.files.remove(key);
    lib.fulltext.remove(key);
    if lib.items.len() < before {
        lib.log_delete("items", key);
    }
}

/// `checkLibraryIfUnmodifiedSinceVersion`: `Ok(true)` when the header was given and the
/// library has not changed since; `428` when `required` and missing.
pub(crate) fn library_unmodified(
    req: &Recorded,
    lib: &Lib,
    required: bool,
) -> Result<bool, Answer> {
    let Some(v) = unmodified_since(req) else {
        if required {
            return Err(Answer::text(
                428,
                "If-Unmodified-Since-Version not provided",
            ));
        }
        return Ok(false);
    };
    if !php_is_numeric(v) {
        return Err(Answer::text(
            400,
            "Invalid If-Unmodified-Since-Version value",
        ));
    }
    let v = v.trim().parse::<f64>().unwrap_or(0.0) as u64;
    if lib.version > v {
        return Err(Answer::text(
            412,
            &format!(
                "Library has been modified since specified version (expected {v}, found {})",
                lib.version
            ),
        ));
    }
    Ok(true)
}

/// The keys of an `itemKey`/`collectionKey` parameter (`Zotero_API::parseQueryParams`: outer
/// commas trimmed, invalid keys dropped; the last occurrence counts).
pub(crate) fn key_list(req: &Recorded, name: &str) -> Vec<String> {
    let Some(v) = req
        .query
        .iter()
        .rev()
        .find(|(k, v)| k == name && !v.is_empty())
    else {
        return Vec::new();
    };
    v.1.trim_matches(',')
        .split(',')
        .filter(|k| is_valid_key(k))
        .map(str::to_string)
        .collect()
}

/// `DELETE {prefix}/items?itemKey=A,B`: the header is checked when given (not required, as
/// `ItemsController` has it), one new library version, each item deleted with its children.
pub(crate) fn delete_items(lib: &mut Lib, req: &Recorded) -> Answer {
    if let Err(a) = library_unmodified(req, lib, false) {
        return a;
    }
    lib.version += 1;
    for key in key_list(req, "itemKey") {
        delete_item(lib, &key);
    }
    Answer::empty(204).header("Last-Modified-Version", lib.version)
}

/// `POST {prefix}/collections/{key}/items` with space-separated item keys (undocumented).
pub(crate) fn add_to_collection(lib: &mut Lib, body: &[u8], coll: &str) -> Answer {
    if !is_valid_key(coll) || !lib.collections.iter().any(|c| c["key"] == coll) {
        return Answer::text(404, "Collection not found");
    }
    let text = String::from_utf8_lossy(body).into_owned();
    let mut idx = Vec::new();
    for k in text.split(' ') {
        let Some(i) = lib.items.iter().position(|i| i["key"] == k) else {
            return Answer::text(400, &format!("Item '{k}' not found in library"));
        };
        if lib.items[i]["data"]["parentItem"].is_string() {
            return Answer::text(400, "Child items cannot be added to collections directly");
        }
        idx.push(i);
    }
    lib.version += 1;
    let version = lib.version;
    for i in idx {
        let item = &mut lib.items[i];
        let colls = item["data"]["collections"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !colls.iter().any(|c| c == coll) {
            let mut colls = colls;
            colls.push(json!(coll));
            item["data"]["collections"] = Value::Array(colls);
        }
        item["version"] = json!(version);
        item["data"]["version"] = json!(version);
    }
    Answer::empty(204).header("Last-Modified-Version", version)
}

impl super::Emulator {
    /// How many distinct `Zotero-Write-Token`s successful writes have used.
    pub fn write_tokens_used(&self) -> usize {
        self.state.lock().unwrap().write_tokens.len()
    }
}

/// Another client's edit of the item named in `path` (`/users/ID/items/KEY…`,
/// `/groups/ID/items/KEY…`): a new version for the item and its library, as any write makes.
pub(crate) fn edited_elsewhere(st: &mut State, path: &str) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let Some(key) = segs.get(3).filter(|_| segs.get(2) == Some(&"items")) else {
        return;
    };
    let id = segs.get(1).and_then(|id| id.parse::<u64>().ok());
    let lib = match (segs.first(), id) {
        (Some(&"users"), Some(id)) => LibraryId::User(id),
        (Some(&"groups"), Some(id)) => LibraryId::Group(id),
        _ => return,
    };
    let Some(lib) = st.libs.get_mut(&lib) else {
        return;
    };
    let Some(i) = lib.item_index(key) else {
        return;
    };
    lib.version += 1;
    let v = lib.version;
    let item = &mut lib.items[i];
    item["version"] = json!(v);
    item["data"]["version"] = json!(v);
}

/// The library of a request path (`/users/ID/…`, `/groups/ID/…`).
pub(crate) fn library_of_path(path: &str) -> Option<LibraryId> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let id = segs.get(1).and_then(|id| id.parse::<u64>().ok())?;
    match segs.first() {
        Some(&"users") => Some(LibraryId::User(id)),
        Some(&"groups") => Some(LibraryId::Group(id)),
        _ => None,
    }
}

/// Applies an edit made "in Zotero": the fields are set, the object gets the library's next
/// version (an item also a new `dateModified` and derived `meta`). Returns the new version,
/// `None` when the library or object does not exist.
pub(crate) fn edit_in_zotero(
    st: &mut State,
    edit: &super::ZoteroEdit,
    request_lib: Option<LibraryId>,
) -> Option<u64> {
    let id = edit
        .library
        .or(request_lib.filter(|l| st.libs.contains_key(l)))
        .unwrap_or(LibraryId::USER);
    let lib = st.libs.get_mut(&id)?;
    let (list, key) = match &edit.object {
        super::EditedObject::Item(k) => (&mut lib.items, k),
        super::EditedObject::Collection(k) => (&mut lib.collections, k),
    };
    let i = list.iter().position(|o| o["key"] == key.as_str())?;
    lib.version += 1;
    let v = lib.version;
    let obj = &mut list[i];
    for (field, value) in &edit.fields {
        if let Some(d) = obj["data"].as_object_mut() {
            if value.is_null() {
                d.remove(field);
            } else {
                d.insert(field.clone(), value.clone());
            }
        }
    }
    obj["version"] = json!(v);
    obj["data"]["version"] = json!(v);
    if matches!(edit.object, super::EditedObject::Item(_)) {
        obj["data"]["dateModified"] = json!(super::util::iso_now());
        obj["meta"] = super::shape::item_meta(&obj["data"]);
    }
    Some(v)
}

impl super::Emulator {
    /// Makes an edit "in Zotero" now (see [`super::FaultKind::EditedElsewhereWith`]); returns
    /// the object's new version, `None` when it does not exist.
    pub fn edit_in_zotero(&self, edit: &super::ZoteroEdit) -> Option<u64> {
        edit_in_zotero(&mut self.state.lock().unwrap(), edit, None)
    }

    /// The deletions logged since `since`, as `GET {prefix}/deleted?since=N` lists them
    /// (`(kind, key)`, kind `items`, `collections` or `tags`).
    pub fn deleted_since(&self, lib: LibraryId, since: u64) -> Vec<(String, String)> {
        let st = self.state.lock().unwrap();
        st.libs[&lib]
            .delete_log
            .iter()
            .filter(|(_, _, v)| *v > since)
            .map(|(k, key, _)| (k.to_string(), key.clone()))
            .collect()
    }
}
