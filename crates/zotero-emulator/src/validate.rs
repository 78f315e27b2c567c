//! Validation of item JSON before a write, in the order and with the messages of the real
//! server (`Zotero_API::processJSONObjectKey`, `checkJSONObjectVersion` and
//! `Zotero_Items::validateJSONItem` in zotero/dataserver).

use serde_json::{json, Map, Value};

pub(crate) use super::dates::parse_iso8601;
pub(crate) use super::fail::{isset, php_str, Fail};
pub(crate) use super::keyorder::KeyOrder;
use super::props::{check_creators, check_relations};
use super::schema::{SchemaView, LINK_MODES};
use super::util::{is_sql_date, is_sql_datetime, is_valid_key, php_is_numeric};

/// `processJSONObjectKey` + `checkJSONObjectVersion`. `stored_version` is the version of the
/// existing item with that key, if any. `require`: 0 = no version needed, 1 = needed when the
/// JSON names a key, 2 = always needed (single-object writes).
pub(crate) fn check_key_and_version(
    kind: &str,
    json: &Map<String, Value>,
    url_key: Option<&str>,
    stored_version: Option<u64>,
    require: u8,
) -> Result<(), Fail> {
    if let Some(k) = json.get("key").filter(|v| !v.is_null()) {
        let Some(k) = k.as_str() else {
            return Err(Fail::bad("'key' must be a string"));
        };
        if !is_valid_key(k) {
            return Err(Fail::bad(format!("'{k}' is not a valid {kind} key")));
        }
        if url_key.is_some_and(|u| u != k) {
            return Err(Fail::new(
                409,
                format!("'key' property in JSON does not match {kind} key of request"),
            ));
        }
    }
    if isset(json, &format!("{kind}Key")) {
        return Err(Fail::bad(format!("'{kind}Key' property is now 'key'")));
    }
    if isset(json, &format!("{kind}Version")) {
        return Err(Fail::bad(format!(
            "'{kind}Version' property is now 'version'"
        )));
    }
    let title = ucwords(kind);
    if let Some(v) = json.get("version").filter(|v| !v.is_null()) {
        let numeric = v.is_number() || v.as_str().is_some_and(php_is_numeric);
        if !numeric {
            return Err(Fail::bad("'version' must be an integer"));
        }
        if !isset(json, "key") && url_key.is_none() {
            return Err(Fail::bad(format!(
                "'version' is valid only if {kind} key is provided"
            )));
        }
        let v = v
            .as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .unwrap_or(0.0) as u64;
        let found = stored_version.unwrap_or(0);
        if found > v {
            return Err(Fail::new(
                412,
                format!(
                    "{title} has been modified since specified version (expected {v}, found {found})"
                ),
            ));
        }
        if v > 0 && stored_version.is_none() {
            return Err(Fail::new(
                404,
                format!("{title} doesn't exist (expected version {v}; use 0 instead)"),
            ));
        }
    } else if require == 1 && isset(json, "key") {
        return Err(Fail::new(
            428,
            "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes",
        ));
    } else if require == 2 {
        return Err(Fail::new(
            428,
            format!("Either If-Unmodified-Since-Version or 'version' property must be provided for single-{kind} writes"),
        ));
    }
    Ok(())
}

/// PHP `ucwords` of an object type: `Item`, `Collection`.
pub(crate) fn ucwords(kind: &str) -> String {
    let mut c = kind.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `validateJSONItem` against the emulator's schema. `existing` is the stored `data` of the
/// item being updated (`None` for a new one). May set `parentItem: false` (the server's
/// implicit un-parenting for PATCH).
pub(crate) fn validate_item(
    view: SchemaView,
    json: &mut Map<String, Value>,
    order: &KeyOrder,
    existing: Option<&Value>,
    partial: bool,
) -> Result<(), Fail> {
    let is_new = existing.is_none_or(|e| e["version"].as_u64().unwrap_or(0) == 0);
    let mut is_child = existing.is_some_and(|e| e["parentItem"].is_string());
    let parent_false = json.get("parentItem") == Some(&Value::Bool(false));
    if is_child {
        // PATCH with `parentItem: false`, or PUT without a parent.
        if parent_false || (!partial && !isset(json, "parentItem")) {
            is_child = false;
        } else if partial
            && !isset(json, "parentItem")
            && json
                .get("collections")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        {
            json.insert("parentItem".into(), Value::Bool(false));
            is_child = false;
        }
    } else if isset(json, "parentItem") && !parent_false {
        is_child = true;
    }

    let required: &[&str] = if partial {
        &[]
    } else if json.get("itemType").and_then(Value::as_str) == Some("attachment") {
        &["linkMode"]
    } else if is_new {
        &["itemType"]
    } else if is_child {
        &["itemType", "tags", "relations"]
    } else {
        &["itemType", "tags", "relations", "collections"]
    };
    for p in required {
        if !isset(json, p) {
            return Err(Fail::bad(format!("'{p}' property not provided")));
        }
    }
    let item_type = match json.get("itemType") {
        None if partial => existing
            .map(|e| php_str(&e["itemType"]))
            .unwrap_or_default(),
        Some(v) => php_str(v),
        None => String::new(),
    };
    let link_mode = json
        .get("linkMode")
        .map(|v| php_str(v).to_lowercase())
        .or_else(|| existing.map(|e| php_str(&e["linkMode"])))
        .unwrap_or_default();

    for key in order.keys(json) {
        let val = &json[key];
        check_property(
            view, json, key, val, is_new, is_child, &item_type, &link_mode, existing,
        )?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn check_property(
    view: SchemaView,
    json: &Map<String, Value>,
    key: &str,
    val: &Value,
    is_new: bool,
    is_child: bool,
    item_type: &str,
    link_mode: &str,
    existing: Option<&Value>,
) -> Result<(), Fail> {
    let bad = |m: String| Err(Fail::bad(m));
    match key {
        "key" | "version" => {}
        "itemKey" | "itemVersion" => return bad(format!("Invalid property '{key}'")),
        "parentItem" => {
            if *val != Value::Bool(false) {
                if !val.as_str().is_some_and(is_valid_key) {
                    return bad("'parentItem' must be a valid item key or false".into());
                }
                if json.get("key") == Some(val) {
                    return self_parent(&php_str(val));
                }
            }
        }
        "itemType" => {
            let Some(t) = val.as_str() else {
                return bad("'itemType' must be a string".into());
            };
            if view.item_type(t).is_none() {
                return bad(format!("'{t}' is not a valid itemType"));
            }
            let has_parent = json.get("parentItem").is_some_and(|p| {
                !matches!(p, Value::Null | Value::Bool(false)) && p.as_str() != Some("")
            });
            if (is_child || has_parent) && !matches!(t, "note" | "attachment" | "annotation") {
                return bad("Child item must be note, attachment, or annotation".into());
            }
        }
        "tags" => {
            let Some(tags) = val.as_array() else {
                return bad("'tags' property must be an array".into());
            };
            for tag in tags {
                let Some(tag) = tag.as_object() else {
                    return bad("Tag must be an object".into());
                };
                for (k, v) in tag {
                    match k.as_str() {
                        "tag" if v.is_array() || v.is_object() || v.is_null() => {
                            return bad("Invalid tag name".into())
                        }
                        "type" if !(v.is_number() || v.as_str().is_some_and(php_is_numeric)) => {
                            return bad(format!("Invalid tag type '{}'", php_str(v)))
                        }
                        "tag" | "type" => {}
                        _ => return bad(format!("Invalid tag property '{k}'")),
                    }
                }
                if tag.is_empty() {
                    return bad("Tag object is empty".into());
                }
            }
        }
        "collections" => {
            let Some(colls) = val.as_array() else {
                return bad("'collections' property must be an array".into());
            };
            if is_child && !colls.is_empty() {
                return bad("Child items cannot be assigned to collections".into());
            }
            for c in colls {
                if !c.as_str().is_some_and(is_valid_key) {
                    return bad(format!("'{}' is not a valid collection key", php_str(c)));
                }
            }
        }
        "relations" => check_relations(val)?,
        "creators" => check_creators(val, is_new, item_type)?,
        "note" => {
            if !matches!(item_type, "note" | "attachment") {
                return bad("'note' property is valid only for note and attachment items".into());
            }
            if item_type == "attachment" && link_mode == "embedded_image" && *val != json!("") {
                return bad("'note' property is not valid for embedded images".into());
            }
        }
        "attachments" | "notes" => return bad(format!("'{key}' property is no longer supported")),
        "deleted" => {
            let ok = val.is_boolean() || *val == json!(0) || *val == json!(1);
            if !ok {
                // Thrown without an error code: the server answers 500.
                return Err(Fail::new(500, "An error occurred"));
            }
        }
        "inPublications" => {
            let truthy = !matches!(val, Value::Null | Value::Bool(false))
                && *val != json!(0)
                && *val != json!("")
                && *val != json!("0");
            if truthy {
                if !is_child && matches!(item_type, "note" | "attachment") {
                    return bad(
                        "Top-level notes and attachments cannot be added to My Publications".into(),
                    );
                }
                if item_type == "attachment" && link_mode == "linked_file" {
                    return bad("Linked-file attachments cannot be added to My Publications".into());
                }
            }
        }
        "linkMode" => {
            let lm = php_str(val).to_lowercase();
            if !LINK_MODES.contains(&lm.as_str()) {
                return bad(format!("'{}' is not a valid linkMode", php_str(val)));
            }
            if !is_new && existing.is_some_and(|e| e["linkMode"].as_str() != Some(lm.as_str())) {
                return bad("Cannot change attachment linkMode".into());
            }
        }
        "contentType" | "charset" | "filename" | "md5" | "mtime" | "path" => {
            if item_type != "attachment" {
                return bad(format!("'{key}' is valid only for attachment items"));
            }
            let stored = link_mode.starts_with("imported_") || link_mode == "embedded_image";
            if matches!(key, "filename" | "md5" | "mtime") && !stored {
                return bad(format!(
                    "'{key}' is valid only for imported and embedded-image attachments"
                ));
            }
            if key == "path" && link_mode != "linked_file" {
                return bad("'path' is valid only for linked file attachment items".into());
            }
            if link_mode == "embedded_image" && key == "charset" && *val != json!("") {
                return bad("'charset' is not valid for embedded images".into());
            }
            if key == "md5" {
                let s = php_str(val);
                let is_hash =
                    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
                if !s.is_empty() && s != "0" && !is_hash {
                    return bad(format!("'{s}' is not a valid MD5 hash"));
                }
            }
        }
        "lastRead" => {
            if item_type != "attachment" {
                return bad("'lastRead' is valid only for attachment items".into());
            }
            let empty = matches!(val, Value::Null | Value::Bool(false)) || *val == json!("");
            if !(empty || val.is_i64() || val.is_u64()) {
                return bad("'lastRead' must be a Unix timestamp integer".into());
            }
        }
        k if k.starts_with("annotation") && k.len() > 10 => {
            if item_type != "annotation" {
                return bad(format!("'{key}' is valid only for annotation items"));
            }
            // The type the item has (the JSON's for a new item): only these take text.
            let annotation_type = match existing.filter(|_| !is_new) {
                Some(e) => php_str(&e["annotationType"]),
                None => json.get("annotationType").map(php_str).unwrap_or_default(),
            };
            if key == "annotationText"
                && !matches!(annotation_type.as_str(), "highlight" | "underline")
            {
                return bad(format!(
                    "'{key}' can only be set for highlight and underline annotations"
                ));
            }
        }
        "accessDate" => {
            let s = php_str(val);
            let ok = *val == json!("")
                || s == "CURRENT_TIMESTAMP"
                || is_sql_date(&s)
                || is_sql_datetime(&s)
                || parse_iso8601(&s).is_some();
            if !ok {
                return bad(format!(
                    "'accessDate' must be in ISO 8601 or UTC 'YYYY-MM-DD[ hh:mm:ss]' format or 'CURRENT_TIMESTAMP' ({s})"
                ));
            }
        }
        "dateAdded" | "dateModified" => {
            let s = php_str(val);
            if !is_sql_datetime(&s) && parse_iso8601(&s).is_none() {
                return bad(format!(
                    "'{key}' must be in ISO 8601 or UTC 'YYYY-MM-DD hh:mm:ss' format ({s})"
                ));
            }
        }
        _ => {
            if !view.is_field(key) {
                return bad(format!("Invalid property '{key}'"));
            }
            if val.is_array() {
                return bad(format!("Unexpected array for property '{key}'"));
            }
        }
    }
    Ok(())
}

/// The server's message for an item named as its own parent (`Zotero_Errors::parseException`).
pub(crate) fn self_parent<T>(key: &str) -> Result<T, Fail> {
    Err(Fail::bad(format!(
        "Item {key} cannot be a child of itself\n\nCheck your database integrity from the \
         Advanced \u{2192} Files and Folders pane of the Zotero preferences."
    )))
}
