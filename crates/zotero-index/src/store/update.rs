//! The update lock and the [`Updater`] that holds it.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{IndexError, Remedy, Result};

use super::document::LibraryId;
use super::open::Index;
use super::schema::{private_dir, sibling};

impl Index {
    /// Like [`Index::updater`], but waits up to `timeout` for another update to finish
    /// before answering [`IndexError::Busy`].
    pub fn updater_wait(&mut self, timeout: Duration) -> Result<Updater<'_>> {
        // A timeout too far to represent waits for ever.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            match self.try_lock()? {
                Some(lock) => {
                    return Ok(Updater {
                        index: self,
                        _lock: lock,
                    })
                }
                None if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Err(IndexError::Busy {
                        path: self.path.clone(),
                    })
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Starts an update: takes the index's update lock, or answers [`IndexError::Busy`]
    /// at once when another updater (any process) holds it.
    pub fn updater(&mut self) -> Result<Updater<'_>> {
        self.updater_wait(Duration::ZERO)
    }

    /// The update lock, or `None` when another holds it.
    fn try_lock(&self) -> Result<Option<File>> {
        try_lock_at(&self.path)
    }

    /// Takes the update lock of `library`'s index in `dir` without opening the index (it
    /// may be damaged, or about to be replaced), or answers [`IndexError::Busy`] at once.
    pub fn lock(dir: &Path, library: &LibraryId) -> Result<UpdateLock> {
        private_dir(dir)?;
        let path = dir.join(library.file_name());
        match try_lock_at(&path).map_err(|e| e.at(&path))? {
            Some(file) => Ok(UpdateLock { file, path }),
            None => Err(IndexError::Busy { path }),
        }
    }

    /// Replaces the index that `lock` guards by an empty one: its files are removed and a
    /// new index is made, all while the lock is held, so that no other update can start on
    /// either the old file or the new one meanwhile. A damaged file is replaced as well.
    /// Searches that had the old file open keep reading it until they close it.
    pub fn replace(lock: &UpdateLock, library: &LibraryId) -> Result<Self> {
        for suffix in ["", "-wal", "-shm"] {
            let p = sibling(&lock.path, suffix);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(IndexError::io_file("cannot remove the old index", &p)(e)),
            }
        }
        Self::open_file(&lock.path, library.clone()).map_err(|e| e.at(&lock.path))
    }

    /// Starts an update under a lock taken by [`Index::lock`] for this index's file.
    pub fn updater_with(&mut self, lock: UpdateLock) -> Result<Updater<'_>> {
        if lock.path != self.path {
            return Err(IndexError::WrongLock {
                lock: lock.path,
                index: self.path.clone(),
            });
        }
        Ok(Updater {
            index: self,
            _lock: lock.file,
        })
    }
}

/// The update lock of the index file at `path` (a `.lock` file beside it, which outlives
/// the index's own files), or `None` when another holds it.
fn try_lock_at(path: &Path) -> Result<Option<File>> {
    let lock_path = sibling(path, ".lock");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(IndexError::io_file(
            "cannot open the update lock",
            &lock_path,
        ))?;
    let locked = crate::flock::try_lock(&lock).map_err(IndexError::io(
        "cannot take the update lock",
        &lock_path,
        Remedy::File,
    ))?;
    Ok(locked.then_some(lock))
}

/// An index's update lock held before the index is open (see [`Index::lock`]); released
/// when dropped, or kept by the [`Updater`] it is given to.
#[derive(Debug)]
pub struct UpdateLock {
    pub(super) file: File,
    /// The index file it guards.
    pub(super) path: PathBuf,
}

/// Holds the update lock of an index until dropped; writes in [`Batch`]es.
#[derive(Debug)]
pub struct Updater<'a> {
    pub(super) index: &'a mut Index,
    /// The `flock` is released when the file is closed, including when the process dies.
    pub(super) _lock: File,
}

impl Updater<'_> {
    pub fn index(&self) -> &Index {
        self.index
    }
}
