//! The update's last phase before the vectors: the text of each attachment whose file is
//! due (new, changed, or an outcome tried again: `zotero_index::Index::files_due`) read from
//! its file page by page and indexed as its full text, so that a hit names its page. It
//! replaces Zotero's own full text of the attachment when there is one: the words are the
//! same, and the pages are what a citation needs (Zotero's text stays where the file gives
//! none). One file at a time, each committed with its outcome as soon as it is read, so that
//! a stopped update loses no file read and an unchanged file is not read again; the update's
//! cancellation is seen between files and stops the wait for the one being read.
//!
//! Where a file comes from: this machine (Zotero's data directory, the desktop app's storage
//! through its local API, a linked file inside ZOTERO_UPLOAD_ROOTS) always; zotero.org's file
//! storage only as ZOTERO_INDEX_DOWNLOAD_FILES allows (`missing`: for attachments Zotero has
//! no full text of; `all`). What came of each file, counted in the report by name:
//! - `text`: indexed with its pages;
//! - `no_text_layer`, `encrypted`, `damaged`: read, but no page gave text;
//! - `too_large` (the file bound, or the extractor's), `timed_out`, `unsupported`;
//! - `unreachable`: not on Zotero's storage (WebDAV), outside the folders files may be read
//!   from, or a request that failed (only that one is tried again at the next update);
//! - `missing` (not on this machine: Zotero downloads files on demand) and `not_downloaded`
//!   (only on zotero.org, not allowed): looked for again at each update while nothing else
//!   gives the attachment a text, and by every update that downloads all files.
//!
//! Each other outcome is kept until the file changes (its MD5, else its version).

use zotero_api::error::FileUnavailable;
use zotero_api::file::FileSource;
use zotero_api::ZoteroError;
use zotero_index::{Document, FileDue, PageText, Updater};
use zotero_text::PageStatus;

use super::documents::stored_attachment;
use super::run::{Flow, Run};
use super::settings::IndexFiles;
use super::update::{Phase, UpdateError, UpdateOptions};
use crate::config::DownloadFiles;
use crate::service::fulltext::cache::status_name;
use crate::service::fulltext::pages;
use crate::service::fulltext::reader::{text_error_reason, ReadError};

/// The files phase of one pass: how files are read, and whether the pass looks again for
/// the files an earlier update could not have (the second pass of an update does not).
#[derive(Debug, Clone)]
pub struct FilesPass {
    pub files: IndexFiles,
    pub retry: bool,
}

/// The outcomes looked for again (see the module's notes).
const LOOK_AGAIN: [&str; 2] = ["missing", "not_downloaded"];

/// What came of reading one file.
enum Outcome {
    /// Its pages with text, as a document to index.
    Text(Box<Document>),
    /// No text: the outcome's name, and whether it is kept (not tried again until the file
    /// changes, or as [`LOOK_AGAIN`] says).
    Failed {
        name: &'static str,
        keep: bool,
    },
    Cancelled,
}

/// Reads the files due, after the objects' phases (`flow`) ran to their end, when full texts
/// are included.
pub(super) fn sync(
    run: &mut Run<'_>,
    up: &mut Updater<'_>,
    options: UpdateOptions,
    pass: &FilesPass,
    flow: Flow,
) -> Result<Flow, UpdateError> {
    if flow == Flow::Cancelled || !options.include_fulltext {
        return Ok(flow);
    }
    let none: &[&str] = &[];
    let (retry, without_text) = match (pass.retry, pass.files.download) {
        (false, _) => (none, none),
        (true, DownloadFiles::All) => (&LOOK_AGAIN[..], none),
        (true, _) => (none, &LOOK_AGAIN[..]),
    };
    let due = up.index().files_due(retry, without_text)?;
    let total = due.len() as u64;
    run.report.files_to_read += total;
    run.tell(Phase::Files, 0, total);
    for (done, file) in due.iter().enumerate() {
        if run.cancelled() {
            return Ok(Flow::Cancelled);
        }
        match read(run, &pass.files, file) {
            Outcome::Cancelled => {
                run.report.cancelled = true;
                return Ok(Flow::Cancelled);
            }
            outcome => record(run, up, file, outcome)?,
        }
        run.tell(Phase::Files, done as u64 + 1, total);
    }
    Ok(Flow::Done)
}

/// Reads one file (on the runtime, its extraction on a blocking thread) into an outcome.
fn read(run: &mut Run<'_>, files: &IndexFiles, file: &FileDue) -> Outcome {
    let Some(att) = stored_attachment(&file.key, &file.source) else {
        return Outcome::Failed {
            name: "unsupported",
            keep: true,
        };
    };
    let web = match files.download {
        DownloadFiles::Never => false,
        DownloadFiles::Missing => !file.other_text,
        DownloadFiles::All => true,
    };
    let (lib, cancel) = (run.lib, run.cancel.clone());
    let got = run
        .handle
        .block_on(files.reader.read_from(&lib, &att, web, &cancel));
    match got {
        Ok((doc, from)) => {
            run.report.requests += match from {
                Some(FileSource::Web) => 2,
                Some(FileSource::Desktop) => 1,
                _ => 0,
            };
            document(file, att.version(), &doc)
        }
        Err(e) => failure(e),
    }
}

/// The document of a file's pages with text, or why there is none.
fn document(file: &FileDue, version: u64, doc: &zotero_text::Document) -> Outcome {
    let has_text =
        |p: &zotero_text::Page| p.status == PageStatus::Text && !p.text.trim().is_empty();
    let pages: Vec<PageText<'_>> = doc
        .pages
        .iter()
        .enumerate()
        .filter(|(_, p)| has_text(p))
        .map(|(i, p)| PageText {
            index: p.index,
            label: &p.label,
            text: &p.text,
            // Where `zotero_get_item_fulltext` with this label as `pages` puts the text,
            // when the label selects exactly this page.
            offset: (pages::select(&doc.pages, &p.label).ok().as_deref() == Some(&[i][..]))
                .then(|| pages::header(&p.label).chars().count() as u64),
        })
        .collect();
    if pages.is_empty() {
        let why = doc
            .pages
            .iter()
            .map(|p| p.status)
            .find(|s| *s != PageStatus::Text)
            .unwrap_or(PageStatus::NoTextLayer);
        return Outcome::Failed {
            name: status_name(why),
            keep: true,
        };
    }
    Outcome::Text(Box::new(Document::file_text(
        &file.key,
        &file.item_key,
        version,
        &pages,
        file.deleted,
    )))
}

/// Why a file gave no document, as an outcome.
fn failure(e: ReadError) -> Outcome {
    let (name, keep) = match e {
        ReadError::File(ZoteroError::Cancelled) => return Outcome::Cancelled,
        ReadError::File(ZoteroError::FileUnavailable { why, .. }) => match why {
            FileUnavailable::Missing => ("missing", true),
            FileUnavailable::NotDownloaded => ("not_downloaded", true),
            FileUnavailable::TooLarge { .. } => ("too_large", true),
            // Damaged on the way: the next update tries again.
            FileUnavailable::ChecksumMismatch => ("unreachable", false),
            FileUnavailable::NotOnZoteroStorage
            | FileUnavailable::OutsideStorage
            | FileUnavailable::LinkedOutsideRoots
            | FileUnavailable::NoFile => ("unreachable", true),
        },
        // The storage has no such object: as lasting as Zotero's own 404.
        ReadError::File(ZoteroError::Status { answer, .. })
            if matches!(answer.status, 404 | 410) =>
        {
            ("unreachable", true)
        }
        // A request that failed (the network, Zotero): tried again next time.
        ReadError::File(_) => ("unreachable", false),
        ReadError::Text { error, .. } => (text_error_reason(&error), true),
        // The extractor's thread ended abnormally on this file: not tried again.
        ReadError::Stopped(_) => ("damaged", true),
    };
    Outcome::Failed { name, keep }
}

/// Counts the outcome and writes what changed, in one transaction: the document and the
/// outcome, or the outcome alone (a text read earlier from the file goes when the changed
/// file gives none).
fn record(
    run: &mut Run<'_>,
    up: &mut Updater<'_>,
    file: &FileDue,
    outcome: Outcome,
) -> Result<(), UpdateError> {
    let name = match &outcome {
        Outcome::Text(_) => "text",
        Outcome::Failed { name, .. } => name,
        Outcome::Cancelled => return Ok(()),
    };
    *run.report.files.entry(name.to_string()).or_default() += 1;
    match outcome {
        Outcome::Text(doc) => {
            let mut b = up.batch()?;
            run.report.chunks_written += doc.chunks.len() as u64;
            b.upsert(&doc)?;
            b.file_read(&file.key, &file.state, name)?;
            b.commit()?;
        }
        Outcome::Failed { keep: false, .. } => {}
        // Already known: nothing to write (no commit, so no copy of the vectors goes stale).
        Outcome::Failed { .. } if file.read && file.outcome.as_deref() == Some(name) => {}
        Outcome::Failed { .. } => {
            let mut b = up.batch()?;
            if file.file_text {
                run.report.removed += b.delete_fulltext(&file.key)? as u64;
            }
            b.file_read(&file.key, &file.state, name)?;
            b.commit()?;
        }
        Outcome::Cancelled => {}
    }
    Ok(())
}
