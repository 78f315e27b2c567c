//! `resources/subscribe`. One poller per library, shared by every session of the process,
//! asks Zotero whether the library changed since the last version it saw, with
//! `If-Modified-Since-Version` on a one-item listing of versions: Zotero answers
//! `304 Not Modified` with no body while nothing changed. After each quiet poll it waits twice
//! as long (up to 16 times the interval), the interval again after a change, and never less
//! than Zotero's `Backoff` still asks. A change wakes each session subscribed to the library:
//! it reads its subscribed resources again and sends `notifications/resources/updated` for
//! those whose content changed (or that are gone). A library's poller stops when its last
//! subscription ends (unsubscribed, or its session closed).
//!
//! Reads are coalesced: a URI is read once per change of its library (per generation of the
//! poller's change count), however many sessions subscribe to it or are woken by the change;
//! calls that arrive while that read is under way wait for it. A session that subscribes to a
//! URI it already follows reads nothing.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::model::{ReadResourceResult, ResourceContents, ResourceUpdatedNotificationParam};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::{watch, OnceCell};
use tokio_util::sync::CancellationToken;
use zotero_api::items::LibraryVersion;
use zotero_api::LibraryRef;

use crate::error::ToolError;
use crate::mcp::resources::{self, Uri};
use crate::service::ZoteroService;
use crate::tools::tool::ToolContext;

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

/// Reads `uri` and digests its content.
async fn read_digest(
    svc: &Arc<ZoteroService>,
    uri: &str,
    cancel: CancellationToken,
) -> Result<u64, ToolError> {
    resources::read(uri, &context(svc, cancel))
        .await
        .map(|r| digest(&r))
}

/// The pollers of the process: one per library that some session subscribed to.
pub struct Watchers {
    interval: Duration,
    svc: Arc<ZoteroService>,
    pollers: Mutex<HashMap<LibraryRef, Poller>>,
}

/// A library's poller: how many sessions follow it, the count of changes it has seen, how to
/// stop it, and the reads of its resources since the last change.
struct Poller {
    followers: usize,
    changes: watch::Receiver<u64>,
    stop: CancellationToken,
    reads: HashMap<String, Read>,
}

/// One read of a resource's content (its digest), shared by every caller of the same
/// generation: the first starts it, the others wait for it.
struct Read {
    generation: u64,
    digest: Arc<OnceCell<Result<u64, ToolError>>>,
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
        zotero_net::lock(&self.pollers)
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
                reads: HashMap::new(),
            },
        );
        rx
    }

    /// The digest of `uri`'s content as of `generation` of its library's changes: read once
    /// for all callers of that generation (a caller that follows `library`). A failed read
    /// is not kept: the next caller tries again.
    async fn digest(
        &self,
        library: LibraryRef,
        uri: &str,
        generation: u64,
    ) -> Result<u64, ToolError> {
        let shared = {
            let mut pollers = self.pollers();
            pollers.get_mut(&library).map(|p| {
                let cell = match p.reads.get(uri) {
                    Some(r) if r.generation == generation => r.digest.clone(),
                    _ => {
                        // Reads of earlier generations tell nothing any more.
                        p.reads.retain(|_, r| r.generation >= generation);
                        let cell = Arc::new(OnceCell::new());
                        p.reads.insert(
                            uri.to_string(),
                            Read {
                                generation,
                                digest: cell.clone(),
                            },
                        );
                        cell
                    }
                };
                (cell, p.stop.clone())
            })
        };
        // Nobody follows the library (cannot happen for a follower): a read of its own.
        let Some((cell, stop)) = shared else {
            return read_digest(&self.svc, uri, CancellationToken::new()).await;
        };
        // The read belongs to no one caller: it stops with the poller, not with a session.
        let got = cell
            .get_or_init(|| read_digest(&self.svc, uri, stop))
            .await
            .clone();
        if got.is_err() {
            if let Some(p) = self.pollers().get_mut(&library) {
                if p.reads
                    .get(uri)
                    .is_some_and(|r| Arc::ptr_eq(&r.digest, &cell))
                {
                    p.reads.remove(uri);
                }
            }
        }
        got
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
        zotero_net::lock(&self.libraries)
    }

    /// Subscribes `uri` (read now, once for every caller since its library last changed: an
    /// unknown object is refused as a read would be). Subscribing again to a URI this session
    /// follows does nothing. `zotero://styles` never changes: accepted, never notified.
    pub async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        peer: Peer<RoleServer>,
    ) -> Result<(), ToolError> {
        let library = match Uri::parse(uri)? {
            Uri::Styles => return Ok(()),
            Uri::Object { library, .. } => library,
        };
        if self
            .libraries()
            .get(&library)
            .is_some_and(|w| w.uris.contains_key(uri))
        {
            return Ok(());
        }
        // Following the library first names the generation the read belongs to (and keeps
        // the poller, and its shared reads, alive while it runs).
        let changes = self.watchers.follow(library);
        let generation = *changes.borrow();
        let first = match self.watchers.digest(library, uri, generation).await {
            Ok(first) => first,
            Err(e) => {
                self.watchers.leave(library);
                return Err(e);
            }
        };
        let mut libraries = self.libraries();
        if let Some(watch) = libraries.get_mut(&library) {
            // Another call of this session started the watch meanwhile: one follow is enough.
            watch.uris.entry(uri.to_string()).or_insert(first);
            drop(libraries);
            self.watchers.leave(library);
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
        drop(libraries);
        tokio::spawn(follow(
            Arc::downgrade(self),
            library,
            changes,
            self.watchers.clone(),
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
    watchers: Arc<Watchers>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
        }
        let generation = *changes.borrow_and_update();
        let Some(list) = subs.upgrade().map(|s| s.subscribed(library)) else {
            return;
        };
        for (uri, before) in list {
            let read = tokio::select! {
                _ = stop.cancelled() => return,
                read = watchers.digest(library, &uri, generation) => read,
            };
            // Gone (or unreadable now): the client learns it by reading.
            let after = read.unwrap_or(0);
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
