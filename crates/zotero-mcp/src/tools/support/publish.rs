//! What a tool publishes, derived from its types: the input schema from `Params`, the output
//! schema from `Data` inside the envelope. JSON Schema 2020-12 (what MCP uses), everything
//! inlined (a tool's schema must stand alone, and each shared type appears once or twice per
//! tool), and tidied so the listing stays small without losing a constraint.

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema};
use serde_json::{json, Map, Value};

/// The input schema of a tool whose arguments deserialize into `P`.
pub fn input_schema<P: JsonSchema>() -> Map<String, Value> {
    let mut map = schema_for::<P>(Contract::Deserialize);
    // A tool without arguments still says so with `properties: {}`, as the seed writes it
    // (and as some clients expect of every input schema).
    map.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    map
}

/// The schema of the envelope's `data` on success, for a tool answering `D`.
///
/// Descriptions stay only where a client learns something from them that neither the field's
/// name nor the tool's description tells: on `data`'s optional fields, which say when they
/// are there (`next_start`, `sort_used`, `already_attached`, …). Deeper down (an item's
/// `title`, a collection's `name`) the seed's field names say it all, and those objects
/// repeat across tools: their descriptions would cost every client's context more than they
/// tell. The `///` docs of every field remain for the code's readers.
pub fn data_schema<D: JsonSchema>() -> Map<String, Value> {
    let mut map = schema_for::<D>(Contract::Serialize);
    let required: Vec<Value> = map
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            let Value::Object(prop) = prop else {
                continue;
            };
            if required.iter().any(|r| r == name.as_str()) {
                prop.remove("description");
            }
            for (key, value) in prop.iter_mut() {
                if key != "description" {
                    strip_descriptions(value);
                }
            }
        }
    }
    map
}

/// Removes every `description` keyword inside a schema fragment; a property that is named
/// `description` stays (a `properties` map holds names, not keywords).
fn strip_descriptions(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            obj.remove("description");
            for (key, value) in obj.iter_mut() {
                match (key.as_str(), value) {
                    ("properties", Value::Object(props)) => {
                        props.values_mut().for_each(strip_descriptions)
                    }
                    (_, value) => strip_descriptions(value),
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

fn schema_for<T: JsonSchema>(contract: Contract) -> Map<String, Value> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        // MCP's default dialect is 2020-12: saying so in every schema costs bytes for nothing.
        s.meta_schema = None;
        s.inline_subschemas = true;
        s.contract = contract;
    });
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    Tidy.transform(&mut schema);
    let mut map = match schema.to_value() {
        Value::Object(map) => map,
        // Only `true`/`false` schemas are not objects; no Params or Data derives one.
        _ => Map::new(),
    };
    // The Rust type's name and doc: the tool's own title and description say it for clients.
    map.remove("title");
    map.remove("description");
    map
}

/// Whether every string `pattern` matches has a bounded length: anchored at both ends, with
/// no unbounded repetition (`*`, `+`, `{n,}`). Such a pattern says the `maxLength` already.
pub fn pattern_bounds_length(pattern: &str) -> bool {
    let escaped_end = pattern.ends_with("\\$");
    pattern.starts_with('^')
        && pattern.ends_with('$')
        && !escaped_end
        && !pattern.contains('*')
        && !pattern.contains('+')
        && !pattern.contains(",}")
}

/// Leaves out what schemars adds that a client cannot use:
/// - `format` on integers (`uint64`, …): not a JSON Schema format; `minimum` says it already;
/// - `maxLength` beside a `pattern` that bounds the length already (an object key, a
///   library), which says the same in more bytes;
/// - `null` in the type of an optional property: the seed writes optional fields without it,
///   and leaving a field out is how to say "none" (the server still takes an explicit `null`
///   as not given).
#[derive(Clone)]
struct Tidy;

impl Transform for Tidy {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(obj) = schema.as_object_mut() else {
            return;
        };
        if obj
            .get("pattern")
            .and_then(Value::as_str)
            .is_some_and(pattern_bounds_length)
        {
            obj.remove("maxLength");
        }
        let is_integer = |t: &Value| t == "integer";
        match obj.get("type") {
            Some(t) if is_integer(t) => {
                obj.remove("format");
            }
            Some(Value::Array(ts)) if ts.iter().any(is_integer) => {
                obj.remove("format");
            }
            _ => {}
        }
        // A type's own doc comment is for Rust readers; what a client sees is the doc of
        // the field that holds it. Array items are the one place a type's doc would show.
        if let Some(Value::Object(items)) = obj.get_mut("items") {
            items.remove("description");
        }
        // Doc comments wrap at 100 columns; a description is one paragraph.
        if let Some(Value::String(d)) = obj.get_mut("description") {
            *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for (name, prop) in props.iter_mut() {
                if !required.contains(name) {
                    drop_null(prop);
                }
            }
        }
    }
}

/// `{"type": ["string", "null"]}` → `{"type": "string"}`;
/// `{"anyOf": [S, {"type": "null"}], …}` → S with the other keywords.
fn drop_null(prop: &mut Value) {
    let Value::Object(obj) = prop else {
        return;
    };
    // An optional enum: `{"type": "string", "enum": [..., null]}`.
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            obj.insert("type".into(), only);
        }
        return;
    }
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    let Some(Value::Array(branches)) = obj.get("anyOf") else {
        return;
    };
    let [a, b] = branches.as_slice() else {
        return;
    };
    let kept = match (is_null(a), is_null(b)) {
        (false, true) => a.clone(),
        (true, false) => b.clone(),
        _ => return,
    };
    let Value::Object(mut kept) = kept else {
        return;
    };
    kept.remove("description");
    obj.remove("anyOf");
    // The property's own keywords (description, default) win over the branch's.
    for (k, v) in std::mem::take(obj) {
        kept.insert(k, v);
    }
    *obj = kept;
}

/// The JSON Schema of the envelope around a tool's `data` schema (the tool's output schema).
///
/// `data` and `error` are each either an object or `null`: a widened `type` says that in fewer
/// bytes than an `anyOf` with a null branch, and means the same (`properties`, `required` and
/// `additionalProperties` only apply to objects).
pub fn output_schema(mut data: Map<String, Value>) -> Map<String, Value> {
    data.insert("type".into(), json!(["object", "null"]));
    let schema = json!({
        "type": "object",
        "properties": {
            "ok": { "type": "boolean" },
            "data": data,
            "error": {
                "type": ["object", "null"],
                "properties": {
                    "code": { "type": "string" },
                    "message": { "type": "string" },
                    "details": { "type": "object" }
                },
                "required": ["code", "message", "details"]
            }
        },
        "required": ["ok", "data", "error"]
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolName;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        /// A count
        n: u64,
        /// Maybe text
        text: Option<String>,
        /// Maybe a list
        list: Option<Vec<u32>>,
        /// Maybe a choice
        choice: Option<Choice>,
    }

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[allow(dead_code)]
    enum Choice {
        A,
        B,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Named {
        /// A list
        list: Vec<Inner>,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// Its description
        description: String,
    }

    #[test]
    fn a_data_field_named_description_is_kept() {
        let s = Value::Object(data_schema::<Named>());
        let inner = &s["properties"]["list"]["items"];
        assert_eq!(
            inner["properties"]["description"],
            json!({"type": "string"})
        );
        assert_eq!(inner["required"], json!(["description"]));
    }

    #[test]
    fn only_a_pattern_of_bounded_length_replaces_max_length() {
        for bounded in [
            "^[23456789A-HJ-NP-Z]{8}$",
            "^(user|group:[1-9][0-9]{0,18})$",
        ] {
            assert!(pattern_bounds_length(bounded), "{bounded}");
        }
        for open in ["^[^-]", "^a+$", "^a*$", "^a{2,}$", "[a-z]{3}", "^a\\$"] {
            assert!(!pattern_bounds_length(open), "{open}");
        }
    }

    #[test]
    fn schemas_are_tidy_and_keep_their_constraints() {
        let s = Value::Object(input_schema::<Sample>());
        assert_eq!(
            s,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "n": { "type": "integer", "minimum": 0, "description": "A count" },
                    "text": { "type": "string", "description": "Maybe text" },
                    "list": {
                        "type": "array",
                        "items": { "type": "integer", "minimum": 0 },
                        "description": "Maybe a list"
                    },
                    "choice": {
                        "type": "string",
                        "enum": ["A", "B"],
                        "description": "Maybe a choice"
                    }
                },
                "required": ["n"]
            })
        );
    }

    /// Every constraint of `seed` holds in `ours`: the same keywords with the same values,
    /// `required` and `properties` included; ours may add to them. `$ref`s are followed into
    /// the seed's `$defs`, where the published schemas have the definition inline.
    fn assert_covers(seed: &Value, ours: &Value, defs: &Value, at: &str) {
        let seed = match seed.get("$ref").and_then(Value::as_str) {
            Some(r) => &defs[r.trim_start_matches("#/$defs/")],
            None => seed,
        };
        let Value::Object(seed) = seed else {
            return assert_eq!(seed, ours, "{at}");
        };
        for (k, v) in seed {
            let here = format!("{at}/{k}");
            let o = ours
                .get(k)
                .unwrap_or_else(|| panic!("{here}: missing from {ours}"));
            match k.as_str() {
                "required" => {
                    for r in v.as_array().unwrap() {
                        assert!(
                            o.as_array().unwrap().contains(r),
                            "{here}: {r} not required"
                        );
                    }
                }
                "properties" => {
                    for (name, s) in v.as_object().unwrap() {
                        assert_covers(s, &o[name.as_str()], defs, &format!("{here}/{name}"));
                    }
                }
                "items" => assert_covers(v, o, defs, &here),
                // `data` is `["object", "null"]` in the envelope: null is the failure case.
                "type" => assert!(
                    o == v || o.as_array().is_some_and(|ts| ts.contains(v)),
                    "{here}: {o} is not {v}"
                ),
                _ => assert_eq!(o, v, "{here}"),
            }
        }
    }

    #[test]
    fn published_schemas_keep_every_constraint_of_the_seed() {
        let seed: Value = serde_json::from_str(include_str!("seed_schemas.json")).unwrap();
        let defs = &seed["$defs"];
        let tools = seed["tools"].as_object().unwrap();
        // Every seed tool is served (tools added since have no seed schema to keep).
        assert_eq!(tools.len(), 8);
        for (name, s) in tools {
            let tool = ToolName::from_name(name).unwrap_or_else(|| panic!("{name} not served"));
            let d = tool.definition();
            let input = Value::Object(d.input_schema);
            assert_covers(&s["input"], &input, defs, &format!("{name} input"));
            let output = Value::Object(d.output_schema);
            let data = &output["properties"]["data"];
            assert_covers(&s["data"], data, defs, &format!("{name} data"));
            assert_eq!(output["required"], json!(["ok", "data", "error"]), "{name}");
            assert_eq!(
                output["properties"]["error"]["required"],
                json!(["code", "message", "details"]),
                "{name}"
            );
        }
    }

    /// Calls `f` on every schema object inside `v`, with its JSON pointer.
    fn each_schema(v: &Value, at: &str, f: &mut impl FnMut(&Map<String, Value>, &str)) {
        let Value::Object(obj) = v else { return };
        f(obj, at);
        for (k, sub) in obj {
            match (k.as_str(), sub) {
                ("properties", Value::Object(props)) => {
                    for (name, p) in props {
                        each_schema(p, &format!("{at}/{name}"), f);
                    }
                }
                ("items", s) => each_schema(s, &format!("{at}[]"), f),
                _ => {}
            }
        }
    }

    /// No argument can carry unbounded work: every string has a `maxLength`, every array a
    /// `maxItems`, at any depth (array items and object fields included).
    #[test]
    fn every_string_and_array_argument_is_bounded() {
        for t in ToolName::ALL {
            let d = t.definition();
            let input = Value::Object(d.input_schema);
            each_schema(&input, d.name, &mut |s, at| {
                let types: Vec<&str> = match s.get("type") {
                    Some(Value::String(t)) => vec![t.as_str()],
                    Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if types.contains(&"string") && !s.contains_key("enum") {
                    let by_pattern = s
                        .get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(pattern_bounds_length);
                    assert!(
                        s.get("maxLength").and_then(Value::as_u64).is_some() || by_pattern,
                        "{at}: a string without maxLength"
                    );
                }
                if types.contains(&"array") {
                    assert!(
                        s.get("maxItems").and_then(Value::as_u64).is_some(),
                        "{at}: an array without maxItems"
                    );
                }
                // An object of any keys (a field map) is bounded like an array.
                if types.contains(&"object")
                    && s.get("additionalProperties").is_some_and(Value::is_object)
                {
                    assert!(
                        s.get("maxProperties").and_then(Value::as_u64).is_some(),
                        "{at}: an open object without maxProperties"
                    );
                }
                if types.is_empty() && at.contains('/') {
                    assert!(
                        s.contains_key("oneOf") || s.contains_key("anyOf"),
                        "{at}: no type"
                    );
                }
            });
        }
    }

    #[test]
    fn schemas_stand_alone_and_every_argument_is_described() {
        for t in ToolName::ALL {
            let d = t.definition();
            let input = Value::Object(d.input_schema);
            let output = Value::Object(d.output_schema);
            assert_eq!(input["type"], "object", "{}", d.name);
            assert_eq!(input["additionalProperties"], false, "{}", d.name);
            assert!(input["properties"].is_object(), "{}", d.name);
            for schema in [&input, &output] {
                each_schema(schema, d.name, &mut |s, at| {
                    for absent in ["$ref", "$defs", "$schema", "format", "title"] {
                        assert!(!s.contains_key(absent), "{at}: {absent}");
                    }
                });
            }
            each_schema(&input, d.name, &mut |s, at| {
                // Every argument; the fields of an object argument only where its own
                // description does not say them (semantic search's `filters`: "the filters
                // above").
                if at.matches('/').count() == 1 && !at.ends_with("[]") {
                    assert!(
                        s.get("description")
                            .and_then(Value::as_str)
                            .is_some_and(|d| !d.is_empty()),
                        "{at} has no description"
                    );
                }
                assert!(
                    !s.contains_key("description") || !at.ends_with("[]"),
                    "{at}"
                );
                // Closed objects, but for a bounded map of names to values (FieldMap).
                let map = s.contains_key("maxProperties") && s.contains_key("propertyNames");
                if s.get("type") == Some(&json!("object")) && !map {
                    assert_eq!(s.get("additionalProperties"), Some(&json!(false)), "{at}");
                }
            });
            let data = &output["properties"]["data"];
            let required = data["required"].as_array().cloned().unwrap_or_default();
            for (name, p) in data["properties"].as_object().unwrap() {
                // An optional answer field says when it is there; a required one is not
                // described (its name and the tool's description say it).
                let described = p.get("description").is_some();
                assert_eq!(
                    described,
                    !required.contains(&json!(name)),
                    "{}: {name}",
                    d.name
                );
            }
            each_schema(data, d.name, &mut |s, at| {
                // Every object is closed, but a map (no `properties`, its values typed:
                // an item's fields by name) is open by design.
                let map = !s.contains_key("properties")
                    && s.get("additionalProperties").is_some_and(Value::is_object);
                if s.get("type") == Some(&json!("object")) && !map {
                    assert_eq!(s.get("additionalProperties"), Some(&json!(false)), "{at}");
                }
            });
        }
    }

    #[test]
    fn notable_constraints_are_published() {
        let input = |t: ToolName| Value::Object(t.definition().input_schema);
        let search = input(ToolName::SearchItems);
        let limit = &search["properties"]["limit"];
        assert_eq!(
            (&limit["minimum"], &limit["maximum"], &limit["default"]),
            (&json!(1), &json!(100), &json!(25))
        );
        assert_eq!(search["properties"]["start"]["default"], 0);
        assert_eq!(search["properties"]["tags"]["uniqueItems"], true);
        let create = input(ToolName::CreateItem);
        let creator = &create["properties"]["creators"]["items"];
        assert_eq!(creator["oneOf"].as_array().unwrap().len(), 2);
        assert_eq!(creator["required"], json!(["creator_type"]));
        let upload = input(ToolName::UploadAttachment);
        assert_eq!(upload["anyOf"].as_array().unwrap().len(), 3);
        assert_eq!(upload["required"], json!(["item_key"]));
        let key = &upload["properties"]["item_key"];
        assert_eq!(key["pattern"], "^[23456789A-HJ-NP-Z]{8}$");
        assert_eq!(input(ToolName::GetSortValues)["properties"], json!({}));
    }
}
