//! `zotero_update_collection`: rename or move a collection (version-checked, merged with
//! changes made in Zotero meanwhile), or delete it with its subcollections (its items stay),
//! after asking the user when the client can be asked.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::collections::Deletion;
use crate::tools::params::{library, limits, LibraryParam, NonBlank, ObjectKey};
use crate::tools::support::changes::{self, ObjectResult};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::collection_writes::CollectionChange;
use zotero_api::edit::ObjectKind;
use zotero_api::model::Collection;

/// The `zotero_update_collection` tool.
pub struct UpdateCollection;

/// The arguments of `zotero_update_collection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateCollectionParams {
    /// The collection to change
    pub collection_key: ObjectKey,
    /// Rename it to this (spaces around it are dropped)
    pub name: Option<NonBlank<{ limits::COLLECTION_NAME }>>,
    /// Move it inside this collection
    pub parent_key: Option<ObjectKey>,
    /// true: move it to the top level
    pub top_level: Option<bool>,
    /// true: delete it and every subcollection below it, for good; their items stay in the
    /// library. Alone: not with name, parent_key or top_level
    pub delete: Option<bool>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

impl UpdateCollectionParams {
    fn deleting(&self) -> bool {
        self.delete == Some(true)
    }
    fn to_top(&self) -> bool {
        self.top_level == Some(true)
    }
}

/// A subcollection deleted with the collection.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Subcollection {
    /// 8-character key
    pub collection_key: String,
    /// Name
    pub name: String,
    /// The collection it was in
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Items filed in it (they stay in the library)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_items: Option<u64>,
}

impl From<&Collection> for Subcollection {
    fn from(c: &Collection) -> Self {
        Subcollection {
            collection_key: c.collection_key.clone(),
            name: c.name.clone(),
            parent_key: c.parent_key.clone(),
            num_items: c.num_items,
        }
    }
}

/// What `zotero_update_collection` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateCollectionData {
    /// true: nothing was written
    pub dry_run: bool,
    /// The collection asked for
    pub collection_key: String,
    /// Rename or move: the outcome (status, new version, each field before → after)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ObjectResult>,
    /// Its name (the deleted collection's name for a delete)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its parent collection; absent at the top level
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Opens it in the Zotero desktop app (not for a delete)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
    /// delete: the collection is no longer in the library (deleted by this call, or gone
    /// already); false in a dry run that would delete it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<bool>,
    /// delete: it had been deleted already (by someone else); this call wrote nothing
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_gone: bool,
    /// delete: the subcollections deleted with it (dry run: that would be), as listed just
    /// before the delete
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subcollections: Option<Vec<Subcollection>>,
    /// delete: items filed in it and its subcollections, by Zotero's counts (an item filed
    /// in two counts twice). Every one stays in the library; only the membership goes
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items_filed: Option<u64>,
    /// What happened, in a sentence
    pub summary: String,
}

impl ZoteroTool for UpdateCollection {
    const NAME: &'static str = "zotero_update_collection";
    const TITLE: &'static str = "Rename, move or delete collection";
    const DESCRIPTION: &'static str = "Rename (name), move (parent_key, or top_level: true) or \
        delete (delete: true) a collection. Version-checked: a change to the same field in \
        Zotero meanwhile stops the write. delete removes it and its subcollections for good (not \
        to the trash); their items stay in the library. Deleting asks the user first when the \
        client can.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = UpdateCollectionParams;
    type Data = UpdateCollectionData;

    fn validate(p: &UpdateCollectionParams) -> Result<(), ToolError> {
        if p.deleting() {
            if p.name.is_some() || p.parent_key.is_some() || p.to_top() {
                return Err(ToolError::invalid(
                    "delete",
                    "'delete' deletes the collection: leave out name, parent_key and top_level (or leave out delete to rename or move it)",
                ));
            }
            return Ok(());
        }
        if p.parent_key.is_some() && p.to_top() {
            return Err(ToolError::invalid(
                "top_level",
                "'top_level' moves the collection to the top level and parent_key moves it inside another: give one of them",
            ));
        }
        if p.parent_key.as_ref() == Some(&p.collection_key) {
            return Err(ToolError::invalid(
                "parent_key",
                "'parent_key' is the collection itself: a collection cannot be moved into itself; give another collection, or top_level: true",
            ));
        }
        if p.name.is_none() && p.parent_key.is_none() && !p.to_top() {
            return Err(ToolError::invalid(
                "name",
                "nothing to change: give name (rename), parent_key or top_level: true (move), or delete: true",
            ));
        }
        Ok(())
    }

    async fn run(
        p: UpdateCollectionParams,
        ctx: &ToolContext,
    ) -> Result<UpdateCollectionData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.collection_key.key().clone();
        if p.deleting() {
            let confirm = |question| ctx.confirm(UpdateCollection::NAME, question);
            let deletion = ctx
                .svc
                .delete_collection(&lib, &key, p.dry_run, confirm, &ctx.cancel)
                .await?;
            return Ok(UpdateCollectionData::deletion(&key, p.dry_run, deletion));
        }
        let field = if p.name.is_some() {
            "name"
        } else {
            "parent_key"
        };
        let change = CollectionChange {
            name: p.name.map(NonBlank::into_string),
            parent: match (p.parent_key, p.top_level == Some(true)) {
                (Some(k), _) => Some(Some(k.key().clone())),
                (None, true) => Some(None),
                (None, false) => None,
            },
        };
        let changed = ctx
            .svc
            .change_collection(&lib, &key, &change, field, p.dry_run, &ctx.cancel)
            .await?;
        let result = changes::single(
            ObjectResult::from_outcome(ObjectKind::Collection, changed.outcome),
            "collection",
        )?;
        let summary = match result.status {
            changes::Status::Changed => format!("collection {key} changed"),
            changes::Status::WouldChange => format!("collection {key} would change"),
            _ => format!("collection {key} was already as asked; nothing written"),
        };
        Ok(UpdateCollectionData {
            dry_run: p.dry_run,
            collection_key: key.to_string(),
            result: Some(result),
            name: changed.name,
            parent_key: changed.parent_key,
            zotero_url: Some(lib.name().collection_url(&key)),
            deleted: None,
            already_gone: false,
            subcollections: None,
            items_filed: None,
            summary,
        })
    }
}

impl UpdateCollectionData {
    /// The answer to a delete.
    fn deletion(key: &zotero_api::ObjectKey, dry_run: bool, d: Deletion) -> Self {
        match d {
            Deletion::Gone => UpdateCollectionData {
                dry_run,
                collection_key: key.to_string(),
                result: None,
                name: None,
                parent_key: None,
                zotero_url: None,
                deleted: Some(true),
                already_gone: true,
                subcollections: None,
                items_filed: None,
                summary: format!("collection {key} had been deleted already; nothing was written"),
            },
            Deletion::Of {
                plan,
                deleted,
                already_gone,
                summary,
            } => UpdateCollectionData {
                dry_run,
                collection_key: plan.key.to_string(),
                result: None,
                name: Some(plan.collection.name.clone()),
                parent_key: plan.collection.parent_key.clone(),
                zotero_url: None,
                deleted: Some(deleted),
                already_gone,
                subcollections: Some(
                    plan.subcollections
                        .iter()
                        .map(Subcollection::from)
                        .collect(),
                ),
                items_filed: Some(plan.items_filed()),
                summary,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn field(args: Value) -> String {
        let e = crate::tools::checked::<UpdateCollection>(args.as_object().cloned()).unwrap_err();
        let field = e.details["field"].as_str().unwrap().to_string();
        assert!(e.message.contains(&field), "{}", e.message);
        field
    }

    #[test]
    fn arguments_that_do_not_go_together_name_the_field() {
        let k = "RDLSTUP3";
        assert_eq!(field(json!({"collection_key": k})), "name");
        assert_eq!(
            field(json!({"collection_key": k, "top_level": false})),
            "name"
        );
        assert_eq!(
            field(json!({"collection_key": k, "parent_key": "TRNSFM52", "top_level": true})),
            "top_level"
        );
        assert_eq!(
            field(json!({"collection_key": k, "delete": true, "name": "x"})),
            "delete"
        );
        assert_eq!(
            field(json!({"collection_key": k, "delete": true, "top_level": true})),
            "delete"
        );
        assert_eq!(
            field(json!({"collection_key": k, "parent_key": k})),
            "parent_key"
        );
        assert_eq!(field(json!({"collection_key": k, "name": "  "})), "name");
        assert_eq!(
            field(json!({"collection_key": "nope", "name": "x"})),
            "collection_key"
        );
        let ok = |v: Value| crate::tools::checked::<UpdateCollection>(v.as_object().cloned());
        assert!(ok(json!({"collection_key": k, "delete": true, "dry_run": true})).is_ok());
        assert!(ok(json!({"collection_key": k, "name": "x", "top_level": true})).is_ok());
    }
}
