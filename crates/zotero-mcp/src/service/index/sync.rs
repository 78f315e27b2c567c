//! An update of a library's index as the tools and the CLI ask for it: the two passes of an
//! update whose model is not loaded yet (words first, then the model and the vectors). The
//! work itself (`super::run`) runs on a blocking thread; what it is asked and answers is in
//! `super::update`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use zotero_api::{LibraryRef, ZoteroClient};
use zotero_hub::Progress as ModelProgress;

use super::files::{self, FilesPass};
use super::run::Run;
use super::settings::{SearchSettings, SharedEncoder};
use super::source_db;
use super::update::{Phase, Progress, ProgressCallback, UpdateError, UpdateOptions, UpdateReport};

/// The Zotero client an update reads from, shared with the blocking thread that runs it
/// (the service is one: `Arc<ZoteroService>` is a `SharedClient`).
pub type SharedClient = Arc<dyn AsRef<ZoteroClient> + Send + Sync>;

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
    let files = |retry| FilesPass {
        files: search.files.clone(),
        retry,
    };
    if ready.is_some() || search.model.is_none() {
        let mut report = update(
            client.clone(),
            library,
            dir,
            ready.clone(),
            options,
            files(true),
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
        files(true),
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
                // The files the first pass could not have are not looked for again.
                files(false),
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
/// (SQLite, encoding) on a blocking thread, which drives the requests (and the reading of
/// files) on `handle`.
#[allow(clippy::too_many_arguments)]
pub async fn update(
    client: SharedClient,
    library: LibraryRef,
    dir: PathBuf,
    encoder: SharedEncoder,
    options: UpdateOptions,
    files: FilesPass,
    progress: Option<ProgressCallback>,
    cancel: CancellationToken,
) -> Result<UpdateReport, UpdateError> {
    let handle = tokio::runtime::Handle::current();
    let job = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let zotero: &ZoteroClient = (*client).as_ref();
        let lib = zotero.library(library)?;
        let mut run = Run::new(lib, handle, cancel, progress, library, options);
        // Zotero's own database, when configured, is the source of the objects: no request.
        // Then the attachments' files, once the full texts they may replace are read.
        match zotero.database().cloned() {
            Some(db) => run.update(&dir, library, encoder.as_deref(), options, |run, up| {
                let flow = source_db::sync(run, &db, library, up, options)?;
                files::sync(run, up, options, &files, flow)
            })?,
            None => run.update(&dir, library, encoder.as_deref(), options, |run, up| {
                let flow = run.sync_from_api(up, options)?;
                files::sync(run, up, options, &files, flow)
            })?,
        }
        let mut report = run.into_report();
        report.seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        Ok(report)
    });
    match job.await {
        Ok(r) => r,
        Err(e) => Err(UpdateError::Stopped(e.to_string())),
    }
}
