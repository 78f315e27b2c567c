//! The one way the workspace takes a mutex: a panic in another thread while it held the lock
//! does not make every later caller panic too. Every mutex here guards data that is consistent after
//! each statement that changes it (caches, gates, registries), so what a panicking holder
//! left behind is still usable.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, poisoned or not.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_mutex_still_locks() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let held = m.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }
}
