//! `zotero_update_item`: change an item's fields, creators, tags and collections, checked
//! against its version and merged with what was changed in Zotero meanwhile (zotero-api's
//! edit engine).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::items::ItemUpdate;
use crate::tools::params::{
    library, limits, FieldMap, FieldText, LibraryParam, List, ObjectKey, Tags, Version,
};
use crate::tools::support::changes::{single, Change, ObjectResult, Status};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{ObjectKind, SetEdit};

/// The `zotero_update_item` tool.
pub struct UpdateItem;

/// The arguments of `zotero_update_item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateItemParams {
    /// The item's key
    pub item_key: ObjectKey,
    /// New title ("" clears a field)
    pub title: Option<FieldText>,
    /// New date, as written
    pub date: Option<FieldText>,
    /// New DOI
    pub doi: Option<FieldText>,
    /// New URL
    pub url: Option<FieldText>,
    /// New abstract
    #[serde(rename = "abstract")]
    pub abstract_note: Option<FieldText>,
    /// New Extra field
    pub extra: Option<FieldText>,
    /// Any other field of the item's type by its Zotero name, e.g. {"volume": "12", "pages": "1-9"}
    pub fields: Option<FieldMap>,
    /// Replace the creators with these
    pub creators: Option<List<crate::tools::params::Creator, { limits::CREATORS }>>,
    /// Tags to add (what the item has is kept)
    pub add_tags: Option<Tags>,
    /// Tags to remove
    pub remove_tags: Option<Tags>,
    /// Replace the tags with these (tags added in Zotero meanwhile are kept); not with add_tags/remove_tags
    pub tags: Option<Tags>,
    /// Keys of collections to put the item in
    pub add_collections: Option<List<ObjectKey, { limits::BATCH }>>,
    /// Keys of collections to take it out of (the item stays in the library)
    pub remove_collections: Option<List<ObjectKey, { limits::BATCH }>>,
    /// The version you read: refuse if the item changed since
    pub version: Option<Version>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_update_item` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateItemData {
    /// The item's key
    pub item_key: String,
    /// changed, unchanged (already as asked) or would_change (dry run)
    pub status: Status,
    /// Its version after this call
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Each field before → after
    pub changes: Vec<Change>,
    /// Nothing was written
    pub dry_run: bool,
    /// Opens the item in the Zotero desktop app
    pub zotero_url: String,
}

impl ZoteroTool for UpdateItem {
    const NAME: &'static str = "zotero_update_item";
    const TITLE: &'static str = "Update item";
    const DESCRIPTION: &'static str = "Change an item: fields (or any field by its Zotero name \
        in fields), creators (replaced), tags (add_tags/remove_tags, or tags to replace) and \
        collections. Version-checked: a field you set that changed in Zotero meanwhile stops the \
        write and the error names both values. Zotero keeps no old values: changes answers \
        before → after. dry_run previews.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = UpdateItemParams;
    type Data = UpdateItemData;

    fn validate(p: &UpdateItemParams) -> Result<(), ToolError> {
        if p.tags.is_some() && (p.add_tags.is_some() || p.remove_tags.is_some()) {
            return Err(ToolError::invalid(
                "tags",
                "give 'tags' (replace) or 'add_tags'/'remove_tags', not both",
            ));
        }
        if let (Some(add), Some(remove)) = (&p.add_tags, &p.remove_tags) {
            let remove = remove.clone().into_strings();
            if let Some(both) = add
                .clone()
                .into_strings()
                .iter()
                .find(|t| remove.contains(t))
            {
                return Err(ToolError::invalid(
                    "remove_tags",
                    format!(
                        "the tag '{}' is in both add_tags and remove_tags",
                        crate::tools::params::quote(both)
                    ),
                ));
            }
        }
        if let (Some(add), Some(remove)) = (&p.add_collections, &p.remove_collections) {
            if let Some(both) = add.iter().find(|k| remove.iter().any(|r| r == *k)) {
                return Err(ToolError::invalid(
                    "remove_collections",
                    format!(
                        "the collection {both} is in both add_collections and remove_collections"
                    ),
                ));
            }
        }
        if let Some(creators) = &p.creators {
            crate::tools::items::create_item::creators(creators)?;
        }
        let nothing = named_values(p).is_empty()
            && p.fields.as_ref().is_none_or(FieldMap::is_empty)
            && p.creators.is_none()
            && p.add_tags.is_none()
            && p.remove_tags.is_none()
            && p.tags.is_none()
            && p.add_collections.is_none()
            && p.remove_collections.is_none();
        if nothing {
            return Err(ToolError::invalid(
                "fields",
                "nothing to change: give fields, creators, tags or collections",
            ));
        }
        Ok(())
    }

    async fn run(p: UpdateItemParams, ctx: &ToolContext) -> Result<UpdateItemData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.item_key.key().clone();
        let creators = match &p.creators {
            Some(c) => Some(crate::tools::items::create_item::creators(c)?),
            None => None,
        };
        let keys = |l: &Option<List<ObjectKey, { limits::BATCH }>>| -> Vec<String> {
            l.as_ref()
                .map(|l| l.iter().map(|k| k.to_string()).collect())
                .unwrap_or_default()
        };
        let update = ItemUpdate {
            key: key.clone(),
            named: named_values(&p),
            fields: p.fields.as_ref().map(FieldMap::entries).unwrap_or_default(),
            creators,
            tags: SetEdit {
                add: p
                    .add_tags
                    .clone()
                    .map(Tags::into_strings)
                    .unwrap_or_default(),
                remove: p
                    .remove_tags
                    .clone()
                    .map(Tags::into_strings)
                    .unwrap_or_default(),
                replace: p.tags.clone().map(Tags::into_strings),
                ..SetEdit::default()
            },
            collections: SetEdit {
                add: keys(&p.add_collections),
                remove: keys(&p.remove_collections),
                ..SetEdit::default()
            },
            expect_version: p.version.map(Version::get),
            dry_run: p.dry_run,
        };
        let outcome = ctx.svc.update_item(&lib, update, &ctx.cancel).await?;
        let result = single(
            ObjectResult::from_outcome(ObjectKind::Item, outcome),
            "item",
        )?;
        Ok(UpdateItemData {
            item_key: result.key,
            status: result.status,
            version: result.version,
            changes: result.changes,
            dry_run: p.dry_run,
            zotero_url: lib.name().zotero_url(&key),
        })
    }
}

/// The named field arguments given, by their argument names.
fn named_values(p: &UpdateItemParams) -> Vec<(&'static str, &str)> {
    let given: [(&'static str, &Option<FieldText>); 6] = [
        ("title", &p.title),
        ("date", &p.date),
        ("doi", &p.doi),
        ("url", &p.url),
        ("abstract", &p.abstract_note),
        ("extra", &p.extra),
    ];
    given
        .into_iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| (name, v.as_str())))
        .collect()
}
