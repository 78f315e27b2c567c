//! `zotero_export`: items, or a collection's top-level items, in a format Zotero exports
//! (BibTeX, BibLaTeX, CSL JSON, RIS, …), written by Zotero's own translators. Paged: a page
//! holds at most `limit` items and stays under 15,000 bytes (a page that would be larger holds
//! fewer items), and `next_start` says where the next one starts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget;
use crate::error::ToolError;
use crate::tools::params::{
    library, null_is_default, ExportFormatParam, ExportLimit, LibraryParam, List, ObjectKey, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_export` tool.
pub struct Export;

/// The most exported text one answer carries (bytes): with the JSON escapes of its line
/// breaks and quotes, within the budget of 20,000 characters.
pub const MAX_EXPORT_BYTES: usize = 15_000;
/// The most of one item's export read to answer a part of it from `offset` (bytes).
pub const MAX_READ_ON_BYTES: usize = 4_000_000;

/// The arguments of `zotero_export`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    /// Keys of the items to export, up to 50; or give collection_key
    pub item_keys: Option<List<ObjectKey, 50>>,
    /// Export this collection's top-level items instead, page by page
    pub collection_key: Option<ObjectKey>,
    /// bibtex (default), biblatex, csljson, ris, or another format Zotero exports
    #[serde(default = "bibtex", deserialize_with = "format_or_default")]
    #[schemars(extend("default" = "bibtex"))]
    pub format: ExportFormatParam,
    /// Most items in one page (1 to 50, default 25); a page whose export would be over
    /// 15,000 bytes holds fewer (next_start says where the rest starts)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: ExportLimit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// Characters to skip: next_offset of an answer whose one item's export was cut
    #[serde(default, deserialize_with = "null_is_default")]
    pub offset: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

fn bibtex() -> ExportFormatParam {
    ExportFormatParam::Bibtex
}

fn format_or_default<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<ExportFormatParam, D::Error> {
    Ok(Option::<ExportFormatParam>::deserialize(d)?.unwrap_or(ExportFormatParam::Bibtex))
}

/// What `zotero_export` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExportData {
    /// The format, by Zotero's name
    pub format: String,
    /// Its media type on the web API
    pub content_type: String,
    /// The export of this page, as Zotero's translator wrote it (CSL JSON: one array)
    pub text: String,
    /// Items this page covers (notes and attachments among them export as nothing)
    pub count: u64,
    /// Items the export covers in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
    /// Present when one item's export alone was over the page size and was cut
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Where the rest of a cut export starts: pass it as offset, with the same start, to
    /// read on
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Keys of item_keys that are not in this library
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_keys: Vec<String>,
}

impl ZoteroTool for Export {
    const NAME: &'static str = "zotero_export";
    const TITLE: &'static str = "Export items";
    const DESCRIPTION: &'static str = "Export Zotero items (item_keys, up to 50) or a \
        collection's top-level items (collection_key) as BibTeX, BibLaTeX, CSL JSON, RIS or \
        another format Zotero exports, written by Zotero's own translators. Paged: give start \
        = next_start for the next page.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Cite;
    type Params = ExportParams;
    type Data = ExportData;

    fn validate(p: &ExportParams) -> Result<(), ToolError> {
        match (&p.item_keys, &p.collection_key) {
            (Some(_), Some(_)) => Err(ToolError::invalid(
                "collection_key",
                "give either 'item_keys' or 'collection_key', not both",
            )),
            (None, None) => Err(ToolError::invalid(
                "item_keys",
                "give 'item_keys' (the items to export) or 'collection_key' (a collection to export)",
            )),
            (Some(keys), None) if keys.is_empty() => Err(ToolError::invalid(
                "item_keys",
                "'item_keys' must list at least one item key",
            )),
            _ => Ok(()),
        }
    }

    async fn run(p: ExportParams, ctx: &ToolContext) -> Result<ExportData, ToolError> {
        let format = p.format;
        let lib = ctx.svc.library(library(p.library))?;
        let offset = p.offset.get();
        // Reading a cut export on: the page's one item, whole (bounded), from offset.
        let (page, max_bytes) = if offset > 0 {
            ((1, p.start.get()), MAX_READ_ON_BYTES)
        } else {
            ((p.limit.get(), p.start.get()), MAX_EXPORT_BYTES)
        };
        let exported = match (&p.item_keys, &p.collection_key) {
            (_, Some(collection)) => {
                lib.export_collection(collection.key(), format, page, max_bytes, &ctx.cancel)
                    .await?
            }
            (keys, None) => {
                let mut unique: Vec<zotero_api::ObjectKey> = Vec::new();
                for k in keys.iter().flat_map(|k| k.iter()) {
                    if !unique.contains(k.key()) {
                        unique.push(k.key().clone());
                    }
                }
                lib.export_items(&unique, format, page, max_bytes, &ctx.cancel)
                    .await?
            }
        };
        let (text, next_offset) = if offset > 0 {
            let total = exported.text.chars().count() as u64;
            if offset > total {
                return Err(ToolError::invalid(
                    "offset",
                    format!(
                        "'offset' must be at most {total}, the characters of the export, got \
                         {offset}"
                    ),
                ));
            }
            let rest: String = exported
                .text
                .chars()
                .skip(usize::try_from(offset).unwrap_or(usize::MAX))
                .collect();
            match budget::cut_json(&rest, MAX_EXPORT_BYTES) {
                Some((kept, n)) => (kept.to_string(), Some(offset.saturating_add(n as u64))),
                None => (rest, None),
            }
        } else {
            let shown = exported.text.chars().count() as u64;
            (exported.text, exported.truncated.then_some(shown))
        };
        Ok(ExportData {
            format: format.api_name().to_string(),
            content_type: format.content_type().to_string(),
            text,
            next_offset,
            count: exported.items,
            total: exported.total,
            next_start: exported.next_start,
            truncated: exported.truncated || next_offset.is_some(),
            missing_keys: exported.missing_keys,
        })
    }
}
