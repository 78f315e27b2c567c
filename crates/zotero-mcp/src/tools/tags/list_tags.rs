//! `zotero_list_tags`: the tags of the library's items, of one collection's, or of the
//! items a filter finds, with each tag's type and count; a substring filter on names;
//! sorted by name or count, paged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget;
use crate::error::ToolError;
use crate::tools::params::{
    library, limits, null_is_default, FilterTags, ItemTypes, LibraryParam, Limit, NonBlank,
    ObjectKey, QMode, SortDirection, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::items::{Direction, ItemFilter};
use zotero_api::tags::{TagEntry, TagListing, TagSort};

/// The `zotero_list_tags` tool.
pub struct ListTags;

/// How tags are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum TagOrder {
    #[default]
    Name,
    Count,
}

/// The arguments of `zotero_list_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTagsParams {
    /// Only tags whose name contains this
    pub query: Option<NonBlank<{ limits::TAG }>>,
    /// Only the tags of the items in this collection
    pub collection_key: Option<ObjectKey>,
    /// Only the tags of items this quick search finds (titles, creators, years)
    pub item_query: Option<NonBlank<{ limits::QUERY }>>,
    /// How item_query matches: titleCreatorYear (default) or everything
    pub item_qmode: Option<QMode>,
    /// Only the tags of items carrying all of these tags
    pub item_tags: Option<FilterTags>,
    /// Only the tags of items of this type or of any of these; a leading - leaves a type out
    pub item_type: Option<ItemTypes>,
    /// name (default) or count: how many items carry the tag
    #[serde(default, deserialize_with = "null_is_default")]
    #[schemars(extend("default" = "name"))]
    pub sort: TagOrder,
    /// asc or desc; by default asc by name, desc by count (most used first)
    pub direction: Option<SortDirection>,
    /// Most tags to return; a page holds fewer when more would pass 20,000 characters
    /// (next_start says where the rest starts)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// A tag.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Tag {
    /// The name
    pub tag: String,
    /// 0: added by hand, 1: added automatically (imported)
    #[serde(rename = "type")]
    #[schemars(rename = "type")]
    pub tag_type: u64,
    /// Items of the whole library carrying it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_items: Option<u64>,
}

impl From<TagEntry> for Tag {
    fn from(t: TagEntry) -> Self {
        Self {
            tag: t.name,
            tag_type: t.tag_type,
            num_items: t.num_items,
        }
    }
}

/// What `zotero_list_tags` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListTagsData {
    /// This page of tags
    pub tags: Vec<Tag>,
    /// Tags in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

impl ZoteroTool for ListTags {
    const NAME: &'static str = "zotero_list_tags";
    const TITLE: &'static str = "List tags";
    const DESCRIPTION: &'static str = "List the tags of the Zotero library's items (not in the \
        trash), of one collection's items, or of the items a filter finds (item_query, \
        item_tags, item_type), each with its type (0 by hand, 1 automatic) and num_items in the \
        whole library. query keeps names containing it. Page with start and next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = ListTagsParams;
    type Data = ListTagsData;

    fn validate(p: &ListTagsParams) -> Result<(), ToolError> {
        if p.item_qmode.is_some() && p.item_query.is_none() {
            return Err(ToolError::invalid(
                "item_qmode",
                "applies to item_query: give item_query too, or leave out item_qmode",
            ));
        }
        Ok(())
    }

    async fn run(p: ListTagsParams, ctx: &ToolContext) -> Result<ListTagsData, ToolError> {
        let sort = match p.sort {
            TagOrder::Name => TagSort::Name,
            TagOrder::Count => TagSort::Count,
        };
        let direction = match (p.direction, sort) {
            (Some(d), _) => d.into(),
            (None, TagSort::Name) => Direction::Asc,
            (None, TagSort::Count) => Direction::Desc,
        };
        let listing = TagListing {
            items: ItemFilter {
                query: p.item_query.map(NonBlank::into_string),
                qmode: p.item_qmode.map(Into::into).unwrap_or_default(),
                tags: p.item_tags.unwrap_or_default().into_strings(),
                item_types: p.item_type.unwrap_or_default().into_filter(),
                collection: p.collection_key.map(|k| k.key().clone()),
                ..ItemFilter::default()
            },
            contains: p.query.map(NonBlank::into_string),
            sort,
            direction,
            limit: p.limit.get(),
            start: p.start.get(),
        };
        let page = ctx
            .svc
            .library(library(p.library))?
            .list_tags(&listing, &ctx.cancel)
            .await?;
        let (tags, cut) = budget::fit_page(
            page.items.into_iter().map(Tag::from).collect(),
            budget::PAGE_CHARS,
        );
        Ok(ListTagsData {
            next_start: budget::next_start(listing.start, tags.len(), cut, page.next_start),
            tags,
            total: page.total,
        })
    }
}
