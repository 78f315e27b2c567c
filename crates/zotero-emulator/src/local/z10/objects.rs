//! Zotero 10's object writes (`server_localAPI.js` L1974–2342, `item.js` `fromJSON` with
//! `strict: false`): batches of at most 50 where each saved object gets its own version,
//! PUT/PATCH/DELETE of one object with the exact body-`version` rule, DELETE of many keys and
//! of tags, and fields the item type lacks written into Extra instead of refused.

use serde_json::{json, Map, Value};

use super::super::super::collwrites::delete_collection;
use super::super::super::libs::{Lib, LibraryId};
use super::super::super::schema::schema;
use super::super::super::shape::item_meta;
use super::super::super::util::{is_valid_key, iso_now, random_key};
use super::super::super::writes::delete_item;
use super::super::super::{Answer, Recorded, State};
use super::super::{bare, parse_int, query, text};
use super::{pretty, Data};

/// The objects behind an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Item,
    Collection,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Item => "item",
            Kind::Collection => "collection",
        }
    }
    fn list(self, lib: &Lib) -> &Vec<Value> {
        match self {
            Kind::Item => &lib.items,
            Kind::Collection => &lib.collections,
        }
    }
    fn list_mut(self, lib: &mut Lib) -> &mut Vec<Value> {
        match self {
            Kind::Item => &mut lib.items,
            Kind::Collection => &mut lib.collections,
        }
    }
    fn index(self, lib: &Lib, key: &str) -> Option<usize> {
        self.list(lib).iter().position(|o| o["key"] == key)
    }
}

/// Why `fromJSON` failed: a `ZoteroInvalidDataError` (400 everywhere) or another exception
/// (a failed batch entry, an uncaught 500 on PUT/PATCH).
enum ApplyError {
    Invalid(String),
    Other(String),
}

/// The JSON body of an object endpoint (LA L744–761).
fn body_json(data: &Data) -> Result<Value, Answer> {
    match data {
        Data::None => Err(text(400, "Empty request body")),
        Data::Json(v) => Ok(v.clone()),
        Data::Text(s) => {
            serde_json::from_str(s).map_err(|e| text(400, &format!("Invalid JSON: {e}")))
        }
        Data::Form(m) => Ok(Value::Object(m.clone())),
        Data::Bytes => Err(text(400, "Content-Type must be application/json")),
    }
}

/// `If-Unmodified-Since-Version` against the library version; `required`: 428 without it.
pub(crate) fn library_header(
    req: &Recorded,
    library_version: u64,
    required: bool,
) -> Result<Option<u64>, Answer> {
    let Some(h) = req.header("if-unmodified-since-version") else {
        if required {
            return Err(text(428, "If-Unmodified-Since-Version not provided"));
        }
        return Ok(None);
    };
    let v = parse_int(h)
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| text(400, "Invalid If-Unmodified-Since-Version value"))?;
    if library_version > v {
        return Err(text(
            412,
            &format!(
                "Library has been modified since specified version (expected {v}, found {library_version})"
            ),
        ));
    }
    Ok(Some(v))
}

fn lib_mut(st: &mut State, lib: LibraryId) -> &mut Lib {
    st.libs.get_mut(&lib).expect("the library was checked")
}

/// `POST {lib}/items` or `/collections`: a batch of at most 50.
pub(crate) fn post(
    st: &mut State,
    req: &Recorded,
    lib: LibraryId,
    kind: Kind,
    data: &Data,
) -> Answer {
    let header = match library_header(req, st.libs[&lib].version, false) {
        Ok(h) => h,
        Err(a) => return a,
    };
    let token = req.header("zotero-write-token").filter(|t| !t.is_empty());
    if let Some(t) = token {
        if t.len() < 5 || t.len() > 32 {
            return text(400, "Write token must be 5-32 characters in length");
        }
        if st.local.z10.tokens.contains(t) {
            return text(412, "Write token already used");
        }
    }
    let body = match body_json(data) {
        Ok(b) => b,
        Err(a) => return a,
    };
    let Some(entries) = body.as_array() else {
        return text(400, "Uploaded data must be a JSON array");
    };
    let plural = format!("{}s", kind.name());
    if entries.is_empty() {
        return text(400, &format!("No {plural} provided"));
    }
    if entries.len() > 50 {
        return text(413, &format!("Cannot add more than 50 {plural} at a time"));
    }
    let (mut successful, mut success, mut unchanged, mut failed) =
        (Map::new(), Map::new(), Map::new(), Map::new());
    for (i, entry) in entries.iter().enumerate() {
        let idx = i.to_string();
        let fail = |key: &str, code: u16, message: String| json!({"key": key, "code": code, "message": message});
        let Some(obj) = entry.as_object() else {
            let m = format!(
                "Invalid value for index {i} in uploaded data; expected JSON {} object",
                kind.name()
            );
            failed.insert(idx, fail("", 400, m));
            continue;
        };
        let key = obj.get("key").and_then(Value::as_str).map(str::to_string);
        let l = lib_mut(st, lib);
        if let Some(k) = &key {
            if !is_valid_key(k) {
                failed.insert(idx, fail("", 400, format!("Invalid key: '{k}'")));
                continue;
            }
            let stored = kind
                .index(l, k)
                .map(|n| kind.list(l)[n]["version"].as_u64().unwrap_or(0));
            match (obj.get("version"), stored) {
                (None, _) if header.is_none() => {
                    let m = "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes";
                    failed.insert(idx, fail(k, 428, m.to_string()));
                    continue;
                }
                (Some(v), Some(s)) if v.as_u64() != Some(s) => {
                    let m = format!("{} version mismatch: expected {v}, found {s}", kind.name());
                    failed.insert(idx, fail(k, 412, m));
                    continue;
                }
                (Some(v), None) if v.as_u64() != Some(0) => {
                    let m = format!(
                        "{} doesn't exist (expected version {v}; use 0 instead)",
                        kind.name()
                    );
                    failed.insert(idx, fail(k, 404, m));
                    continue;
                }
                _ => {}
            }
        }
        match save(l, kind, key.as_deref(), obj, Mode::Merge) {
            Ok(Saved::Changed(k, n)) => {
                successful.insert(idx.clone(), kind.list(l)[n].clone());
                success.insert(idx, json!(k));
            }
            Ok(Saved::Unchanged(k)) => {
                unchanged.insert(idx, json!(k));
            }
            Err(ApplyError::Invalid(m) | ApplyError::Other(m)) => {
                failed.insert(idx, fail(key.as_deref().unwrap_or(""), 400, m));
            }
        }
    }
    if let Some(t) = token {
        st.local.z10.tokens.insert(t.to_string());
    }
    let version = st.libs[&lib].version;
    pretty(
        200,
        &json!({"successful": successful, "success": success, "unchanged": unchanged, "failed": failed}),
    )
    .header("Last-Modified-Version", version)
}

/// `PUT`, `PATCH` or `DELETE {lib}/items/{k}` (or a collection).
pub(crate) fn single(
    st: &mut State,
    req: &Recorded,
    lib: LibraryId,
    kind: Kind,
    key: &str,
    method: &str,
    data: &Data,
) -> Answer {
    if !is_valid_key(key) {
        return text(400, &format!("Invalid key: '{key}'"));
    }
    let header = req.header("if-unmodified-since-version");
    let l = lib_mut(st, lib);
    let idx = kind.index(l, key);
    let stored = idx.map(|n| kind.list(l)[n]["version"].as_u64().unwrap_or(0));
    let header_check = |stored: u64| -> Result<(), Answer> {
        let Some(h) = header else {
            return Err(text(428, "If-Unmodified-Since-Version not provided"));
        };
        let h = parse_int(h)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| text(400, "Invalid If-Unmodified-Since-Version value"))?;
        if stored > h {
            return Err(text(
                412,
                &format!(
                    "{} has been modified since specified version (expected {h}, found {stored})",
                    kind.name()
                ),
            ));
        }
        Ok(())
    };
    if method == "DELETE" {
        if header.is_none() {
            return text(428, "If-Unmodified-Since-Version not provided");
        }
        let Some(stored) = stored else {
            return text(404, "Not found");
        };
        if let Err(a) = header_check(stored) {
            return a;
        }
        l.version += 1;
        erase(l, kind, key);
        return Answer::empty(204).header("Last-Modified-Version", l.version);
    }
    let body = match body_json(data) {
        Ok(b) => b,
        Err(a) => return a,
    };
    let Some(obj) = body.as_object() else {
        return text(400, "Uploaded data must be a JSON object");
    };
    if let Some(stored) = stored {
        match obj.get("version") {
            Some(v) if v.as_u64() != Some(stored) => {
                return text(
                    412,
                    &format!(
                        "{} version mismatch: expected {v}, found {stored}",
                        kind.name()
                    ),
                );
            }
            Some(_) => {}
            None => {
                if let Err(a) = header_check(stored) {
                    return a;
                }
            }
        }
    }
    let mode = if method == "PUT" {
        Mode::Replace
    } else {
        Mode::Merge
    };
    match save(l, kind, Some(key), obj, mode) {
        Ok(_) => Answer::empty(204).header("Last-Modified-Version", l.version),
        Err(ApplyError::Invalid(m)) => text(400, &m),
        // An uncaught exception: `server.js` answers a bare 500.
        Err(ApplyError::Other(_)) => bare(500, ""),
    }
}

/// Erases an object (and an item's children, a collection's subcollections) for good.
fn erase(l: &mut Lib, kind: Kind, key: &str) {
    match kind {
        Kind::Item => delete_item(l, key),
        Kind::Collection => delete_collection(l, key),
    }
}

/// `DELETE {lib}/items?itemKey=A,B` (or `collections?collectionKey=`).
pub(crate) fn delete_many(st: &mut State, req: &Recorded, lib: LibraryId, kind: Kind) -> Answer {
    let l = lib_mut(st, lib);
    if let Err(a) = library_header(req, l.version, true) {
        return a;
    }
    let param = format!("{}Key", kind.name());
    let Some(keys) = query(req, &param).filter(|k| !k.is_empty()) else {
        return text(400, &format!("'{param}' not provided"));
    };
    let keys: Vec<&str> = keys
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    if keys.len() > 50 {
        return text(413, "Cannot delete more than 50 objects at a time");
    }
    let found: Vec<&str> = keys
        .into_iter()
        .filter(|k| kind.index(l, k).is_some())
        .collect();
    if !found.is_empty() {
        l.version += 1;
        for k in found {
            erase(l, kind, k);
        }
    }
    Answer::empty(204).header("Last-Modified-Version", l.version)
}

/// `DELETE {lib}/tags?tag=a||b`: one transaction; items that lose a tag get its version.
pub(crate) fn delete_tags(st: &mut State, req: &Recorded, lib: LibraryId) -> Answer {
    let l = lib_mut(st, lib);
    if let Err(a) = library_header(req, l.version, true) {
        return a;
    }
    let Some(tags) = query(req, "tag").filter(|t| !t.is_empty()) else {
        return text(400, "'tag' not provided");
    };
    let names: Vec<&str> = tags
        .split("||")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if names.len() > 50 {
        return text(413, "Cannot delete more than 50 tags at a time");
    }
    let next = l.version + 1;
    let mut changed = false;
    let mut found: Vec<&str> = Vec::new();
    for item in &mut l.items {
        let Some(ts) = item["data"]["tags"].as_array_mut() else {
            continue;
        };
        let before = ts.len();
        for n in &names {
            if ts.iter().any(|t| t["tag"] == *n) && !found.contains(n) {
                found.push(n);
            }
        }
        ts.retain(|t| !names.iter().any(|n| t["tag"] == *n));
        if ts.len() < before {
            changed = true;
            item["version"] = json!(next);
            item["data"]["version"] = json!(next);
        }
    }
    if changed {
        l.version = next;
    }
    // Synced later, the deletion reaches the web's delete log.
    for n in found {
        l.log_delete("tags", n);
    }
    Answer::empty(204).header("Last-Modified-Version", l.version)
}

/// How the body meets the stored object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// PATCH and keyed POST entries: the body's top-level keys over the current JSON.
    Merge,
    /// PUT: the body alone, but `creators`, `tags` and `relations` stay when absent.
    Replace,
}

enum Saved {
    /// Saved: the key and the index in the list.
    Changed(String, usize),
    Unchanged(String),
}

/// `fromJSON` then `save`: one transaction, so one new library version when anything changed.
fn save(
    l: &mut Lib,
    kind: Kind,
    key: Option<&str>,
    body: &Map<String, Value>,
    mode: Mode,
) -> Result<Saved, ApplyError> {
    let idx = key.and_then(|k| kind.index(l, k));
    let existing = idx.and_then(|n| kind.list(l)[n]["data"].as_object().cloned());
    let mut merged = match (&existing, mode) {
        (Some(e), Mode::Merge) => e.clone(),
        (Some(e), Mode::Replace) => {
            let mut keep = Map::new();
            if kind == Kind::Item {
                for k in ["creators", "tags", "relations"] {
                    if let Some(v) = e.get(k) {
                        keep.insert(k.to_string(), v.clone());
                    }
                }
            }
            keep
        }
        (None, _) => Map::new(),
    };
    for (k, v) in body {
        merged.insert(k.clone(), v.clone());
    }
    let key = match key {
        Some(k) => k.to_string(),
        None => loop {
            let k = random_key();
            if kind.index(l, &k).is_none() {
                break k;
            }
        },
    };
    let now = iso_now();
    let mut data = match kind {
        Kind::Item => item_from_json(l, &key, &merged)?,
        Kind::Collection => collection_from_json(l, &key, &merged)?,
    };
    if let Some(old) = &existing {
        let strip = |m: &Map<String, Value>| {
            let mut m = m.clone();
            m.remove("version");
            m.remove("dateModified");
            m.remove("dateAdded");
            m
        };
        if strip(old) == strip(&data) {
            return Ok(Saved::Unchanged(key));
        }
    }
    l.version += 1;
    let version = l.version;
    data.insert("version".into(), json!(version));
    if kind == Kind::Item {
        let added = existing
            .as_ref()
            .and_then(|e| e.get("dateAdded").cloned())
            .unwrap_or_else(|| json!(now));
        data.insert("dateAdded".into(), added);
        data.insert("dateModified".into(), json!(now));
    }
    let data = Value::Object(data);
    let obj = match kind {
        Kind::Item => {
            let meta = item_meta(&data);
            let mut o = l.wrap("items", &key, version, meta, data);
            if let Some(n) = idx {
                if l.files.contains_key(&key) {
                    o["links"]["enclosure"] = l.items[n]["links"]["enclosure"].clone();
                }
            }
            o
        }
        Kind::Collection => l.wrap(
            "collections",
            &key,
            version,
            json!({"numCollections": 0, "numItems": 0}),
            data,
        ),
    };
    let list = kind.list_mut(l);
    let n = match idx {
        Some(n) => {
            list[n] = obj;
            n
        }
        None => {
            list.push(obj);
            list.len() - 1
        }
    };
    Ok(Saved::Changed(key, n))
}

/// Keys `fromJSON` handles itself rather than as fields.
const SYSTEM_KEYS: &[&str] = &[
    "key",
    "version",
    "itemType",
    "creators",
    "tags",
    "collections",
    "relations",
    "deleted",
    "parentItem",
    "dateAdded",
    "dateModified",
    "inPublications",
    "note",
    "linkMode",
    "contentType",
    "charset",
    "filename",
    "md5",
    "mtime",
    "path",
];

const ANNOTATION_TYPES: &[&str] = &["highlight", "underline", "note", "text", "image", "ink"];

/// `Zotero.Item.prototype.fromJSON(json, {strict: false})`, simplified: the type's fields in
/// schema order, other string values into Extra as `name: value` lines.
fn item_from_json(
    l: &Lib,
    key: &str,
    j: &Map<String, Value>,
) -> Result<Map<String, Value>, ApplyError> {
    let Some(t) = j.get("itemType").and_then(Value::as_str) else {
        return Err(ApplyError::Invalid("itemType property not provided".into()));
    };
    let Some(def) = schema().item_type(t) else {
        return Err(ApplyError::Invalid(format!("Unknown itemType '{t}'")));
    };
    let mut d = Map::new();
    d.insert("key".into(), json!(key));
    d.insert("version".into(), json!(0));
    d.insert("itemType".into(), json!(t));
    let child = matches!(t, "note" | "attachment" | "annotation");
    if child {
        if let Some(p) = j
            .get("parentItem")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            if l.item_index(p).is_none() {
                return Err(ApplyError::Other(format!("Parent item {p} not found")));
            }
            d.insert("parentItem".into(), json!(p));
        }
    }
    if t == "attachment" {
        let mode = j.get("linkMode").and_then(Value::as_str).unwrap_or("");
        if !super::super::super::schema::LINK_MODES.contains(&mode) {
            return Err(ApplyError::Invalid(format!("Invalid linkMode '{mode}'")));
        }
        d.insert("linkMode".into(), json!(mode));
    }
    if t == "annotation" {
        let at = j
            .get("annotationType")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !ANNOTATION_TYPES.contains(&at) {
            return Err(ApplyError::Invalid(format!(
                "Invalid annotationType '{at}'"
            )));
        }
        if let Some(c) = j.get("annotationColor").and_then(Value::as_str) {
            let ok = c.len() == 7
                && c.starts_with('#')
                && c[1..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if !ok {
                return Err(ApplyError::Invalid(format!(
                    "Invalid annotationColor '{c}'"
                )));
            }
        }
    }
    let mut extra_lines: Vec<String> = Vec::new();
    for f in &def.fields {
        let v = match j.get(f.as_str()) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        d.insert(f.clone(), json!(v));
    }
    for (k, v) in j {
        if def.has_field(k) || SYSTEM_KEYS.contains(&k.as_str()) || k.starts_with("annotation") {
            continue;
        }
        if let Value::String(s) = v {
            if !s.is_empty() {
                extra_lines.push(format!("{k}: {s}"));
            }
        }
    }
    if !extra_lines.is_empty() && def.has_field("extra") {
        let mut extra = d["extra"].as_str().unwrap_or("").to_string();
        for line in extra_lines {
            if !extra.is_empty() {
                extra.push('\n');
            }
            extra.push_str(&line);
        }
        d.insert("extra".into(), json!(extra));
    }
    if t == "annotation" {
        for (k, v) in j {
            if k.starts_with("annotation") {
                d.insert(k.clone(), v.clone());
            }
        }
    }
    if t == "attachment" {
        for k in ["contentType", "charset", "filename", "md5", "mtime", "path"] {
            if let Some(v) = j.get(k).filter(|v| !v.is_null()) {
                d.insert(k.into(), v.clone());
            }
        }
    }
    if matches!(t, "note" | "attachment") {
        let note = j.get("note").and_then(Value::as_str).unwrap_or("");
        d.insert("note".into(), json!(note));
    }
    if def.is_regular() {
        let primary = def.creator_types.first().map_or("author", String::as_str);
        let creators: Vec<Value> = j
            .get("creators")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter_map(|c| {
                        let mut c = c.as_object()?.clone();
                        let ct = c.get("creatorType").and_then(Value::as_str).unwrap_or("");
                        if !def.creator_types.iter().any(|x| x == ct) {
                            c.insert("creatorType".into(), json!(primary));
                        }
                        Some(Value::Object(c))
                    })
                    .collect()
            })
            .unwrap_or_default();
        d.insert("creators".into(), json!(creators));
    }
    let tags = j
        .get("tags")
        .cloned()
        .filter(Value::is_array)
        .unwrap_or(json!([]));
    d.insert("tags".into(), tags);
    // Top-level items (standalone notes and attachments too) can be in collections.
    if !d.contains_key("parentItem") {
        let cols: Vec<Value> = j
            .get("collections")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for c in &cols {
            let ck = c.as_str().unwrap_or("");
            if !l.collections.iter().any(|x| x["key"] == ck) {
                return Err(ApplyError::Other(format!(
                    "Collection {ck} not found for item {key}"
                )));
            }
        }
        d.insert("collections".into(), json!(cols));
    }
    let relations = j
        .get("relations")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    d.insert("relations".into(), relations);
    if j.get("deleted").is_some_and(truthy) {
        d.insert("deleted".into(), json!(true));
    }
    if j.get("inPublications").is_some_and(truthy) {
        d.insert("inPublications".into(), json!(true));
    }
    for k in ["dateAdded", "dateModified"] {
        if let Some(v) = j.get(k) {
            d.insert(k.into(), v.clone());
        }
    }
    Ok(d)
}

/// JavaScript truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// `Zotero.Collection.prototype.fromJSON`.
fn collection_from_json(
    l: &Lib,
    key: &str,
    j: &Map<String, Value>,
) -> Result<Map<String, Value>, ApplyError> {
    let Some(name) = j
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return Err(ApplyError::Other(
            "'name' property not provided for collection".into(),
        ));
    };
    let parent = match j.get("parentCollection") {
        Some(Value::String(p)) if !p.is_empty() => {
            if !l.collections.iter().any(|c| c["key"] == p.as_str()) || p == key {
                return Err(ApplyError::Other(format!(
                    "Parent collection {p} not found"
                )));
            }
            json!(p)
        }
        _ => json!(false),
    };
    let relations = j
        .get("relations")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    let mut d = Map::new();
    d.insert("key".into(), json!(key));
    d.insert("version".into(), json!(0));
    d.insert("name".into(), json!(name));
    d.insert("parentCollection".into(), parent);
    d.insert("relations".into(), relations);
    Ok(d)
}
