//! The work of one update pass, on a blocking thread that drives the requests on the
//! runtime's handle, in phases: open the index, then per kind of object list what changed,
//! fetch it, turn it into chunked documents and write them (items, then full texts), the
//! deletions, and last the vectors (encode and write). Every phase commits as it goes, with
//! the library version it completed, so that a stopped update resumes where it was.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use tokio_util::sync::CancellationToken;
use zotero_api::model::WireObject;
use zotero_api::sync::KEYS_PER_REQUEST;
use zotero_api::{Library, LibraryRef, ZoteroError};
use zotero_index::{Document, EmbedPlan, Encoder, Index, IndexError, Updater};

use super::documents::{top_of, write_object};
use super::index_id;
use super::update::{Phase, Progress, ProgressCallback, UpdateError, UpdateOptions, UpdateReport};

/// Full texts fetched (one request each) per committed transaction.
const FULLTEXTS_PER_BATCH: usize = 20;

/// Whether a phase ran to its end or saw the update cancelled (what it committed stays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Done,
    Cancelled,
}

pub(super) struct Run<'a> {
    pub(super) lib: Library<'a>,
    pub(super) handle: tokio::runtime::Handle,
    pub(super) cancel: CancellationToken,
    progress: Option<ProgressCallback>,
    pub(super) report: UpdateReport,
    /// Attachment → its top-level item, learnt in this run.
    parents: HashMap<String, Option<String>>,
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

/// What changed since the version indexed: (key, version) oldest first, and the library's
/// version the list is complete up to.
struct Changes {
    list: Vec<(String, u64)>,
    last: u64,
}

impl<'a> Run<'a> {
    pub(super) fn new(
        lib: Library<'a>,
        handle: tokio::runtime::Handle,
        cancel: CancellationToken,
        progress: Option<ProgressCallback>,
        library: LibraryRef,
        options: UpdateOptions,
    ) -> Self {
        Run {
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
        }
    }

    pub(super) fn into_report(self) -> UpdateReport {
        self.report
    }

    fn block<T>(
        &mut self,
        fut: impl std::future::Future<Output = Result<T, ZoteroError>>,
    ) -> Result<T, ZoteroError> {
        self.report.requests += 1;
        self.handle.block_on(fut)
    }

    pub(super) fn tell(&self, phase: Phase, done: u64, total: u64) {
        if let Some(p) = &self.progress {
            p(Progress {
                phase,
                done,
                total,
                chunks: self.report.chunks_written,
            });
        }
    }

    /// The update's cancellation, seen between two batches: recorded in the report.
    pub(super) fn cancelled(&mut self) -> bool {
        if self.cancel.is_cancelled() {
            self.report.cancelled = true;
        }
        self.report.cancelled
    }

    /// The whole update: the index opened (or replaced), the objects read by `objects` (the
    /// API's phases, `Run::sync_from_api`, or another source's, chosen by the caller), then
    /// the vectors.
    pub(super) fn update<F>(
        &mut self,
        dir: &Path,
        library: LibraryRef,
        encoder: Option<&dyn Encoder>,
        options: UpdateOptions,
        objects: F,
    ) -> Result<(), UpdateError>
    where
        F: FnOnce(&mut Self, &mut Updater<'_>) -> Result<Flow, UpdateError>,
    {
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
        start_kinds(&mut up, options)?;
        let flow = objects(self, &mut up)?;
        if flow == Flow::Cancelled {
            return Ok(());
        }
        self.report.library_version = up.index().status()?.library_version;
        match encoder {
            Some(encoder) => {
                self.sync_vectors(&mut up, encoder)?;
            }
            None => {
                self.report.note = Some(
                    "no sentence model is loaded: the index is by words only (keyword search; \
                     hybrid search answers by words)"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// Items, full texts and deletions, from the API.
    pub(super) fn sync_from_api(
        &mut self,
        up: &mut Updater<'_>,
        options: UpdateOptions,
    ) -> Result<Flow, UpdateError> {
        let since = up.index().sync_version("items")?.filter(|v| *v > 0);
        let (flow, last) = self.sync_items(up, since)?;
        if flow == Flow::Cancelled {
            return Ok(flow);
        }
        if self.sync_fulltexts(up, options, last)? == Flow::Cancelled {
            return Ok(Flow::Cancelled);
        }
        if self.cancelled() {
            return Ok(Flow::Cancelled);
        }
        self.sync_deletions(up, since, last)?;
        Ok(Flow::Done)
    }

    /// Lists the items changed since `since` (every item of a new index).
    fn list_item_changes(&mut self, since: Option<u64>) -> Result<Changes, UpdateError> {
        let (lib, cancel) = (self.lib, self.cancel.clone());
        let changed = self.block(lib.item_versions_since(since.unwrap_or(0), &cancel))?;
        let last = changed
            .library_version
            .or_else(|| changed.versions.values().max().copied())
            .unwrap_or(0);
        Ok(Changes {
            list: in_version_order(changed.versions),
            last,
        })
    }

    /// 1. Items, notes, annotations, attachments: 50 a request and a transaction. Answers
    ///    the library version the listing was complete up to.
    fn sync_items(
        &mut self,
        up: &mut Updater<'_>,
        since: Option<u64>,
    ) -> Result<(Flow, u64), UpdateError> {
        let Changes { list, last } = self.list_item_changes(since)?;
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
            if self.cancelled() {
                return Ok((Flow::Cancelled, last));
            }
            let (now, later) = rest.split_at(rest.len().min(KEYS_PER_REQUEST));
            rest = later;
            let objects = self.fetch_objects(up.index(), now)?;
            let mut b = up.batch()?;
            for o in &objects {
                self.report.chunks_written += write_object(&mut b, &self.parents, o)?;
            }
            b.set_sync_version("items", watermark(rest, last))?;
            b.commit()?;
            done += now.len() as u64;
            self.tell(Phase::Items, done, total);
        }
        Ok((Flow::Done, last))
    }

    /// The objects of `keys` (one request), with the top-level items of the attachments
    /// their annotations belong to learnt.
    fn fetch_objects(
        &mut self,
        index: &Index,
        keys: &[(String, u64)],
    ) -> Result<Vec<WireObject>, UpdateError> {
        let (lib, cancel) = (self.lib, self.cancel.clone());
        let keys: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
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
            .filter_map(|o| super::documents::field(o, "parentItem"))
            .collect();
        self.resolve_parents(index, &wanted)?;
        Ok(objects)
    }

    /// 2. Full texts: whether they are included (dropped when they no longer are), then
    ///    those changed, 20 a transaction.
    fn sync_fulltexts(
        &mut self,
        up: &mut Updater<'_>,
        options: UpdateOptions,
        last: u64,
    ) -> Result<Flow, UpdateError> {
        self.report.removed += fulltext_inclusion(up, options.include_fulltext)?;
        if !options.include_fulltext {
            return Ok(Flow::Done);
        }
        let since = up.index().sync_version("fulltext")?.unwrap_or(0);
        let (lib, cancel) = (self.lib, self.cancel.clone());
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
            if self.cancelled() {
                return Ok(Flow::Cancelled);
            }
            let (now, later) = rest.split_at(rest.len().min(FULLTEXTS_PER_BATCH));
            rest = later;
            let docs = self.fetch_fulltexts(up.index(), now)?;
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
        Ok(Flow::Done)
    }

    /// The full texts of `keys` (a request each) as chunked documents; an attachment gone
    /// meanwhile is skipped.
    fn fetch_fulltexts(
        &mut self,
        index: &Index,
        keys: &[(String, u64)],
    ) -> Result<Vec<Document>, UpdateError> {
        let (lib, cancel) = (self.lib, self.cancel.clone());
        let wanted: Vec<String> = keys.iter().map(|(k, _)| k.clone()).collect();
        self.resolve_parents(index, &wanted)?;
        let mut docs = Vec::new();
        for (key, version) in keys {
            let Some(Some(item)) = self.parents.get(key).cloned() else {
                continue; // the attachment is gone
            };
            if index.file_text_current(key)? {
                continue; // read from its file, with pages: that text stays
            }
            if let Some(text) = self.block(lib.fulltext_content(key, &cancel))? {
                self.report.fulltexts_read += 1;
                docs.push(Document::fulltext(key, &item, *version, &text));
            }
        }
        Ok(docs)
    }

    /// 3. Deletions since the last update's (none to look for in a new index).
    fn sync_deletions(
        &mut self,
        up: &mut Updater<'_>,
        items_since: Option<u64>,
        last: u64,
    ) -> Result<(), UpdateError> {
        let deleted_since = up.index().sync_version("deleted")?.filter(|v| *v > 0);
        if deleted_since.is_none() && items_since.is_none() {
            // A new index holds nothing that could have been deleted.
            let mut b = up.batch()?;
            b.set_sync_version("deleted", last)?;
            b.commit()?;
            return Ok(());
        }
        self.tell(Phase::Deleted, 0, 1);
        let gone = self.list_deletions(up.index(), deleted_since.unwrap_or(0))?;
        let mut b = up.batch()?;
        for key in &gone {
            self.report.removed += b.delete_item(key)? as u64;
        }
        b.set_sync_version("deleted", last)?;
        b.commit()?;
        self.tell(Phase::Deleted, 1, 1);
        Ok(())
    }

    /// The keys deleted in Zotero since `since`.
    fn list_deletions(&mut self, index: &Index, since: u64) -> Result<Vec<String>, UpdateError> {
        let (lib, cancel) = (self.lib, self.cancel.clone());
        Ok(match self.block(lib.deleted_since(since, &cancel))? {
            Some(d) => d.items,
            None => {
                // The local API has no /deleted: what the index holds that the library no
                // longer has.
                let all = self.block(lib.item_versions_since(0, &cancel))?;
                index
                    .document_keys()?
                    .into_iter()
                    .map(|(k, _)| k)
                    .filter(|k| !all.versions.contains_key(k))
                    .collect::<HashSet<_>>()
                    .into_iter()
                    .collect()
            }
        })
    }

    /// 4. Vectors: the chunks still without one are encoded and written, in batches each
    ///    committed. Vectors of another model are dropped first.
    fn sync_vectors(
        &mut self,
        up: &mut Updater<'_>,
        encoder: &dyn Encoder,
    ) -> Result<Flow, UpdateError> {
        let identity = encoder.identity();
        if let Err(IndexError::ModelMismatch { .. }) = up.index().check_model(&identity) {
            up.reset_vectors(&identity)?;
            self.report.vectors_reset = true;
        }
        let status = up.index().status()?;
        let total = status.chunks.saturating_sub(status.chunks_with_vectors);
        let mut done = 0u64;
        self.tell(Phase::Vectors, 0, total);
        if self.cancelled() {
            return Ok(Flow::Cancelled);
        }
        // The encoder's big temporaries are reused rather than returned to the kernel and
        // faulted in again at every batch; given back when the update is done.
        let _keep = crate::alloc::keep_freed_memory();
        // Encoder threads on every core while this thread commits each batch's vectors;
        // cancelled, the batches being encoded are finished and committed, no other starts.
        let (cancel, progress, chunks) = (
            self.cancel.clone(),
            self.progress.clone(),
            self.report.chunks_written,
        );
        let added = up
            .embed_pending_overlapped(encoder, EmbedPlan::default(), |n| {
                done += n as u64;
                if let Some(p) = &progress {
                    p(Progress {
                        phase: Phase::Vectors,
                        done,
                        total,
                        chunks,
                    });
                }
                !cancel.is_cancelled()
            })
            .map_err(|e| match e {
                IndexError::Encode(reason) => UpdateError::Encoder {
                    model: identity.id.clone(),
                    reason: reason.0,
                },
                e => e.into(),
            })?;
        self.report.vectors_added += added as u64;
        if self.cancelled() {
            return Ok(Flow::Cancelled);
        }
        Ok(Flow::Done)
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
        let (lib, cancel) = (self.lib, self.cancel.clone());
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
}

/// The source mark of how far full texts were read from Zotero's database
/// (`super::source_db`); cleared here when full texts are no longer included.
pub(super) const FULLTEXT_MARK: &str = "db-fulltext";

/// Records whether full texts are included; when they no longer are, what was indexed goes
/// (and how far each source read them) so that the index holds what its status says, and
/// including them again reads them all, whichever source does. Answers how many documents
/// went.
pub(super) fn fulltext_inclusion(up: &mut Updater<'_>, include: bool) -> Result<u64, UpdateError> {
    let was_included = up.index().status()?.fulltext_included;
    let mut b = up.batch()?;
    let mut removed = 0;
    if was_included && !include {
        removed = b.delete_kind(zotero_index::DocKind::Fulltext)? as u64;
        b.clear_sync_version("fulltext")?;
        b.clear_source_mark(FULLTEXT_MARK)?;
    }
    b.set_fulltext_included(include)?;
    b.commit()?;
    Ok(removed)
}

/// A new index records every kind at 0 first, so that until each is complete the index
/// says it is behind (its version is the least of the kinds').
fn start_kinds(up: &mut Updater<'_>, options: UpdateOptions) -> Result<(), UpdateError> {
    if up.index().sync_version("items")?.is_none() {
        let mut b = up.batch()?;
        b.set_sync_version("items", 0)?;
        b.set_sync_version("deleted", 0)?;
        if options.include_fulltext {
            b.set_sync_version("fulltext", 0)?;
        }
        b.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_complete_up_to_the_next_version() {
        let list = [("A".to_string(), 5), ("B".to_string(), 9)];
        assert_eq!(watermark(&list[1..], 12), 8);
        assert_eq!(watermark(&[], 12), 12);
    }
}
