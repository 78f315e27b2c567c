//! One object edited through the edit engine, and its one outcome: what every tool that
//! changes a single item or collection does last.

use tokio_util::sync::CancellationToken;
use zotero_api::edit::{Edit, EditOutcome, ObjectKind};
use zotero_api::Library;

use crate::error::ToolError;

/// Applies `edit` to its object of `lib` (or, in a dry run, says what would change).
pub async fn edit_one(
    lib: &Library<'_>,
    kind: ObjectKind,
    edit: Edit,
    dry_run: bool,
    cancel: &CancellationToken,
) -> Result<EditOutcome, ToolError> {
    let key = edit.key.clone();
    lib.edit_objects(kind, vec![edit], dry_run, cancel, None)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ToolError::internal(format!("the edit engine answered no outcome for {key}"))
        })
}
