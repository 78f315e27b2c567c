//! `zotero_search_items`: quick search over the library's top-level items, with tags,
//! pagination and the `relevance` → `dateModified` sort fallback.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::{schema, ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_api::client::{SearchQuery, DEFAULT_SORT, SORT_VALUES};

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_search_items",
    title: "Search items",
    description: "Search the personal Zotero library (quick search over titles, creators and \
                  years) and list matching items with their metadata. Filter with tags (an \
                  item must have all of them). Page with start (or its alias offset) and the \
                  next_start of the previous answer. Zotero has no relevance sort: the default \
                  falls back to dateModified and the answer says so in sort_used.",
    input_schema,
    data_schema,
    read_only: true,
    idempotent: true,
    open_world: true,
};

const FIELDS: [&str; 6] = ["query", "limit", "sort", "start", "offset", "tags"];

fn input_schema() -> Value {
    schema::input(json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "query": { "type": "string", "minLength": 1, "description": "Free-text quick search: words from the title, a creator's name or the year" },
            "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 25, "description": "Maximum number of items to return" },
            "sort": { "type": "string", "default": "relevance", "description": "Sort key (see zotero_get_sort_values); relevance falls back to dateModified" },
            "start": { "type": "integer", "minimum": 0, "default": 0, "description": "Offset of the first item: 0, or next_start from the previous answer" },
            "offset": { "type": "integer", "minimum": 0, "description": "Alias of start; give one or the other" },
            "tags": { "type": "array", "items": { "$ref": "#/$defs/tag" }, "uniqueItems": true, "description": "Only items that carry every one of these tags" }
        },
        "required": ["query"]
    }))
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "items": { "type": "array", "items": schema::item(false) },
            "total": { "type": "integer", "minimum": 0 },
            "next_start": { "type": "integer", "minimum": 0 },
            "sort_used": { "type": "string" }
        },
        "required": ["items", "total"]
    })
}

/// The validated input.
pub fn parse(raw: Option<&Map<String, Value>>) -> Result<SearchQuery, ToolError> {
    let args = Args::new(raw, &FIELDS)?;
    let query = args.required_string("query", 1)?;
    if query.trim().is_empty() {
        return Err(ToolError::invalid(
            "query",
            "'query' must contain a word to search for, not only spaces",
        ));
    }
    let limit = args.integer("limit", 1, 100)?.unwrap_or(25) as u32;
    let start = args.integer("start", 0, u64::MAX)?;
    let offset = args.integer("offset", 0, u64::MAX)?;
    if start.is_some() && offset.is_some() {
        return Err(ToolError::invalid(
            "offset",
            "give either 'start' or its alias 'offset', not both",
        ));
    }
    let sort = args
        .string("sort", 1)?
        .unwrap_or_else(|| DEFAULT_SORT.to_string());
    if sort != DEFAULT_SORT && !SORT_VALUES.contains(&sort.as_str()) {
        return Err(ToolError::invalid(
            "sort",
            format!(
                "'sort' must be one of {DEFAULT_SORT}, {}; got '{sort}'",
                SORT_VALUES.join(", ")
            ),
        ));
    }
    let tags = args.string_array("tags", true)?;
    Ok(SearchQuery {
        query,
        tags,
        limit,
        start: start.or(offset).unwrap_or(0),
        sort,
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let query = parse(raw)?;
    let result = ctx.library()?.search_items(&query, &ctx.cancel).await?;
    let mut data = Map::new();
    data.insert("items".into(), json!(result.page.items));
    data.insert("total".into(), json!(result.page.total));
    if let Some(next) = result.page.next_start {
        data.insert("next_start".into(), json!(next));
    }
    if let Some(sort) = result.sort_used {
        data.insert("sort_used".into(), json!(sort));
    }
    Ok(Value::Object(data))
}
