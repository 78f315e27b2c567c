//! Note workflows: replacing a note's text (`zotero_update_note`): writes checked to be
//! allowed, the object read and checked to be a note (refused naming `note_key` otherwise),
//! then one version-checked edit of its `note` field.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::edit::{Edit, EditOutcome, ObjectKind};
use zotero_api::{Library, ObjectKey};

use crate::error::ToolError;
use crate::service::edit::edit_one;
use crate::service::ZoteroService;

impl ZoteroService {
    /// Replaces the HTML of note `key` of `lib` (or, in a dry run, says what would change),
    /// refused unless the note was at `expect_version` when one is given. `html` is
    /// sanitized already.
    pub async fn update_note(
        &self,
        lib: &Library<'_>,
        key: ObjectKey,
        html: String,
        expect_version: Option<u64>,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> Result<EditOutcome, ToolError> {
        lib.require_write(false, cancel).await?;
        let found = lib
            .read_objects(ObjectKind::Item, std::slice::from_ref(&key), cancel)
            .await?;
        let Some(current) = found.get(key.as_str()) else {
            return Err(
                ToolError::not_found(format!("no note with key {key} in this library"))
                    .with_detail("key", key.as_str()),
            );
        };
        let item_type = current.item_type();
        if item_type != "note" {
            let hint = match item_type.as_str() {
                "annotation" => "an annotation's comment is not a note".to_string(),
                "attachment" => "an attachment's note is not written here".to_string(),
                _ => format!(
                    "to add a note to it, use zotero_create_note with parent_key {key}; \
                     zotero_get_notes lists its notes"
                ),
            };
            return Err(ToolError::invalid(
                "note_key",
                format!("'note_key' {key} is not a note but {item_type}: {hint}"),
            )
            .with_detail("item_type", item_type));
        }
        let mut edit = Edit::new(key);
        edit.set = BTreeMap::from([("note".to_string(), Value::from(html))]);
        edit.expect_version = expect_version;
        edit_one(lib, ObjectKind::Item, edit, dry_run, cancel).await
    }
}
