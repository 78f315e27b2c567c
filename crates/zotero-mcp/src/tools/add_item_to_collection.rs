//! `zotero_add_item_to_collection`: put an item into a collection given by key or by name.

use serde_json::{json, Map, Value};

use super::args::{object_key, Args};
use super::{ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_api::collections::CollectionRef;

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_add_item_to_collection",
    title: "Add item to collection",
    description: "Add an item of the personal Zotero library to a collection, given by \
                  collection_key or by collection_name (case-insensitive exact match over all \
                  collections; give exactly one). An item already in the collection is left \
                  as it is (already_member). A name shared by several collections is refused \
                  with their keys; an unknown name answers the closest names.",
    input_schema,
    data_schema,
    read_only: false,
    idempotent: true,
    open_world: true,
};

fn input_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string", "minLength": 1, "description": "The item's 8-character key" },
            "collection_key": { "type": "string", "minLength": 1, "description": "The collection's 8-character key (see zotero_list_collections)" },
            "collection_name": { "type": "string", "minLength": 1, "description": "The collection's name, matched case-insensitively" }
        },
        "required": ["item_key"]
    })
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string" },
            "collection_key": { "type": "string" },
            "already_member": { "type": "boolean", "description": "The item was in the collection already; nothing was written" }
        },
        "required": ["item_key", "collection_key"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &["item_key", "collection_key", "collection_name"])?;
    let item_key = args.required_string("item_key", 1)?;
    object_key("item_key", &item_key)?;
    let target = match (
        args.string("collection_key", 1)?,
        args.string("collection_name", 1)?,
    ) {
        (Some(key), None) => {
            object_key("collection_key", &key)?;
            CollectionRef::Key(key)
        }
        (None, Some(name)) if !name.trim().is_empty() => CollectionRef::Name(name),
        (None, Some(_)) => {
            return Err(ToolError::invalid(
                "collection_name",
                "'collection_name' must not be blank",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid(
                "collection_key",
                "give collection_key or collection_name, not both",
            ))
        }
        (None, None) => {
            return Err(ToolError::invalid(
                "collection_key",
                "give collection_key or collection_name (see zotero_list_collections)",
            ))
        }
    };
    let m = ctx
        .library()?
        .add_to_collection(&item_key, &target, &ctx.cancel)
        .await?;
    Ok(json!({
        "item_key": item_key,
        "collection_key": m.collection_key,
        "already_member": m.already_member,
    }))
}
