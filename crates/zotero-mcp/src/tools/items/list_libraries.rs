//! `zotero_list_libraries`: the user library and every group the key (or the desktop app)
//! can reach, with the string to pass as `library` and what may be done in each.

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::ToolError;
use crate::tools::items::get_sort_values::NoParams;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_list_libraries` tool.
pub struct ListLibraries;

/// What `zotero_list_libraries` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LibrariesData {
    /// The user library first, then the groups
    pub libraries: Vec<LibraryEntry>,
}

/// One library the key can read.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LibraryEntry {
    /// Pass this as `library` to any tool
    pub library: String,
    /// The library's name
    pub name: String,
    /// user or group
    #[serde(rename = "type")]
    #[schemars(rename = "type")]
    pub kind: &'static str,
    /// A group's kind: Private, PublicOpen or PublicClosed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_type: Option<String>,
    /// Items in the library, where Zotero says so without another request
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_items: Option<u64>,
    /// May read items and collections
    pub read: bool,
    /// May create and change items and collections
    pub write: bool,
    /// May read and upload attachment files
    pub files: bool,
    /// May read notes
    pub notes: bool,
}

impl ZoteroTool for ListLibraries {
    const NAME: &'static str = "zotero_list_libraries";
    const TITLE: &'static str = "List libraries";
    const DESCRIPTION: &'static str = "The user library and every group library the API key \
        (or the Zotero desktop app) can reach: the `library` value to pass to other tools, \
        the name, and whether the key may read, write, upload files and read notes there.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = NoParams;
    type Data = LibrariesData;

    async fn run(_: NoParams, ctx: &ToolContext) -> Result<LibrariesData, ToolError> {
        let found = ctx.svc.client.libraries(&ctx.cancel).await?;
        let libraries = found
            .into_iter()
            .map(|l| LibraryEntry {
                library: l.library.to_string(),
                name: l.name,
                kind: l.kind,
                group_type: l.group_type,
                num_items: l.num_items,
                read: l.permissions.library,
                write: l.permissions.write,
                files: l.permissions.files,
                notes: l.permissions.notes,
            })
            .collect();
        Ok(LibrariesData { libraries })
    }
}
