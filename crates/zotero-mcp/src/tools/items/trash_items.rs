//! `zotero_trash_items`: move items to Zotero's trash or take them out of it. Never a
//! permanent delete: the trash is where the user decides.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::tools::params::{library, limits, LibraryParam, List, ObjectKey};
use crate::tools::support::changes::{Counts, ObjectResult};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{Edit, ObjectKind};

/// The `zotero_trash_items` tool.
pub struct TrashItems;

/// Trashing more items than this at once asks the user first (when the client can ask).
pub const CONFIRM_ABOVE: usize = 10;

/// The arguments of `zotero_trash_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrashItemsParams {
    /// Keys of the items (1 to 50)
    pub item_keys: List<ObjectKey, { limits::BATCH }>,
    /// Take the items out of the trash instead
    #[serde(default)]
    pub restore: bool,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Preview; write nothing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_trash_items` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrashItemsData {
    /// One per key, in the order given: changed (moved), unchanged (already there), or why not
    pub results: Vec<ObjectResult>,
    /// How many of each
    pub counts: Counts,
    /// Items were restored from the trash rather than moved to it
    pub restore: bool,
    /// Nothing was written
    pub dry_run: bool,
}

impl ZoteroTool for TrashItems {
    const NAME: &'static str = "zotero_trash_items";
    const TITLE: &'static str = "Trash or restore items";
    const DESCRIPTION: &'static str = "Move up to 50 items to the Zotero trash, or take them \
        out of it (restore: true). Never deletes: trashed items stay in Zotero's trash until \
        the user empties it there (that cannot be undone), and restore brings them back. \
        Per-item results; an item already there is unchanged; version-checked. Trashing more \
        than 10 asks the user first when the client supports it. dry_run previews.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = TrashItemsParams;
    type Data = TrashItemsData;

    fn validate(p: &TrashItemsParams) -> Result<(), ToolError> {
        if p.item_keys.is_empty() {
            return Err(ToolError::invalid(
                "item_keys",
                "give at least one item key",
            ));
        }
        for (i, k) in p.item_keys.iter().enumerate() {
            if let Some(j) = p.item_keys.iter().take(i).position(|o| o == k) {
                return Err(ToolError::invalid(
                    &format!("item_keys[{i}]"),
                    format!("'item_keys[{i}]' repeats item_keys[{j}] ({k})"),
                ));
            }
        }
        Ok(())
    }

    async fn run(p: TrashItemsParams, ctx: &ToolContext) -> Result<TrashItemsData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let n = p.item_keys.len();
        if !p.restore && !p.dry_run && n > CONFIRM_ABOVE {
            ctx.confirm(
                Self::NAME,
                format!(
                    "Move {n} items to the Zotero trash? They stay there, restorable, until the trash is emptied."
                ),
            )
            .await?;
        }
        let edits: Vec<Edit> = p
            .item_keys
            .iter()
            .map(|k| {
                let mut e = Edit::new(k.key().clone());
                e.set.insert("deleted".into(), Value::Bool(!p.restore));
                e
            })
            .collect();
        let outcomes = lib
            .edit_objects(ObjectKind::Item, edits, p.dry_run, &ctx.cancel, None)
            .await?;
        let results: Vec<ObjectResult> = outcomes
            .into_iter()
            .map(|o| ObjectResult::from_outcome(ObjectKind::Item, o))
            .collect();
        Ok(TrashItemsData {
            counts: Counts::of(&results),
            results,
            restore: p.restore,
            dry_run: p.dry_run,
        })
    }
}
