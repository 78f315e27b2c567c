//! Reading the cited items' full texts for the quotation check, a few at a time.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use zotero_api::fulltext::DocumentKind;
use zotero_api::{LibraryRef, ObjectKey};

use super::library::LibraryIndex;
use super::matching::Haystack;
use super::work;
use super::FETCH_CONCURRENCY;
use crate::mcp::envelope::{ErrorCode, ToolError};
use crate::service::ZoteroService;

/// A cited item's text, as read for the check.
pub(super) struct ItemText {
    pub(super) attachment_key: String,
    pub(super) kind: DocumentKind,
    pub(super) hay: Haystack,
}

/// The full texts of the `wanted` items, read at most [`FETCH_CONCURRENCY`] at a time: the
/// best attachment Zotero names, else the first PDF, EPUB or HTML attachment among the
/// item's children. Answers the texts found and the requests sent.
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
        let (i, got) = done.map_err(|e| {
            ToolError::new(
                ErrorCode::Internal,
                format!("reading a full text failed: {e}"),
            )
        })?;
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
        return Ok((None, sent));
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
        }),
        sent,
    ))
}
