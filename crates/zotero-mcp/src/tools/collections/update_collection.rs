//! `zotero_update_collection`: rename or move a collection (version-checked, merged with
//! changes made in Zotero meanwhile), or delete it with its subcollections (its items stay),
//! after asking the user when the client can be asked.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::envelope::{ErrorCode, ToolError};
use crate::tools::changes::{self, ObjectResult};
use crate::tools::params::{library, limits, LibraryParam, NonBlank, ObjectKey};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::collection_writes::{CollectionChange, DeletePlan, Refusal};
use zotero_api::edit::{field_value, EditStatus, ObjectKind};
use zotero_api::model::Collection;

pub struct UpdateCollection;

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
    pub collection_key: String,
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

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateCollectionData {
    /// true: nothing was written
    pub dry_run: bool,
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
        if p.deleting() {
            return delete(p, ctx).await;
        }
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.collection_key.key().clone();
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
        let outcome = lib
            .update_collection(&key, &change, p.dry_run, &ctx.cancel)
            .await?
            .map_err(|r| refused(r, field))?;
        // As it is after the write (in a dry run: would be).
        let mut data = outcome.data.clone().unwrap_or_default();
        if outcome.status == EditStatus::WouldChange {
            for c in &outcome.changes {
                data.insert(c.field.clone(), c.after.clone());
            }
        }
        let result = changes::single(
            ObjectResult::from_outcome(ObjectKind::Collection, outcome),
            "collection",
        )?;
        let name = data.get("name").and_then(Value::as_str).map(str::to_string);
        let parent_key = field_value(&data, "parentCollection")
            .as_str()
            .map(str::to_string);
        let summary = match result.status {
            changes::Status::Changed => format!("collection {key} changed"),
            changes::Status::WouldChange => format!("collection {key} would change"),
            _ => format!("collection {key} was already as asked; nothing written"),
        };
        Ok(UpdateCollectionData {
            dry_run: p.dry_run,
            collection_key: key.to_string(),
            result: Some(result),
            name,
            parent_key,
            zotero_url: Some(lib.name().collection_url(&key)),
            deleted: None,
            already_gone: false,
            subcollections: None,
            items_filed: None,
            summary,
        })
    }
}

/// Deletes the collection after asking the user (when the client can be asked); a
/// collection already gone is a success, a key never used is not.
async fn delete(
    p: UpdateCollectionParams,
    ctx: &ToolContext,
) -> Result<UpdateCollectionData, ToolError> {
    let lib = ctx.svc.library(library(p.library))?;
    let key = p.collection_key.key().clone();
    let Some(plan) = lib.plan_collection_delete(&key, &ctx.cancel).await? else {
        if lib.collection_was_deleted(&key, &ctx.cancel).await? {
            return Ok(UpdateCollectionData {
                dry_run: p.dry_run,
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
            });
        }
        return Err(refused(
            Refusal::NotFound(key.to_string()),
            "collection_key",
        ));
    };
    if p.dry_run {
        let summary = format!(
            "would delete {}; {}",
            what(&plan),
            items_stay(plan.items_filed(), "would stay")
        );
        return Ok(deletion(&p, &plan, false, false, summary));
    }
    ctx.confirm(UpdateCollection::NAME, question(&plan)).await?;
    let done = lib.delete_collection(plan, &ctx.cancel).await?;
    let summary = if done.already_gone {
        format!("collection {key} was deleted by someone else meanwhile; nothing was written")
    } else {
        format!(
            "deleted {}; {}",
            what(&done.plan),
            items_stay(done.plan.items_filed(), "stay")
        )
    };
    Ok(deletion(&p, &done.plan, true, done.already_gone, summary))
}

fn deletion(
    p: &UpdateCollectionParams,
    plan: &DeletePlan,
    deleted: bool,
    already_gone: bool,
    summary: String,
) -> UpdateCollectionData {
    UpdateCollectionData {
        dry_run: p.dry_run,
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
    }
}

/// Subcollection names shown in a question, at most.
const NAMES_SHOWN: usize = 10;

/// "'Name' (KEY) and its 2 subcollections ('A', 'B')".
fn what(plan: &DeletePlan) -> String {
    let c = &plan.collection;
    let trash = if c.in_trash {
        ", in Zotero's trash,"
    } else {
        ""
    };
    let mut s = format!("the collection '{}' ({}){trash}", c.name, c.collection_key);
    let n = plan.subcollections.len();
    if n > 0 {
        let mut names: Vec<String> = plan
            .subcollections
            .iter()
            .take(NAMES_SHOWN)
            .map(|c| format!("'{}'", c.name))
            .collect();
        if n > NAMES_SHOWN {
            names.push(format!("{} more", n - NAMES_SHOWN));
        }
        let noun = if n == 1 {
            "subcollection"
        } else {
            "subcollections"
        };
        s.push_str(&format!(" and its {n} {noun} ({})", names.join(", ")));
    }
    s
}

fn items_stay(items: u64, verb: &str) -> String {
    match items {
        0 => "no items are filed in them".to_string(),
        1 => format!("the 1 item filed in them {verb}s in the library"),
        n => format!("the {n} items filed in them {verb} in the library"),
    }
}

/// The question put to the user before deleting.
fn question(plan: &DeletePlan) -> String {
    let items = match plan.items_filed() {
        0 => "No items are filed in them.".to_string(),
        1 => "1 item is filed in them; it stays in the library, only its membership goes."
            .to_string(),
        n => format!(
            "{n} items are filed in them; they stay in the library, only their membership goes."
        ),
    };
    format!(
        "Delete {} for good? {items} This cannot be undone.",
        what(plan)
    )
}

/// The error for a write refused before anything was written; `field` is the argument a
/// taken name is blamed on (name for a rename, parent_key for a move).
pub(super) fn refused(r: Refusal, field: &str) -> ToolError {
    match r {
        Refusal::NotFound(k) => ToolError::new(
            ErrorCode::NotFound,
            format!("no collection with key {k} in this library; list them with zotero_list_collections"),
        )
        .with_detail("field", "collection_key")
        .with_detail("key", k),
        Refusal::ParentNotFound(k) => ToolError::new(
            ErrorCode::NotFound,
            format!("'parent_key': no collection with key {k} in this library; list them with zotero_list_collections"),
        )
        .with_detail("field", "parent_key")
        .with_detail("key", k),
        Refusal::ParentInTrash(c) => ToolError::invalid(
            "parent_key",
            format!(
                "'parent_key': the collection '{}' ({}) is in Zotero's trash; restore it in Zotero (Trash → Restore to Library) or choose another parent",
                c.name, c.collection_key
            ),
        ),
        Refusal::IntoItself => ToolError::invalid(
            "parent_key",
            "'parent_key' is the collection itself: a collection cannot be moved into itself; give another collection, or top_level: true",
        ),
        Refusal::IntoDescendant(c) => ToolError::invalid(
            "parent_key",
            format!(
                "'parent_key': '{}' ({}) is inside the collection being moved, and a collection cannot be moved into its own subcollection; nothing was written",
                c.name, c.collection_key
            ),
        ),
        Refusal::NameTaken(c) => {
            let place = match &c.parent_key {
                Some(p) => format!("in collection {p}"),
                None => "at the top level".to_string(),
            };
            ToolError::invalid(
                field,
                format!(
                    "'{field}': the collection '{}' ({}) {place} has that name already (names are compared in any case); choose another name, or use that collection; nothing was written",
                    c.name, c.collection_key
                ),
            )
            .with_detail("sibling_key", c.collection_key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn the_question_names_what_goes_and_what_stays() {
        let c = |key: &str, name: &str, items: u64| Collection {
            collection_key: key.into(),
            name: name.into(),
            parent_key: None,
            version: 3,
            num_items: Some(items),
            in_trash: false,
        };
        let mut plan = DeletePlan {
            key: zotero_api::ObjectKey::parse("RDLSTUP3").unwrap(),
            collection: c("RDLSTUP3", "Reading List", 2),
            subcollections: vec![c("TRNSFM52", "Transformers", 2)],
        };
        let q = question(&plan);
        assert!(
            q.contains("'Reading List' (RDLSTUP3) and its 1 subcollection ('Transformers')"),
            "{q}"
        );
        assert!(
            q.contains("4 items are filed in them; they stay in the library"),
            "{q}"
        );
        assert!(q.contains("cannot be undone"), "{q}");
        plan.subcollections = (0..12)
            .map(|i| c("TRNSFM52", &format!("s{i}"), 0))
            .collect();
        let q = question(&plan);
        assert!(
            q.contains("its 12 subcollections ('s0',") && q.contains("'s9', 2 more)"),
            "{q}"
        );
    }
}
