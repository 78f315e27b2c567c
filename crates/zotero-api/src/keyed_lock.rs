//! Async locks by key, for work that must not run twice at once for the same thing (two
//! identical uploads). The map holds only the keys someone holds or waits for: an entry goes
//! when its last holder or waiter leaves, also when a waiter is cancelled, so it cannot grow
//! without bound, and nothing is poisoned by a holder that panicked or was dropped.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// A key's lock and how many holders and waiters it has.
struct Entry {
    lock: Arc<AsyncMutex<()>>,
    users: usize,
}

pub(crate) struct KeyedLocks<K> {
    entries: Mutex<HashMap<K, Entry>>,
}

impl<K> Default for KeyedLocks<K> {
    fn default() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone> KeyedLocks<K> {
    /// Waits for the lock of `key`; it is held until the guard is dropped. Dropping the
    /// future while it waits leaves nothing behind.
    pub(crate) async fn lock(&self, key: K) -> KeyedGuard<'_, K> {
        let lock = {
            let mut entries = self.entries();
            let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
                lock: Arc::default(),
                users: 0,
            });
            entry.users += 1;
            entry.lock.clone()
        };
        // Counted from here on: however this future ends (a cancelled wait included), the
        // count goes down again when `user` drops.
        let user = User { locks: self, key };
        let held = lock.lock_owned().await;
        KeyedGuard {
            held: Some(held),
            _user: user,
        }
    }

    fn entries(&self) -> MutexGuard<'_, HashMap<K, Entry>> {
        // The map is consistent after every statement that changes it: a panic elsewhere
        // while it was locked leaves nothing half-done.
        zotero_net::lock(&self.entries)
    }

    /// How many keys are held or waited for.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries().len()
    }
}

/// One holder or waiter of a key, counted in its entry.
struct User<'a, K: Eq + Hash> {
    locks: &'a KeyedLocks<K>,
    key: K,
}

impl<K: Eq + Hash> Drop for User<'_, K> {
    fn drop(&mut self) {
        let mut entries = zotero_net::lock(&self.locks.entries);
        if let Some(entry) = entries.get_mut(&self.key) {
            entry.users = entry.users.saturating_sub(1);
            if entry.users == 0 {
                entries.remove(&self.key);
            }
        }
    }
}

/// The lock of one key, held.
pub(crate) struct KeyedGuard<'a, K: Eq + Hash> {
    held: Option<OwnedMutexGuard<()>>,
    _user: User<'a, K>,
}

impl<K: Eq + Hash> Drop for KeyedGuard<'_, K> {
    fn drop(&mut self) {
        // The lock goes before the count (fields drop after this): an entry is removed only
        // when nobody holds its lock, so a newcomer never gets a second lock for a key that
        // is still held.
        self.held.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[tokio::test]
    async fn one_holder_per_key_and_the_map_empties() {
        let locks = KeyedLocks::default();
        let first = locks.lock("a").await;
        let mut twin = Box::pin(locks.lock("a"));
        assert!((&mut twin).now_or_never().is_none(), "the twin waits");
        // Another key does not.
        let other = locks.lock("b").now_or_never().expect("another key is free");
        assert_eq!(locks.len(), 2);
        drop(other);
        assert_eq!(locks.len(), 1);
        drop(first);
        let second = (&mut twin).now_or_never().expect("the twin's turn");
        assert_eq!(locks.len(), 1);
        drop(second);
        drop(twin);
        assert_eq!(locks.len(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_nothing_behind() {
        let locks = KeyedLocks::default();
        let holder = locks.lock(1).await;
        let mut waiter = Box::pin(locks.lock(1));
        assert!((&mut waiter).now_or_never().is_none());
        drop(waiter);
        assert_eq!(locks.len(), 1, "only the holder");
        drop(holder);
        assert_eq!(locks.len(), 0);
        // Nothing is poisoned: the key can be taken again at once.
        let again = locks.lock(1).now_or_never().expect("free again");
        drop(again);
        // A waiter cancelled while the key is free again is gone too.
        let holder = locks.lock(1).await;
        let waiter = Box::pin(locks.lock(1));
        drop(waiter);
        drop(holder);
        assert_eq!(locks.len(), 0);
    }
}
