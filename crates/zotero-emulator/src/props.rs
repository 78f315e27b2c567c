//! Checks of the `relations` and `creators` properties of item JSON
//! (`Zotero_Items::validateJSONItem` in zotero/dataserver).

use serde_json::{Map, Value};

use super::fail::{isset, php_str, Fail};
use super::schema::schema;

const PREDICATES: &[&str] = &[
    "owl:sameAs",
    "dc:replaces",
    "dc:relation",
    "mendeleyDB:documentUUID",
    "mendeleyDB:remoteDocumentUUID",
    "mendeleyDB:fileHash",
    "mendeleyDB:annotationUUID",
    "mendeleyDB:relatedDocumentUUID",
    "mendeleyDB:relatedRemoteDocumentUUID",
    "mendeleyDB:relatedFileHash",
    "mendeleyDB:notebookUUID",
];

pub(crate) fn check_relations(val: &Value) -> Result<(), Fail> {
    let empty_array = val.as_array().is_some_and(Vec::is_empty);
    let Some(obj) = val.as_object() else {
        if empty_array {
            return Ok(());
        }
        return Err(Fail::bad("'relations' property must be an object"));
    };
    for (pred, object) in obj {
        if !PREDICATES.contains(&pred.as_str()) {
            return Err(Fail::bad(format!("Unsupported predicate '{pred}'")));
        }
        if pred.starts_with("mendeleyDB:") {
            continue;
        }
        let uris: Vec<&Value> = match object {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for uri in uris {
            if !uri.as_str().is_some_and(|u| is_object_uri(u, "items")) {
                return Err(Fail::bad(
                    "'relations' values currently must be Zotero item URIs",
                ));
            }
        }
    }
    Ok(())
}

/// `^http://zotero.org/(users|groups)/[0-9]+/(publications/)?{kind}/[A-Z0-9]{8}$`, with
/// `kind` `items` or `collections`: the dataserver's object URI patterns.
pub(crate) fn is_object_uri(s: &str, kind: &str) -> bool {
    let Some(rest) = s.strip_prefix("http://zotero.org/") else {
        return false;
    };
    let Some(rest) = rest
        .strip_prefix("users/")
        .or_else(|| rest.strip_prefix("groups/"))
    else {
        return false;
    };
    let Some((id, rest)) = rest.split_once('/') else {
        return false;
    };
    let rest = rest.strip_prefix("publications/").unwrap_or(rest);
    let Some(key) = rest.strip_prefix(kind).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && key.len() == 8
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub(crate) fn check_creators(val: &Value, is_new: bool, item_type: &str) -> Result<(), Fail> {
    let Some(creators) = val.as_array() else {
        return Err(Fail::bad("'creators' property must be an array"));
    };
    let blank = |c: &Value, k: &str| c[k].as_str().is_none_or(|s| s.trim().is_empty());
    for c in creators {
        if c.get("creatorType").is_none_or(Value::is_null) {
            return Err(Fail::bad("creator object must contain 'creatorType'"));
        }
        if blank(c, "name") && blank(c, "firstName") && blank(c, "lastName") {
            // The template's single nameless creator is ignored on creation.
            if creators.len() == 1 && is_new {
                continue;
            }
            return Err(Fail::bad(
                "creator object must contain 'firstName'/'lastName' or 'name'",
            ));
        }
        let obj = c
            .as_object()
            .map(|o| o.iter().collect::<Vec<_>>())
            .unwrap_or_default();
        let has = |k: &str| isset(c.as_object().unwrap_or(&Map::new()), k);
        for (k, v) in &obj {
            match k.as_str() {
                "creatorType" => {
                    let ct = php_str(v);
                    if !schema().is_creator_type(&ct) {
                        return Err(Fail::bad(format!("'{ct}' is not a valid creator type")));
                    }
                    let valid = schema()
                        .item_type(item_type)
                        .is_some_and(|t| t.creator_types.contains(&ct));
                    // 'author' is accepted for every type (stored as the primary type).
                    if !valid && ct != "author" {
                        return Err(Fail::bad(format!(
                            "'{ct}' is not a valid creator type for item type '{item_type}'"
                        )));
                    }
                }
                "firstName" | "lastName" => {
                    let other = if *k == "firstName" {
                        "lastName"
                    } else {
                        "firstName"
                    };
                    if !has(other) {
                        return Err(Fail::bad(format!(
                            "'{other}' creator field must be set if '{k}' is set"
                        )));
                    }
                    if has("name") {
                        return Err(Fail::bad(format!(
                            "'{k}' and 'name' creator fields are mutually exclusive"
                        )));
                    }
                }
                "name" => {
                    for other in ["firstName", "lastName"] {
                        if has(other) {
                            return Err(Fail::bad(format!(
                                "'{other}' and 'name' creator fields are mutually exclusive"
                            )));
                        }
                    }
                }
                _ => return Err(Fail::bad(format!("Invalid creator property '{k}'"))),
            }
        }
        if obj.is_empty() {
            return Err(Fail::bad("Creator object is empty"));
        }
    }
    Ok(())
}
