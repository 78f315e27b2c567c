//! `zotero_get_item`: one item's metadata with the summaries of its attachments.

use serde_json::{json, Map, Value};

use super::args::{object_key, Args};
use super::{schema, ToolContext, ToolSpec};
use crate::envelope::ToolError;

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_get_item",
    title: "Get item",
    description: "Fetch one item of the personal Zotero library by its 8-character key, with \
                  its metadata and a summary of each attachment (key, title, content type, \
                  size).",
    input_schema,
    data_schema,
    read_only: true,
    idempotent: true,
    open_world: true,
};

fn input_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string", "minLength": 1, "description": "The item's 8-character Zotero key, e.g. X42A7DEE" }
        },
        "required": ["item_key"]
    })
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": { "item": schema::item(true) },
        "required": ["item"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &["item_key"])?;
    let key = args.required_string("item_key", 1)?;
    object_key("item_key", &key)?;
    let item = ctx.library()?.get_item(&key, &ctx.cancel).await?;
    Ok(json!({ "item": item }))
}
