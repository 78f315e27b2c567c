//! JSON Schema fragments shared by the tools, as the seed writes them.

use serde_json::{json, Value};

/// The seed's `$defs`: `creator` and `tag`.
pub fn defs() -> Value {
    json!({
        "creator": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "creator_type": { "type": "string", "description": "Zotero creator type, e.g. author, editor" },
                "first_name": { "type": "string" },
                "last_name": { "type": "string" },
                "name": { "type": "string", "description": "Single-field name, for organisations" }
            },
            "required": ["creator_type"],
            "oneOf": [
                { "required": ["first_name", "last_name"] },
                { "required": ["name"] }
            ]
        },
        "tag": { "type": "string", "minLength": 1 }
    })
}

/// The properties of an item in tool output (`with_attachments` for `zotero_get_item`).
pub fn item(with_attachments: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string" },
            "item_type": { "type": "string" },
            "title": { "type": "string" },
            "creators": { "type": "array", "items": { "$ref": "#/$defs/creator" } },
            "date": { "type": "string" },
            "doi": { "type": "string" },
            "url": { "type": "string" },
            "abstract": { "type": "string" },
            "tags": { "type": "array", "items": { "$ref": "#/$defs/tag" } },
            "extra": { "type": "string" },
            "version": { "type": "integer" }
        },
        "required": ["item_key", "item_type", "title", "version"]
    });
    if let (true, Some(props)) = (
        with_attachments,
        schema.get_mut("properties").and_then(Value::as_object_mut),
    ) {
        props.insert(
            "attachments".into(),
            json!({
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "attachment_key": { "type": "string" },
                        "title": { "type": "string" },
                        "content_type": { "type": "string" },
                        "size": { "type": "integer" }
                    },
                    "required": ["attachment_key", "title"]
                }
            }),
        );
    }
    schema
}

/// Input schema with the shared `$defs` attached.
pub fn input(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("$defs".into(), defs());
    }
    schema
}
