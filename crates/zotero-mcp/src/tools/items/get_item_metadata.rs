//! `zotero_get_item_metadata`: every field of one item, its collections (with names), tags
//! with their types, relations, parent and dates, and its links (`zotero_url`, `web_url`);
//! as JSON, as Markdown, or as Zotero's own BibTeX export of it. Takes the parameters of the
//! peer server's tool of the same name (`item_key`, `include_abstract`, `format`).
//!
//! Field names: our own keys are snake_case as in every answer, while the item's fields are
//! listed under `fields` by their Zotero names (`publicationTitle`, `DOI`, `abstractNote`):
//! those are an open set that grows with Zotero's schema, they are the names Zotero's
//! documentation and `/itemFields` use, and the names a later update of the item takes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_api::export::ExportFormat;

use crate::error::ToolError;
use crate::tools::items::item_markdown;
use crate::tools::items::metadata::{field_part, first_chars, metadata, MAX_BIBTEX_CHARS};
pub use crate::tools::items::metadata::{ItemCollection, ItemMetadata, TypedTag};
use crate::tools::params::{
    library, limits, null_is_default, LibraryParam, NonBlank, ObjectKey, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_item_metadata` tool.
pub struct GetItemMetadata;

/// How the item is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum MetadataFormat {
    // Every field as structured data (default)
    #[default]
    Json,
    // A readable Markdown rendering
    Markdown,
    // Zotero's own BibTeX export of the item
    Bibtex,
}

/// The arguments of `zotero_get_item_metadata`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetItemMetadataParams {
    /// Item key
    pub item_key: ObjectKey,
    /// Answer format
    #[serde(default, deserialize_with = "null_is_default")]
    pub format: MetadataFormat,
    /// false: leave the abstract out
    #[serde(default = "yes", deserialize_with = "true_unless_false")]
    #[schemars(extend("default" = true))]
    pub include_abstract: bool,
    /// Field to read on
    pub field: Option<NonBlank<{ limits::TYPE_NAME }>>,
    /// Offset in field
    #[serde(default, deserialize_with = "null_is_default")]
    pub offset: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

fn yes() -> bool {
    true
}

fn true_unless_false<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(true))
}

/// What `zotero_get_item_metadata` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetItemMetadataData {
    /// json, markdown or bibtex, as asked
    pub format: MetadataFormat,
    /// The item's key
    pub item_key: String,
    /// Opens the item in the Zotero app: zotero://select/…
    pub zotero_url: String,
    /// The item's page on zotero.org; absent when Zotero gives none (a desktop not signed in)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web_url: Option<String>,
    /// The item (format json)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemMetadata>,
    /// The item as Markdown (format markdown)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    /// Zotero's BibTeX export of the item (format bibtex)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bibtex: Option<String>,
    /// What was left out or cut to keep the answer within 20,000 characters, and how to get
    /// it (field=NAME, offset=N: call again with those)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<String>,
    /// With field: where this part of it starts
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// With field: where the next part starts (pass it as offset); absent at the end
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

impl ZoteroTool for GetItemMetadata {
    const NAME: &'static str = "zotero_get_item_metadata";
    const TITLE: &'static str = "Get item metadata";
    const DESCRIPTION: &'static str = "Every field of one item by Zotero name, with creators, \
        tags, collections, relations, dates and links; as json, markdown or bibtex.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetItemMetadataParams;
    type Data = GetItemMetadataData;

    fn validate(p: &GetItemMetadataParams) -> Result<(), ToolError> {
        if p.field.is_none() && p.offset.get() > 0 {
            return Err(ToolError::invalid(
                "offset",
                "'offset' applies to field: give field too, or leave out offset",
            ));
        }
        if p.field.is_some() && p.format == MetadataFormat::Bibtex {
            return Err(ToolError::invalid(
                "field",
                "field reads a field as json or markdown: leave out format bibtex or field",
            ));
        }
        Ok(())
    }

    async fn run(
        p: GetItemMetadataParams,
        ctx: &ToolContext,
    ) -> Result<GetItemMetadataData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let export = (p.format == MetadataFormat::Bibtex).then_some(ExportFormat::Bibtex);
        let record = lib
            .item_record(p.item_key.key(), export, &ctx.cancel)
            .await?;
        let mut truncated = Vec::new();
        let zotero_url = lib.name().zotero_url(p.item_key.key());
        let mut data = GetItemMetadataData {
            format: p.format,
            item_key: record.key.clone(),
            zotero_url,
            web_url: record.web_url.clone(),
            item: None,
            markdown: None,
            bibtex: None,
            truncated: Vec::new(),
            offset: None,
            next_offset: None,
        };
        if let Some(field) = &p.field {
            let (item, next) = field_part(&record, field.as_str(), p.offset.get())?;
            data.offset = Some(p.offset.get());
            data.next_offset = next;
            match p.format {
                MetadataFormat::Markdown => {
                    data.markdown = Some(item_markdown::render(
                        &item,
                        &data.zotero_url,
                        data.web_url.as_deref(),
                    ));
                }
                _ => data.item = Some(item),
            }
            return Ok(data);
        }
        match p.format {
            MetadataFormat::Json => {
                data.item = Some(metadata(&record, p.include_abstract, &mut truncated));
            }
            MetadataFormat::Markdown => {
                let item = metadata(&record, p.include_abstract, &mut truncated);
                data.markdown = Some(item_markdown::render(
                    &item,
                    &data.zotero_url,
                    data.web_url.as_deref(),
                ));
            }
            MetadataFormat::Bibtex => {
                let text = record.export.clone().unwrap_or_default();
                let (kept, n, cut) = first_chars(&text, MAX_BIBTEX_CHARS);
                if cut {
                    truncated.push(format!(
                        "bibtex: the first {n} of {} characters; zotero_export with item_keys \
                         [\"{}\"] and format bibtex exports it too",
                        text.chars().count(),
                        record.key
                    ));
                }
                data.bibtex = Some(kept);
            }
        }
        data.truncated = truncated;
        Ok(data)
    }
}
