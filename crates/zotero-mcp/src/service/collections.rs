//! Collection workflows: renaming or moving a collection (the write, refused with the
//! argument to change, then the collection as it is after it) and deleting one with its
//! subcollections after asking the user (`zotero_update_collection`).

use std::future::Future;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::collection_writes::{CollectionChange, DeletePlan, Refusal};
use zotero_api::edit::{field_value, EditOutcome, EditStatus};
use zotero_api::{Library, ObjectKey};

use crate::error::ToolError;
use crate::service::ZoteroService;

/// A rename or move as written (in a dry run: as it would be).
#[derive(Debug)]
pub struct CollectionChanged {
    pub outcome: EditOutcome,
    /// Its name after the change.
    pub name: Option<String>,
    /// Its parent after the change; `None` at the top level.
    pub parent_key: Option<String>,
}

/// What a delete did (in a dry run: would do).
#[derive(Debug)]
pub enum Deletion {
    /// It had been deleted already (by someone else); nothing was written.
    Gone,
    /// The collection and the subcollections that went with it (or would).
    Of {
        plan: DeletePlan,
        /// false in a dry run.
        deleted: bool,
        /// Deleted by someone else meanwhile: this call wrote nothing.
        already_gone: bool,
        summary: String,
    },
}

impl ZoteroService {
    /// Renames or moves the collection `key`; `field` is the argument a taken name is
    /// blamed on (name for a rename, parent_key for a move).
    pub async fn change_collection(
        &self,
        lib: &Library<'_>,
        key: &ObjectKey,
        change: &CollectionChange,
        field: &str,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> Result<CollectionChanged, ToolError> {
        let outcome = lib
            .update_collection(key, change, dry_run, cancel)
            .await?
            .map_err(|r| refused(r, field))?;
        // As it is after the write (in a dry run: would be).
        let mut data = outcome.data.clone().unwrap_or_default();
        if outcome.status == EditStatus::WouldChange {
            for c in &outcome.changes {
                data.insert(c.field.clone(), c.after.clone());
            }
        }
        let name = data.get("name").and_then(Value::as_str).map(str::to_string);
        let parent_key = field_value(&data, "parentCollection")
            .as_str()
            .map(str::to_string);
        Ok(CollectionChanged {
            outcome,
            name,
            parent_key,
        })
    }

    /// Deletes the collection `key` with its subcollections, after `confirm` has put the
    /// question to the user (when the client can be asked; not in a dry run). A collection
    /// already gone is a success, a key never used is not.
    pub async fn delete_collection<F, C>(
        &self,
        lib: &Library<'_>,
        key: &ObjectKey,
        dry_run: bool,
        confirm: C,
        cancel: &CancellationToken,
    ) -> Result<Deletion, ToolError>
    where
        C: FnOnce(String) -> F,
        F: Future<Output = Result<bool, ToolError>>,
    {
        let Some(plan) = lib.plan_collection_delete(key, cancel).await? else {
            if lib.collection_was_deleted(key, cancel).await? {
                return Ok(Deletion::Gone);
            }
            return Err(refused(
                Refusal::NotFound(key.to_string()),
                "collection_key",
            ));
        };
        if dry_run {
            let summary = format!(
                "would delete {}; {}",
                what(&plan),
                items_stay(plan.items_filed(), "would stay")
            );
            return Ok(Deletion::Of {
                plan,
                deleted: false,
                already_gone: false,
                summary,
            });
        }
        confirm(question(&plan)).await?;
        let done = lib.delete_collection(plan, cancel).await?;
        let summary = if done.already_gone {
            format!("collection {key} was deleted by someone else meanwhile; nothing was written")
        } else {
            format!(
                "deleted {}; {}",
                what(&done.plan),
                items_stay(done.plan.items_filed(), "stay")
            )
        };
        Ok(Deletion::Of {
            plan: done.plan,
            deleted: true,
            already_gone: done.already_gone,
            summary,
        })
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
pub fn refused(r: Refusal, field: &str) -> ToolError {
    match r {
        Refusal::NotFound(k) => ToolError::not_found(format!("no collection with key {k} in this library; list them with zotero_list_collections"),
        )
        .with_detail("field", "collection_key")
        .with_detail("key", k),
        Refusal::ParentNotFound(k) => ToolError::not_found(format!("'parent_key': no collection with key {k} in this library; list them with zotero_list_collections"),
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
    use zotero_api::model::Collection;

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
