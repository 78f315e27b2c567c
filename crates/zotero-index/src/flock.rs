//! The one advisory lock of the workspace (`flock(2)`, exclusive, not waiting), taken by the
//! index update and by zotero-hub's model download: it excludes other processes (Python's
//! `filelock` uses the same call, so a model download excludes theirs too) and ends with the
//! process, however it ends.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `Ok(true)`: `file` is now locked, until it is closed; `Ok(false)`: another holds it.
pub fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}
