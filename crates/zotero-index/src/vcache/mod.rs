//! An in-memory copy of each index's vectors, so that a search by meaning scans memory
//! rather than the `vectors` table (105–155 ms at 114,000 chunks, most of it SQLite reading
//! and decoding 1.5 kB rows).
//!
//! # What is kept
//!
//! Per index file, every vector quantized to int8 with a scale of its own (the largest
//! magnitude maps to 127), in flat arrays: codes, scales, chunk ids, document ids. At 384
//! dimensions that is 404 bytes a vector instead of 1,536 (f32): 44 MB for 110,000 chunks.
//! Per-vector scaling rather than one scale for all keeps the precision of vectors of any
//! norm (the model's are normalized, but nothing enforces it on what is stored).
//!
//! The int8 scan only chooses candidates: [`OVERSAMPLE`] times as many as the search keeps,
//! whose exact scores are then computed from the f32 vectors read from SQLite by chunk id,
//! the best kept in the same order as the exact scan. The quantization error of a dot
//! product (around 1e-3 for normalized 384-dimension vectors) is far smaller than the
//! score gap between the chunk kept last and the one at four times its rank, so the final
//! candidates are those of the exact scan; [`crate::rank`]'s tests compare both.
//!
//! # Validity
//!
//! A copy is used only while its [`CacheKey`] equals the index's current one: the file's
//! (device, inode), so that a file removed and rebuilt (`update --full`) is never taken for
//! the old one; the `data_generation` in `meta`, which every committed write of documents or
//! vectors raises ([`crate::store`]); the numbers of chunks and of chunks with a vector
//! (known to every search already; they also catch writers that predate the generation);
//! the model's dimensions. A changed key reloads the copy whole, in one read transaction
//! together with the key it is stored under, unless the copy was read less than
//! [`DEFAULT_MIN_RELOAD`] ago (an update under way): then the stale copy is dropped and
//! searches use the exact scan until that time has passed. The server opens a new [`crate::Index`] (a new
//! connection) per search, which is why the key is in the file rather than SQLite's
//! `PRAGMA data_version` (meaningful on one long-lived connection only).
//!
//! # Memory
//!
//! Nothing is loaded before the first search by meaning of an index. All copies together
//! stay within a budget ([`DEFAULT_BUDGET_BYTES`] unless given): other indexes' copies are
//! dropped, least recently used first, to make room; an index whose copy alone would not fit
//! is searched by the exact SQLite scan, as without a cache. A stale copy is dropped before
//! its replacement is read, so two copies of one index are never built at once (a search
//! still scanning the old one keeps it alive until it ends).

mod vectors;

use crate::sync::lock;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::cache_key::CacheKey;
use crate::error::Result;
use crate::store::Index;
use vectors::{bytes_per_vector, load};

pub(crate) use vectors::{DocSet, Vectors};

/// The memory all copies may take together: 64 MiB, 166,000 vectors of 384 dimensions
/// (a library of 114,000 chunks takes 46 MB). Small enough that a server updating its
/// index (the model, SQLite's cache, the update's batches) stays well within 400 MB.
pub const DEFAULT_BUDGET_BYTES: usize = 64 << 20;

/// The least time between two reads of one index's copy: an update commits every few
/// hundred milliseconds, and reading the copy anew at each search (0.4 s at 114,000
/// vectors) would make every search during an update slower than the exact scan (0.12 s),
/// which they use instead. A reload at most every 10 s is at most 4% of the time.
pub const DEFAULT_MIN_RELOAD: Duration = Duration::from_secs(10);

/// How many candidates the int8 scan picks per candidate the search keeps; all are then
/// scored exactly.
pub const OVERSAMPLE: usize = 4;

#[derive(Debug)]
struct Entry {
    vectors: Arc<Vectors>,
    last_used: u64,
}

#[derive(Debug)]
struct Inner {
    budget: usize,
    min_reload: Duration,
    entries: HashMap<PathBuf, Entry>,
    /// When each index's copy was last read.
    loaded_at: HashMap<PathBuf, Instant>,
    clock: u64,
}

/// The in-memory copies of the vectors of the indexes searched, shared by all searches of
/// a process: cheap to clone (one `Arc`), safe to use from any thread. See the module's
/// notes. It also keeps a few read connections between searches ([`VectorCache::reader`]).
#[derive(Debug, Clone)]
pub struct VectorCache {
    inner: Arc<Mutex<Inner>>,
    readers: Arc<Mutex<Vec<Index>>>,
}

/// How many read connections are kept between searches, all indexes together: a search
/// uses one, and one per keyword part beyond the first (`rank`).
pub const MAX_READERS: usize = 4;

/// The page cache of a kept read connection: 8 MiB (SQLite's default is 2 MB), so that
/// the keyword index's row sizes and the pages of the query words' lists that searches read
/// again stay there.
const READER_CACHE_KIB: i64 = 8 * 1024;

impl Default for VectorCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

impl VectorCache {
    /// A cache whose copies together take at most `budget` bytes.
    pub fn with_budget(budget: usize) -> Self {
        Self::new(budget, DEFAULT_MIN_RELOAD)
    }

    /// A cache whose copies together take at most `budget` bytes, each index's read again
    /// at most once per `min_reload` (searches between are exact).
    pub fn new(budget: usize, min_reload: Duration) -> Self {
        VectorCache {
            inner: Arc::new(Mutex::new(Inner {
                budget,
                min_reload,
                entries: HashMap::new(),
                loaded_at: HashMap::new(),
                clock: 0,
            })),
            readers: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn lock_readers(&self) -> MutexGuard<'_, Vec<Index>> {
        // Connections are put back only after a search ended well: usable.
        lock(&self.readers)
    }

    /// A read connection to the index file `index` has open (the same device and inode),
    /// kept from an earlier search, or else a new one. A search on a new connection reads
    /// every page it needs from the file (at 160,000 chunks, a few milliseconds of each
    /// search went to counting rows SQLite had read before); a kept one has them in its
    /// cache. Connections kept for a file since replaced (`update --full`) are dropped.
    /// Give it back with [`VectorCache::keep_reader`].
    pub(crate) fn reader(&self, index: &Index) -> Result<Index> {
        self.reader_of(&index.path, index.file_id, index.library())
    }

    /// [`VectorCache::reader`] for the file at `path` whose (device, inode) is `file`.
    pub(crate) fn reader_of(
        &self,
        path: &std::path::Path,
        file: Option<(u64, u64)>,
        library: &crate::store::LibraryId,
    ) -> Result<Index> {
        let kept = {
            let mut readers = self.lock_readers();
            readers.retain(|r| r.path != path || r.file_id == file);
            match file {
                Some(_) => readers
                    .iter()
                    .rposition(|r| r.path == path)
                    .map(|at| readers.remove(at)),
                None => None,
            }
        };
        match kept {
            Some(r) => Ok(r),
            None => {
                let r = Index::open_file(path, library.clone())?;
                r.conn
                    .execute_batch(&format!("PRAGMA cache_size = -{READER_CACHE_KIB}"))?;
                Ok(r)
            }
        }
    }

    /// Keeps a connection [`VectorCache::reader`] gave for the next search, the oldest
    /// kept dropped beyond [`MAX_READERS`].
    pub(crate) fn keep_reader(&self, reader: Index) {
        if reader.file_id.is_none() {
            return;
        }
        let mut readers = self.lock_readers();
        readers.push(reader);
        if readers.len() > MAX_READERS {
            readers.remove(0);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves at worst a copy that is dropped or
        // replaced by the next key check: the data is still usable.
        lock(&self.inner)
    }

    /// The bytes the copies take now.
    pub fn bytes(&self) -> usize {
        self.lock()
            .entries
            .values()
            .map(|e| e.vectors.bytes())
            .sum()
    }

    /// How many vectors the copies hold now.
    pub fn vectors(&self) -> usize {
        self.lock().entries.values().map(|e| e.vectors.len()).sum()
    }

    /// Drops every copy (the next search of each index reloads) and every kept connection.
    pub fn clear(&self) {
        self.lock().entries.clear();
        self.lock_readers().clear();
    }

    /// The copy of `index`'s vectors valid for `key`, loaded when there is none or it is
    /// stale; `None` when it would not fit in the budget (the caller scans SQLite).
    ///
    /// The lock is held while loading: a second search of the index waits for the copy
    /// rather than building another, which would double the memory.
    pub(crate) fn get(&self, index: &Index, key: &CacheKey) -> Result<Option<Arc<Vectors>>> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let path = index.path();
        if let Some(e) = inner.entries.get_mut(path) {
            if &e.vectors.key == key {
                e.last_used = now;
                return Ok(Some(Arc::clone(&e.vectors)));
            }
        }
        // Stale or absent: a stale copy is of no more use, its memory is freed now.
        inner.entries.remove(path);
        if inner
            .loaded_at
            .get(path)
            .is_some_and(|t| t.elapsed() < inner.min_reload)
        {
            return Ok(None);
        }
        let need = usize::try_from(key.with_vectors)
            .unwrap_or(usize::MAX)
            .saturating_mul(bytes_per_vector(key.dims));
        if need > inner.budget {
            return Ok(None);
        }
        inner.make_room(need);
        let Some(vectors) = load(index, key.dims, inner.budget)? else {
            return Ok(None);
        };
        inner.loaded_at.insert(path.to_path_buf(), Instant::now());
        let vectors = Arc::new(vectors);
        // The copy may be newer than `key` (a commit between the two reads); it is stored
        // under the key read with it, and is what this search uses: committed data.
        inner.make_room(vectors.bytes());
        inner.entries.insert(
            path.to_path_buf(),
            Entry {
                vectors: Arc::clone(&vectors),
                last_used: now,
            },
        );
        Ok(Some(vectors))
    }
}

impl Inner {
    /// Drops the least recently used copies until `need` more bytes fit in the budget.
    fn make_room(&mut self, need: usize) {
        loop {
            let used: usize = self.entries.values().map(|e| e.vectors.bytes()).sum();
            if used.saturating_add(need) <= self.budget {
                return;
            }
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(p, _)| p.clone());
            match oldest {
                Some(p) => {
                    self.entries.remove(&p);
                }
                None => return,
            }
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_cache_is_shared_across_threads() {
        fn is<T: Send + Sync + Clone>() {}
        is::<VectorCache>();
    }

    #[test]
    fn read_connections_are_kept_for_their_file_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path(), &crate::LibraryId::User).unwrap();
        let cache = VectorCache::default();
        for _ in 0..MAX_READERS + 2 {
            cache.keep_reader(cache.reader(&index).unwrap());
            let extra = Index::open(dir.path(), &crate::LibraryId::User).unwrap();
            cache.keep_reader(extra);
        }
        assert_eq!(cache.lock_readers().len(), MAX_READERS);
        // A kept one is given again rather than a new one opened.
        let r = cache.reader(&index).unwrap();
        assert_eq!(cache.lock_readers().len(), MAX_READERS - 1);
        cache.keep_reader(r);
        // None is given for another file at the same path, and those kept are dropped.
        let mut other = Index::open(dir.path(), &crate::LibraryId::User).unwrap();
        other.file_id = other.file_id.map(|(dev, ino)| (dev, ino + 1));
        let r = cache.reader(&other).unwrap();
        assert!(cache.lock_readers().is_empty());
        assert_eq!(
            r.file_id, index.file_id,
            "a new connection, to the file there"
        );
        cache.clear();
        assert!(cache.lock_readers().is_empty());
    }

    #[test]
    fn the_budget_drops_the_least_recently_used() {
        let cache = VectorCache::with_budget(3 * bytes_per_vector(4));
        let vectors = |n: usize| {
            Arc::new(Vectors {
                key: CacheKey {
                    file: None,
                    generation: None,
                    chunks: n as u64,
                    with_vectors: n as u64,
                    dims: 4,
                },
                dims: 4,
                codes: vec![0; 4 * n],
                scales: vec![0.0; n],
                chunk_ids: vec![0; n],
                doc_ids: vec![0; n],
                allowed: Mutex::default(),
            })
        };
        let mut inner = cache.lock();
        for (i, p) in ["a", "b"].iter().enumerate() {
            inner.entries.insert(
                PathBuf::from(p),
                Entry {
                    vectors: vectors(1),
                    last_used: i as u64,
                },
            );
        }
        inner.make_room(bytes_per_vector(4));
        assert_eq!(inner.entries.len(), 2);
        inner.make_room(2 * bytes_per_vector(4));
        assert!(inner.entries.contains_key(Path::new("b")));
        assert!(!inner.entries.contains_key(Path::new("a")));
    }
}
