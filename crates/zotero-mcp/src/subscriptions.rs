//! `resources/subscribe`. One poller per library, shared by every session of the process,
//! asks Zotero whether the library changed since the last version it saw, with
//! `If-Modified-Since-Version` on a one-item listing of versions: Zotero answers
//! `304 Not Modified` with no body while nothing changed. After each quiet poll it waits twice
//! as long (up to 16 times the interval), the interval again after a change, and never less
//! than Zotero's `Backoff` still asks. A change wakes each session subscribed to the library:
//! it reads its subscribed resources again and sends `notifications/resources/updated` for
//! those whose content changed (or that are gone). A library's poller stops when its last
//! subscription ends (unsubscribed, or its session closed).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::model::{ReadResourceResult, ResourceContents, ResourceUpdatedNotificationParam};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use zotero_api::items::LibraryVersion;
use zotero_api::LibraryRef;

use crate::envelope::ToolError;
use crate::resources::{self, Uri};
use crate::service::ZoteroService;
use crate::tools::ToolContext;

/// How many times the interval a quiet library waits at most between polls.
const MAX_BACKOFF: u32 = 16;

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

/// The pollers of the process: one per library that some session subscribed to.
pub struct Watchers {
    interval: Duration,
    svc: Arc<ZoteroService>,
    pollers: Mutex<HashMap<LibraryRef, Poller>>,
}

/// A library's poller: how many sessions follow it, the count of changes it has seen, and
/// how to stop it.
struct Poller {
    followers: usize,
    changes: watch::Receiver<u64>,
    stop: CancellationToken,
}

impl Watchers {
    pub fn new(interval: Duration, svc: Arc<ZoteroService>) -> Arc<Self> {
        Arc::new(Self {
            interval,
            svc,
            pollers: Mutex::default(),
        })
    }

    fn pollers(&self) -> MutexGuard<'_, HashMap<LibraryRef, Poller>> {
        self.pollers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Follows `library`'s changes (starting its poller if nobody did yet).
    fn follow(&self, library: LibraryRef) -> watch::Receiver<u64> {
        let mut pollers = self.pollers();
        if let Some(p) = pollers.get_mut(&library) {
            p.followers += 1;
            return p.changes.clone();
        }
        let (tx, rx) = watch::channel(0);
        let stop = CancellationToken::new();
        tokio::spawn(poll(
            self.svc.clone(),
            library,
            self.interval,
            tx,
            stop.clone(),
        ));
        pollers.insert(
            library,
            Poller {
                followers: 1,
                changes: rx.clone(),
                stop,
            },
        );
        rx
    }

    /// Stops following `library`; its poller stops with the last follower.
    fn leave(&self, library: LibraryRef) {
        let mut pollers = self.pollers();
        let last = pollers.get_mut(&library).is_some_and(|p| {
            p.followers = p.followers.saturating_sub(1);
            p.followers == 0
        });
        if last {
            if let Some(p) = pollers.remove(&library) {
                p.stop.cancel();
            }
        }
    }

    /// The libraries polled now (for tests and logs).
    pub fn polled(&self) -> usize {
        self.pollers().len()
    }
}

/// Polls `library` until `stop`, counting each change it sees on `changes`.
async fn poll(
    svc: Arc<ZoteroService>,
    library: LibraryRef,
    interval: Duration,
    changes: watch::Sender<u64>,
    stop: CancellationToken,
) {
    let Ok(lib) = svc.client.library(library) else {
        return;
    };
    let mut known = match lib.version_after(None, &stop).await {
        Ok(LibraryVersion::Now(v)) => Some(v),
        _ => None,
    };
    let mut wait = interval;
    let longest = interval.saturating_mul(MAX_BACKOFF);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait.max(lib.backoff_remaining())) => {}
        }
        let changed = match lib.version_after(known, &stop).await {
            Ok(LibraryVersion::Now(v)) if known != Some(v) => {
                // The first version read is where watching starts, not a change.
                let first = known.is_none();
                known = Some(v);
                !first
            }
            Ok(_) => false,
            Err(e) => {
                tracing::debug!(library = %library, error = %e, "subscription poll failed");
                false
            }
        };
        if changed {
            changes.send_modify(|n| *n = n.wrapping_add(1));
            wait = interval;
        } else {
            wait = wait.saturating_mul(2).min(longest);
        }
    }
}

/// The subscriptions of one session.
pub struct Subscriptions {
    watchers: Arc<Watchers>,
    libraries: Mutex<HashMap<LibraryRef, Watch>>,
}

/// The subscribed resources of one library (URI → digest of its content), and the task
/// that follows the library's changes for this session.
struct Watch {
    uris: HashMap<String, u64>,
    stop: CancellationToken,
}

impl Subscriptions {
    pub fn new(watchers: Arc<Watchers>) -> Self {
        Self {
            watchers,
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
        let changes = self.watchers.follow(library);
        tokio::spawn(follow(
            Arc::downgrade(self),
            library,
            changes,
            svc.clone(),
            peer,
            stop,
        ));
        Ok(())
    }

    /// Ends the subscription of `uri`, and its library's watch with the last one.
    pub fn unsubscribe(&self, uri: &str) {
        let mut ended = Vec::new();
        self.libraries().retain(|library, watch| {
            watch.uris.remove(uri);
            if watch.uris.is_empty() {
                watch.stop.cancel();
                ended.push(*library);
                false
            } else {
                true
            }
        });
        for library in ended {
            self.watchers.leave(library);
        }
    }

    /// Ends every subscription of `library` (its session is gone).
    fn end(&self, library: LibraryRef) {
        if let Some(watch) = self.libraries().remove(&library) {
            watch.stop.cancel();
            self.watchers.leave(library);
        }
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

/// Follows `library`'s changes for one session until `stop`, or until the session is gone.
async fn follow(
    subs: Weak<Subscriptions>,
    library: LibraryRef,
    mut changes: watch::Receiver<u64>,
    svc: Arc<ZoteroService>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) {
    let ctx = context(&svc, stop.clone());
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
        }
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
                // The session is gone: nobody to tell any more.
                if let Some(s) = subs.upgrade() {
                    s.end(library);
                }
                return;
            }
        }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        let libraries: Vec<LibraryRef> = self.libraries().keys().copied().collect();
        for library in libraries {
            self.end(library);
        }
    }
}
