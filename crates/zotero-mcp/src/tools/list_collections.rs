//! `zotero_list_collections`: one page of the library's collections.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::output::Collection;
use super::params::{library, null_is_default, LibraryParam, Limit, Start};
use super::{Hints, ToolContext, ToolSet, ZoteroTool};
use crate::envelope::ToolError;

pub struct ListCollections;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCollectionsParams {
    /// Most collections to return
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// 0, or next_start of the previous answer
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>; the server's default library if left out
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListCollectionsData {
    /// This page of collections
    pub collections: Vec<Collection>,
    /// Collections in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

impl ZoteroTool for ListCollections {
    const NAME: &'static str = "zotero_list_collections";
    const TITLE: &'static str = "List collections";
    const DESCRIPTION: &'static str = "List the collections of the Zotero library: key, \
        name, parent and number of items. Page with start and next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = ListCollectionsParams;
    type Data = ListCollectionsData;

    async fn run(
        p: ListCollectionsParams,
        ctx: &ToolContext,
    ) -> Result<ListCollectionsData, ToolError> {
        let (limit, start) = (p.limit.get(), p.start.get());
        let page = ctx
            .svc
            .library(library(p.library))?
            .list_collections(limit, start, &ctx.cancel)
            .await?;
        Ok(ListCollectionsData {
            collections: page.items.into_iter().map(Collection::from).collect(),
            total: page.total,
            next_start: page.next_start,
        })
    }
}
