//! Bounds on what one backend (the Web API, the desktop's local API, the storage host, a
//! metadata service, `file_url` downloads) is asked at once: a first-in, first-out queue of
//! requests in flight, and a bounded pool of idle connections. A burst of calls waits its turn
//! here instead of opening a socket each (the process would run out of file descriptors, and
//! Zotero rate-limits anyway).

use std::time::Duration;

use hyper_util::client::legacy::Builder;
use hyper_util::rt::TokioExecutor;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::retry::Cancelled;

/// Requests one backend has in flight at once; the others queue in arrival order. Zotero's
/// Web API rate-limits per key, so a handful at a time is both kind and enough.
pub const MAX_IN_FLIGHT_PER_BACKEND: usize = 8;

/// Idle connections kept open per host (a connection per request in flight, no more).
pub const POOL_MAX_IDLE_PER_HOST: usize = MAX_IN_FLIGHT_PER_BACKEND;

/// How long an idle connection is kept before it is closed.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A hyper client builder with the bounded idle pool of this process.
pub fn pooled_client() -> Builder {
    let mut builder = hyper_util::client::legacy::Client::builder(TokioExecutor::new());
    builder
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_max_idle_per_host(POOL_MAX_IDLE_PER_HOST);
    builder
}

/// The queue of one backend: at most `cap` requests hold a place at once; the others wait
/// in arrival order (tokio's semaphore is fair). A waiter that is cancelled, or whose future
/// is dropped, leaves the queue and takes no place.
#[derive(Debug)]
pub struct InFlight {
    places: Semaphore,
    cap: usize,
}

impl Default for InFlight {
    fn default() -> Self {
        Self::new(MAX_IN_FLIGHT_PER_BACKEND)
    }
}

impl InFlight {
    /// A queue of `cap` places (at least one).
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        Self {
            places: Semaphore::new(cap),
            cap,
        }
    }

    /// Waits for a place (given back when the permit is dropped), or until `cancel`.
    pub async fn acquire(
        &self,
        cancel: &CancellationToken,
    ) -> Result<SemaphorePermit<'_>, Cancelled> {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(Cancelled),
            // The semaphore is never closed; a closed one would mean nothing may be sent.
            permit = self.places.acquire() => permit.map_err(|_| Cancelled),
        }
    }

    /// How many places there are.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// How many places are taken now.
    pub fn taken(&self) -> usize {
        self.cap.saturating_sub(self.places.available_permits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Spawns a waiter that records its name once it holds a place, then holds it until
    /// `release` is cancelled.
    fn waiter(
        q: &Arc<InFlight>,
        name: usize,
        order: &Arc<Mutex<Vec<usize>>>,
        cancel: CancellationToken,
        release: CancellationToken,
    ) -> tokio::task::JoinHandle<Result<(), Cancelled>> {
        let (q, order) = (q.clone(), order.clone());
        tokio::spawn(async move {
            let _permit = q.acquire(&cancel).await?;
            order.lock().unwrap().push(name);
            release.cancelled().await;
            Ok(())
        })
    }

    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn places_are_capped_and_given_in_arrival_order() {
        let q = Arc::new(InFlight::new(2));
        let order = Arc::new(Mutex::new(Vec::new()));
        let releases: Vec<CancellationToken> = (0..6).map(|_| CancellationToken::new()).collect();
        let mut tasks = Vec::new();
        for (name, release) in releases.iter().enumerate() {
            tasks.push(waiter(
                &q,
                name,
                &order,
                CancellationToken::new(),
                release.clone(),
            ));
            // Each waiter is queued before the next one arrives.
            settle().await;
        }
        assert_eq!(*order.lock().unwrap(), [0, 1]);
        assert_eq!(q.taken(), 2);
        // Each release lets exactly the next in line through.
        for (done, next) in [(1, 2), (0, 3), (3, 4), (2, 5)] {
            releases[done].cancel();
            settle().await;
            assert_eq!(order.lock().unwrap().last(), Some(&next));
            assert_eq!(q.taken(), 2);
        }
        for r in &releases {
            r.cancel();
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), Ok(()));
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(q.taken(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_the_queue_and_the_next_proceeds() {
        let q = Arc::new(InFlight::new(1));
        let order = Arc::new(Mutex::new(Vec::new()));
        let hold = CancellationToken::new();
        let first = waiter(&q, 0, &order, CancellationToken::new(), hold.clone());
        settle().await;
        let give_up = CancellationToken::new();
        let second = waiter(&q, 1, &order, give_up.clone(), CancellationToken::new());
        settle().await;
        let third_release = CancellationToken::new();
        let third = waiter(
            &q,
            2,
            &order,
            CancellationToken::new(),
            third_release.clone(),
        );
        settle().await;
        // The second gives up while queued: it never held a place.
        give_up.cancel();
        assert_eq!(second.await.unwrap(), Err(Cancelled));
        // The first finishes: the place goes to the third, not to the one that left.
        hold.cancel();
        assert_eq!(first.await.unwrap(), Ok(()));
        settle().await;
        assert_eq!(*order.lock().unwrap(), [0, 2]);
        third_release.cancel();
        assert_eq!(third.await.unwrap(), Ok(()));
        assert_eq!(q.taken(), 0);
    }

    #[tokio::test]
    async fn a_dropped_waiter_frees_its_place_in_the_queue() {
        let q = Arc::new(InFlight::new(1));
        let order = Arc::new(Mutex::new(Vec::new()));
        let hold = CancellationToken::new();
        let first = waiter(&q, 0, &order, CancellationToken::new(), hold.clone());
        settle().await;
        let second = waiter(
            &q,
            1,
            &order,
            CancellationToken::new(),
            CancellationToken::new(),
        );
        settle().await;
        let done = CancellationToken::new();
        done.cancel();
        let third = waiter(&q, 2, &order, CancellationToken::new(), done);
        settle().await;
        // A call whose future goes (its task aborted) leaves the queue too.
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        hold.cancel();
        first.await.unwrap().unwrap();
        third.await.unwrap().unwrap();
        assert_eq!(*order.lock().unwrap(), [0, 2]);
    }
}
