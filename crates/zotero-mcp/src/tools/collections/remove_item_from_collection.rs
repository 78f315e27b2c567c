//! `zotero_remove_item_from_collection`: take an item out of a collection given by key or by
//! name; the item itself stays in the library.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::edit::edit_one;
use crate::tools::collections::add_item_to_collection::collection_target;
use crate::tools::params::{library, limits, LibraryParam, NonBlank, ObjectKey};
use crate::tools::support::changes::{self, Change, ObjectResult, Status};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{Edit, ObjectKind};

/// The `zotero_remove_item_from_collection` tool.
pub struct RemoveItemFromCollection;

/// The arguments of `zotero_remove_item_from_collection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveItemFromCollectionParams {
    /// The item's key
    pub item_key: ObjectKey,
    /// The collection's key (see zotero_list_collections)
    pub collection_key: Option<ObjectKey>,
    /// The collection's name, in any case
    pub collection_name: Option<NonBlank<{ limits::COLLECTION_NAME }>>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_remove_item_from_collection` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RemoveItemFromCollectionData {
    /// The item
    pub item_key: String,
    /// The collection it was taken out of
    pub collection_key: String,
    /// The item was in the collection (and now is not, or in a dry run would not be);
    /// false: it was not, and nothing was written
    pub was_member: bool,
    /// changed, unchanged (nothing to do) or would_change (dry run)
    pub status: Status,
    /// The item's version after this call
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Nothing was written: this is what would change
    pub dry_run: bool,
    /// The item's collections before → after
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
}

impl ZoteroTool for RemoveItemFromCollection {
    const NAME: &'static str = "zotero_remove_item_from_collection";
    const TITLE: &'static str = "Remove item from collection";
    const DESCRIPTION: &'static str = "Take an item out of a collection given by \
        collection_key or collection_name (case-insensitive exact match; give one). The item \
        is never deleted: it stays in the library and its other collections. Version-checked; \
        a change made in Zotero meanwhile is kept (collections merge as sets). An item not in \
        the collection is left as it is (was_member false). Undo with \
        zotero_add_item_to_collection.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = RemoveItemFromCollectionParams;
    type Data = RemoveItemFromCollectionData;

    fn validate(p: &RemoveItemFromCollectionParams) -> Result<(), ToolError> {
        collection_target(&p.collection_key, &p.collection_name).map(drop)
    }

    async fn run(
        p: RemoveItemFromCollectionParams,
        ctx: &ToolContext,
    ) -> Result<RemoveItemFromCollectionData, ToolError> {
        let target = collection_target(&p.collection_key, &p.collection_name)?;
        let lib = ctx.svc.library(library(p.library))?;
        // Refused before anything is read when the key may not write here.
        lib.require_write(false, &ctx.cancel).await?;
        let collection_key = lib.resolve_collection(&target, &ctx.cancel).await?;
        let mut edit = Edit::new(p.item_key.key().clone());
        edit.collections.remove.push(collection_key.clone());
        let outcome = edit_one(&lib, ObjectKind::Item, edit, p.dry_run, &ctx.cancel).await?;
        let result = changes::single(
            ObjectResult::from_outcome(ObjectKind::Item, outcome),
            "item",
        )?;
        Ok(RemoveItemFromCollectionData {
            item_key: result.key,
            collection_key,
            was_member: matches!(result.status, Status::Changed | Status::WouldChange),
            status: result.status,
            version: result.version,
            dry_run: p.dry_run,
            changes: result.changes,
        })
    }
}
