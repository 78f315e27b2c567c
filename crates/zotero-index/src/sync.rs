//! The one way this crate takes its caches' mutexes.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, poisoned or not: each cache's data stays consistent after every statement
/// that changes it, so a panic while a lock was held leaves at worst an entry that the next
/// key check replaces. zotero-net's `lock` is the same for the crates above; this crate
/// takes no network dependency for it.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
