//! `zotero_list_collections`: one page of the library's collections.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::{ToolContext, ToolSpec};
use crate::envelope::ToolError;

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_list_collections",
    title: "List collections",
    description: "List the collections of the personal Zotero library with their keys, \
                  parent collection and number of items. Page with start and the next_start \
                  of the previous answer.",
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
            "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 25, "description": "Maximum number of collections to return" },
            "start": { "type": "integer", "minimum": 0, "default": 0, "description": "Offset of the first collection: 0, or next_start from the previous answer" }
        }
    })
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "collections": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "collection_key": { "type": "string" },
                        "name": { "type": "string" },
                        "parent_key": { "type": "string" },
                        "version": { "type": "integer" },
                        "num_items": { "type": "integer" }
                    },
                    "required": ["collection_key", "name", "version"]
                }
            },
            "total": { "type": "integer", "minimum": 0 },
            "next_start": { "type": "integer", "minimum": 0 }
        },
        "required": ["collections", "total"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &["limit", "start"])?;
    let limit = args.integer("limit", 1, 100)?.unwrap_or(25) as u32;
    let start = args.integer("start", 0, u64::MAX)?.unwrap_or(0);
    let page = ctx
        .library()?
        .list_collections(limit, start, &ctx.cancel)
        .await?;
    let mut data = Map::new();
    data.insert("collections".into(), json!(page.items));
    data.insert("total".into(), json!(page.total));
    if let Some(next) = page.next_start {
        data.insert("next_start".into(), json!(next));
    }
    Ok(Value::Object(data))
}
