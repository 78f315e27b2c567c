//! `zotero_search_items`: quick search over the library's top-level items, with tags,
//! pagination and the `relevance` → `dateModified` sort fallback; optionally in
//! `everything` mode, of some item types, in one collection, and with the peer server's
//! `tag` conditions (54yyyu/zotero-mcp).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{
    library, limits, null_is_default, ExcludeTags, FilterTags, ItemTypes, LibraryParam, Limit,
    NonBlank, ObjectKey, QMode, SortKey, Start, TagConditions,
};
use crate::tools::support::output::{listed_page, Item};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::client::SearchQuery;

/// The `zotero_search_items` tool.
pub struct SearchItems;

/// The arguments of `zotero_search_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchItemsParams {
    /// Title, creator or year words
    pub query: NonBlank<{ limits::QUERY }>,
    /// Items per page
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// See zotero_get_sort_values
    #[serde(default, deserialize_with = "null_is_default")]
    pub sort: SortKey,
    /// From next_start
    #[schemars(extend("default" = 0))]
    pub start: Option<Start>,
    /// Alias of start
    pub offset: Option<Start>,
    /// With all these tags (as written)
    pub tags: Option<FilterTags>,
    /// With none of these tags
    pub exclude_tags: Option<ExcludeTags>,
    /// everything: also full text
    pub qmode: Option<QMode>,
    /// Item type(s); "a || b" either, "-a" not
    pub item_type: Option<ItemTypes>,
    /// In this collection
    pub collection_key: Option<ObjectKey>,
    /// Zotero tag syntax, all must hold: "a || b" either, "-a" without
    pub tag: Option<TagConditions>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_search_items` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchItemsData {
    /// This page of matching items
    pub items: Vec<Item>,
    /// Items matched in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
    /// The sort used instead of the one asked for
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_used: Option<String>,
    /// Items shortened to fit the answer, and how to read them whole
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<String>,
}

impl ZoteroTool for SearchItems {
    const NAME: &'static str = "zotero_search_items";
    const TITLE: &'static str = "Search items";
    const DESCRIPTION: &'static str = "Quick search by title, creator or year (qmode everything: \
        also full text); answers matching items with their metadata.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = SearchItemsParams;
    type Data = SearchItemsData;

    fn validate(p: &SearchItemsParams) -> Result<(), ToolError> {
        if p.start.is_some() && p.offset.is_some() {
            return Err(ToolError::invalid(
                "offset",
                "give either 'start' or its alias 'offset', not both",
            ));
        }
        Ok(())
    }

    async fn run(p: SearchItemsParams, ctx: &ToolContext) -> Result<SearchItemsData, ToolError> {
        let start = p.start.or(p.offset).unwrap_or_default().get();
        let query = SearchQuery {
            query: p.query.into_string(),
            tags: p.tags.unwrap_or_default().into_strings(),
            exclude_tags: p.exclude_tags.unwrap_or_default().into_strings(),
            qmode: p.qmode.map(Into::into).unwrap_or_default(),
            tag_conditions: p.tag.unwrap_or_default().into_strings(),
            item_types: p.item_type.unwrap_or_default().into_filter(),
            collection: p.collection_key.map(|k| k.key().clone()),
            limit: p.limit.get(),
            start,
            sort: p.sort.into_string(),
        };
        let lib = ctx.svc.library(library(p.library))?;
        let found = lib.search_items(&query, &ctx.cancel).await?;
        let items = found
            .page
            .items
            .into_iter()
            .map(|i| Item::new(i, lib.name()))
            .collect();
        let (items, next_start, truncated) = listed_page(items, start, found.page.next_start);
        Ok(SearchItemsData {
            items,
            total: found.page.total,
            next_start,
            sort_used: found.sort_used,
            truncated,
        })
    }
}
