//! `zotero_create_item`: a new regular item from its type's template, created exactly once.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{
    given, library, limits, null_is_default, Creator, FieldText, FieldValue, LibraryParam, List,
    NonBlank, Tags,
};
use crate::tools::support::output::Item;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::write::NewItem;

/// The `zotero_create_item` tool.
pub struct CreateItem;

/// The arguments of `zotero_create_item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateItemParams {
    /// journalArticle, book, preprint, thesis, …
    pub item_type: NonBlank<{ limits::TYPE_NAME }>,
    /// Title
    pub title: FieldValue,
    /// Authors, editors, …
    #[serde(default, deserialize_with = "null_is_default")]
    pub creators: List<Creator, { limits::CREATORS }>,
    /// e.g. 2017-06-12
    pub date: Option<FieldText>,
    /// e.g. 10.1000/xyz
    pub doi: Option<FieldText>,
    /// URL
    pub url: Option<FieldText>,
    /// Abstract
    #[serde(rename = "abstract")]
    pub abstract_note: Option<FieldText>,
    /// Tag names
    pub tags: Option<Tags>,
    /// 'Field: value' lines
    pub extra: Option<FieldText>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Preview; write nothing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_create_item` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreateItemData {
    /// Key of the new item ("" in a dry run)
    pub item_key: String,
    /// Its version (0 in a dry run)
    pub version: u64,
    /// The item as created (in a dry run: as it would be)
    pub item: Item,
    /// Inputs the item type has no field for, written into extra as 'Field: value' lines
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved_to_extra: Vec<&'static str>,
    /// Present in a dry run: nothing was written; item is the item that would be created,
    /// and item_key is "" and version 0 (they exist once it is written)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Dry run: each field that would be written with a value, by its Zotero name
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<BTreeMap<String, String>>,
}

impl ZoteroTool for CreateItem {
    const NAME: &'static str = "zotero_create_item";
    const TITLE: &'static str = "Create item";
    const DESCRIPTION: &'static str = "Create an item; answers its key and version. Always \
        creates: search first. A field its type lacks goes into extra (moved_to_extra). Undo: \
        zotero_trash_items.";
    const HINTS: Hints = Hints::CREATE;
    const SET: ToolSet = ToolSet::Write;
    type Params = CreateItemParams;
    type Data = CreateItemData;

    fn validate(p: &CreateItemParams) -> Result<(), ToolError> {
        let item_type = p.item_type.as_str();
        if matches!(item_type, "attachment" | "note" | "annotation") {
            return Err(ToolError::invalid(
                "item_type",
                format!(
                    "'item_type' cannot be '{item_type}' here: create the regular item, then attach files with zotero_upload_attachment or zotero_attach_arxiv_pdf"
                ),
            ));
        }
        creators(&p.creators).map(drop)
    }

    async fn run(p: CreateItemParams, ctx: &ToolContext) -> Result<CreateItemData, ToolError> {
        let new = NewItem {
            item_type: p.item_type.into_string(),
            title: p.title.into_string(),
            creators: creators(&p.creators)?,
            date: given(p.date),
            doi: given(p.doi),
            url: given(p.url),
            abstract_note: given(p.abstract_note),
            tags: p.tags.unwrap_or_default().into_strings(),
            extra: given(p.extra),
        };
        let lib = ctx.svc.library(library(p.library))?;
        if p.dry_run {
            let plan = lib.plan_item(&new, &ctx.cancel).await?;
            let item = plan.to_item();
            return Ok(CreateItemData {
                item_key: item.item_key.clone(),
                version: item.version,
                item: Item::new(item, lib.name()),
                fields: Some(plan.fields()),
                moved_to_extra: plan.moved_to_extra,
                dry_run: true,
            });
        }
        let created = lib.create_item(&new, &ctx.cancel).await?;
        Ok(CreateItemData {
            item_key: created.item.item_key.clone(),
            version: created.item.version,
            item: Item::new(created.item, lib.name()),
            moved_to_extra: created.moved_to_extra,
            dry_run: false,
            fields: None,
        })
    }
}

/// The creators in Zotero's shape; a creator outside the seed's oneOf is refused naming the
/// field to fix (`creators[1].last_name`).
pub(crate) fn creators(list: &[Creator]) -> Result<Vec<zotero_api::model::Creator>, ToolError> {
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            c.check().map_err(|(field, msg)| {
                let path = format!("creators[{i}].{field}");
                ToolError::invalid(&path, format!("'{path}' {msg}"))
            })
        })
        .collect()
}
