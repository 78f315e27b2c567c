//! The process's allocator: mimalloc (v3), which serves many threads at once far better than
//! musl's own malloc (the static binary's default), tuned to give memory back: as it comes it
//! keeps freed pages and commits in large steps, which would more than double the idle
//! server's memory for nothing.

use std::os::raw::c_long;
use std::sync::Mutex;

use libmimalloc_sys::{mi_collect, mi_option_set, mi_option_t};

// Option numbers of mimalloc v3's `mi_option_e` (include/mimalloc.h of the bundled C); the
// bindings name only a few of them. The checks below stop the build if the bundled version's
// enum moves.
const ARENA_EAGER_COMMIT: mi_option_t = 4;
const PURGE_DELAY: mi_option_t = 15;
const ARENA_PURGE_MULT: mi_option_t = 24;
const ALLOW_THP: mi_option_t = 43;
const _: () = assert!(libmimalloc_sys::mi_option_reserve_os_memory == 9);
const _: () = assert!(libmimalloc_sys::_mi_option_last == 47);

/// Sets mimalloc's options; call first thing in `main`, before threads start.
pub fn tune() {
    let options: [(mi_option_t, c_long); 4] = [
        // Commit arena memory as it is used, not a whole arena at once.
        (ARENA_EAGER_COMMIT, 0),
        // Return freed pages to the OS at once (the default waits 10 ms, 100 ms for arenas).
        (PURGE_DELAY, 0),
        (ARENA_PURGE_MULT, 1),
        // No transparent huge pages: one touched byte would make 2 MiB resident.
        (ALLOW_THP, 0),
    ];
    for (option, value) in options {
        // SAFETY: mi_option_set only stores a value in mimalloc's option table; the option
        // numbers are those of the bundled mimalloc (checked above at compile time).
        unsafe { mi_option_set(option, value) };
    }
}

/// Purge delay while vectors are encoded, in ms.
///
/// The sentence encoder frees and allocates the same tens of MB at every step of every batch
/// (activations of up to 4096 tokens); with a delay of 0 every free goes back to the kernel
/// and every allocation is faulted in again, zeroed page by page. The encode bench
/// (`crates/zotero-embed/benches/encode.rs`, `BENCH_PURGE_DELAY`; 2 runs each on the 2-core
/// VM) measured 256-token chunks at 24–25 docs/s with 0 and 28 with 1000 ms, system time
/// 2.3 s → 0.5 s, for ~70 MB more peak memory (214 → 286 MB), during the update only.
const PURGE_DELAY_WHILE_ENCODING: c_long = 1000;

/// Guards alive, and the lock that orders their setting and restoring of the option.
static KEEPERS: Mutex<usize> = Mutex::new(0);

/// While a returned guard lives, mimalloc keeps freed memory for a while
/// ([`PURGE_DELAY_WHILE_ENCODING`]) instead of returning it at once; when the last guard is
/// dropped, the delay goes back to 0 and what was kept is returned (`mi_collect(true)`), so
/// that the idle server is as small as before. Hold one around encoding, e.g. an index
/// update's vectors.
#[must_use = "the delay is restored when the guard is dropped"]
pub struct KeepFreedMemory(());

pub fn keep_freed_memory() -> KeepFreedMemory {
    let mut keepers = zotero_net::lock(&KEEPERS);
    if *keepers == 0 {
        // SAFETY: as in `tune`: a value stored in mimalloc's option table, which mimalloc
        // reads at each purge decision.
        unsafe { mi_option_set(PURGE_DELAY, PURGE_DELAY_WHILE_ENCODING) };
    }
    *keepers += 1;
    KeepFreedMemory(())
}

impl Drop for KeepFreedMemory {
    fn drop(&mut self) {
        let mut keepers = zotero_net::lock(&KEEPERS);
        *keepers = keepers.saturating_sub(1);
        if *keepers == 0 {
            // SAFETY: as above; mi_collect(true) purges what the delay kept, from any thread.
            unsafe {
                mi_option_set(PURGE_DELAY, 0);
                mi_collect(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;

    #[test]
    fn the_purge_delay_is_kept_while_a_guard_lives_and_restored_after_the_last() {
        // SAFETY: reading mimalloc's option table.
        let delay = || unsafe { mi_option_get(PURGE_DELAY) };
        let first = keep_freed_memory();
        assert_eq!(delay(), PURGE_DELAY_WHILE_ENCODING);
        let second = keep_freed_memory();
        drop(first);
        assert_eq!(delay(), PURGE_DELAY_WHILE_ENCODING);
        drop(second);
        assert_eq!(delay(), 0);
    }
}
