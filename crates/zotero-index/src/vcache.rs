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

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;

use crate::blob::blob_value;
use crate::cache_key::CacheKey;
use crate::error::Result;
use crate::store::Index;

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

/// The quantized vectors of one index.
#[derive(Debug)]
pub(crate) struct Vectors {
    key: CacheKey,
    dims: usize,
    /// `dims` codes per vector, vector after vector.
    codes: Vec<i8>,
    scales: Vec<f32>,
    chunk_ids: Vec<i64>,
    doc_ids: Vec<i64>,
    /// The documents the last few filters allowed (by their SQL and parameters), most
    /// recent last: documents change only with the key, so these hold as long as the copy
    /// does. Reading them costs more than the scan (10 ms for 22,000 documents, the trash
    /// being left out by default).
    allowed: Mutex<Vec<(String, Arc<DocSet>)>>,
}

/// How many filters' documents a copy remembers.
const FILTERS_KEPT: usize = 8;

/// A set of document ids: a bitmap when it is not much bigger than the ids (SQLite gives
/// ids in sequence), else a hash set.
#[derive(Debug)]
pub(crate) enum DocSet {
    Bits(Vec<u64>),
    Set(HashSet<i64>),
}

impl DocSet {
    pub(crate) fn new(ids: Vec<i64>) -> Self {
        let (min, max) = ids
            .iter()
            .fold((0i64, 0i64), |(lo, hi), &id| (lo.min(id), hi.max(id)));
        // At most 8 bytes per id plus 8 KiB.
        let small = usize::try_from(max).is_ok_and(|m| m <= 64 * ids.len() + 65_536);
        if min < 0 || !small {
            return DocSet::Set(ids.into_iter().collect());
        }
        let mut bits = vec![0u64; usize::try_from(max).map_or(0, |m| m / 64 + 1)];
        for id in ids {
            if let Some(w) = usize::try_from(id).ok().and_then(|i| bits.get_mut(i / 64)) {
                *w |= 1 << (id % 64);
            }
        }
        DocSet::Bits(bits)
    }

    pub(crate) fn contains(&self, id: i64) -> bool {
        match self {
            DocSet::Bits(bits) => usize::try_from(id)
                .ok()
                .and_then(|i| bits.get(i / 64))
                .is_some_and(|w| (w >> (id % 64)) & 1 == 1),
            DocSet::Set(set) => set.contains(&id),
        }
    }
}

/// The bytes one vector of `dims` dimensions takes in a copy.
fn bytes_per_vector(dims: usize) -> usize {
    dims + std::mem::size_of::<f32>() + 2 * std::mem::size_of::<i64>()
}

/// int8 codes of `v` and the scale that turns them back (value ≈ code × scale). A vector
/// of zeros, or one with infinite values, has scale 0 and zero codes (its exact score
/// decides, as for every candidate).
fn quantize_into(v: impl Iterator<Item = f32> + Clone, codes: &mut Vec<i8>) -> f32 {
    let max = v.clone().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max.is_finite() && max > 0.0 {
        max / 127.0
    } else {
        0.0
    };
    // `as` saturates and maps NaN to 0: no code falls outside [-127, 127].
    codes.extend(v.map(|x| {
        if scale > 0.0 {
            (x / scale).round().clamp(-127.0, 127.0) as i8
        } else {
            0
        }
    }));
    scale
}

/// The dot product of two code vectors. One integer sum, which (unlike a float sum) the
/// compiler may reorder at will: it becomes widening multiply-adds of many lanes.
#[inline(always)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// A candidate of the int8 scan: the least score on top of the heap, to be pushed out.
#[derive(Debug, Clone, Copy)]
struct Approx(f32, i64);

impl PartialEq for Approx {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Approx {}
impl PartialOrd for Approx {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Approx {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl Vectors {
    pub(crate) fn bytes(&self) -> usize {
        self.scales.len() * bytes_per_vector(self.dims)
    }

    pub(crate) fn len(&self) -> usize {
        self.scales.len()
    }

    /// The documents a filter allows (`filter` names it: its SQL and parameters), read by
    /// `read` unless remembered. The lock is not held while reading: two searches may
    /// read the same filter at once, and one result is kept.
    pub(crate) fn allowed(
        &self,
        filter: &str,
        read: impl FnOnce() -> Result<DocSet>,
    ) -> Result<Arc<DocSet>> {
        // The list is valid whatever a panicking holder left.
        let lock = || {
            self.allowed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        {
            let mut kept = lock();
            if let Some(at) = kept.iter().position(|(f, _)| f == filter) {
                let found = kept.remove(at);
                let docs = Arc::clone(&found.1);
                kept.push(found);
                return Ok(docs);
            }
        }
        let docs = Arc::new(read()?);
        let mut kept = lock();
        kept.retain(|(f, _)| f != filter);
        if kept.len() >= FILTERS_KEPT {
            kept.remove(0);
        }
        kept.push((filter.to_string(), Arc::clone(&docs)));
        Ok(docs)
    }

    /// The chunk ids of the `n` vectors of the allowed documents with the highest int8
    /// scores against `query`, best first. Empty when `query` has not the copy's length.
    pub(crate) fn top(&self, query: &[f32], allowed: Option<&DocSet>, n: usize) -> Vec<i64> {
        if query.len() != self.dims || self.dims == 0 || n == 0 {
            return Vec::new();
        }
        let mut q = Vec::with_capacity(self.dims);
        // The query's own scale multiplies every score alike: the order needs it not.
        quantize_into(query.iter().copied(), &mut q);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above (the only requirement of a
            // `target_feature` function).
            return unsafe { self.scan_avx2(&q, allowed, n) };
        }
        self.scan(&q, allowed, n)
    }

    /// [`Vectors::scan`] compiled for AVX2 (32 bytes a step rather than the 16 of the
    /// x86-64 baseline the program is built for): 7 → 2.2 ms at 114,000 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn scan_avx2(&self, q: &[i8], allowed: Option<&DocSet>, n: usize) -> Vec<i64> {
        self.scan(q, allowed, n)
    }

    /// [`Vectors::top`] with the query quantized.
    #[inline(always)]
    fn scan(&self, q: &[i8], allowed: Option<&DocSet>, n: usize) -> Vec<i64> {
        let mut heap: BinaryHeap<Approx> = BinaryHeap::with_capacity(n + 1);
        let rows = self
            .codes
            .chunks_exact(self.dims)
            .zip(&self.scales)
            .zip(self.chunk_ids.iter().zip(&self.doc_ids));
        for ((codes, &scale), (&chunk, doc)) in rows {
            if allowed.is_some_and(|a| !a.contains(*doc)) {
                continue;
            }
            let score = dot_i8(q, codes) as f32 * scale;
            let entry = Approx(score, chunk);
            if heap.len() < n {
                heap.push(entry);
            } else if heap.peek().is_some_and(|worst| entry < *worst) {
                // `<` in this order is "better than the worst kept".
                heap.pop();
                heap.push(entry);
            }
        }
        heap.into_sorted_vec().into_iter().map(|a| a.1).collect()
    }
}

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
        self.readers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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

/// Reads and quantizes all vectors of `dims` values of `index`, with the key of the same
/// snapshot; `None` when they take more than `budget` bytes (counted as they are read, in
/// case the count the caller had was not the table's).
fn load(index: &Index, dims: usize, budget: usize) -> Result<Option<Vectors>> {
    // One read transaction for the key and the vectors (unless the caller is in one
    // already, which is as good).
    let tx = if index.conn.is_autocommit() {
        Some(index.conn.unchecked_transaction()?)
    } else {
        None
    };
    let key = index.cache_key(dims)?;
    let expected = usize::try_from(key.with_vectors).unwrap_or(0);
    let per = bytes_per_vector(dims);
    if expected.saturating_mul(per) > budget {
        return Ok(None);
    }
    // Room for the expected count at once: no doubling of a 40 MB array on the way.
    let mut v = Vectors {
        key,
        dims,
        codes: Vec::with_capacity(expected.saturating_mul(dims)),
        scales: Vec::with_capacity(expected),
        chunk_ids: Vec::with_capacity(expected),
        doc_ids: Vec::with_capacity(expected),
        allowed: Mutex::default(),
    };
    {
        let mut stmt = index
            .conn
            .prepare("SELECT chunk_id, doc_id, vector FROM vectors")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let ValueRef::Blob(blob) = row.get_ref(2)? else {
                continue;
            };
            // The exact scan skips vectors of another length too.
            if blob.len() != dims * 4 {
                continue;
            }
            if (v.scales.len() + 1).saturating_mul(per) > budget {
                return Ok(None);
            }
            let values = blob.chunks_exact(4).map(blob_value);
            let scale = quantize_into(values, &mut v.codes);
            v.scales.push(scale);
            v.chunk_ids.push(row.get(0)?);
            v.doc_ids.push(row.get(1)?);
        }
    }
    if let Some(tx) = tx {
        tx.commit()?;
    }
    v.codes.shrink_to_fit();
    v.scales.shrink_to_fit();
    v.chunk_ids.shrink_to_fit();
    v.doc_ids.shrink_to_fit();
    Ok(Some(v))
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

    /// Deterministic values in [-0.5, 0.5).
    fn values(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        }
    }

    #[test]
    fn the_cache_is_shared_across_threads() {
        fn is<T: Send + Sync + Clone>() {}
        is::<VectorCache>();
    }

    #[test]
    fn quantized_dot_products_are_close() {
        let mut next = values(11);
        for dims in [1usize, 15, 16, 17, 384] {
            let a: Vec<f32> = (0..dims).map(|_| next()).collect();
            let b: Vec<f32> = (0..dims).map(|_| next()).collect();
            let (mut qa, mut qb) = (Vec::new(), Vec::new());
            let sa = quantize_into(a.iter().copied(), &mut qa);
            let sb = quantize_into(b.iter().copied(), &mut qb);
            let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let approx = dot_i8(&qa, &qb) as f32 * sa * sb;
            let want: i32 = qa
                .iter()
                .zip(&qb)
                .map(|(&x, &y)| i32::from(x) * i32::from(y))
                .sum();
            assert_eq!(dot_i8(&qa, &qb), want, "{dims}");
            assert!((exact - approx).abs() < 0.02, "{dims}: {exact} vs {approx}");
        }
        let mut z = Vec::new();
        assert_eq!(quantize_into([0.0f32, 0.0].into_iter(), &mut z), 0.0);
        assert_eq!(z, [0, 0]);
        let mut inf = Vec::new();
        assert_eq!(
            quantize_into([f32::INFINITY, 1.0].into_iter(), &mut inf),
            0.0
        );
        assert_eq!(inf, [0, 0]);
    }

    #[test]
    fn the_scan_for_this_cpu_is_the_plain_one() {
        let mut next = values(5);
        let (dims, n) = (100, 500);
        let mut codes = Vec::new();
        let scales: Vec<f32> = (0..n)
            .map(|_| {
                let v: Vec<f32> = (0..dims).map(|_| next()).collect();
                quantize_into(v.into_iter(), &mut codes)
            })
            .collect();
        let v = Vectors {
            key: CacheKey {
                file: None,
                generation: None,
                chunks: n as u64,
                with_vectors: n as u64,
                dims,
            },
            dims,
            codes,
            scales,
            chunk_ids: (0..n as i64).collect(),
            doc_ids: (0..n as i64).map(|i| i % 7).collect(),
            allowed: Mutex::default(),
        };
        let query: Vec<f32> = (0..dims).map(|_| next()).collect();
        let mut q = Vec::new();
        quantize_into(query.iter().copied(), &mut q);
        let odd = DocSet::new(vec![1, 3, 5]);
        for allowed in [None, Some(&odd)] {
            for k in [1, 10, 100, 1000] {
                let top = v.top(&query, allowed, k);
                assert_eq!(top, v.scan(&q, allowed, k));
                assert_eq!(top.len(), k.min(if allowed.is_some() { 214 } else { 500 }));
            }
        }
        assert!(v.top(&query[1..], None, 10).is_empty());
    }

    #[test]
    fn doc_sets_hold_their_ids() {
        for ids in [
            vec![],
            vec![0, 1, 63, 64, 500],
            vec![3, 1 << 40],
            vec![-5, 2],
        ] {
            let set = DocSet::new(ids.clone());
            for id in [
                -5i64,
                0,
                1,
                2,
                3,
                62,
                63,
                64,
                65,
                500,
                501,
                1 << 40,
                i64::MAX,
            ] {
                assert_eq!(set.contains(id), ids.contains(&id), "{ids:?} {id}");
            }
        }
        assert!(matches!(DocSet::new(vec![1, 70]), DocSet::Bits(_)));
        assert!(matches!(DocSet::new(vec![1, 1 << 40]), DocSet::Set(_)));
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
