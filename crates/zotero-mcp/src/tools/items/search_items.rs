//! `zotero_search_items`: quick search over the library's top-level items, with tags,
//! pagination and the `relevance` → `dateModified` sort fallback; optionally in
//! `everything` mode, of some item types, in one collection, and with the peer server's
//! `tag` conditions (54yyyu/zotero-mcp).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::envelope::ToolError;
use crate::tools::output::{listed_page, Item};
use crate::tools::params::{
    library, limits, null_is_default, ExcludeTags, FilterTags, ItemTypes, LibraryParam, Limit,
    NonBlank, ObjectKey, QMode, SortKey, Start, TagConditions,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::client::SearchQuery;

pub struct SearchItems;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchItemsParams {
    /// Words from titles, creator names or years
    pub query: NonBlank<{ limits::QUERY }>,
    /// Most items to return; a page holds fewer when more would pass 20,000 characters
    /// (next_start says where the rest starts), and long fields are cut (truncated says)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// A sort key from zotero_get_sort_values
    #[serde(default, deserialize_with = "null_is_default")]
    pub sort: SortKey,
    /// 0, or next_start of the previous answer
    #[schemars(extend("default" = 0))]
    pub start: Option<Start>,
    /// Alias of start; give one or the other
    pub offset: Option<Start>,
    /// Only items with all of these tags (each matched exactly, case-insensitively)
    pub tags: Option<FilterTags>,
    /// Leave out items with any of these tags
    pub exclude_tags: Option<ExcludeTags>,
    /// titleCreatorYear (default) or everything: also the full text (the desktop app: also
    /// every field, tag and note)
    pub qmode: Option<QMode>,
    /// Only this item type, or any of these ("book || thesis" works too); a leading - leaves
    /// a type out ("-attachment")
    pub item_type: Option<ItemTypes>,
    /// Only items in this collection
    pub collection_key: Option<ObjectKey>,
    /// Tag conditions in Zotero's syntax, as other Zotero MCP servers take them: a string or
    /// a list, all must hold; "a || b" either, "-a" without. Combined with tags and
    /// exclude_tags: every condition of each must hold
    pub tag: Option<TagConditions>,
    /// user or group:<id>; the server's default library if left out
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

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
    const DESCRIPTION: &'static str = "Quick search of the Zotero library (titles, \
        creators, years), answering matching items with their metadata. Page with start and \
        next_start. tags keeps items carrying every tag listed, exclude_tags drops items \
        carrying any; each tag is matched as written (no operators); tag takes Zotero's tag \
        syntax instead (a || b, -a). qmode everything also searches the full text. \
        item_type and collection_key narrow the search. Zotero has no relevance sort: the \
        default falls back to dateModified, and sort_used says so.";
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
