//! What an update of a library's index is asked and what it answers: its options, the
//! progress it reports on the way, its report at the end and why it stops. A leaf below the
//! update itself (`sync`) and its phases (`run`), which both speak these types.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use zotero_api::ZoteroError;
use zotero_index::IndexError;

use crate::error::ToolError;

/// What an update is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Items,
    Fulltext,
    Deleted,
    /// Attachments' files read for their text: `done` and `total` are files.
    Files,
    /// The sentence model's download: `done` and `total` are bytes.
    Model,
    Vectors,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Items => "items",
            Phase::Fulltext => "fulltext",
            Phase::Deleted => "deleted",
            Phase::Files => "files",
            Phase::Model => "model",
            Phase::Vectors => "vectors",
        }
    }
}

/// Where an update is: `done` of `total` objects of `phase`; `chunks` written so far.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
    pub chunks: u64,
}

pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// What to update.
#[derive(Debug, Clone, Copy)]
pub struct UpdateOptions {
    /// Rebuild from nothing (the file is replaced).
    pub full: bool,
    pub include_fulltext: bool,
}

/// What an update did.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateReport {
    // user or group:<id>
    pub library: String,
    // Whether the index was rebuilt from nothing
    pub full: bool,
    // Cancelled before the end: everything committed so far stays, the next update resumes
    pub cancelled: bool,
    // Items, notes, annotations and attachments read because they changed
    pub objects_read: u64,
    // Full texts read because they changed
    pub fulltexts_read: u64,
    // Attachments' files due to be read for their text (new or changed)
    pub files_to_read: u64,
    /// Files read, by outcome: text (indexed with pages), no_text_layer, encrypted, damaged,
    /// too_large, timed_out, unsupported, unreachable, missing, not_downloaded
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, u64>,
    // Objects removed (deleted in Zotero)
    pub removed: u64,
    // Chunks written (keyword index)
    pub chunks_written: u64,
    // Chunks that got a vector in this update
    pub vectors_added: u64,
    /// The vectors of another model were dropped (they are recomputed)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vectors_reset: bool,
    /// The library version the index is complete up to
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library_version: Option<u64>,
    // Requests sent to Zotero
    pub requests: u64,
    // Seconds taken
    #[schemars(schema_with = "number_schema")]
    pub seconds: f64,
    /// Why there are no vectors, when there are none
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl UpdateReport {
    /// Adds a second pass's work to this one's (its state wins: version, note, cancelled).
    pub(super) fn absorb(&mut self, later: UpdateReport) {
        self.cancelled = later.cancelled;
        self.objects_read += later.objects_read;
        self.fulltexts_read += later.fulltexts_read;
        self.files_to_read += later.files_to_read;
        for (outcome, n) in later.files {
            *self.files.entry(outcome).or_default() += n;
        }
        self.removed += later.removed;
        self.chunks_written += later.chunks_written;
        self.vectors_added += later.vectors_added;
        self.vectors_reset |= later.vectors_reset;
        self.library_version = later.library_version.or(self.library_version);
        self.requests += later.requests;
        self.seconds = ((self.seconds + later.seconds) * 1000.0).round() / 1000.0;
        self.note = later.note;
    }
}

/// A plain number (schemars would add `format: double`, which clients cannot use).
pub fn number_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "number", "minimum": 0 })
}

/// Why an update stopped.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    /// The sentence encoder failed: a model that cannot run here (memory, damaged files)
    /// is the user's to change; what was committed (the keyword index) stays.
    #[error("the sentence encoder {model} failed while updating the search index: {reason}. What was committed stays (search by keywords works); check the model's files, or pick another model with ZOTERO_EMBEDDING_MODEL (`none`: keywords only), then update again")]
    Encoder { model: String, reason: String },
    /// The update's thread ended abnormally (a defect); what was committed stays.
    #[error("the update stopped unexpectedly ({0}); what was committed stays, run it again")]
    Stopped(String),
}

impl From<UpdateError> for ToolError {
    fn from(e: UpdateError) -> Self {
        match e {
            UpdateError::Index(e) => e.into(),
            UpdateError::Zotero(e) => e.into(),
            UpdateError::Encoder { ref model, .. } => {
                let model = model.clone();
                ToolError::validation(e.to_string())
                    .with_detail("variable", "ZOTERO_EMBEDDING_MODEL")
                    .with_detail("model", model)
            }
            e @ UpdateError::Stopped(_) => ToolError::internal(e.to_string()),
        }
    }
}
