//! One index's vectors as the cache keeps them: int8 codes with a scale per vector, read
//! from the `vectors` table in one go, and the scan that picks a search's candidates.

use std::collections::{BinaryHeap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use rusqlite::types::ValueRef;

use crate::blob::blob_value;
use crate::cache_key::CacheKey;
use crate::error::Result;
use crate::store::Index;

/// The quantized vectors of one index.
#[derive(Debug)]
pub(crate) struct Vectors {
    pub(super) key: CacheKey,
    pub(super) dims: usize,
    /// `dims` codes per vector, vector after vector.
    pub(super) codes: Vec<i8>,
    pub(super) scales: Vec<f32>,
    pub(super) chunk_ids: Vec<i64>,
    pub(super) doc_ids: Vec<i64>,
    /// The documents the last few filters allowed (by their SQL and parameters), most
    /// recent last: documents change only with the key, so these hold as long as the copy
    /// does. Reading them costs more than the scan (10 ms for 22,000 documents, the trash
    /// being left out by default).
    pub(super) allowed: Mutex<Vec<(String, Arc<DocSet>)>>,
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
pub(super) fn bytes_per_vector(dims: usize) -> usize {
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
        let lock = || crate::sync::lock(&self.allowed);
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
        let best = self.best_in_parts(&q, allowed, n, scan_parts(self.len()));
        best.into_iter().map(|a| a.1).collect()
    }

    /// The best `n` allowed vectors by their int8 scores with the quantized query `q`,
    /// best first, the vectors split into `parts` runs of rows, each scanned for its own
    /// best `n` on a thread of its own (the first on this one), then merged. The order is
    /// total (score, then chunk id), so the best `n` of the runs' best are those of one
    /// scan.
    fn best_in_parts(
        &self,
        q: &[i8],
        allowed: Option<&DocSet>,
        n: usize,
        parts: usize,
    ) -> Vec<Approx> {
        let len = self.len();
        let per = len.div_ceil(parts.max(1)).max(1);
        let runs: Vec<Range<usize>> = (0..len)
            .step_by(per)
            .map(|start| start..(start + per).min(len))
            .collect();
        let scan = |rows: Range<usize>| self.scan_rows(q, allowed, n, rows);
        let mut best: Vec<Approx> = match runs.as_slice() {
            [] => Vec::new(),
            [only] => scan(only.clone()),
            [first, rest @ ..] => std::thread::scope(|s| {
                let scan = &scan;
                // A thread that cannot be made leaves its run to this one.
                let spawned: Vec<_> = rest
                    .iter()
                    .map(|rows| {
                        let mine = rows.clone();
                        std::thread::Builder::new()
                            .spawn_scoped(s, move || scan(mine))
                            .map_err(|_| rows.clone())
                    })
                    .collect();
                let mut found = scan(first.clone());
                for part in spawned {
                    match part {
                        // A part that panicked panics here, as it would have inline.
                        Ok(handle) => found.extend(
                            handle
                                .join()
                                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                        ),
                        Err(rows) => found.extend(scan(rows)),
                    }
                }
                found
            }),
        };
        if runs.len() > 1 {
            best.sort_unstable();
            best.truncate(n);
        }
        best
    }

    /// The best `n` of the allowed vectors in `rows`, best first, by the scan compiled for
    /// the widest integer vectors this CPU has.
    fn scan_rows(
        &self,
        q: &[i8],
        allowed: Option<&DocSet>,
        n: usize,
        rows: Range<usize>,
    ) -> Vec<Approx> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above (the only requirement of a
            // `target_feature` function).
            return unsafe { self.scan_avx2(q, allowed, n, rows) };
        }
        #[cfg(target_arch = "aarch64")]
        if std::arch::is_aarch64_feature_detected!("dotprod") {
            // SAFETY: the CPU has the dot product instructions, checked just above.
            return unsafe { self.scan_dotprod(q, allowed, n, rows) };
        }
        self.scan(q, allowed, n, rows)
    }

    /// [`Vectors::scan`] compiled for AVX2 (32 bytes a step rather than the 16 of the
    /// x86-64 baseline the program is built for): 7 → 2.2 ms at 114,000 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn scan_avx2(
        &self,
        q: &[i8],
        allowed: Option<&DocSet>,
        n: usize,
        rows: Range<usize>,
    ) -> Vec<Approx> {
        self.scan(q, allowed, n, rows)
    }

    /// [`Vectors::scan`] compiled with Armv8.2's dot product: the loop of [`dot_i8`]
    /// becomes `sdot` (16 products summed into 4 lanes an instruction) instead of
    /// widening multiplies and adds.
    #[cfg(target_arch = "aarch64")]
    #[target_feature(enable = "dotprod")]
    fn scan_dotprod(
        &self,
        q: &[i8],
        allowed: Option<&DocSet>,
        n: usize,
        rows: Range<usize>,
    ) -> Vec<Approx> {
        self.scan(q, allowed, n, rows)
    }

    /// The best `n` of the allowed vectors in `rows` by their int8 scores with the
    /// quantized query, best first.
    #[inline(always)]
    fn scan(
        &self,
        q: &[i8],
        allowed: Option<&DocSet>,
        n: usize,
        rows: Range<usize>,
    ) -> Vec<Approx> {
        let mut heap: BinaryHeap<Approx> = BinaryHeap::with_capacity(n + 1);
        let codes = self
            .codes
            .get(rows.start * self.dims..rows.end * self.dims)
            .unwrap_or_default();
        let rows = codes
            .chunks_exact(self.dims)
            .zip(self.scales.get(rows.clone()).unwrap_or_default())
            .zip(
                (self.chunk_ids.get(rows.clone()).unwrap_or_default())
                    .iter()
                    .zip(self.doc_ids.get(rows).unwrap_or_default()),
            );
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
        heap.into_sorted_vec()
    }
}

/// Vectors from which the int8 scan is split into one run per core: below, a thread's
/// start and the merge (tens of microseconds) would cost about what the split saves
/// (the scan reads ~400 bytes a vector, ~3 ms for 160,000 on one core of the dev machine).
pub(super) const SPLIT_VECTORS: usize = 40_000;
/// The most runs the int8 scan is split into.
const MAX_SCAN_PARTS: usize = 4;

/// How many runs to scan `len` vectors in: one per core (at most [`MAX_SCAN_PARTS`]) from
/// [`SPLIT_VECTORS`] vectors, else one.
fn scan_parts(len: usize) -> usize {
    if len < SPLIT_VECTORS {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_SCAN_PARTS)
}

/// Reads and quantizes all vectors of `dims` values of `index`, with the key of the same
/// snapshot; `None` when they take more than `budget` bytes (counted as they are read, in
/// case the count the caller had was not the table's).
pub(super) fn load(index: &Index, dims: usize, budget: usize) -> Result<Option<Vectors>> {
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

    /// `n` vectors of `dims` values from `seed`, of documents `i % 7`; every third is a
    /// copy of the one before under another chunk id, so that scores tie.
    fn some_vectors(seed: u64, dims: usize, n: usize) -> Vectors {
        let mut next = values(seed);
        let mut codes = Vec::new();
        let mut scales = Vec::new();
        for i in 0..n {
            if i % 3 == 2 {
                let last: Vec<i8> = codes[(i - 1) * dims..i * dims].to_vec();
                codes.extend(last);
                scales.push(scales[i - 1]);
            } else {
                let v: Vec<f32> = (0..dims).map(|_| next()).collect();
                scales.push(quantize_into(v.into_iter(), &mut codes));
            }
        }
        Vectors {
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
            // Not in row order, so that ties are not broken by position.
            chunk_ids: (0..n as i64).map(|i| (i * 7_919) % 10_007).collect(),
            doc_ids: (0..n as i64).map(|i| i % 7).collect(),
            allowed: Mutex::default(),
        }
    }

    #[test]
    fn the_scan_for_this_cpu_is_the_plain_one() {
        let (dims, n) = (100, 500);
        let v = some_vectors(5, dims, n);
        let mut next = values(6);
        let query: Vec<f32> = (0..dims).map(|_| next()).collect();
        let mut q = Vec::new();
        quantize_into(query.iter().copied(), &mut q);
        let odd = DocSet::new(vec![1, 3, 5]);
        for allowed in [None, Some(&odd)] {
            for k in [1, 10, 100, 1000] {
                let top = v.top(&query, allowed, k);
                let plain: Vec<i64> = v.scan(&q, allowed, k, 0..n).iter().map(|a| a.1).collect();
                assert_eq!(top, plain);
                assert_eq!(top.len(), k.min(if allowed.is_some() { 214 } else { 500 }));
            }
        }
        assert!(v.top(&query[1..], None, 10).is_empty());
    }

    /// Property: split into any number of runs, on threads, the scan keeps the same
    /// chunks with the same scores in the same order as one plain scan of all rows.
    #[test]
    fn a_split_scan_equals_one_scan() {
        for seed in 0..12u64 {
            for n in [0usize, 1, 2, 7, 97, 600] {
                let dims = [1usize, 16, 33, 384][(seed % 4) as usize];
                let v = some_vectors(seed, dims, n);
                let mut next = values(seed + 100);
                let query: Vec<f32> = (0..dims).map(|_| next()).collect();
                let mut q = Vec::new();
                quantize_into(query.iter().copied(), &mut q);
                let some = DocSet::new(vec![0, 2, 3]);
                for allowed in [None, Some(&some)] {
                    for k in [1, 3, 50, 1000] {
                        let want = v.scan(&q, allowed, k, 0..n);
                        assert_eq!(want.len(), want.len().min(k));
                        for parts in 1..=5 {
                            let got = v.best_in_parts(&q, allowed, k, parts);
                            let key = |a: &[Approx]| -> Vec<(u32, i64)> {
                                a.iter().map(|x| (x.0.to_bits(), x.1)).collect()
                            };
                            assert_eq!(
                                key(&got),
                                key(&want),
                                "seed {seed}, {n} vectors, k {k}, {parts} parts"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_scan_is_split_from_its_threshold_only() {
        assert_eq!(scan_parts(0), 1);
        assert_eq!(scan_parts(SPLIT_VECTORS - 1), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(scan_parts(SPLIT_VECTORS), cores.min(MAX_SCAN_PARTS));
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
}
