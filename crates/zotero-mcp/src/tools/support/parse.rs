//! Tool arguments → a tool's `Params`. Every failure is a `ZOTERO_VALIDATION_ERROR` whose
//! `details.field` is the path of the offending value (`limit`, `tags[0]`,
//! `creators[2].last_name`) and whose message says what to send instead.
//!
//! serde decides what is wrong (through the derived `Deserialize` of the `Params` and the
//! newtypes of `params.rs`) and `serde_path_to_error` says where; serde's wording is rewritten
//! here into a sentence about the field.

use std::fmt::Write as _;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use crate::error::ToolError;

/// The arguments as `P`, or the refusal naming the first field that is wrong.
pub fn arguments<P: DeserializeOwned>(args: Option<Map<String, Value>>) -> Result<P, ToolError> {
    let value = Value::Object(args.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = path_of(e.path());
        refusal(&path, &e.inner().to_string())
    })
}

/// `creators[2].last_name`: keys joined by dots, indexes in brackets.
fn path_of(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                let _ = write!(out, "[{index}]");
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => out.push_str("[?]"),
        }
    }
    out
}

/// `field` inside the object at `path`.
fn child(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// The refusal for serde's `message` about the value at `path`.
///
/// serde's messages have fixed forms (`missing field `x``, `unknown field `x`, expected one
/// of …`, `invalid type: …, expected …`); anything else is one of ours from `params.rs`, a
/// predicate to put after the field's name.
fn refusal(path: &str, message: &str) -> ToolError {
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        let field = child(path, name);
        return ToolError::invalid(&field, format!("'{field}' is required"));
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        return unknown_field(path, rest);
    }
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some((got, expected)) = message
            .strip_prefix(prefix)
            .and_then(|r| r.rsplit_once(", expected "))
        {
            // serde lets a struct be written as an array of its fields; a wrong-sized one
            // says "invalid length 0": an object is what to send.
            let got = if prefix == "invalid length " {
                "an array"
            } else {
                got
            };
            return ToolError::invalid(
                path,
                format!(
                    "'{path}' must be {}, got {}",
                    plain_expected(expected),
                    plain_got(got)
                ),
            );
        }
    }
    ToolError::invalid(path, format!("'{path}' {message}"))
}

/// `rest` is what follows "unknown field `": the name, then the fields serde expected.
fn unknown_field(path: &str, rest: &str) -> ToolError {
    // serde_path_to_error has the unknown key in the path already: it read it.
    let (name, allowed) = if let Some((name, list)) = rest.rsplit_once("`, expected ") {
        let list = list.strip_prefix("one of ").unwrap_or(list);
        let fields: Vec<&str> = list.split(", ").map(|f| f.trim_matches('`')).collect();
        (name, format!("allowed fields: {}", fields.join(", ")))
    } else {
        let name = rest.strip_suffix("`, there are no fields").unwrap_or(rest);
        let none = if path == name {
            "this tool takes no arguments"
        } else {
            "this object takes no fields"
        };
        (name, none.to_string())
    };
    let field = if path.ends_with(name) {
        path.to_string()
    } else {
        child(path, name)
    };
    let field = crate::tools::params::quote(&field);
    ToolError::invalid(&field, format!("unknown field '{field}'; {allowed}"))
}

/// What serde says it found, in JSON's words: `integer `5`` → `integer 5`, `map` → `an
/// object`.
fn plain_got(got: &str) -> String {
    match got {
        "map" => "an object".into(),
        "sequence" => "an array".into(),
        "unit" => "null".into(),
        // The string itself, cut: an argument may be megabytes long.
        g if g.starts_with("string ") => match g
            .strip_prefix("string \"")
            .and_then(|r| r.strip_suffix('"'))
        {
            Some(inner) => format!("string \"{}\"", crate::tools::params::quote(inner)),
            None => g.into(),
        },
        g => g.replace('`', ""),
    }
}

/// serde's names for JSON things, in JSON's words.
fn plain_expected(expected: &str) -> &str {
    match expected {
        "a sequence" => "an array",
        "a map" => "an object",
        e if e.starts_with("struct ") => "an object",
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::params::{Creator, FilterTags, Limit, ObjectKey};
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct P {
        item_key: ObjectKey,
        #[serde(default)]
        limit: Limit,
        #[serde(default)]
        tags: Option<FilterTags>,
        #[serde(default)]
        creators: Vec<Creator>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    fn refused(v: Value) -> (String, String) {
        let map = v.as_object().cloned();
        let e = arguments::<P>(map).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::Validation);
        let field = e.details["field"].as_str().unwrap().to_string();
        assert!(e.message.contains(&field), "{field}: {}", e.message);
        (field, e.message)
    }

    #[test]
    fn fields_are_named_by_their_path() {
        let key = "X42A7DEE";
        for (args, field, says) in [
            (json!({}), "item_key", "is required"),
            (json!({"item_key": "abc"}), "item_key", "8 characters"),
            (
                json!({"item_key": 5}),
                "item_key",
                "must be a string, got integer 5",
            ),
            (
                json!({"item_key": key, "qury": 1}),
                "qury",
                "allowed fields: item_key, limit, tags, creators",
            ),
            (
                json!({"item_key": key, "limit": 101}),
                "limit",
                "from 1 to 100, got integer 101",
            ),
            (
                json!({"item_key": key, "limit": "5"}),
                "limit",
                "got string \"5\"",
            ),
            (
                json!({"item_key": key, "tags": ["a", ""]}),
                "tags[1]",
                "not an empty string",
            ),
            (
                json!({"item_key": key, "tags": ["a", "b", "a"]}),
                "tags[2]",
                "repeats the tag 'a'",
            ),
            (
                json!({"item_key": key, "tags": "a"}),
                "tags",
                "must be an array of at most 20 tag names",
            ),
            (
                json!({"item_key": key, "creators": [{"creator_type": "author", "name": "X"}, {"name": "Y"}]}),
                "creators[1].creator_type",
                "is required",
            ),
            (
                json!({"item_key": key, "creators": [{"creator_type": "author", "nmae": "Y"}]}),
                "creators[0].nmae",
                "allowed fields: creator_type, first_name, last_name, name",
            ),
            (
                json!({"item_key": key, "creators": ["Ada"]}),
                "creators[0]",
                "must be an object, got string \"Ada\"",
            ),
            (
                json!({"item_key": key, "creators": [[]]}),
                "creators[0]",
                "must be an object, got an array",
            ),
            (
                json!({"item_key": key, "creators": {}}),
                "creators",
                "must be an array",
            ),
        ] {
            let (f, m) = refused(args.clone());
            assert_eq!(f, field, "{args}: {m}");
            assert!(m.contains(says), "{args}: {m}");
        }
    }

    #[test]
    fn out_of_range_integers_are_refused_not_clamped() {
        let (f, m) =
            refused(json!({"item_key": "X42A7DEE", "limit": 18_446_744_073_709_551_616.0_f64}));
        assert_eq!(f, "limit", "{m}");
    }

    #[test]
    fn a_tool_without_arguments_says_so() {
        let e = arguments::<Empty>(json!({"x": 1}).as_object().cloned()).unwrap_err();
        assert_eq!(e.details["field"], "x");
        assert!(e.message.contains("takes no arguments"), "{}", e.message);
        assert!(arguments::<Empty>(None).is_ok());
    }

    #[test]
    fn null_is_a_type_error_for_a_required_field() {
        let (f, m) = refused(json!({"item_key": null}));
        assert_eq!(f, "item_key", "{m}");
    }
}
