//! Reading the cited items' full texts for the quotation check, a few at a time.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use zotero_api::fulltext::DocumentKind;
use zotero_api::{Library, LibraryRef, ObjectKey};

use super::library::LibraryIndex;
use super::matching::Haystack;
use super::work;
use super::FETCH_CONCURRENCY;
use crate::error::ToolError;
use crate::service::ZoteroService;

/// A cited item's text, as read for the check.
pub(super) struct ItemText {
    pub(super) attachment_key: String,
    pub(super) kind: DocumentKind,
    pub(super) hay: Haystack,
    /// The printed label of each page (by page number, from 1) when the text was read from
    /// the file; empty for Zotero's index, which keeps no labels.
    pub(super) labels: Vec<String>,
}

/// The full texts of the `wanted` items, read at most [`FETCH_CONCURRENCY`] at a time: the
/// best attachment Zotero names, else the first PDF, EPUB or HTML attachment among the
/// item's children; Zotero's index of it, else its file's pages (a paper just added has no
/// index yet). Answers the texts found and the requests sent.
pub(super) async fn fetch_texts(
    svc: &Arc<ZoteroService>,
    library: LibraryRef,
    index: &LibraryIndex,
    wanted: &BTreeSet<usize>,
    cancel: &CancellationToken,
) -> Result<(HashMap<usize, ItemText>, u64), ToolError> {
    let limit = Arc::new(Semaphore::new(FETCH_CONCURRENCY));
    let mut tasks = tokio::task::JoinSet::new();
    for i in wanted {
        let Some(e) = index.get(*i) else { continue };
        let (i, svc, limit, cancel) = (*i, svc.clone(), limit.clone(), cancel.clone());
        let (key, named, has_children) = (e.item_key.clone(), e.attachment.clone(), e.has_children);
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let got = item_text(&svc, library, &key, named, has_children, &cancel).await;
            (i, got)
        });
    }
    let mut texts = HashMap::new();
    let mut requests = 0;
    while let Some(done) = tasks.join_next().await {
        let (i, got) =
            done.map_err(|e| ToolError::internal(format!("reading a full text failed: {e}")))?;
        let (text, sent) = got?;
        requests += sent;
        if let Some(t) = text {
            texts.insert(i, t);
        }
    }
    Ok((texts, requests))
}

fn readable(content_type: &str) -> Option<DocumentKind> {
    let kind = DocumentKind::of(content_type);
    (kind != DocumentKind::Other).then_some(kind)
}

/// One item's text and the requests it took.
async fn item_text(
    svc: &ZoteroService,
    library: LibraryRef,
    key: &str,
    named: Option<(String, String)>,
    has_children: bool,
    cancel: &CancellationToken,
) -> Result<(Option<ItemText>, u64), ToolError> {
    let lib = svc.library(Some(library))?;
    let mut sent = 0;
    let mut attachment = named.and_then(|(k, t)| Some((k, readable(&t)?)));
    if attachment.is_none() && has_children {
        let Ok(parent) = ObjectKey::parse(key) else {
            return Ok((None, 0));
        };
        let children = lib.children(&parent, Some("attachment"), cancel).await?;
        sent += 1;
        let mut files: Vec<(DocumentKind, String)> = children
            .iter()
            .filter(|c| c.is_file_attachment())
            .filter_map(|c| {
                let t = c
                    .data
                    .get("contentType")
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                Some((readable(t)?, c.key()))
            })
            .collect();
        files.sort();
        attachment = files.into_iter().next().map(|(kind, k)| (k, kind));
    }
    let Some((att, kind)) = attachment else {
        return Ok((None, sent));
    };
    let Ok(att_key) = ObjectKey::parse(&att) else {
        return Ok((None, sent));
    };
    let text = lib.attachment_fulltext(&att_key, cancel).await?;
    sent += 1;
    let Some(t) = text else {
        let (file, more) = file_text(svc, &lib, &att_key, cancel).await?;
        return Ok((
            file.map(|(hay, labels)| ItemText {
                attachment_key: att,
                kind,
                hay,
                labels,
            }),
            sent + more,
        ));
    };
    // Preparing a full text (normalizing it, indexing its words) is CPU work: off the
    // runtime's threads.
    let hay = work::blocking(cancel, move |_| {
        Haystack::new(t.content, t.stats.indexed_pages)
    })
    .await?;
    Ok((
        Some(ItemText {
            attachment_key: att,
            kind,
            hay,
            labels: Vec::new(),
        }),
        sent,
    ))
}

/// The text of an attachment's file, its pages split by form feeds as Zotero's index splits
/// them, and the pages' printed labels; the requests it took (the attachment, its file). A
/// file that cannot be read leaves the item without text, as an unindexed one always was.
async fn file_text(
    svc: &ZoteroService,
    lib: &Library<'_>,
    key: &ObjectKey,
    cancel: &CancellationToken,
) -> Result<(Option<(Haystack, Vec<String>)>, u64), ToolError> {
    let doc = match svc.attachment_document(lib, key, cancel).await {
        Ok(doc) => doc,
        Err(e) if cancel.is_cancelled() => return Err(e),
        Err(_) => return Ok((None, 2)),
    };
    if doc.pages.iter().all(|p| p.text.trim().is_empty()) {
        return Ok((None, 2));
    }
    let found = work::blocking(cancel, move |_| {
        let pages = doc.pages.len() as u64;
        let labels = doc.pages.iter().map(|p| p.label.clone()).collect();
        // A form feed inside a page would shift every later page's number.
        let text = doc
            .pages
            .iter()
            .map(|p| p.text.replace('\u{c}', " "))
            .collect::<Vec<_>>()
            .join("\u{c}");
        (Haystack::new(text, Some(pages)), labels)
    })
    .await?;
    Ok((Some(found), 2))
}
