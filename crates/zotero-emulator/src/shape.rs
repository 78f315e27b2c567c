//! The shape of stored item JSON: every property the server's JSON has for the item type,
//! creators as the server stores them, and the derived `meta` (`Zotero_Item::toJSON`,
//! `toResponseJSON`, `getCreatorSummary` in zotero/dataserver).

use serde_json::{json, Map, Value};

use super::schema::{schema, ItemType};
use super::validate::{isset, php_str};

/// A JSON scalar as the string the server stores (trimmed; null and false are empty).
pub(crate) fn field_value(v: &Value) -> String {
    php_str(v).trim().to_string()
}

/// PHP `empty()` of a JSON value.
pub(crate) fn is_empty(v: &Value) -> bool {
    matches!(v, Value::Null | Value::Bool(false))
        || *v == json!(0)
        || *v == json!("")
        || *v == json!("0")
}

/// Creators as stored: the first nameless one ends the list; types the item type lacks become
/// its primary type.
pub(crate) fn creators(list: &[Value], t: ItemType) -> Vec<Value> {
    let mut out = Vec::new();
    for c in list {
        let ct = php_str(&c["creatorType"]);
        let ct = if t.creator_types().contains(&ct) {
            ct
        } else {
            t.primary_creator_type().to_string()
        };
        if isset(c.as_object().unwrap_or(&Map::new()), "name") {
            let name = field_value(&c["name"]);
            if name.is_empty() {
                break;
            }
            out.push(json!({"creatorType": ct, "name": name}));
        } else {
            let (first, last) = (field_value(&c["firstName"]), field_value(&c["lastName"]));
            if first.is_empty() && last.is_empty() {
                break;
            }
            out.push(json!({"creatorType": ct, "firstName": first, "lastName": last}));
        }
    }
    out
}

/// Every property the server's JSON has for this type (`toJSON` with empty values included);
/// fields the type lacks go.
pub(crate) fn normalize(d: &mut Map<String, Value>, t: ItemType) {
    d.retain(|k, _| !schema().is_field(k) || t.has_field(k));
    for f in t.fields() {
        d.entry(f).or_insert(json!(""));
    }
    let child = d.contains_key("parentItem");
    if t.is_regular() {
        d.entry("creators").or_insert(json!([]));
    }
    d.entry("tags").or_insert(json!([]));
    d.entry("relations").or_insert(json!({}));
    if child {
        d.remove("collections");
    } else {
        d.entry("collections").or_insert(json!([]));
    }
    match t.name() {
        "note" => {
            d.entry("note").or_insert(json!(""));
        }
        "attachment" => {
            let lm = php_str(d.get("linkMode").unwrap_or(&Value::Null));
            d.entry("contentType").or_insert(json!(""));
            if lm == "embedded_image" {
                for k in [
                    "title",
                    "url",
                    "accessDate",
                    "tags",
                    "collections",
                    "relations",
                    "note",
                    "charset",
                ] {
                    d.remove(k);
                }
            } else {
                d.entry("note").or_insert(json!(""));
                d.entry("charset").or_insert(json!(""));
            }
            if lm.starts_with("imported_") || lm == "embedded_image" {
                d.entry("filename").or_insert(json!(""));
                d.entry("md5").or_insert(Value::Null);
                d.entry("mtime").or_insert(Value::Null);
            } else if lm == "linked_file" {
                d.entry("path").or_insert(json!(""));
            }
        }
        _ => {}
    }
}

/// `meta` of a stored item: `creatorSummary` and `parsedDate` for regular items.
pub(crate) fn item_meta(d: &Value) -> Value {
    let mut meta = json!({});
    let Some(t) = schema().item_type(d["itemType"].as_str().unwrap_or("")) else {
        return meta;
    };
    if !t.is_regular() {
        return meta;
    }
    let creators = d["creators"].as_array().cloned().unwrap_or_default();
    let primary = t
        .creator_types
        .first()
        .map(String::as_str)
        .unwrap_or("author");
    for ct in [primary, "editor", "contributor"] {
        let names: Vec<String> = creators
            .iter()
            .filter(|c| c["creatorType"] == ct)
            .map(|c| {
                php_str(if c["name"].is_string() {
                    &c["name"]
                } else {
                    &c["lastName"]
                })
            })
            .collect();
        let summary = match names.len() {
            0 => continue,
            1 => names[0].clone(),
            2 => format!("{} and {}", names[0], names[1]),
            _ => format!("{} et al.", names[0]),
        };
        meta["creatorSummary"] = json!(summary);
        break;
    }
    // `date` or the type's field based on it.
    let date = ["date", "dateDecided", "dateEnacted", "issueDate"]
        .iter()
        .find_map(|f| d[*f].as_str().filter(|s| !s.is_empty()));
    if let Some(p) = date.and_then(super::dates::parse_date) {
        meta["parsedDate"] = json!(p);
    }
    meta
}
