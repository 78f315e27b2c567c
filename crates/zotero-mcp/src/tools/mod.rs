//! The MCP tools: one file per tool, each with its spec (name, description, schemas, hints)
//! and one function from raw arguments to the envelope's `data`.

pub mod add_item_to_collection;
pub mod args;
pub mod attach_arxiv_pdf;
pub mod create_item;
pub mod get_item;
pub mod get_sort_values;
pub mod list_collections;
pub mod schema;
pub mod search_items;
pub mod upload_attachment;

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::envelope::ToolError;
use zotero_api::client::ZoteroClient;
use zotero_api::upload::ProgressFn;
use zotero_api::{Library, LibraryRef};
use zotero_sources::Fetcher;

/// What a tool publishes about itself.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    /// The schema of the envelope's `data` on success.
    pub data_schema: fn() -> Value,
    /// Reads only (also: not destructive, idempotent).
    pub read_only: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// Talks to Zotero (outside the server).
    pub open_world: bool,
}

/// What a running tool call gets.
pub struct ToolContext {
    pub client: Arc<ZoteroClient>,
    /// The library a call is about when it does not name one (`ZOTERO_LIBRARY`).
    pub default_library: LibraryRef,
    /// Fetches upload sources (`file_url`, arXiv) and reads local files.
    pub fetcher: Arc<Fetcher>,
    /// `{arxiv_base}/pdf/<id>` is where arXiv PDFs come from.
    pub arxiv_base: Arc<str>,
    /// Cancelled when the MCP client cancels the call.
    pub cancel: CancellationToken,
    /// Set when the client asked for progress notifications (a `progressToken`).
    pub progress: Option<ProgressFn>,
}

impl ToolContext {
    /// The library this call is about.
    pub fn library(&self) -> Result<Library<'_>, ToolError> {
        Ok(self.client.library(self.default_library)?)
    }
}

/// Every tool, so that dispatch is checked by the compiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    SearchItems,
    ListCollections,
    GetItem,
    GetSortValues,
    CreateItem,
    UploadAttachment,
    AttachArxivPdf,
    AddItemToCollection,
}

impl ToolName {
    /// In the seed's order.
    pub const ALL: [ToolName; 8] = [
        ToolName::SearchItems,
        ToolName::ListCollections,
        ToolName::GetItem,
        ToolName::CreateItem,
        ToolName::UploadAttachment,
        ToolName::AttachArxivPdf,
        ToolName::GetSortValues,
        ToolName::AddItemToCollection,
    ];

    pub fn spec(self) -> &'static ToolSpec {
        match self {
            ToolName::SearchItems => &search_items::SPEC,
            ToolName::ListCollections => &list_collections::SPEC,
            ToolName::GetItem => &get_item::SPEC,
            ToolName::GetSortValues => &get_sort_values::SPEC,
            ToolName::CreateItem => &create_item::SPEC,
            ToolName::UploadAttachment => &upload_attachment::SPEC,
            ToolName::AttachArxivPdf => &attach_arxiv_pdf::SPEC,
            ToolName::AddItemToCollection => &add_item_to_collection::SPEC,
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.spec().name == name)
    }

    pub async fn run(
        self,
        ctx: &ToolContext,
        args: Option<&Map<String, Value>>,
    ) -> Result<Value, ToolError> {
        match self {
            ToolName::SearchItems => search_items::run(ctx, args).await,
            ToolName::ListCollections => list_collections::run(ctx, args).await,
            ToolName::GetItem => get_item::run(ctx, args).await,
            ToolName::GetSortValues => get_sort_values::run(ctx, args).await,
            ToolName::CreateItem => create_item::run(ctx, args).await,
            ToolName::UploadAttachment => upload_attachment::run(ctx, args).await,
            ToolName::AttachArxivPdf => attach_arxiv_pdf::run(ctx, args).await,
            ToolName::AddItemToCollection => add_item_to_collection::run(ctx, args).await,
        }
    }
}
