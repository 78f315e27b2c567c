//! An update of a library's index as the tools and the CLI ask for it: its options, what
//! it reports on the way and at the end, why it stops, and the two passes of an update
//! whose model is not loaded yet (words first, then the model and the vectors). The work
//! itself (`super::run`) runs on a blocking thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use zotero_api::{LibraryRef, ZoteroClient, ZoteroError};
use zotero_hub::Progress as ModelProgress;
use zotero_index::IndexError;

use super::index_error;
use super::run::Run;
use super::settings::{SearchSettings, SharedEncoder};
use crate::mcp::envelope::{ErrorCode, ToolError};

/// The Zotero client an update reads from, shared with the blocking thread that runs it
/// (the service is one: `Arc<ZoteroService>` is a `SharedClient`).
pub type SharedClient = Arc<dyn AsRef<ZoteroClient> + Send + Sync>;

/// What an update is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Items,
    Fulltext,
    Deleted,
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
    fn absorb(&mut self, later: UpdateReport) {
        self.cancelled = later.cancelled;
        self.objects_read += later.objects_read;
        self.fulltexts_read += later.fulltexts_read;
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
    /// The update's thread ended abnormally (a defect); what was committed stays.
    #[error("the update stopped unexpectedly ({0}); what was committed stays, run it again")]
    Stopped(String),
}

impl From<UpdateError> for ToolError {
    fn from(e: UpdateError) -> Self {
        match e {
            UpdateError::Index(e) => index_error(e),
            UpdateError::Zotero(e) => e.into(),
            e @ UpdateError::Stopped(_) => ToolError::new(ErrorCode::Internal, e.to_string()),
        }
    }
}

/// An update as users ask for it, with the configured model: when the model is not loaded
/// yet, the keyword index is brought up to date first (searchable by words at once), then
/// the model is loaded, downloaded when it is not in the cache (phase `model`), and the
/// vectors follow. Without a model the index stays keyword-only and the report says why.
pub async fn update_with_model(
    client: SharedClient,
    search: &SearchSettings,
    library: LibraryRef,
    dir: PathBuf,
    options: UpdateOptions,
    progress: Option<ProgressCallback>,
    cancel: CancellationToken,
) -> Result<UpdateReport, UpdateError> {
    let ready = search.encoder_if_loaded();
    if ready.is_some() || search.model.is_none() {
        let mut report = update(
            client.clone(),
            library,
            dir,
            ready.clone(),
            options,
            progress,
            cancel,
        )
        .await?;
        if ready.is_none() {
            report.note = Some(
                "searched by words only, no sentence model: ZOTERO_EMBEDDING_MODEL is none (set \
                 it to a model to search by meaning)"
                    .to_string(),
            );
        }
        return Ok(report);
    }
    let mut report = update(
        client.clone(),
        library,
        dir.clone(),
        None,
        options,
        progress.clone(),
        cancel.clone(),
    )
    .await?;
    if report.cancelled {
        return Ok(report);
    }
    let model_progress = progress.clone().map(|report| {
        move |_file: &str, done: u64, total: u64| {
            report(Progress {
                phase: Phase::Model,
                done,
                total,
                chunks: 0,
            })
        }
    });
    let loaded = search
        .encoder_for_update(
            model_progress.as_ref().map(|f| f as ModelProgress<'_>),
            &cancel,
        )
        .await;
    match loaded {
        Ok(Some(encoder)) => {
            // The keyword index is current: this pass only adds the vectors (and whatever
            // changed in Zotero meanwhile).
            let vectors = update(
                client,
                library,
                dir,
                Some(encoder),
                UpdateOptions {
                    full: false,
                    ..options
                },
                progress,
                cancel,
            )
            .await?;
            report.absorb(vectors);
        }
        Ok(None) => {}
        Err(why) => {
            tracing::warn!(error = %why, "no sentence model; the index stays keyword-only");
            report.note = Some(format!("searched by words only, no sentence model: {why}"));
        }
    }
    Ok(report)
}

/// Updates (or with `full` rebuilds) the index of `library` in `dir`: the blocking work
/// (SQLite, encoding) on a blocking thread, which drives the requests on `handle`.
#[allow(clippy::too_many_arguments)]
pub async fn update(
    client: SharedClient,
    library: LibraryRef,
    dir: PathBuf,
    encoder: SharedEncoder,
    options: UpdateOptions,
    progress: Option<ProgressCallback>,
    cancel: CancellationToken,
) -> Result<UpdateReport, UpdateError> {
    let handle = tokio::runtime::Handle::current();
    let job = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let zotero: &ZoteroClient = (*client).as_ref();
        let lib = zotero.library(library)?;
        let mut run = Run::new(lib, handle, cancel, progress, library, options)
            .with_database(zotero.database().cloned());
        run.update(&dir, library, encoder.as_deref(), options)?;
        let mut report = run.into_report();
        report.seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        Ok(report)
    });
    match job.await {
        Ok(r) => r,
        Err(e) => Err(UpdateError::Stopped(e.to_string())),
    }
}
