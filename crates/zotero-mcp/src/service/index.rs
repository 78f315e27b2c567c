//! The search index kept in step with Zotero: the sync from the Zotero API into
//! `zotero-index` (one SQLite file per library), and what the tools and the CLI share
//! (opening an index that exists, its status against the library's current version).
//!
//! It lives here, not in `zotero-index`, because it reads Zotero through `zotero-api` and
//! converts notes with this crate's HTML → Markdown (`markdown::note_to_markdown`), so the
//! index crate stays free of both.
//!
//! # The sync, per kind of object, each with its own library version in the index
//! 1. items (regular items, notes, annotations, attachments): one request for the versions
//!    of everything changed since the version indexed (`format=versions`, trash included),
//!    then the changed objects 50 keys a request, oldest version first; each request's
//!    objects are committed in one transaction together with the version up to which every
//!    object is now indexed, so that a killed update resumes where it stopped. An
//!    annotation is indexed under its attachment's parent (learnt in the run, from the
//!    index, or asked for); an attachment with a parent is not indexed itself, but its full
//!    text and annotations follow it to another parent or into the trash.
//! 2. full texts: `/fulltext?since=` (key → version), then each changed attachment's text,
//!    20 a transaction, likewise.
//! 3. deletions: `/deleted?since=`; the desktop's local API has no `/deleted`, so there
//!    the keys of the whole library (one `format=versions` request) are compared with the
//!    index instead.
//! 4. vectors, when an encoder is given: the chunks still without one, metadata, notes and
//!    annotations first, committed in batches.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::model::WireObject;
use zotero_api::sync::KEYS_PER_REQUEST;
use zotero_api::{Library, LibraryRef, ZoteroError};
use zotero_hub::{ModelCache, Progress as ModelProgress};
use zotero_index::{
    Document, Encoder, Index, IndexError, ItemMeta, LibraryId, Remedy, VectorCache,
};

use crate::mcp::envelope::{ErrorCode, ToolError};

/// The command that builds an index; answers about a missing index name it.
pub const BUILD_COMMAND: &str = "zotero-mcp update-db";
/// Full texts fetched (one request each) per committed transaction.
const FULLTEXTS_PER_BATCH: usize = 20;
/// Chunks encoded per committed transaction.
const VECTORS_PER_BATCH: usize = 32;

/// The encoder of a search or an update, when there is one: without, the index is
/// keyword-only and every answer says so.
pub type SharedEncoder = Option<Arc<dyn Encoder>>;

pub use crate::config::ModelSource;

/// Where indexes live and what makes vectors.
#[derive(Clone)]
pub struct SearchSettings {
    /// `Err` says why no directory could be derived (no ZOTERO_INDEX_DIR, XDG_DATA_HOME
    /// or HOME).
    pub dir: Result<PathBuf, String>,
    /// An encoder given when the server was built (tests: `SynonymEncoder`); it wins over
    /// the configured model.
    pub encoder: SharedEncoder,
    /// `ZOTERO_EMBEDDING_MODEL` as given.
    pub embedding_model: Option<String>,
    /// The configured model (`None`: words only).
    pub model: Option<ModelSource>,
    /// The configured model once loaded: loaded on the first update or search that needs
    /// it, then kept for the process.
    loaded: Arc<tokio::sync::Mutex<SharedEncoder>>,
    /// The int8 copies of the indexes' vectors, kept for the process: each search opens
    /// the index anew (a new connection), so the copy lives here rather than in an
    /// `Index`. Loaded by the first search by meaning of each index, reloaded when an
    /// update changed it (see `zotero_index::vcache`).
    vectors: VectorCache,
}

impl std::fmt::Debug for SearchSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchSettings")
            .field("dir", &self.dir)
            .field("encoder", &self.encoder.as_ref().map(|e| e.identity().id))
            .field("embedding_model", &self.embedding_model)
            .field("model", &self.model)
            .finish()
    }
}

impl SearchSettings {
    pub fn new(
        dir: Result<PathBuf, String>,
        encoder: SharedEncoder,
        embedding_model: Option<String>,
        model: Option<ModelSource>,
    ) -> Self {
        SearchSettings {
            dir,
            encoder,
            embedding_model,
            model,
            loaded: Arc::default(),
            vectors: VectorCache::default(),
        }
    }

    /// The process's copies of the indexes' vectors, for searches by meaning.
    pub fn vector_cache(&self) -> &VectorCache {
        &self.vectors
    }

    /// The encoder of a search: the given one, or the configured model when it is already
    /// loaded or in the model cache (a search never downloads). `Err` says why there is
    /// none, for the answer's note.
    pub async fn encoder_for_search(&self) -> Result<SharedEncoder, String> {
        self.encoder(false, None, &CancellationToken::new()).await
    }

    /// The encoder of an update: as for a search, but the model is downloaded when it is
    /// not in the cache (`progress`: file, bytes done, bytes in all).
    pub async fn encoder_for_update(
        &self,
        progress: Option<ModelProgress<'_>>,
        cancel: &CancellationToken,
    ) -> Result<SharedEncoder, String> {
        self.encoder(true, progress, cancel).await
    }

    /// The configured model's encoder if it is loaded already (no loading, no request).
    pub fn encoder_if_loaded(&self) -> SharedEncoder {
        if self.encoder.is_some() {
            return self.encoder.clone();
        }
        self.loaded.try_lock().ok().and_then(|l| l.clone())
    }

    async fn encoder(
        &self,
        download: bool,
        progress: Option<ModelProgress<'_>>,
        cancel: &CancellationToken,
    ) -> Result<SharedEncoder, String> {
        if self.encoder.is_some() {
            return Ok(self.encoder.clone());
        }
        let Some(source) = &self.model else {
            return Ok(None);
        };
        // One load at a time; the others wait for it and share the result.
        let mut loaded = self.loaded.lock().await;
        if loaded.is_some() {
            return Ok(loaded.clone());
        }
        let mut hub = source.hub.clone();
        if !download {
            hub.offline = true;
        }
        let cache = ModelCache::new(hub).map_err(|e| e.to_string())?;
        let quiet = |_: &str, _: u64, _: u64| {};
        let dir = cache
            .get(&source.spec, progress.unwrap_or(&quiet), cancel)
            .await
            .map_err(|e| {
                if download {
                    format!("the model {} could not be fetched: {e}", source.spec)
                } else {
                    format!(
                        "the model {} is not loaded yet ({e}); `{BUILD_COMMAND}` downloads it",
                        source.spec
                    )
                }
            })?;
        let encoder = tokio::task::spawn_blocking(move || zotero_embed::load_model_dir(&dir))
            .await
            .map_err(|e| format!("loading the model stopped: {e}"))?
            .map_err(|e| format!("the model {} cannot be loaded: {e}", source.spec))?;
        tracing::info!(model = %source.spec, "sentence model loaded");
        let encoder: Arc<dyn Encoder> = Arc::new(encoder);
        *loaded = Some(encoder.clone());
        Ok(Some(encoder))
    }

    pub fn dir(&self) -> Result<&Path, ToolError> {
        self.dir.as_deref().map_err(|why| {
            ToolError::new(ErrorCode::Validation, why.clone())
                .with_detail("variable", "ZOTERO_INDEX_DIR")
        })
    }
}

/// The index's name for a library.
pub fn index_id(library: LibraryRef) -> LibraryId {
    match library {
        LibraryRef::User => LibraryId::User,
        LibraryRef::Group(g) => LibraryId::Group(g),
    }
}

/// The file of a library's index, whether or not it exists.
pub fn index_path(dir: &Path, library: LibraryRef) -> PathBuf {
    dir.join(index_id(library).file_name())
}

/// The libraries with an index file in `dir`.
pub fn indexed_libraries(dir: &Path) -> Vec<LibraryRef> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".sqlite") else {
            continue;
        };
        if stem == "user" {
            out.push(LibraryRef::User);
        } else if let Some(id) = stem.strip_prefix("group-").and_then(|n| n.parse().ok()) {
            out.push(LibraryRef::Group(id));
        }
    }
    out.sort();
    out
}

/// The error for a library without an index: names the command and the tool that build it.
pub fn no_index(library: LibraryRef) -> ToolError {
    let cmd = if library == LibraryRef::User {
        BUILD_COMMAND.to_string()
    } else {
        format!("{BUILD_COMMAND} --library {library}")
    };
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "the library {library} has no search index yet; build it with `{cmd}` (or the tool \
             zotero_update_search_database), then search again; zotero_search_items searches \
             by words meanwhile"
        ),
    )
    .with_detail("command", cmd)
}

/// Opens the index of `library` when its file exists (never creates one). A directory that
/// cannot hold an index is an error, not "no index".
pub fn open_existing(dir: &Path, library: LibraryRef) -> Result<Option<Index>, IndexError> {
    zotero_index::check_dir(dir)?;
    if !index_path(dir, library).exists() {
        return Ok(None);
    }
    Index::open(dir, &index_id(library)).map(Some)
}

/// The public code of an index error. Everything the user can fix (the directory, a file's
/// permissions, a full disk, a damaged or foreign file, another model's vectors) is
/// `ZOTERO_VALIDATION_ERROR`, as Zotero's own 409/412 (a state to resolve before the call
/// can succeed, not a retry); another update running is `ZOTERO_RATE_LIMITED`; only what
/// would be this program's defect (a query SQLite refused, a lock mixed up) is internal.
pub fn index_error_code(e: &IndexError) -> ErrorCode {
    match e {
        IndexError::NoSemantic { .. }
        | IndexError::LibraryId(_)
        | IndexError::NoDirectory
        | IndexError::Corrupt { .. }
        | IndexError::ModelMismatch { .. }
        | IndexError::Io { .. }
        | IndexError::Storage { .. } => ErrorCode::Validation,
        IndexError::Busy { .. } => ErrorCode::RateLimited,
        IndexError::Encode(_) | IndexError::WrongLock { .. } | IndexError::Sqlite(_) => {
            ErrorCode::Internal
        }
    }
}

/// An index error as a tool error: what to do is in the message; `details` name the path,
/// and the variable (`ZOTERO_INDEX_DIR`) or the command (`update-db --full`) that fixes it.
pub fn index_error(e: IndexError) -> ToolError {
    let mut err = ToolError::new(index_error_code(&e), e.to_string());
    match &e {
        IndexError::Corrupt { path, .. } | IndexError::ModelMismatch { path, .. } => {
            err = err
                .with_detail("command", zotero_index::error::REBUILD_HINT)
                .with_detail("path", path.display().to_string());
        }
        IndexError::Io { path, remedy, .. } | IndexError::Storage { path, remedy, .. } => {
            err = err.with_detail("path", path.display().to_string());
            match remedy {
                Remedy::Directory | Remedy::Space => {
                    err = err.with_detail("variable", "ZOTERO_INDEX_DIR");
                }
                Remedy::File => {
                    err = err.with_detail("command", zotero_index::error::REBUILD_HINT);
                }
                Remedy::NotAFile => {}
            }
        }
        IndexError::NoDirectory => err = err.with_detail("variable", "ZOTERO_INDEX_DIR"),
        IndexError::Busy { path } => err = err.with_detail("path", path.display().to_string()),
        _ => {}
    }
    err
}

/// How fresh a library's index is, as a search answers it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Freshness {
    /// user or group:<id>
    pub library: String,
    /// The library version everything is indexed up to
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_version: Option<u64>,
    /// The library's version now; absent when Zotero could not be asked
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// The library changed after the index was updated (run the update)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// How many library versions the index is behind
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions_behind: Option<u64>,
    /// Searchable chunks
    pub chunks: u64,
    /// Chunks with a vector (searchable by meaning)
    pub chunks_with_vectors: u64,
}

/// The freshness of an index: its status and one cheap request (304 when unchanged) for
/// the library's version now; Zotero out of reach leaves the current version out.
pub async fn freshness(
    svc: &crate::service::ZoteroService,
    library: LibraryRef,
    status: &zotero_index::Status,
    cancel: &CancellationToken,
) -> Freshness {
    let current = current_version(svc, library, status.library_version, cancel).await;
    let coverage = zotero_index::Coverage {
        chunks_total: status.chunks,
        chunks_with_vectors: status.chunks_with_vectors,
    };
    freshness_of(library, status.library_version, coverage, current)
}

/// The library's version now (one cheap request; 304 when it is still `known`), `None`
/// when Zotero could not be asked.
pub async fn current_version(
    svc: &crate::service::ZoteroService,
    library: LibraryRef,
    known: Option<u64>,
    cancel: &CancellationToken,
) -> Option<u64> {
    let lib = svc.client.library(library).ok()?;
    lib.current_version(known, cancel).await.ok()
}

/// The freshness of an index complete up to library version `indexed`, the library being
/// at `current`.
pub fn freshness_of(
    library: LibraryRef,
    indexed: Option<u64>,
    coverage: zotero_index::Coverage,
    current: Option<u64>,
) -> Freshness {
    let behind = match (current, indexed) {
        (Some(c), Some(i)) => Some(c.saturating_sub(i)),
        (Some(c), None) => Some(c),
        _ => None,
    };
    Freshness {
        library: library.to_string(),
        indexed_version: indexed,
        current_version: current,
        stale: behind.map(|b| b > 0),
        versions_behind: behind,
        chunks: coverage.chunks_total,
        chunks_with_vectors: coverage.chunks_with_vectors,
    }
}

/// Unix seconds as ISO 8601 (UTC).
pub fn iso_time(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

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
    svc: Arc<crate::service::ZoteroService>,
    library: LibraryRef,
    dir: PathBuf,
    options: UpdateOptions,
    progress: Option<ProgressCallback>,
    cancel: CancellationToken,
) -> Result<UpdateReport, UpdateError> {
    let ready = svc.search.encoder_if_loaded();
    if ready.is_some() || svc.search.model.is_none() {
        let mut report = update(
            svc.clone(),
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
        svc.clone(),
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
    let loaded = svc
        .search
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
                svc,
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
    svc: Arc<crate::service::ZoteroService>,
    library: LibraryRef,
    dir: PathBuf,
    encoder: SharedEncoder,
    options: UpdateOptions,
    progress: Option<ProgressCallback>,
    cancel: CancellationToken,
) -> Result<UpdateReport, UpdateError> {
    let handle = tokio::runtime::Handle::current();
    let job = tokio::task::spawn_blocking(move || {
        let lib = svc.client.library(library)?;
        let mut run = Run {
            lib,
            handle,
            cancel,
            progress,
            report: UpdateReport {
                library: library.to_string(),
                full: options.full,
                ..UpdateReport::default()
            },
            parents: HashMap::new(),
            started: Instant::now(),
        };
        run.update(&dir, library, encoder.as_deref(), options)?;
        run.report.seconds = (run.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        Ok(run.report)
    });
    match job.await {
        Ok(r) => r,
        Err(e) => Err(UpdateError::Stopped(e.to_string())),
    }
}

struct Run<'a> {
    lib: Library<'a>,
    handle: tokio::runtime::Handle,
    cancel: CancellationToken,
    progress: Option<ProgressCallback>,
    report: UpdateReport,
    /// Attachment → its top-level item, learnt in this run.
    parents: HashMap<String, Option<String>>,
    started: Instant,
}

/// (key, version) sorted oldest first, so that a committed batch completes a version.
fn in_version_order(versions: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut list: Vec<(String, u64)> = versions.into_iter().collect();
    list.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    list
}

/// The version up to which everything is indexed once the objects before `rest` are: the
/// next object's version less one, or the library's version `last` after the last object.
fn watermark(rest: &[(String, u64)], last: u64) -> u64 {
    rest.first().map_or(last, |(_, v)| v.saturating_sub(1))
}

impl Run<'_> {
    fn block<T>(
        &mut self,
        fut: impl std::future::Future<Output = Result<T, ZoteroError>>,
    ) -> Result<T, ZoteroError> {
        self.report.requests += 1;
        self.handle.block_on(fut)
    }

    fn tell(&self, phase: Phase, done: u64, total: u64) {
        if let Some(p) = &self.progress {
            p(Progress {
                phase,
                done,
                total,
                chunks: self.report.chunks_written,
            });
        }
    }

    fn update(
        &mut self,
        dir: &Path,
        library: LibraryRef,
        encoder: Option<&dyn Encoder>,
        options: UpdateOptions,
    ) -> Result<(), UpdateError> {
        let id = index_id(library);
        // The lock is taken for the whole update: a second update answers Busy at once. A
        // rebuild takes it before the old file goes, and keeps it while the new one is made.
        let (mut index, lock) = if options.full {
            let lock = Index::lock(dir, &id)?;
            (Index::replace(&lock, &id)?, Some(lock))
        } else {
            (Index::open(dir, &id)?, None)
        };
        let mut up = match lock {
            Some(lock) => index.updater_with(lock)?,
            None => index.updater()?,
        };
        let cancel = self.cancel.clone();

        // A new index records every kind at 0 first, so that until each is complete the
        // index says it is behind (its version is the least of the kinds').
        if up.index().sync_version("items")?.is_none() {
            let mut b = up.batch()?;
            b.set_sync_version("items", 0)?;
            b.set_sync_version("deleted", 0)?;
            if options.include_fulltext {
                b.set_sync_version("fulltext", 0)?;
            }
            b.commit()?;
        }

        // 1. Items, notes, annotations, attachments.
        let since = up.index().sync_version("items")?.filter(|v| *v > 0);
        let lib = self.lib;
        let changed = self.block(lib.item_versions_since(since.unwrap_or(0), &cancel))?;
        let last = changed
            .library_version
            .or_else(|| changed.versions.values().max().copied())
            .unwrap_or(0);
        let list = in_version_order(changed.versions);
        let total = list.len() as u64;
        self.tell(Phase::Items, 0, total);
        let mut done = 0u64;
        let mut rest: &[(String, u64)] = &list;
        if rest.is_empty() {
            let mut b = up.batch()?;
            b.set_sync_version("items", last.max(since.unwrap_or(0)))?;
            b.commit()?;
        }
        while !rest.is_empty() {
            if self.cancel.is_cancelled() {
                self.report.cancelled = true;
                return Ok(());
            }
            let (now, later) = rest.split_at(rest.len().min(KEYS_PER_REQUEST));
            rest = later;
            let keys: Vec<&str> = now.iter().map(|(k, _)| k.as_str()).collect();
            let objects = self.block(lib.items_by_key(&keys, &cancel))?;
            self.report.objects_read += objects.len() as u64;
            for o in &objects {
                if o.item_type() == "attachment" {
                    self.parents.insert(o.key(), Some(top_of(o)));
                }
            }
            let wanted: Vec<String> = objects
                .iter()
                .filter(|o| o.item_type() == "annotation")
                .filter_map(|o| field(o, "parentItem"))
                .collect();
            self.resolve_parents(up.index(), &wanted)?;
            let mut b = up.batch()?;
            for o in &objects {
                if let Some(doc) = self.document(o) {
                    self.report.chunks_written += doc.chunks.len() as u64;
                    b.upsert(&doc)?;
                } else if o.item_type() == "attachment" {
                    // Its full text and annotations follow it (another parent, the trash).
                    let deleted = o.data.get("deleted").is_some_and(truthy);
                    b.reattach(&o.key(), &top_of(o), deleted)?;
                }
            }
            b.set_sync_version("items", watermark(rest, last))?;
            b.commit()?;
            done += now.len() as u64;
            self.tell(Phase::Items, done, total);
        }

        // 2. Full texts.
        {
            let was_included = up.index().status()?.fulltext_included;
            let mut b = up.batch()?;
            if was_included && !options.include_fulltext {
                // Left out from now on: what was indexed goes too, so that the index holds
                // what its status says, and including them again reads them all.
                self.report.removed += b.delete_kind(zotero_index::DocKind::Fulltext)? as u64;
                b.clear_sync_version("fulltext")?;
            }
            b.set_fulltext_included(options.include_fulltext)?;
            b.commit()?;
        }
        if options.include_fulltext {
            let since = up.index().sync_version("fulltext")?.unwrap_or(0);
            let changed = self.block(lib.fulltext_versions_since(since, &cancel))?;
            let last = changed.library_version.unwrap_or(last);
            let list = in_version_order(changed.versions);
            let total = list.len() as u64;
            self.tell(Phase::Fulltext, 0, total);
            let mut done = 0u64;
            let mut rest: &[(String, u64)] = &list;
            if rest.is_empty() {
                let mut b = up.batch()?;
                b.set_sync_version("fulltext", last.max(since))?;
                b.commit()?;
            }
            while !rest.is_empty() {
                if self.cancel.is_cancelled() {
                    self.report.cancelled = true;
                    return Ok(());
                }
                let (now, later) = rest.split_at(rest.len().min(FULLTEXTS_PER_BATCH));
                rest = later;
                let keys: Vec<String> = now.iter().map(|(k, _)| k.clone()).collect();
                self.resolve_parents(up.index(), &keys)?;
                let mut docs = Vec::new();
                for (key, version) in now {
                    let Some(Some(item)) = self.parents.get(key).cloned() else {
                        continue; // the attachment is gone
                    };
                    if let Some(text) = self.block(lib.fulltext_content(key, &cancel))? {
                        self.report.fulltexts_read += 1;
                        docs.push(Document::fulltext(key, &item, *version, &text));
                    }
                }
                let mut b = up.batch()?;
                for d in &docs {
                    self.report.chunks_written += d.chunks.len() as u64;
                    b.upsert(d)?;
                }
                b.set_sync_version("fulltext", watermark(rest, last))?;
                b.commit()?;
                done += now.len() as u64;
                self.tell(Phase::Fulltext, done, total);
            }
        }

        // 3. Deletions.
        if self.cancel.is_cancelled() {
            self.report.cancelled = true;
            return Ok(());
        }
        let deleted_since = up.index().sync_version("deleted")?;
        let deleted_since = deleted_since.filter(|v| *v > 0);
        if deleted_since.is_none() && since.is_none() {
            // A new index holds nothing that could have been deleted.
            let mut b = up.batch()?;
            b.set_sync_version("deleted", last)?;
            b.commit()?;
        } else {
            self.tell(Phase::Deleted, 0, 1);
            let gone: Vec<String> =
                match self.block(lib.deleted_since(deleted_since.unwrap_or(0), &cancel))? {
                    Some(d) => d.items,
                    None => {
                        // The local API has no /deleted: what the index holds that the
                        // library no longer has.
                        let all = self.block(lib.item_versions_since(0, &cancel))?;
                        up.index()
                            .document_keys()?
                            .into_iter()
                            .map(|(k, _)| k)
                            .filter(|k| !all.versions.contains_key(k))
                            .collect::<HashSet<_>>()
                            .into_iter()
                            .collect()
                    }
                };
            let mut b = up.batch()?;
            for key in &gone {
                self.report.removed += b.delete_item(key)? as u64;
            }
            b.set_sync_version("deleted", last)?;
            b.commit()?;
            self.tell(Phase::Deleted, 1, 1);
        }
        self.report.library_version = up.index().status()?.library_version;

        // 4. Vectors.
        let Some(encoder) = encoder else {
            self.report.note = Some(
                "no sentence model is loaded: the index is by words only (keyword search; \
                 hybrid search answers by words)"
                    .into(),
            );
            return Ok(());
        };
        let identity = encoder.identity();
        if let Err(IndexError::ModelMismatch { .. }) = up.index().check_model(&identity) {
            up.reset_vectors(&identity)?;
            self.report.vectors_reset = true;
        }
        let status = up.index().status()?;
        let total = status.chunks.saturating_sub(status.chunks_with_vectors);
        let mut done = 0u64;
        self.tell(Phase::Vectors, 0, total);
        // The encoder's big temporaries are reused rather than returned to the kernel and
        // faulted in again at every batch; given back when the update is done.
        let _keep = crate::alloc::keep_freed_memory();
        loop {
            if self.cancel.is_cancelled() {
                self.report.cancelled = true;
                return Ok(());
            }
            let n = up.embed_pending(encoder, VECTORS_PER_BATCH, VECTORS_PER_BATCH)?;
            if n == 0 {
                break;
            }
            done += n as u64;
            self.report.vectors_added += n as u64;
            self.tell(Phase::Vectors, done, total);
        }
        Ok(())
    }

    /// Learns the top-level item of each attachment in `keys` not known yet: from the
    /// index, else from Zotero (50 a request).
    fn resolve_parents(&mut self, index: &Index, keys: &[String]) -> Result<(), UpdateError> {
        let mut ask = Vec::new();
        for k in keys {
            if self.parents.contains_key(k) {
                continue;
            }
            match index.item_of_parent(k)? {
                Some(item) => {
                    self.parents.insert(k.clone(), Some(item));
                }
                None => ask.push(k.clone()),
            }
        }
        ask.sort();
        ask.dedup();
        let lib = self.lib;
        let cancel = self.cancel.clone();
        for group in ask.chunks(KEYS_PER_REQUEST) {
            let keys: Vec<&str> = group.iter().map(String::as_str).collect();
            let found = self.block(lib.items_by_key(&keys, &cancel))?;
            for k in group {
                let top = found.iter().find(|o| &o.key() == k).map(top_of);
                self.parents.insert(k.clone(), top);
            }
        }
        Ok(())
    }

    /// The document an object is indexed as; `None` for what is not indexed (attachments
    /// with a parent: their text comes as full text, their annotations on their own).
    fn document(&self, o: &WireObject) -> Option<Document> {
        let key = o.key();
        let version = o.version();
        let deleted = o.data.get("deleted").is_some_and(truthy);
        let parent = field(o, "parentItem");
        match o.item_type().as_str() {
            "note" => {
                let html = field(o, "note").unwrap_or_default();
                let markdown = crate::notes::markdown::note_to_markdown(&html);
                let meta = if parent.is_none() {
                    ItemMeta {
                        title: crate::notes::markdown::note_title(&html, 120),
                        item_type: "note".into(),
                        collections: strings(o, "collections"),
                        tags: tags(o),
                        ..ItemMeta::default()
                    }
                } else {
                    ItemMeta::default()
                };
                Some(Document::note(
                    &key,
                    parent.as_deref(),
                    version,
                    &markdown,
                    meta,
                    deleted,
                ))
            }
            "annotation" => {
                let attachment = parent?;
                let item = self
                    .parents
                    .get(&attachment)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| attachment.clone());
                Some(Document::annotation(
                    &key,
                    &attachment,
                    &item,
                    version,
                    &field(o, "annotationText").unwrap_or_default(),
                    &field(o, "annotationComment").unwrap_or_default(),
                    deleted,
                ))
            }
            "attachment" if parent.is_some() => None,
            _ => Some(Document::item(&key, version, item_meta(o), deleted)),
        }
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_i64().is_some_and(|n| n != 0),
        Value::String(s) => !s.is_empty() && s != "0" && s != "false",
        _ => false,
    }
}

fn field(o: &WireObject, name: &str) -> Option<String> {
    o.data
        .get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn strings(o: &WireObject, name: &str) -> Vec<String> {
    o.data
        .get(name)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn tags(o: &WireObject) -> Vec<String> {
    o.data
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("tag").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// An attachment's top-level item: its parent, or itself when standalone.
fn top_of(o: &WireObject) -> String {
    field(o, "parentItem").unwrap_or_else(|| o.key())
}

/// The first four-digit run of a date, as a year.
fn year_of(date: &str) -> Option<i32> {
    let bytes = date.as_bytes();
    bytes.windows(4).enumerate().find_map(|(i, w)| {
        let digits = w.iter().all(u8::is_ascii_digit);
        let alone = i
            .checked_sub(1)
            .and_then(|j| bytes.get(j))
            .is_none_or(|b| !b.is_ascii_digit())
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit());
        if digits && alone {
            std::str::from_utf8(w).ok()?.parse().ok()
        } else {
            None
        }
    })
}

const VENUE_FIELDS: [&str; 12] = [
    "publicationTitle",
    "proceedingsTitle",
    "bookTitle",
    "conferenceName",
    "websiteTitle",
    "blogTitle",
    "forumTitle",
    "programTitle",
    "seriesTitle",
    "university",
    "institution",
    "publisher",
];

fn item_meta(o: &WireObject) -> ItemMeta {
    let item = o.to_item();
    let creators: Vec<String> = item
        .creators
        .iter()
        .map(|c| match (&c.name, &c.last_name, &c.first_name) {
            (Some(n), _, _) => n.clone(),
            (None, Some(l), Some(f)) => format!("{l}, {f}"),
            (None, Some(l), None) => l.clone(),
            (None, None, Some(f)) => f.clone(),
            (None, None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    let year = o
        .meta
        .get("parsedDate")
        .and_then(Value::as_str)
        .and_then(year_of)
        .or_else(|| item.date.as_deref().and_then(year_of));
    ItemMeta {
        title: item.title,
        creators: creators.join("; "),
        year,
        item_type: item.item_type,
        venue: VENUE_FIELDS
            .iter()
            .find_map(|f| field(o, f))
            .unwrap_or_default(),
        abstract_note: item.abstract_note.unwrap_or_default(),
        collections: strings(o, "collections"),
        tags: item.tags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the server's own defects are internal; a full disk (not made in the tests of the
    /// tools) is the user's to resolve, naming the variable that moves the index.
    #[test]
    fn index_errors_are_internal_only_for_defects() {
        let path = PathBuf::from("/data/index/user.sqlite");
        let full = index_error(IndexError::Storage {
            path: path.clone(),
            reason: "database or disk is full".into(),
            remedy: Remedy::Space,
        });
        assert_eq!(full.code, ErrorCode::Validation);
        assert_eq!(full.details["variable"], "ZOTERO_INDEX_DIR");
        assert!(
            full.message.contains("free some disk space"),
            "{}",
            full.message
        );
        let lock = IndexError::WrongLock {
            lock: path.clone(),
            index: path,
        };
        assert_eq!(index_error(lock).code, ErrorCode::Internal);
    }

    #[test]
    fn times_are_iso() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_time(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn years_are_four_digit_runs() {
        assert_eq!(year_of("2019-05-01"), Some(2019));
        assert_eq!(year_of("May 3, 1999"), Some(1999));
        assert_eq!(year_of("12345"), None);
        assert_eq!(year_of(""), None);
    }

    #[test]
    fn batches_complete_up_to_the_next_version() {
        let list = [("A".to_string(), 5), ("B".to_string(), 9)];
        assert_eq!(watermark(&list[1..], 12), 8);
        assert_eq!(watermark(&[], 12), 12);
    }
}
