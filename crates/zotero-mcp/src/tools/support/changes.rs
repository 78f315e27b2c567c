//! What the write tools answer about the objects they change: per object its outcome, its
//! new version and each field before → after (also for `dry_run`, where nothing is
//! written), and for a change stopped by an edit made in Zotero meanwhile, the fields with
//! both values. Shared so every write tool tells it the same way.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use zotero_api::edit::{Conflict, EditOutcome, EditStatus, FieldChange, ObjectKind};

/// One field, before → after.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Change {
    /// The field's Zotero name (tags and collections as lists of names and keys)
    pub field: String,
    /// Its value before
    pub before: Value,
    /// Its value after (or, in a dry run, after the write it would make)
    pub after: Value,
}

impl From<FieldChange> for Change {
    fn from(c: FieldChange) -> Self {
        Change {
            field: c.field,
            before: c.before,
            after: c.after,
        }
    }
}

/// A field this call would set that was changed in Zotero after this call read it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ConflictOut {
    /// The field's Zotero name
    pub field: String,
    /// Its value when this call read the object
    pub before: Value,
    /// What this call would have written
    pub yours: Value,
    /// What Zotero has now (kept)
    pub in_zotero: Value,
}

impl From<Conflict> for ConflictOut {
    fn from(c: Conflict) -> Self {
        ConflictOut {
            field: c.field,
            before: c.before,
            yours: c.yours,
            in_zotero: c.in_zotero,
        }
    }
}

/// What happened to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Written
    Changed,
    /// Already as asked; nothing written
    Unchanged,
    /// dry_run: this is what would be written
    WouldChange,
    /// Not written: a field it sets was changed in Zotero meanwhile (see conflicts)
    Conflict,
    /// Not written: it changed since the version given
    Stale,
    /// No such object in this library
    NotFound,
    /// Not written: Zotero refused it or the call failed (see error)
    Failed,
    /// Not attempted: the call was cancelled first
    NotAttempted,
}

/// The outcome for one object.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ObjectResult {
    /// The object's key
    pub key: String,
    /// What happened to it
    pub status: Status,
    /// Its version after this call, when known
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// What changed (or would change, in a dry run)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    /// For status conflict: each field with its value before, yours and in Zotero
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<ConflictOut>,
    /// For status failed, stale, not_found: why, and what to do
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Zotero's HTTP status for a refusal (the error code of a single-object tool).
    #[serde(skip)]
    pub upstream_status: Option<u16>,
}

impl ObjectResult {
    /// The result of one object's edit.
    pub fn from_outcome(kind: ObjectKind, o: EditOutcome) -> Self {
        let noun = kind.noun();
        let key = o.key.to_string();
        let upstream_status = match &o.status {
            EditStatus::Failed { code, .. } if *code != 0 => Some(*code),
            _ => None,
        };
        let (status, conflicts, error) = match o.status {
            EditStatus::Changed => (Status::Changed, Vec::new(), None),
            EditStatus::Unchanged => (Status::Unchanged, Vec::new(), None),
            EditStatus::WouldChange => (Status::WouldChange, Vec::new(), None),
            EditStatus::Conflict(c) => {
                let fields: Vec<&str> = c.iter().map(|c| c.field.as_str()).collect();
                let error = format!(
                    "not written: {} changed in Zotero since this call read the {noun}; \
                     Zotero's values are kept. Read it again and decide.",
                    fields.join(", ")
                );
                (
                    Status::Conflict,
                    c.into_iter().map(ConflictOut::from).collect(),
                    Some(error),
                )
            }
            EditStatus::Stale { current_version } => (
                Status::Stale,
                Vec::new(),
                Some(format!(
                    "not written: the {noun} changed since the version given (now \
                     {current_version}); read it again"
                )),
            ),
            EditStatus::NotFound => (
                Status::NotFound,
                Vec::new(),
                Some(format!("no {noun} with key {key} in this library")),
            ),
            EditStatus::Failed { code, message } => (
                Status::Failed,
                Vec::new(),
                Some(if code == 0 {
                    message
                } else {
                    format!("Zotero answered {code}: {message}")
                }),
            ),
            EditStatus::NotAttempted => (
                Status::NotAttempted,
                Vec::new(),
                Some("not attempted: the call was cancelled first".into()),
            ),
        };
        ObjectResult {
            key,
            status,
            version: o.version,
            changes: o.changes.into_iter().map(Change::from).collect(),
            conflicts,
            error,
            upstream_status,
        }
    }

    /// Whether the object is as asked (written now, or already so, or would be in a dry run).
    pub fn succeeded(&self) -> bool {
        matches!(
            self.status,
            Status::Changed | Status::Unchanged | Status::WouldChange
        )
    }
}

/// For a tool that changes one object: its result, or the error that says why not. A
/// conflict is `ZOTERO_VALIDATION_ERROR` (Zotero's 412) with `details.reason =
/// "changed_in_zotero"` and the fields with both values in `details.conflicts`.
pub fn single(result: ObjectResult, noun: &str) -> Result<ObjectResult, ToolError> {
    let message = result.error.clone().unwrap_or_default();
    let key = result.key.clone();
    match result.status {
        Status::Changed | Status::Unchanged | Status::WouldChange => Ok(result),
        Status::Conflict => Err(ToolError::validation(format!("{noun} {key}: {message}"))
            .with_detail("reason", "changed_in_zotero")
            .with_detail("key", key)
            .with_detail("written", false)
            .with_detail("conflicts", json!(result.conflicts))),
        Status::Stale => Err(ToolError::validation(format!("{noun} {key}: {message}"))
            .with_detail("reason", "version_changed")
            .with_detail("key", key)
            .with_detail("written", false)
            .with_detail("version", json!(result.version))),
        Status::NotFound => Err(ToolError::not_found(message).with_detail("key", key)),
        Status::NotAttempted => {
            Err(ToolError::validation(format!("{noun} {key}: {message}"))
                .with_detail("written", false))
        }
        Status::Failed => Err(ToolError::for_status(
            result.upstream_status,
            format!("{noun} {key}: {message}"),
        )
        .with_detail("key", key)),
    }
}

/// Counts of a batch's outcomes, for the summary line of a batch tool.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Counts {
    /// Objects written
    pub changed: usize,
    /// Objects already as asked
    pub unchanged: usize,
    /// Objects a dry run would write
    pub would_change: usize,
    /// Not written, for the reasons in each result (conflict, stale, not found, failed,
    /// not attempted)
    pub not_written: usize,
}

impl Counts {
    /// The counts of these results.
    pub fn of(results: &[ObjectResult]) -> Self {
        let mut c = Counts::default();
        for r in results {
            match r.status {
                Status::Changed => c.changed += 1,
                Status::Unchanged => c.unchanged += 1,
                Status::WouldChange => c.would_change += 1,
                _ => c.not_written += 1,
            }
        }
        c
    }
}
