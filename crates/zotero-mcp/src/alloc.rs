//! The process's allocator: mimalloc (v3), which serves many threads at once far better than
//! musl's own malloc (the static binary's default), tuned to give memory back: as it comes it
//! keeps freed pages and commits in large steps, which would more than double the idle
//! server's memory for nothing.

use std::os::raw::c_long;

use libmimalloc_sys::{mi_option_set, mi_option_t};

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
