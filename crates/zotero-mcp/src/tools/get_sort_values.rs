//! `zotero_get_sort_values`: the sort keys the server knows, its default and its fallback.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::{ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_api::client::{DEFAULT_SORT, FALLBACK_SORT, SORT_VALUES};

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_get_sort_values",
    title: "List sort values",
    description: "Return the sort keys zotero_search_items accepts, the default sort \
                  (relevance) and the fallback used when Zotero rejects it (dateModified). \
                  Makes no request to Zotero.",
    input_schema,
    data_schema,
    read_only: true,
    idempotent: true,
    open_world: false,
};

fn input_schema() -> Value {
    json!({ "type": "object", "additionalProperties": false, "properties": {} })
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "values": { "type": "array", "items": { "type": "string" } },
            "default": { "type": "string" },
            "fallback": { "type": "string" }
        },
        "required": ["values", "default", "fallback"]
    })
}

pub async fn run(_ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    Args::new(raw, &[])?;
    let mut values = vec![DEFAULT_SORT];
    values.extend(SORT_VALUES);
    Ok(json!({ "values": values, "default": DEFAULT_SORT, "fallback": FALLBACK_SORT }))
}
