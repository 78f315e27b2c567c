//! `zotero_manage_tags`: rename a tag, or delete it, on every item of the library that
//! carries it (trashed items and child notes, attachments and annotations too).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{library, quote, LibraryParam, Tag};
use crate::tools::support::changes::{Counts, ObjectResult, Status};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{EditOutcome, ObjectKind};
use zotero_api::tag_changes::{unsearchable, TagChange};

/// The `zotero_manage_tags` tool.
pub struct ManageTags;

/// How many item keys an answer lists.
pub const KEYS_SHOWN: usize = 100;
/// How many items not written an answer details.
pub const NOT_WRITTEN_SHOWN: usize = 50;

/// What to do with the tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TagAction {
    /// Give it a new name on every item carrying it
    Rename,
    /// Take it off every item carrying it
    Delete,
}

/// The arguments of `zotero_manage_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManageTagsParams {
    /// The tag, exactly as written (case matters; see zotero_list_tags)
    pub tag: Tag,
    /// rename or delete
    pub action: TagAction,
    /// For rename: the new name (an item that has it already keeps it once). Leave it out
    /// to delete.
    pub new_name: Option<Tag>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_manage_tags` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ManageTagsData {
    /// The tag
    pub tag: String,
    /// The action taken, as asked
    pub action: TagAction,
    /// rename: the new name
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    /// Nothing was written: this is what would change
    pub dry_run: bool,
    /// Items that carried the tag (exact name, either type) when read, trashed ones included
    pub items_carrying: usize,
    /// Outcomes over those items
    pub counts: Counts,
    /// Keys of the items changed (dry run: that would change), the first 100
    pub item_keys: Vec<String>,
    /// Keys changed (or that would change) beyond those listed
    #[serde(skip_serializing_if = "is_zero")]
    pub item_keys_omitted: usize,
    /// Items that carried the tag and were not changed, each with why (the first 50)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_written: Vec<ObjectResult>,
    /// Items not changed beyond those listed
    #[serde(skip_serializing_if = "is_zero")]
    pub not_written_omitted: usize,
    /// After a write: some items still carry the tag (those not written), so it still
    /// exists in the library
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_remains: Option<bool>,
    /// What happened, in a sentence
    pub summary: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ZoteroTool for ManageTags {
    const NAME: &'static str = "zotero_manage_tags";
    const TITLE: &'static str = "Rename or delete a tag";
    const DESCRIPTION: &'static str = "Rename or delete a tag (exact name) on every item \
        carrying it, trashed and child items included; version-checked, 50 items a request. \
        Answers how many items carried it and which were not changed. No undo: a deleted tag is \
        gone, and renaming back merges with a tag already so named. Asks the user first when the \
        client can be asked.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = ManageTagsParams;
    type Data = ManageTagsData;

    fn validate(p: &ManageTagsParams) -> Result<(), ToolError> {
        let tag = p.tag.as_str().trim();
        if tag.is_empty() {
            return Err(ToolError::invalid(
                "tag",
                "tag must be a tag's name, not only spaces",
            ));
        }
        if let Some(why) = unsearchable(tag) {
            return Err(ToolError::invalid(
                "tag",
                format!("tag '{}' {why}", quote(tag)),
            ));
        }
        match (p.action, &p.new_name) {
            (TagAction::Rename, None) => Err(ToolError::invalid(
                "new_name",
                "new_name is required to rename: give the tag's new name",
            )),
            (TagAction::Delete, Some(_)) => Err(ToolError::invalid(
                "new_name",
                "new_name is only for action rename: leave it out to delete the tag",
            )),
            (TagAction::Rename, Some(new)) if new.as_str().trim().is_empty() => Err(
                ToolError::invalid("new_name", "new_name must be a tag's name, not only spaces"),
            ),
            (TagAction::Rename, Some(new)) if new.as_str().trim() == tag => {
                Err(ToolError::invalid(
                    "new_name",
                    "new_name is the tag's name already: give a different name",
                ))
            }
            _ => Ok(()),
        }
    }

    async fn run(p: ManageTagsParams, ctx: &ToolContext) -> Result<ManageTagsData, ToolError> {
        let new_name = p.new_name.map(|n| n.as_str().trim().to_string());
        let change = match &new_name {
            Some(to) => TagChange::Rename(to.clone()),
            None => TagChange::Delete,
        };
        let lib = ctx.svc.library(library(p.library))?;
        let plan = lib
            .plan_tag_change(p.tag.as_str(), change, &ctx.cancel)
            .await?;
        let tag = plan.tag.clone();
        let carrying = plan.carriers.len();
        let reply = |outcomes: Vec<EditOutcome>, dry_run: bool| {
            answer(&tag, p.action, new_name.clone(), outcomes, dry_run)
        };
        if p.dry_run || carrying == 0 {
            return Ok(reply(plan.carriers, p.dry_run));
        }
        let what = match &new_name {
            Some(to) => format!("Rename the tag '{}' to '{}'", quote(&tag), quote(to)),
            None => format!("Delete the tag '{}'", quote(&tag)),
        };
        ctx.confirm(
            Self::NAME,
            format!(
                "{what} on {carrying} item{} of the library? This cannot be undone from here.",
                if carrying == 1 { "" } else { "s" }
            ),
        )
        .await?;
        let outcomes = match p.action {
            TagAction::Rename => {
                lib.rename_tag(&plan, &ctx.cancel, ctx.progress.as_deref())
                    .await?
            }
            TagAction::Delete => {
                let done = lib.delete_tag(plan, &ctx.cancel).await?.carriers;
                if let Some(progress) = &ctx.progress {
                    progress(done.len() as u64, done.len() as u64);
                }
                done
            }
        };
        Ok(reply(outcomes, false))
    }
}

/// The answer over the outcomes of the items that carried the tag (after a delete, those
/// that carried it when it was deleted).
fn answer(
    tag: &str,
    action: TagAction,
    new_name: Option<String>,
    outcomes: Vec<EditOutcome>,
    dry_run: bool,
) -> ManageTagsData {
    let carrying = outcomes.len();
    let results: Vec<ObjectResult> = outcomes
        .into_iter()
        .map(|o| ObjectResult::from_outcome(ObjectKind::Item, o))
        .collect();
    let counts = Counts::of(&results);
    let (done, not_done): (Vec<ObjectResult>, Vec<ObjectResult>) =
        results.into_iter().partition(ObjectResult::succeeded);
    let changed: Vec<String> = done
        .into_iter()
        .filter(|r| !r.changes.is_empty() || dry_run)
        .map(|r| r.key)
        .collect();
    let item_keys_omitted = changed.len().saturating_sub(KEYS_SHOWN);
    let not_written_omitted = not_done.len().saturating_sub(NOT_WRITTEN_SHOWN);
    // An item deleted meanwhile carries nothing any more.
    let tag_remains = (!dry_run).then_some(not_done.iter().any(|r| r.status != Status::NotFound));
    let verb = match (action, &new_name) {
        (TagAction::Rename, Some(to)) => format!("renamed to '{}'", quote(to)),
        _ => "deleted".to_string(),
    };
    let summary = if carrying == 0 {
        format!(
            "No item carries the tag '{}' (exact name): nothing to do.",
            quote(tag)
        )
    } else if dry_run {
        format!(
            "Dry run: the tag '{}' would be {verb} on {} of the {carrying} items carrying it; nothing was written.",
            quote(tag),
            counts.would_change
        )
    } else if not_done.is_empty() {
        format!(
            "The tag '{}' was {verb} on all {} items carrying it.",
            quote(tag),
            counts.changed + counts.unchanged
        )
    } else {
        format!(
            "The tag '{}' was {verb} on {} of the {carrying} items carrying it; {} were not changed (see not_written) and still carry it.",
            quote(tag),
            counts.changed,
            not_done.len()
        )
    };
    ManageTagsData {
        tag: tag.to_string(),
        action,
        new_name,
        dry_run,
        items_carrying: carrying,
        counts,
        item_keys: changed.into_iter().take(KEYS_SHOWN).collect(),
        item_keys_omitted,
        not_written: not_done.into_iter().take(NOT_WRITTEN_SHOWN).collect(),
        not_written_omitted,
        tag_remains,
        summary,
    }
}
