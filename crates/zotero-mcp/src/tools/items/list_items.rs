//! `zotero_list_items`: items without a query: of a collection, with or without tags, of
//! some item types, changed since a library version, or the trash; sorted and paged as the
//! search is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{
    library, null_is_default, ExcludeTags, FilterTags, ItemSort, ItemTypes, LibraryParam, Limit,
    ObjectKey, SortDirection, Start, Version,
};
use crate::tools::support::output::{listed_page, Item};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::items::{ItemFilter, ItemListing};

/// The `zotero_list_items` tool.
pub struct ListItems;

/// The arguments of `zotero_list_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListItemsParams {
    /// Only the items in this collection
    pub collection_key: Option<ObjectKey>,
    /// Only items with all of these tags (each matched exactly, case-insensitively)
    pub tags: Option<FilterTags>,
    /// Leave out items with any of these tags
    pub exclude_tags: Option<ExcludeTags>,
    /// Only this item type, or any of these ("book || thesis" works too); a leading - leaves
    /// a type out ("-attachment")
    pub item_type: Option<ItemTypes>,
    /// Only items changed since this library version (library_version of an earlier answer)
    pub since: Option<Version>,
    /// The trash instead of the library: every trashed item, child items too (not with
    /// collection_key or top_only)
    pub trashed: Option<bool>,
    /// Top-level items only: a child item (note, attachment) counts as its parent
    #[schemars(extend("default" = true))]
    pub top_only: Option<bool>,
    /// A sort key of zotero_get_sort_values
    #[serde(default, deserialize_with = "null_is_default")]
    pub sort: ItemSort,
    /// asc or desc; by default desc for dates, asc otherwise
    pub direction: Option<SortDirection>,
    /// Most items to return; a page holds fewer when more would pass 20,000 characters
    /// (next_start says where the rest starts), and long fields are cut (truncated says)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_list_items` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListItemsData {
    /// This page of items
    pub items: Vec<Item>,
    /// Items listed in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
    /// The library's version when read: pass it as since later to see what changed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library_version: Option<u64>,
    /// Items shortened to fit the answer, and how to read them whole
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<String>,
}

impl ZoteroTool for ListItems {
    const NAME: &'static str = "zotero_list_items";
    const TITLE: &'static str = "List items";
    const DESCRIPTION: &'static str = "List items of the Zotero library without a query: of a \
        collection, with tags (all of tags, none of exclude_tags), of some item types, changed \
        since a library version, or in the trash (trashed). Top-level items only unless top_only \
        is false; newest change first unless sort and direction say otherwise. Page with start \
        and next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = ListItemsParams;
    type Data = ListItemsData;

    fn validate(p: &ListItemsParams) -> Result<(), ToolError> {
        if p.trashed == Some(true) {
            if p.collection_key.is_some() {
                return Err(ToolError::invalid(
                    "trashed",
                    "the trash is not kept per collection: leave out collection_key to list \
                     the trash, or trashed to list the collection",
                ));
            }
            if p.top_only == Some(true) {
                return Err(ToolError::invalid(
                    "top_only",
                    "the trash lists every trashed item, child items too: leave out top_only",
                ));
            }
        }
        Ok(())
    }

    async fn run(p: ListItemsParams, ctx: &ToolContext) -> Result<ListItemsData, ToolError> {
        let trashed = p.trashed.unwrap_or(false);
        let listing = ItemListing {
            filter: ItemFilter {
                tags: p.tags.unwrap_or_default().into_strings(),
                exclude_tags: p.exclude_tags.unwrap_or_default().into_strings(),
                item_types: p.item_type.unwrap_or_default().into_filter(),
                collection: p.collection_key.map(|k| k.key().clone()),
                since: p.since.map(Version::get),
                trashed,
                top_only: p.top_only.unwrap_or(!trashed),
                ..ItemFilter::default()
            },
            sort: p.sort.into_string(),
            direction: p.direction.map(Into::into),
            limit: p.limit.get(),
            start: p.start.get(),
        };
        let lib = ctx.svc.library(library(p.library))?;
        let found = lib.list_items(&listing, &ctx.cancel).await?;
        let items = found
            .page
            .items
            .into_iter()
            .map(|i| Item::new(i, lib.name()))
            .collect();
        let (items, next_start, truncated) =
            listed_page(items, listing.start, found.page.next_start);
        Ok(ListItemsData {
            items,
            total: found.page.total,
            next_start,
            library_version: found.library_version,
            truncated,
        })
    }
}
