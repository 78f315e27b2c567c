//! `zotero_list_collections`: one page of the library's collections (the seed's), of its
//! top level, or of one collection's subcollections; or the whole tree (or one branch)
//! nested, in one call, bounded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget;
use crate::error::ToolError;
use crate::tools::params::{library, null_is_default, LibraryParam, Limit, ObjectKey, Start};
use crate::tools::support::output::Collection;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::collection_tree::{CollectionScope, TreeNode, TREE_MAX};

/// The `zotero_list_collections` tool.
pub struct ListCollections;

/// The arguments of `zotero_list_collections`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCollectionsParams {
    /// Collections per page
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// Subcollections of this one
    pub parent_key: Option<ObjectKey>,
    /// Top level only
    pub top_only: Option<bool>,
    /// Whole tree nested, up to 500; no paging
    pub tree: Option<bool>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// A collection, with its subcollections in a tree.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CollectionEntry {
    /// The collection (its fields inline)
    #[serde(flatten)]
    pub collection: Collection,
    /// tree only: the subcollections, each shaped like this one; absent for none
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub children: Option<Vec<CollectionEntry>>,
}

impl CollectionEntry {
    fn flat(c: zotero_api::model::Collection) -> Self {
        Self {
            collection: c.into(),
            children: None,
        }
    }

    /// A node of the tree; under its parent, its `parent_key` goes without saying.
    fn nested(node: TreeNode, under_parent: bool) -> Self {
        let mut collection = Collection::from(node.collection);
        if under_parent {
            collection.parent_key = None;
        }
        let children: Vec<CollectionEntry> = node
            .children
            .into_iter()
            .map(|n| Self::nested(n, true))
            .collect();
        Self {
            collection,
            children: (!children.is_empty()).then_some(children),
        }
    }
}

/// What `zotero_list_collections` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListCollectionsData {
    /// This page of collections (tree: the top of the tree)
    pub collections: Vec<CollectionEntry>,
    /// Collections in all (tree: in the tree)
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
    /// tree only, when cut at 500 collections (a branch: 25 requests): at least this many
    /// were left out; one whose parent was left out is at the top with its parent_key. List
    /// a branch with parent_key
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<u64>,
}

impl ZoteroTool for ListCollections {
    const NAME: &'static str = "zotero_list_collections";
    const TITLE: &'static str = "List collections";
    const DESCRIPTION: &'static str = "List collections: key, name, parent and item count; tree: \
        true answers the whole tree in one call.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = ListCollectionsParams;
    type Data = ListCollectionsData;

    fn validate(p: &ListCollectionsParams) -> Result<(), ToolError> {
        let top_only = p.top_only == Some(true);
        if top_only && p.parent_key.is_some() {
            return Err(ToolError::invalid(
                "top_only",
                "lists the top level; parent_key lists below a collection: give one of them",
            ));
        }
        if p.tree == Some(true) {
            if top_only {
                return Err(ToolError::invalid(
                    "top_only",
                    "a tree starts at the top level already: leave out top_only",
                ));
            }
            if p.start.get() != 0 {
                return Err(ToolError::invalid(
                    "start",
                    format!(
                        "a tree comes in one answer (up to {TREE_MAX} collections): leave out start"
                    ),
                ));
            }
        }
        Ok(())
    }

    async fn run(
        p: ListCollectionsParams,
        ctx: &ToolContext,
    ) -> Result<ListCollectionsData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let parent = p.parent_key.map(|k| k.key().clone());
        if p.tree == Some(true) {
            let tree = lib.collection_tree(parent.as_ref(), &ctx.cancel).await?;
            return Ok(ListCollectionsData {
                collections: tree
                    .roots
                    .into_iter()
                    .map(|n| CollectionEntry::nested(n, false))
                    .collect(),
                total: tree.count,
                next_start: None,
                omitted: tree.omitted,
            });
        }
        let (limit, start) = (p.limit.get(), p.start.get());
        let page = match (parent, p.top_only == Some(true)) {
            // The seed's listing, unchanged.
            (None, false) => lib.list_collections(limit, start, &ctx.cancel).await?,
            (None, true) => {
                lib.collections_in(&CollectionScope::Top, limit, start, &ctx.cancel)
                    .await?
            }
            (Some(k), _) => {
                let scope = CollectionScope::Children(k);
                lib.collections_in(&scope, limit, start, &ctx.cancel)
                    .await?
            }
        };
        let (collections, cut) = budget::fit_page(
            page.items.into_iter().map(CollectionEntry::flat).collect(),
            budget::PAGE_CHARS,
        );
        Ok(ListCollectionsData {
            next_start: budget::next_start(start, collections.len(), cut, page.next_start),
            collections,
            total: page.total,
            omitted: None,
        })
    }
}
