//! Applying one validated item JSON object to the library, as `Zotero_Items::updateFromJSON`
//! and `Zotero_Item::save` do: field checks per item type, creators, tags, parent and
//! collection checks, then the stored item with its new version and derived `meta`.

use serde_json::{json, Map, Value};

use super::libs::Lib;
use super::schema::{schema, SchemaView};
use super::shape::{creators, field_value, is_empty, item_meta, normalize};
use super::util::{is_valid_key, iso_now, php_int, random_key, to_iso};
use super::validate::{
    check_key_and_version, isset, parse_iso8601, php_str, self_parent, validate_item, Fail,
    KeyOrder,
};

/// What a write did to one object.
pub(crate) enum Written {
    /// Stored (created or changed): the index in `Lib::items`.
    Changed(usize),
    /// Nothing to change: the key.
    Unchanged(String),
}

/// Validates `raw` and writes it at library version `version`. `url_key` is the key of a
/// single-object request; `partial` is PATCH semantics (multi-object POSTs are partial too);
/// `require` is the version requirement of `check_key_and_version`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_object(
    lib: &mut Lib,
    view: SchemaView,
    raw: &Value,
    order: &KeyOrder,
    url_key: Option<&str>,
    partial: bool,
    require: u8,
    version: u64,
) -> Result<Written, Fail> {
    let (json, order) = match raw.get("data").filter(|d| d.is_object()) {
        Some(d) => (d, KeyOrder::default()),
        None => (raw, order.clone()),
    };
    let Some(obj) = json.as_object() else {
        return Err(invalid_object(json));
    };
    let mut json = obj.clone();
    let key = match json.get("key").and_then(Value::as_str) {
        Some(k) => Some(k.to_string()),
        None => url_key.map(str::to_string),
    };
    let idx = key.as_deref().and_then(|k| lib.item_index(k));
    let stored_version = idx.map(|i| lib.items[i]["version"].as_u64().unwrap_or(0));
    check_key_and_version("item", &json, url_key, stored_version, require)?;
    let existing = idx.map(|i| lib.items[i]["data"].clone());
    let exists = existing.is_some();
    validate_item(
        view,
        &mut json,
        &order,
        existing.as_ref(),
        partial && exists,
    )?;

    let key = match key {
        Some(k) => k,
        None => loop {
            let k = random_key();
            if lib.item_index(&k).is_none() {
                break k;
            }
        },
    };
    super::annotation::check_fields(lib, &json, &order, existing.as_ref(), &key)?;
    let now = iso_now();
    let mut data = apply(
        view,
        &json,
        &order,
        existing.as_ref(),
        partial && exists,
        &key,
        &now,
    )?;
    save_checks(lib, &data, &key)?;
    super::annotation::on_save(lib, &mut data, !exists)?;

    if let Some(old) = &existing {
        let mut cmp_old = old.clone();
        let mut cmp_new = Value::Object(data.clone());
        for v in [&mut cmp_old, &mut cmp_new] {
            if let Some(m) = v.as_object_mut() {
                m.remove("version");
                m.remove("dateModified");
            }
        }
        // A `dateModified` sent back unchanged counts as not provided.
        let new_date = data
            .get("dateModified")
            .filter(|d| **d != old["dateModified"]);
        let date_provided = json.contains_key("dateModified") && new_date.is_some();
        if cmp_old == cmp_new && !date_provided {
            return Ok(Written::Unchanged(key));
        }
        let only_membership = changed_keys(&cmp_old, &cmp_new)
            .iter()
            .all(|k| matches!(k.as_str(), "collections" | "relations" | "inPublications"));
        if !date_provided {
            let keep = if only_membership {
                old["dateModified"].clone()
            } else {
                json!(now)
            };
            data.insert("dateModified".into(), keep);
        }
        if old.get("md5") != data.get("md5") {
            // A new hash detaches the stored file (`Zotero_Storage::deleteFileItemInfo`).
            lib.files.remove(&key);
        }
    }
    data.insert("version".into(), json!(version));
    let data = Value::Object(data);
    let meta = item_meta(&data);
    // Saved again: out of the delete log (`Zotero_Item::save`; `Zotero_Tag::save` for tags
    // that are new in the library).
    lib.delete_log.retain(|(k, x, _)| {
        let tag = *k == "tags"
            && data["tags"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t["tag"] == x.as_str()));
        !(tag || *k == "items" && *x == key)
    });
    let mut item = lib.wrap("items", &key, version, meta, data);
    if let Some(i) = idx {
        if lib.files.contains_key(&key) {
            item["links"]["enclosure"] = lib.items[i]["links"]["enclosure"].clone();
        }
        lib.items[i] = item;
        Ok(Written::Changed(i))
    } else {
        lib.items.push(item);
        Ok(Written::Changed(lib.items.len() - 1))
    }
}

/// `Invalid item object (found array '[...]')`
pub(crate) fn invalid_object(v: &Value) -> Fail {
    let ty = match v {
        Value::Null => "NULL",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    Fail::bad(format!("Invalid item object (found {ty} '{v}')"))
}

fn changed_keys(a: &Value, b: &Value) -> Vec<String> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Vec::new();
    };
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Builds the new `data` of the item (every field of its type, like the server's JSON).
fn apply(
    view: SchemaView,
    json: &Map<String, Value>,
    order: &KeyOrder,
    existing: Option<&Value>,
    partial: bool,
    key: &str,
    now: &str,
) -> Result<Map<String, Value>, Fail> {
    let mut d: Map<String, Value> = match existing.and_then(Value::as_object) {
        Some(e) if partial => e.clone(),
        Some(e) => {
            // PUT: the object is replaced; system and storage properties stay.
            let keep = [
                "itemType",
                "dateAdded",
                "dateModified",
                "linkMode",
                "md5",
                "mtime",
                "parentItem",
            ];
            e.iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }
        None => Map::new(),
    };
    let type_name = json
        .get("itemType")
        .map(php_str)
        .or_else(|| d.get("itemType").map(php_str))
        .unwrap_or_default();
    let t = view
        .item_type(&type_name)
        .ok_or_else(|| Fail::bad(format!("'{type_name}' is not a valid itemType")))?;
    let old_type = d.get("itemType").map(php_str);
    if old_type.as_deref().is_some_and(|o| o != type_name) {
        // A type change keeps only the fields and creator types the new type has.
        d.retain(|k, _| !schema().is_field(k) || t.has_field(k));
        if let Some(Value::Array(cs)) = d.get_mut("creators") {
            for c in cs {
                if !t.creator_types().contains(&php_str(&c["creatorType"])) {
                    c["creatorType"] = json!("contributor");
                }
            }
        }
    }
    d.insert("itemType".into(), json!(type_name));
    d.insert("key".into(), json!(key));
    if let Some(lm) = json.get("linkMode") {
        d.insert("linkMode".into(), json!(php_str(lm).to_lowercase()));
    }
    match json.get("parentItem") {
        Some(Value::String(p)) => {
            d.insert("parentItem".into(), json!(p));
        }
        Some(Value::Bool(false)) => {
            d.remove("parentItem");
        }
        _ => {}
    }
    let link_mode = php_str(d.get("linkMode").unwrap_or(&Value::Null));
    let stored_file = link_mode.starts_with("imported_") || link_mode == "embedded_image";

    for k in order.keys(json) {
        let val = &json[k];
        match k {
            "key" | "version" | "itemKey" | "parentItem" | "itemVersion" | "itemType"
            | "deleted" | "inPublications" | "linkMode" => {}
            "creators" => {
                let list = val.as_array().cloned().unwrap_or_default();
                let had = d
                    .get("creators")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty());
                if list.is_empty() && !had {
                    continue;
                }
                d.insert("creators".into(), Value::Array(creators(&list, t)));
            }
            "tags" => {
                let mut tags: Vec<Value> = Vec::new();
                for tag in val.as_array().into_iter().flatten() {
                    let name = field_value(&tag["tag"]);
                    let ty = tag.get("type").map(|v| php_int(&php_str(v))).unwrap_or(0);
                    let t = if ty != 0 {
                        json!({"tag": name, "type": ty})
                    } else {
                        json!({"tag": name})
                    };
                    if !name.is_empty() && !tags.contains(&t) {
                        tags.push(t);
                    }
                }
                d.insert("tags".into(), Value::Array(tags));
            }
            "collections" => {
                let mut colls: Vec<Value> = Vec::new();
                for c in val.as_array().into_iter().flatten() {
                    if !colls.contains(c) {
                        colls.push(c.clone());
                    }
                }
                d.insert("collections".into(), Value::Array(colls));
            }
            "relations" => {
                let rel = if val.is_object() {
                    val.clone()
                } else {
                    json!({})
                };
                d.insert("relations".into(), rel);
            }
            "note" | "contentType" | "charset" | "path" => {
                d.insert(k.into(), json!(php_str(val)));
            }
            "filename" => {
                let f = php_str(val);
                let drive = f.len() >= 3
                    && f.as_bytes()[0].is_ascii_alphabetic()
                    && f.as_bytes()[1] == b':'
                    && matches!(f.as_bytes()[2], b'\\' | b'/');
                if stored_file && (f.contains('/') || drive || f.starts_with("\\\\")) {
                    return Err(Fail::bad(format!(
                        "Stored-file filename '{f}' cannot contain a directory path"
                    )));
                }
                d.insert("filename".into(), json!(f));
            }
            "md5" => {
                if !is_empty(val) {
                    d.insert("md5".into(), json!(php_str(val)));
                }
            }
            "mtime" => {
                if !is_empty(val) {
                    d.insert("mtime".into(), json!(php_int(&php_str(val))));
                }
            }
            "lastRead" => {
                if is_empty(val) {
                    d.remove("lastRead");
                } else {
                    d.insert("lastRead".into(), val.clone());
                }
            }
            "dateAdded" | "dateModified" => {
                let s = php_str(val);
                d.insert(
                    k.into(),
                    json!(parse_iso8601(&s).unwrap_or_else(|| to_iso(&s))),
                );
            }
            _ if k.starts_with("annotation") => {
                d.insert(k.into(), val.clone());
            }
            _ => {
                let mut v = field_value(val);
                if k == "accessDate" && !v.is_empty() {
                    v = if v == "CURRENT_TIMESTAMP" {
                        now.to_string()
                    } else {
                        parse_iso8601(&v).unwrap_or_else(|| to_iso(&v))
                    };
                }
                if !v.is_empty() && !t.has_field(k) {
                    return Err(Fail::bad(format!(
                        "'{k}' is not a valid field for type '{}'",
                        t.name()
                    )));
                }
                d.insert(k.into(), json!(v));
            }
        }
    }
    if !partial && d.contains_key("parentItem") && !isset(json, "parentItem") {
        d.remove("parentItem");
    }
    if json.contains_key("deleted") || !partial {
        if json.get("deleted").is_some_and(|v| !is_empty(v)) {
            d.insert("deleted".into(), json!(1));
        } else {
            d.remove("deleted");
        }
    }
    if json.contains_key("inPublications") || !partial {
        if json.get("inPublications").is_some_and(|v| !is_empty(v)) {
            d.insert("inPublications".into(), json!(true));
        } else {
            d.remove("inPublications");
        }
    }
    if !d.contains_key("dateAdded") {
        d.insert("dateAdded".into(), json!(now));
    }
    if !d.contains_key("dateModified") {
        d.insert("dateModified".into(), json!(now));
    }
    normalize(&mut d, t);
    Ok(d)
}

/// The checks `Zotero_Item::save` makes: the parent item and the collections must exist.
fn save_checks(lib: &Lib, d: &Map<String, Value>, key: &str) -> Result<(), Fail> {
    let item_type = php_str(d.get("itemType").unwrap_or(&Value::Null));
    let embedded = php_str(d.get("linkMode").unwrap_or(&Value::Null)) == "embedded_image";
    if let Some(p) = d.get("parentItem").and_then(Value::as_str) {
        let Some(parent) = lib.items.iter().find(|i| i["key"] == p) else {
            let mut f = Fail::new(409, format!("Parent item {p} not found"));
            f.data = Some(json!({"parentItem": p}));
            return Err(f);
        };
        let pd = &parent["data"];
        let p_type = php_str(&pd["itemType"]);
        let p_regular = !matches!(p_type.as_str(), "note" | "attachment" | "annotation");
        let not_regular = || {
            let mut f = Fail::new(409, "Parent item cannot be a note or attachment");
            f.data = Some(json!({"parentItem": p}));
            f
        };
        if item_type == "attachment" {
            if p == key {
                return self_parent(p);
            }
            if pd["parentItem"].is_string() && !embedded {
                return Err(Fail::bad(format!("Parent item {p} cannot be a child item")));
            }
            if !(p_regular || (embedded && p_type == "note")) {
                return Err(not_regular());
            }
        } else if item_type == "note" && !p_regular {
            return Err(not_regular());
        }
    } else if embedded {
        return Err(Fail::bad(
            "Embedded-image attachment must have a parent item",
        ));
    }
    if embedded && !php_str(d.get("contentType").unwrap_or(&Value::Null)).starts_with("image/") {
        return Err(Fail::bad(
            "Embedded-image attachment must have an image content type",
        ));
    }
    for c in d
        .get("collections")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let c = php_str(c);
        if !is_valid_key(&c) || !lib.collections.iter().any(|x| x["key"] == c.as_str()) {
            let mut f = Fail::new(409, format!("Collection {c} not found"));
            f.data = Some(json!({"collection": c}));
            return Err(f);
        }
    }
    Ok(())
}
