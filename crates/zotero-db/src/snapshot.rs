//! The private snapshot: `zotero.sqlite` and its `-wal` copied into a temporary folder of
//! ours and read there, copied again when either file's size or mtime changes. The original
//! is only ever opened for reading bytes (never by SQLite): Zotero holds it in exclusive
//! locking mode while it runs, SQLite's read-only open of a closed WAL database can leave
//! `-wal`/`-shm` files that stop Zotero from starting, and `immutable=1` would ignore rows
//! still in the `-wal`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

use rusqlite::{Connection, OpenFlags};

use crate::datafile::{self, open_regular};
use crate::error::DbError;
use crate::reader::Index;
use crate::schema::{check_version, Names, SchemaVersion};

/// How often a copy is taken again when a file changed while it was being copied.
const COPY_ATTEMPTS: usize = 5;

/// What says a file changed: its size and mtime, and where the platform tells them, its
/// inode (the file replaced) and ctime (written within the mtime's granularity, or with
/// its mtime set back).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    changed: (i64, i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    db: FileStamp,
    wal: Option<FileStamp>,
}

fn file_stamp(path: &Path) -> std::io::Result<FileStamp> {
    let meta = std::fs::metadata(path)?;
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    Ok(FileStamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        inode: (meta.dev(), meta.ino()),
        #[cfg(unix)]
        changed: (meta.ctime(), meta.ctime_nsec()),
    })
}

fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

fn stamp_of(db: &Path) -> Result<Stamp, DbError> {
    let db_stamp = file_stamp(db).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => DbError::NotFound {
            path: db.to_path_buf(),
        },
        _ => DbError::Copy {
            path: db.to_path_buf(),
            source: e,
        },
    })?;
    Ok(Stamp {
        db: db_stamp,
        wal: file_stamp(&wal_path(db)).ok(),
    })
}

/// One copy of the database, open.
pub(crate) struct Snapshot {
    pub conn: Connection,
    pub version: SchemaVersion,
    pub names: Names,
    pub index: Index,
    stamp: Stamp,
    // Dropped last: the folder goes with the copy.
    _dir: tempfile::TempDir,
}

impl Snapshot {
    fn take(db: &Path) -> Result<Self, DbError> {
        let dir = private_dir()?;
        let copy = dir.path().join("zotero.sqlite");
        let copy_wal = wal_path(&copy);
        let mut stamp = stamp_of(db)?;
        for attempt in 1..=COPY_ATTEMPTS {
            if !copy_file(db, &copy, datafile::DATABASE)? {
                return Err(DbError::NotFound {
                    path: db.to_path_buf(),
                });
            }
            let _ = std::fs::remove_file(&copy_wal);
            if stamp.wal.is_some() {
                // The -wal may vanish between the stat and the copy (Zotero checkpointed
                // and closed): then the database file alone is complete.
                copy_file(&wal_path(db), &copy_wal, datafile::WAL)?;
            }
            let after = stamp_of(db)?;
            if after == stamp {
                break;
            }
            tracing::debug!(
                attempt,
                "the Zotero database changed while copied; copying again"
            );
            stamp = after;
        }
        let conn = Connection::open_with_flags(
            &copy,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let not_zotero = |e: rusqlite::Error| DbError::unreadable(db, e);
        // The copy is ours alone: one lock for the connection's life instead of a lock and
        // an unlock per statement (and the copy's WAL index in memory, no `-shm`), its
        // pages mapped rather than read, and every statement the answers use kept prepared.
        // Reading the schema is the first read: a foreign or corrupt file fails here.
        conn.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA mmap_size = 268435456; \
             PRAGMA cache_size = -16384; PRAGMA query_only = 1;",
        )
        .map_err(not_zotero)?;
        conn.set_prepared_statement_cache_capacity(64);
        let version = check_version(&conn, db).map_err(|e| e.damaged_at(db))?;
        let names = Names::read(&conn).map_err(not_zotero)?;
        let index = Index::read(&conn, &names).map_err(not_zotero)?;
        Ok(Self {
            conn,
            version,
            names,
            index,
            stamp,
            _dir: dir,
        })
    }
}

/// The snapshot's folder in the temporary directory: made new (never one already there),
/// and the owner's alone whatever the umask, as the copy is the whole library.
fn private_dir() -> Result<tempfile::TempDir, DbError> {
    let io = |e| DbError::Io {
        what: "a temporary folder for the snapshot",
        source: e,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix("zotero-mcp-db-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder.tempdir().map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    }
    Ok(dir)
}

/// Copies the data directory's `from` (a regular file, see `datafile`) to `to` in the
/// snapshot's folder, made new and readable by the owner alone; `false` when `from` is
/// missing.
fn copy_file(from: &Path, to: &Path, role: &'static str) -> Result<bool, DbError> {
    // Opened for reading only: no lock is taken and nothing is created beside it.
    let Some(mut src) = open_regular(from, role)? else {
        return Ok(false);
    };
    let io = |e| DbError::Io {
        what: "the snapshot copy",
        source: e,
    };
    // A copy from an earlier attempt goes first: the file is always made new.
    match std::fs::remove_file(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut dst = options.open(to).map_err(io)?;
    std::io::copy(&mut src, &mut dst).map_err(|e| DbError::Copy {
        path: from.to_path_buf(),
        source: e,
    })?;
    Ok(true)
}

/// Zotero's database, read through a snapshot that follows the original.
pub struct ZoteroDb {
    data_dir: PathBuf,
    db: PathBuf,
    /// Held only while a read runs on the open copy (never while files are copied).
    current: Mutex<Option<Snapshot>>,
    /// Held while a new copy is taken, so that readers finding the copy stale at once make
    /// one copy, not one each.
    refresh: Mutex<()>,
    /// Snapshots taken so far (the first at open).
    taken: AtomicU64,
}

/// What `check` reports.
#[derive(Debug, Clone)]
pub struct DbStatus {
    pub path: PathBuf,
    pub version: SchemaVersion,
    /// Items that are not notes, attachments or annotations, outside the trash.
    pub regular_items: u64,
    /// Every item row (notes, attachments, annotations and the trash included).
    pub all_items: u64,
    pub group_libraries: u64,
    pub open_in_zotero: bool,
}

impl ZoteroDb {
    /// Opens the database of a data directory: the first snapshot is taken now, so a missing,
    /// foreign, corrupt or too new database is refused at start.
    pub fn open(data_dir: &Path) -> Result<Self, DbError> {
        let db = data_dir.join("zotero.sqlite");
        let snapshot = Snapshot::take(&db)?;
        Ok(Self {
            data_dir: data_dir.to_path_buf(),
            db,
            current: Mutex::new(Some(snapshot)),
            refresh: Mutex::new(()),
            taken: AtomicU64::new(1),
        })
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// How many snapshots were taken so far: one at open, then one per change of the
    /// database or its `-wal` seen by a read.
    pub fn snapshots_taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// Runs `read` on a snapshot as current as the files on disk (blocking: call it off the
    /// async runtime's threads). While neither file changed this costs two `stat`s: the
    /// open copy, its schema names and its index are kept. The data directory's files are
    /// copied without the readers' lock held, so a slow copy holds up no other read.
    pub(crate) fn with<R>(
        &self,
        read: impl FnOnce(&Snapshot) -> Result<R, DbError>,
    ) -> Result<R, DbError> {
        let now = stamp_of(&self.db)?;
        let mut guard = lock(&self.current);
        if guard.as_ref().is_none_or(|s| s.stamp != now) {
            drop(guard);
            guard = self.refreshed(&now)?;
        }
        match guard.as_ref() {
            Some(snapshot) => read(snapshot).map_err(|e| e.damaged_at(&self.db)),
            None => Err(DbError::NotFound {
                path: self.db.clone(),
            }),
        }
    }

    /// The readers' lock on a new copy, or on the one another reader took as current as
    /// `now` meanwhile. The old copy is dropped first (two copies of a large library need
    /// not fit at once); readers arriving meanwhile wait on `refresh` for the new one. The
    /// lock is handed back still held, so no other refresh takes the copy away before the
    /// read.
    fn refreshed(&self, now: &Stamp) -> Result<MutexGuard<'_, Option<Snapshot>>, DbError> {
        let _one_copy_at_a_time = lock(&self.refresh);
        let old = {
            let mut guard = lock(&self.current);
            if guard.as_ref().is_some_and(|s| &s.stamp == now) {
                return Ok(guard);
            }
            guard.take()
        };
        drop(old);
        let snapshot = Snapshot::take(&self.db)?;
        let mut guard = lock(&self.current);
        *guard = Some(snapshot);
        self.taken.fetch_add(1, Ordering::Relaxed);
        Ok(guard)
    }

    /// The database, its schema version, its item count, and whether Zotero has it open.
    pub fn status(&self) -> Result<DbStatus, DbError> {
        let open_in_zotero = zotero_has_it_open(&self.db);
        self.with(|s| {
            let count = |sql: &str| -> Result<u64, DbError> {
                let n: i64 = s.conn.query_row(sql, [], |r| r.get(0))?;
                Ok(u64::try_from(n).unwrap_or(0))
            };
            Ok(DbStatus {
                path: self.db.clone(),
                version: s.version.clone(),
                regular_items: count(
                    "SELECT COUNT(*) FROM items WHERE itemID NOT IN (SELECT itemID FROM deletedItems) \
                     AND itemID NOT IN (SELECT itemID FROM itemNotes) \
                     AND itemID NOT IN (SELECT itemID FROM itemAttachments) \
                     AND itemID NOT IN (SELECT itemID FROM itemAnnotations)",
                )?,
                all_items: count("SELECT COUNT(*) FROM items")?,
                group_libraries: count("SELECT COUNT(*) FROM groups")?,
                open_in_zotero,
            })
        })
    }
}

/// Whether a process holds a lock on the database (Zotero keeps its exclusive lock while it
/// runs). Asked with `F_GETLK`, which only reports and takes nothing; where that cannot be
/// asked, a `-wal` beside the database (Zotero 10 removes it on a clean close) says so.
pub fn zotero_has_it_open(db: &Path) -> bool {
    #[cfg(unix)]
    {
        if let Some(locked) = posix_lock_held(db) {
            return locked;
        }
    }
    wal_path(db).exists()
}

/// The mutex's value even when a reader panicked while holding it (the copy is only read).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(unix)]
fn posix_lock_held(db: &Path) -> Option<bool> {
    use std::os::fd::AsRawFd;
    // A FIFO in its place is refused at once rather than waited on.
    let file = open_regular(db, datafile::DATABASE).ok()??;
    // SQLite's lock bytes start at 1 GiB (PENDING_BYTE) and span 2 + 510 bytes.
    // SAFETY: `flock` is a plain C struct for which all-zero is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as _;
    lock.l_whence = libc::SEEK_SET as _;
    lock.l_start = 0x4000_0000;
    lock.l_len = 512;
    // SAFETY: the descriptor is open for the call's duration and `lock` outlives it;
    // F_GETLK only reads the lock table and writes into `lock`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) };
    (rc == 0).then(|| i32::from(lock.l_type) != libc::F_UNLCK)
}
