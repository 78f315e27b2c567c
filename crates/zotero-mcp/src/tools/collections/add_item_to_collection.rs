//! `zotero_add_item_to_collection`: put an item into a collection given by key or by name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::edit::edit_one;
use crate::tools::params::{library, limits, LibraryParam, NonBlank, ObjectKey};
use crate::tools::support::changes::{self, Change, ObjectResult, Status};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::collections::CollectionRef;
use zotero_api::edit::{Edit, ObjectKind};
use zotero_api::Library;

/// The `zotero_add_item_to_collection` tool.
pub struct AddItemToCollection;

/// The arguments of `zotero_add_item_to_collection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddItemToCollectionParams {
    /// The item's key
    pub item_key: ObjectKey,
    /// Collection key
    pub collection_key: Option<ObjectKey>,
    /// Collection name, any case
    pub collection_name: Option<NonBlank<{ limits::COLLECTION_NAME }>>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Preview; write nothing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_add_item_to_collection` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AddItemToCollectionData {
    /// The item added
    pub item_key: String,
    /// The collection it is in
    pub collection_key: String,
    /// The item was in the collection already; nothing was written
    pub already_member: bool,
    /// Dry run: would_change, or unchanged (already_member)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Dry run: the item's collections before → after
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    /// Present in a dry run: nothing was written
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

impl ZoteroTool for AddItemToCollection {
    const NAME: &'static str = "zotero_add_item_to_collection";
    const TITLE: &'static str = "Add item to collection";
    const DESCRIPTION: &'static str = "Add an item to a collection (collection_key or \
        collection_name). Already there: already_member. Undo: \
        zotero_remove_item_from_collection.";
    const HINTS: Hints = Hints::ADD_IDEMPOTENT;
    const SET: ToolSet = ToolSet::Write;
    type Params = AddItemToCollectionParams;
    type Data = AddItemToCollectionData;

    fn validate(p: &AddItemToCollectionParams) -> Result<(), ToolError> {
        collection_target(&p.collection_key, &p.collection_name).map(drop)
    }

    async fn run(
        p: AddItemToCollectionParams,
        ctx: &ToolContext,
    ) -> Result<AddItemToCollectionData, ToolError> {
        let target = collection_target(&p.collection_key, &p.collection_name)?;
        let item = p.item_key.key();
        let lib = ctx.svc.library(library(p.library))?;
        if p.dry_run {
            return dry_run(&lib, item, &target, ctx).await;
        }
        let m = lib.add_to_collection(item, &target, &ctx.cancel).await?;
        Ok(AddItemToCollectionData {
            item_key: p.item_key.to_string(),
            collection_key: m.collection_key,
            already_member: m.already_member,
            status: None,
            changes: Vec::new(),
            dry_run: false,
        })
    }
}

/// The same checks as the write (the key may write here, the collection resolves, the item
/// exists), then the edit engine's dry run of adding the collection: the collections before
/// → after, as the write would set them.
async fn dry_run(
    lib: &Library<'_>,
    item: &zotero_api::ObjectKey,
    target: &CollectionRef,
    ctx: &ToolContext,
) -> Result<AddItemToCollectionData, ToolError> {
    lib.require_write(false, &ctx.cancel).await?;
    let collection_key = lib.resolve_collection(target, &ctx.cancel).await?;
    let mut edit = Edit::new(item.clone());
    edit.collections.add.push(collection_key.clone());
    let outcome = edit_one(lib, ObjectKind::Item, edit, true, &ctx.cancel).await?;
    let result = changes::single(
        ObjectResult::from_outcome(ObjectKind::Item, outcome),
        "item",
    )?;
    Ok(AddItemToCollectionData {
        item_key: result.key,
        collection_key,
        already_member: result.status == Status::Unchanged,
        status: Some(result.status),
        changes: result.changes,
        dry_run: true,
    })
}

/// The collection a call names by `collection_key` or `collection_name` (exactly one).
pub(crate) fn collection_target(
    key: &Option<ObjectKey>,
    name: &Option<NonBlank<{ limits::COLLECTION_NAME }>>,
) -> Result<CollectionRef, ToolError> {
    match (key, name) {
        (Some(key), None) => Ok(CollectionRef::Key(key.key().clone())),
        (None, Some(name)) => Ok(CollectionRef::Name(name.as_str().to_string())),
        (Some(_), Some(_)) => Err(ToolError::invalid(
            "collection_key",
            "give collection_key or collection_name, not both",
        )),
        (None, None) => Err(ToolError::invalid(
            "collection_key",
            "give collection_key or collection_name (see zotero_list_collections)",
        )),
    }
}
