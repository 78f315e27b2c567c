//! MCP resources: an item, its full text, notes and annotations, a collection's items and
//! the citation styles, read by `zotero://` URI. Each read is the answer of the tool that
//! reads the same thing (called with the same checks), bounded, and saying when it was cut
//! and which tool reads on. `resources/list` pages through the recently changed items of the
//! default library, not the whole library.

mod complete;
mod list;
mod render;
mod uri;

use rmcp::model::{ReadResourceResult, ResourceContents};
use serde_json::json;

pub use self::complete::{complete, Completable, COMPLETION_POOL, COMPLETION_VALUES};
use self::list::list_items_params;
pub use self::list::{list, LIST_PAGE};
use self::render::{annotations_markdown, fulltext_text, json_text, notes_markdown};
pub use self::render::{ANNOTATIONS_CHARS, NOTES_CHARS};
pub use self::uri::{link, templates, uri, Uri, View, JSON, MARKDOWN, STYLES_URI, TEXT};
use crate::error::ToolError;
use crate::tools::files::get_item_fulltext::{GetItemFulltext, GetItemFulltextParams, MaxChars};
use crate::tools::items::get_item_metadata::{
    GetItemMetadata, GetItemMetadataParams, MetadataFormat,
};
use crate::tools::items::list_items::{ListItems, ListItemsParams};
use crate::tools::notes::get_annotations::{GetAnnotations, GetAnnotationsParams};
use crate::tools::notes::get_notes::{GetNotes, GetNotesParams};
use crate::tools::params::{
    LibraryParam, Limit, NoteChars, NoteLimit, ObjectKey as ObjectKeyParam, Start, COMMON_STYLES,
    STYLES_URL,
};
use crate::tools::{self, ToolContext};

/// Characters of full text a read holds: the first page of `zotero_get_item_fulltext`.
pub const FULLTEXT_CHARS: u64 = 16_000;
/// Notes a read holds, and characters of each (all of them: [`NOTES_CHARS`]).
pub const NOTES: u64 = 25;
pub const NOTE_CHARS: u64 = 8_000;
/// Annotations a read holds at most (each text and comment at the tool's default of 1,000
/// characters; all of them: [`ANNOTATIONS_CHARS`]).
pub const ANNOTATIONS: u64 = 50;
/// Items of a collection a read holds.
pub const COLLECTION_ITEMS: u64 = 25;

fn contents(uri: &str, mime: &str, text: String) -> ReadResourceResult {
    ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(mime)])
}

/// Reads the resource at `raw`.
pub async fn read(raw: &str, ctx: &ToolContext) -> Result<ReadResourceResult, ToolError> {
    let (library, view, key) = match Uri::parse(raw)? {
        Uri::Styles => {
            let text = json_text(
                &json!({
                    "styles": COMMON_STYLES,
                    "default": "apa",
                    "note": format!("zotero_cite takes any style id of {STYLES_URL}, these and thousands more"),
                }),
                None,
            )?;
            return Ok(contents(raw, JSON, text));
        }
        Uri::Object { library, view, key } => (library, view, key),
    };
    let lib = library.to_string();
    let k = key.as_str().to_string();
    let item_key = ObjectKeyParam::from(key);
    let in_library = Some(LibraryParam(library));
    let text = match view {
        View::Item => {
            let params = GetItemMetadataParams {
                item_key,
                format: MetadataFormat::default(),
                include_abstract: true,
                field: None,
                offset: Start::default(),
                library: in_library,
            };
            json_text(&tools::run::<GetItemMetadata>(params, ctx).await?, None)?
        }
        View::FullText => {
            let params = GetItemFulltextParams {
                item_key,
                offset: Start::default(),
                max_chars: Some(MaxChars::of::<FULLTEXT_CHARS>()),
                library: in_library,
                pages: None,
            };
            let data = tools::run::<GetItemFulltext>(params, ctx).await?;
            fulltext_text(&data, &k, &lib)
        }
        View::Notes => {
            let params = GetNotesParams {
                item_key,
                limit: NoteLimit::of::<NOTES>(),
                start: Start::default(),
                max_chars: NoteChars::of::<NOTE_CHARS>(),
                offset: Start::default(),
                library: in_library,
            };
            let data = tools::run::<GetNotes>(params, ctx).await?;
            notes_markdown(&data, &k, &lib)
        }
        View::AnnotationsMarkdown | View::AnnotationsJson => {
            let params = GetAnnotationsParams {
                item_key,
                types: Default::default(),
                colors: Default::default(),
                tags: Default::default(),
                limit: Limit::of::<ANNOTATIONS>(),
                start: Start::default(),
                max_chars: Default::default(),
                library: in_library,
            };
            let data = tools::run::<GetAnnotations>(params, ctx).await?;
            if view == View::AnnotationsJson {
                let read_on = data.next_start.map(|next| {
                    format!(
                        "the first {next} annotations; zotero_get_annotations with \
                         item_key {k}, library {lib} and start {next} reads on"
                    )
                });
                json_text(&data, read_on)?
            } else {
                annotations_markdown(&data, &k, &lib)
            }
        }
        View::Collection => {
            let params = ListItemsParams {
                collection_key: Some(item_key),
                limit: Limit::of::<COLLECTION_ITEMS>(),
                library: in_library,
                ..list_items_params()
            };
            let data = tools::run::<ListItems>(params, ctx).await?;
            let read_on = data.next_start.map(|next| {
                format!(
                    "the first {next} items; zotero_list_items with collection_key \
                     {k}, library {lib} and start {next} reads on"
                )
            });
            json_text(&data, read_on)?
        }
    };
    Ok(contents(raw, view.mime_type(), text))
}
