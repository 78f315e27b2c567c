//! `zotero_get_item`: one item's metadata with the summaries of its attachments.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{library, LibraryParam, ObjectKey};
use crate::tools::support::output::ItemWithAttachments;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_item` tool.
pub struct GetItem;

/// The arguments of `zotero_get_item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetItemParams {
    /// Item key
    pub item_key: ObjectKey,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_get_item` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetItemData {
    /// The item and its attachments
    pub item: ItemWithAttachments,
    /// What was cut to keep the answer within 20,000 characters (a long abstract: the first
    /// 5,000), and the call that reads on
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<String>,
}

impl ZoteroTool for GetItem {
    const NAME: &'static str = "zotero_get_item";
    const TITLE: &'static str = "Get item";
    const DESCRIPTION: &'static str = "Fetch one item by key: its metadata and attachments.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetItemParams;
    type Data = GetItemData;

    async fn run(p: GetItemParams, ctx: &ToolContext) -> Result<GetItemData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let item = lib.get_item(p.item_key.key(), &ctx.cancel).await?;
        let (item, truncated) = ItemWithAttachments::new(item, lib.name()).shortened();
        Ok(GetItemData { item, truncated })
    }
}
