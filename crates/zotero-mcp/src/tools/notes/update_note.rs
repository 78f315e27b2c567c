//! `zotero_update_note`: replace a note's content, version-checked through the edit engine
//! (`zotero_api::edit`): a change made to the note's text in Zotero meanwhile stops the
//! write and is answered with both texts; one made to its tags is kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::notes::html::{Removed, MAX_NOTE_CHARS};
use crate::tools::notes::note_content::{
    cut_value, excerpts, sanitize, ContentFormat, ANSWER_HTML_CHARS,
};
use crate::tools::params::{library, null_is_default, LibraryParam, NonBlank, ObjectKey, Version};
use crate::tools::support::changes::{self, ObjectResult};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::ObjectKind;

/// The `zotero_update_note` tool.
pub struct UpdateNote;

/// The arguments of `zotero_update_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateNoteParams {
    /// The note's key
    pub note_key: ObjectKey,
    /// The note's new text, in format: it replaces the whole note
    pub content: NonBlank<{ MAX_NOTE_CHARS }>,
    /// markdown (the default: CommonMark with tables) or html
    #[serde(default, deserialize_with = "null_is_default")]
    pub format: ContentFormat,
    /// The note's version when you read it (zotero_get_notes): if it changed since, nothing
    /// is written
    pub version: Option<Version>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default, deserialize_with = "null_is_default")]
    pub dry_run: bool,
}

/// What `zotero_update_note` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateNoteData {
    /// Nothing was written
    pub dry_run: bool,
    /// The note: changed, unchanged or would_change, its version, and its HTML before →
    /// after (each cut at 2,000 characters)
    pub result: ObjectResult,
    /// Characters of the note's HTML as written (in a dry run: as it would be)
    pub html_chars: u64,
    /// What was taken out of content to keep what Zotero's note editor keeps; absent when
    /// nothing was
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Removed>,
    /// Opens the note in the Zotero app
    pub zotero_url: String,
}

impl ZoteroTool for UpdateNote {
    const NAME: &'static str = "zotero_update_note";
    const TITLE: &'static str = "Update note";
    const DESCRIPTION: &'static str = "Replace the whole content of a note with Markdown \
        (default) or HTML, sanitized as zotero_create_note does. Version-checked: if its text \
        changed in Zotero meanwhile, nothing is written and the error shows both texts; version \
        refuses any change since you read it. Cannot be undone: Zotero keeps no earlier text.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = UpdateNoteParams;
    type Data = UpdateNoteData;

    async fn run(p: UpdateNoteParams, ctx: &ToolContext) -> Result<UpdateNoteData, ToolError> {
        // Refused content sends nothing.
        let note = sanitize(p.content.into_string(), p.format).await?;
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.note_key.key().clone();
        let html_chars = note.html.chars().count() as u64;
        let outcome = ctx
            .svc
            .update_note(
                &lib,
                key.clone(),
                note.html,
                p.version.map(Version::get),
                p.dry_run,
                &ctx.cancel,
            )
            .await?;
        let mut result = ObjectResult::from_outcome(ObjectKind::Item, outcome);
        bound(&mut result);
        let result = changes::single(result, "note")?;
        Ok(UpdateNoteData {
            dry_run: p.dry_run,
            result,
            html_chars,
            removed: note.removed,
            zotero_url: lib.name().zotero_url(&key),
        })
    }
}

/// Notes are long: before → after cut at [`ANSWER_HTML_CHARS`]; a conflict's three values
/// as excerpts from where they first differ, short enough that an error keeps them whole.
fn bound(result: &mut ObjectResult) {
    for c in &mut result.changes {
        c.before = cut_value(&c.before, ANSWER_HTML_CHARS);
        c.after = cut_value(&c.after, ANSWER_HTML_CHARS);
    }
    for c in &mut result.conflicts {
        if let [before, yours, in_zotero] = excerpts(&[
            ("before", &c.before),
            ("yours", &c.yours),
            ("in_zotero", &c.in_zotero),
        ])
        .as_slice()
        {
            c.before = before.clone();
            c.yours = yours.clone();
            c.in_zotero = in_zotero.clone();
        }
    }
}
