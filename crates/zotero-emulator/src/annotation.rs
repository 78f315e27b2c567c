//! Annotation items as the dataserver takes them: each `annotation*` property checked when it
//! is set (`Zotero_Item::setAnnotationField`, in the JSON's order), then the checks of
//! `Zotero_Item::save` for a new annotation (its parent must be a file attachment of a
//! content type that annotation type allows; the default colour) and the limits of
//! `Zotero_Items` (`maxAnnotationTextLength`, `maxAnnotationPageLabelLength`,
//! `maxAnnotationPositionLength`, `defaultAnnotationColor`).

use serde_json::{json, Map, Value};

use super::libs::Lib;
use super::validate::{php_str, Fail, KeyOrder};

const MAX_TEXT_CHARS: usize = 7_500;
const MAX_PAGE_LABEL_BYTES: usize = 50;
const MAX_POSITION_BYTES: usize = 65_535;
const DEFAULT_COLOR: &str = "#ffd400";
const TYPES: &[&str] = &["highlight", "note", "image", "ink", "underline", "text"];

/// PHP truthiness of a scalar (`if ($val)`).
fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
        && *v != json!(0)
        && *v != json!("")
        && *v != json!("0")
}

/// `#` and six characters of `set`, as the server's regular expressions test colours.
fn is_color(s: &str, lower_letters: bool) -> bool {
    s.len() == 7
        && s.starts_with('#')
        && s.bytes()
            .skip(1)
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase() && (lower_letters || b <= b'f'))
}

/// `^\d{a}\|\d{b}(\|\d{c})?$`-style sort index test: digit groups of these lengths.
fn digit_groups(s: &str, lens: &[std::ops::RangeInclusive<usize>]) -> bool {
    let parts: Vec<&str> = s.split('|').collect();
    parts.len() == lens.len()
        && parts
            .iter()
            .zip(lens)
            .all(|(p, n)| n.contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The dataserver's `libraryKey` (`libraryID/key`). Its `libraryID` is an internal number;
/// the emulator uses the user or group id (a guess, written in the README).
pub(crate) fn library_key(lib: &Lib, key: &str) -> String {
    format!("{}/{key}", lib.id().number())
}

fn parent_of<'l>(
    lib: &'l Lib,
    json: &Map<String, Value>,
    existing: Option<&Value>,
) -> Option<(&'l Value, String)> {
    let key = json
        .get("parentItem")
        .and_then(Value::as_str)
        .or_else(|| existing.and_then(|e| e["parentItem"].as_str()))?;
    let item = lib.items.iter().find(|i| i["key"] == key)?;
    Some((&item["data"], key.to_string()))
}

/// The checks `setAnnotationField` makes, in the order the JSON gives the properties.
/// `key` is the item's key (chosen already for a new item).
pub(crate) fn check_fields(
    lib: &Lib,
    json: &Map<String, Value>,
    order: &KeyOrder,
    existing: Option<&Value>,
    key: &str,
) -> Result<(), Fail> {
    let item_type = json
        .get("itemType")
        .map(php_str)
        .or_else(|| existing.map(|e| php_str(&e["itemType"])))
        .unwrap_or_default();
    if item_type != "annotation" {
        return Ok(());
    }
    let parent = parent_of(lib, json, existing);
    let parent_key = parent.as_ref().map(|(_, k)| k.clone()).unwrap_or_default();
    for k in order.keys(json) {
        let val = &json[k];
        match k {
            "annotationType" => {
                let t = php_str(val);
                if !TYPES.contains(&t.as_str()) {
                    return Err(Fail::bad(
                        "annotationType must be 'highlight', 'note', 'image', 'text', or 'ink'",
                    ));
                }
                let current = existing.map(|e| php_str(&e["annotationType"]));
                if current.is_some_and(|c| !c.is_empty() && c != t) {
                    return Err(Fail::bad(format!(
                        "Cannot change existing annotationType for item {}",
                        library_key(lib, key)
                    )));
                }
            }
            "annotationColor" if truthy(val) && !is_color(&php_str(val), true) => {
                return Err(Fail::bad(
                    "annotationColor must be a hex color (e.g., '#FF0000')",
                ));
            }
            "annotationSortIndex" => check_sort_index(parent.as_ref().map(|p| p.0), val)?,
            "annotationAuthorName"
            | "annotationText"
            | "annotationComment"
            | "annotationPageLabel"
            | "annotationPosition" => {
                let Some(s) = val.as_str() else {
                    return Err(Fail::bad(format!("{k} must be a string")));
                };
                if k == "annotationPageLabel" && s.len() > MAX_PAGE_LABEL_BYTES {
                    return Err(Fail::bad(format!(
                        "Annotation page label is too long for attachment {parent_key}"
                    )));
                }
                if k == "annotationPosition" && s.len() > MAX_POSITION_BYTES {
                    return Err(Fail::bad(format!(
                        "Annotation position is too long for attachment {parent_key}"
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The sort index's form depends on the parent attachment's content type.
fn check_sort_index(parent: Option<&Value>, val: &Value) -> Result<(), Fail> {
    let Some(p) = parent.filter(|p| is_file_attachment(p)) else {
        return Ok(());
    };
    let s = php_str(val);
    let (ok, kind) = match p["contentType"].as_str().unwrap_or("") {
        "application/pdf" => (digit_groups(&s, &[5..=5, 6..=6, 5..=5]), ""),
        "application/epub+zip" => (digit_groups(&s, &[5..=5, 8..=8]), " for EPUB annotation"),
        "text/html" => (digit_groups(&s, &[7..=8]), " for HTML annotation"),
        _ => (true, ""),
    };
    if ok {
        Ok(())
    } else {
        Err(Fail::bad(format!("Invalid sortIndex '{s}'{kind}")))
    }
}

/// `isFileAttachment`: an attachment that is not a link to a URL.
fn is_file_attachment(d: &Value) -> bool {
    d["itemType"] == "attachment" && d["linkMode"] != "linked_url"
}

/// What `Zotero_Item::save` checks and sets for an annotation: for a new one, its parent
/// and the default colour; for any, the stored colour's form and the text's length.
pub(crate) fn on_save(lib: &Lib, d: &mut Map<String, Value>, is_new: bool) -> Result<(), Fail> {
    if d.get("itemType").and_then(Value::as_str) != Some("annotation") {
        return Ok(());
    }
    let at = d.get("annotationType").map(php_str).unwrap_or_default();
    if is_new {
        let Some((parent, pkey)) = parent_of(lib, d, None) else {
            return Err(Fail::bad("Annotation item must have a parent item"));
        };
        let lk = library_key(lib, &pkey);
        if !is_file_attachment(parent) {
            return Err(Fail::bad(format!(
                "Parent item {lk} of annotation must be a file attachment"
            )));
        }
        let ct = parent["contentType"].as_str().unwrap_or("");
        if matches!(at.as_str(), "note" | "highlight" | "underline") {
            if !matches!(ct, "application/pdf" | "application/epub+zip" | "text/html") {
                return Err(Fail::bad(format!(
                    "Parent item {lk} of {at} annotation must be a PDF attachment"
                )));
            }
        } else if ct != "application/pdf" {
            return Err(Fail::bad(format!(
                "Parent attachment {lk} of {at} annotation must be a PDF"
            )));
        }
    }
    let text = d.get("annotationText").map(php_str).unwrap_or_default();
    if !text.is_empty() && !matches!(at.as_str(), "highlight" | "underline") {
        return Err(Fail::bad(
            "'annotationText' can only be set for highlight and underline annotations",
        ));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        let cut: String = text.chars().take(MAX_TEXT_CHARS).collect();
        d.insert("annotationText".into(), json!(cut));
    }
    let color = d.get("annotationColor").map(php_str).unwrap_or_default();
    if is_new && color.is_empty() {
        d.insert("annotationColor".into(), json!(DEFAULT_COLOR));
    } else if !color.is_empty() && !is_color(&color, false) {
        // `trigger_error(..., E_USER_ERROR)`: the server answers 500.
        return Err(Fail::new(500, "An error occurred"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_sort_indexes_take_the_servers_forms() {
        assert!(is_color("#ffd400", false));
        assert!(!is_color("#FFD400", true));
        assert!(is_color("#zzzzzz", true) && !is_color("#zzzzzz", false));
        assert!(!is_color("ffd400", true));
        assert!(digit_groups("00015|002431|00000", &[5..=5, 6..=6, 5..=5]));
        assert!(!digit_groups("0000", &[5..=5, 6..=6, 5..=5]));
        assert!(digit_groups("1234567", &[7..=8]));
    }
}
