//! `zotero_create_collection`: a new collection, created exactly once; a sibling that has the
//! name already (in any case) is the answer instead of a duplicate.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::collections::refused;
use crate::tools::params::{library, limits, LibraryParam, NonBlank, ObjectKey};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::collection_writes::Created;

/// The `zotero_create_collection` tool.
pub struct CreateCollection;

/// The arguments of `zotero_create_collection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCollectionParams {
    /// The collection's name (spaces around it are dropped)
    pub name: NonBlank<{ limits::COLLECTION_NAME }>,
    /// Create it inside this collection; at the top level if left out
    pub parent_key: Option<ObjectKey>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// A collection of the same name in Zotero's trash.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrashedNamesake {
    /// 8-character key
    pub collection_key: String,
    /// Name
    pub name: String,
}

/// What the call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreateStatus {
    /// Created now
    Created,
    /// Found under the same parent with the same name; nothing written
    AlreadyExisted,
    /// dry_run: it would be created
    WouldCreate,
}

/// What `zotero_create_collection` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreateCollectionData {
    /// true: nothing was written
    pub dry_run: bool,
    /// created, or already_exists
    pub status: CreateStatus,
    /// This call created the collection
    pub created: bool,
    /// A collection of this name (in any case) was already there under the same parent: it
    /// is the answer, and nothing was written
    pub already_existed: bool,
    /// Its key; absent in a dry run that would create it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection_key: Option<String>,
    /// Its name
    pub name: String,
    /// Its parent collection; absent at the top level
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Its version
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Opens it in the Zotero desktop app
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
    /// Collections of this name under the same parent in Zotero's trash: not reused. To use
    /// one instead, restore it in Zotero (Trash → Restore to Library)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_trash: Vec<TrashedNamesake>,
}

impl ZoteroTool for CreateCollection {
    const NAME: &'static str = "zotero_create_collection";
    const TITLE: &'static str = "Create collection";
    const DESCRIPTION: &'static str = "Create a collection named name, at the top level or \
        inside parent_key, exactly once: a collection under the same parent with the name (in \
        any case) is answered (already_existed) and nothing is written. A namesake in the trash \
        is not reused (in_trash). Undo: zotero_update_collection with delete: true.";
    const HINTS: Hints = Hints::ADD_IDEMPOTENT;
    const SET: ToolSet = ToolSet::Write;
    type Params = CreateCollectionParams;
    type Data = CreateCollectionData;

    async fn run(
        p: CreateCollectionParams,
        ctx: &ToolContext,
    ) -> Result<CreateCollectionData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let parent = p.parent_key.as_ref().map(|k| k.key().clone());
        let answer = lib
            .create_collection(p.name.as_str(), parent.as_ref(), p.dry_run, &ctx.cancel)
            .await?
            .map_err(|r| refused(r, "name"))?;
        let in_trash = answer
            .in_trash
            .into_iter()
            .map(|c| TrashedNamesake {
                collection_key: c.collection_key,
                name: c.name,
            })
            .collect();
        let zotero_url = answer.collection.as_ref().and_then(|c| {
            zotero_api::ObjectKey::parse(&c.collection_key)
                .ok()
                .map(|k| lib.name().collection_url(&k))
        });
        let (name, parent_key) = match &answer.collection {
            Some(c) => (c.name.clone(), c.parent_key.clone()),
            None => (
                p.name.as_str().trim().to_string(),
                parent.map(|k| k.to_string()),
            ),
        };
        Ok(CreateCollectionData {
            dry_run: p.dry_run,
            status: match answer.status {
                Created::Created => CreateStatus::Created,
                Created::AlreadyExisted => CreateStatus::AlreadyExisted,
                Created::WouldCreate => CreateStatus::WouldCreate,
            },
            created: answer.status == Created::Created,
            already_existed: answer.status == Created::AlreadyExisted,
            collection_key: answer.collection.as_ref().map(|c| c.collection_key.clone()),
            name,
            parent_key,
            version: answer.collection.as_ref().map(|c| c.version),
            zotero_url,
            in_trash,
        })
    }
}
