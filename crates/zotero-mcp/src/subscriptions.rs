//! `resources/subscribe`: one watcher per library with subscriptions asks Zotero whether the
//! library's version moved (`since=` the last version seen, one item at most: a cheap
//! request), waiting twice as long after each poll that finds nothing (up to 16 times the
//! interval) and the interval again after a change. When the version moved, it reads each
//! subscribed resource of the library again and sends `notifications/resources/updated` for
//! those whose content changed (or that are gone). Unsubscribing the last resource of a
//! library stops its watcher. The HTTP client honours Zotero's `Backoff` for these requests
//! as for every other.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::model::{ReadResourceResult, ResourceContents, ResourceUpdatedNotificationParam};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::LibraryRef;

use crate::envelope::ToolError;
use crate::resources::{self, Uri};
use crate::service::ZoteroService;
use crate::tools::{ToolContext, ToolName};

/// How many times the interval a quiet library waits at most between polls.
const MAX_BACKOFF: u32 = 16;

/// The subscriptions of one session.
pub struct Subscriptions {
    interval: Duration,
    libraries: Mutex<HashMap<LibraryRef, Watch>>,
}

/// The subscribed resources of one library (URI → digest of its content), and its watcher.
struct Watch {
    uris: HashMap<String, u64>,
    stop: CancellationToken,
}

fn digest(r: &ReadResourceResult) -> u64 {
    let mut h = DefaultHasher::new();
    for c in &r.contents {
        if let ResourceContents::TextResourceContents { text, .. } = c {
            text.hash(&mut h);
        }
    }
    h.finish()
}

fn context(svc: &Arc<ZoteroService>, cancel: CancellationToken) -> ToolContext {
    ToolContext {
        svc: svc.clone(),
        cancel,
        progress: None,
        confirm: None,
    }
}

/// The library's version now, or since `since` (the same when nothing changed).
async fn library_version(
    ctx: &ToolContext,
    library: LibraryRef,
    since: Option<u64>,
) -> Result<Option<u64>, ToolError> {
    let args = match since {
        Some(v) => {
            json!({"library": library.to_string(), "limit": 1, "top_only": false, "since": v})
        }
        None => json!({"library": library.to_string(), "limit": 1, "top_only": false}),
    };
    let data = ToolName::ListItems
        .call(ctx, args.as_object().cloned())
        .await?;
    Ok(data.get("library_version").and_then(Value::as_u64))
}

impl Subscriptions {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            libraries: Mutex::default(),
        }
    }

    fn libraries(&self) -> MutexGuard<'_, HashMap<LibraryRef, Watch>> {
        self.libraries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Subscribes `uri` (read once now: an unknown object is refused as a read would be).
    /// `zotero://styles` never changes: accepted, never notified.
    pub async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        svc: &Arc<ZoteroService>,
        peer: Peer<RoleServer>,
    ) -> Result<(), ToolError> {
        let library = match Uri::parse(uri)? {
            Uri::Styles => return Ok(()),
            Uri::Object { library, .. } => library,
        };
        let first = digest(&resources::read(uri, &context(svc, CancellationToken::new())).await?);
        let mut libraries = self.libraries();
        if let Some(watch) = libraries.get_mut(&library) {
            watch.uris.insert(uri.to_string(), first);
            return Ok(());
        }
        let stop = CancellationToken::new();
        libraries.insert(
            library,
            Watch {
                uris: HashMap::from([(uri.to_string(), first)]),
                stop: stop.clone(),
            },
        );
        tokio::spawn(watch(
            Arc::downgrade(self),
            self.interval,
            library,
            svc.clone(),
            peer,
            stop,
        ));
        Ok(())
    }

    /// Ends the subscription of `uri`, and its library's watcher with the last one.
    pub fn unsubscribe(&self, uri: &str) {
        let mut libraries = self.libraries();
        libraries.retain(|_, watch| {
            watch.uris.remove(uri);
            if watch.uris.is_empty() {
                watch.stop.cancel();
                false
            } else {
                true
            }
        });
    }

    /// The subscribed URIs of `library` and their digests.
    fn subscribed(&self, library: LibraryRef) -> Vec<(String, u64)> {
        self.libraries()
            .get(&library)
            .map(|w| w.uris.iter().map(|(u, d)| (u.clone(), *d)).collect())
            .unwrap_or_default()
    }

    fn update(&self, library: LibraryRef, uri: &str, digest: u64) {
        if let Some(d) = self
            .libraries()
            .get_mut(&library)
            .and_then(|w| w.uris.get_mut(uri))
        {
            *d = digest;
        }
    }
}

/// Polls `library` until `stop`, or until the session's subscriptions are gone.
async fn watch(
    subs: Weak<Subscriptions>,
    interval: Duration,
    library: LibraryRef,
    svc: Arc<ZoteroService>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) {
    let ctx = context(&svc, stop.clone());
    let mut version = library_version(&ctx, library, None).await.ok().flatten();
    let mut wait = interval;
    let longest = interval.saturating_mul(MAX_BACKOFF);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        let now = library_version(&ctx, library, version).await.ok().flatten();
        if now.is_none() || now == version {
            wait = wait.saturating_mul(2).min(longest);
            continue;
        }
        version = now;
        wait = interval;
        let Some(list) = subs.upgrade().map(|s| s.subscribed(library)) else {
            return;
        };
        for (uri, before) in list {
            let after = match resources::read(&uri, &ctx).await {
                Ok(r) => digest(&r),
                // Gone (or unreadable now): the client learns it by reading.
                Err(_) => 0,
            };
            if after == before || stop.is_cancelled() {
                continue;
            }
            match subs.upgrade() {
                Some(s) => s.update(library, &uri, after),
                None => return,
            }
            tracing::info!(uri = %uri, "subscribed resource changed");
            if peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        for watch in self.libraries().values() {
            watch.stop.cancel();
        }
    }
}
