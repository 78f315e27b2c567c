//! The semantic signal: cosine over the stored vectors, by the exact scan of the vector
//! table or by the in-memory int8 copy rescored exactly.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use crate::blob::blob_value;
use crate::encoder::Encoder;
use crate::error::{IndexError, Result};
use crate::store::Index;
use crate::vcache::{DocSet, VectorCache, OVERSAMPLE};

use super::fuse::Candidate;
use super::query::Coverage;

/// A vector's score in the heap: the least score on top, so it is the one pushed out.
struct Scored(f32, i64);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and the worst must be on top.
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The dot product of `query` and a stored vector (f32 little-endian), `None` when their
/// lengths differ. Eight running sums, so that the additions need not wait on each other
/// (a single float sum cannot be reordered by the compiler: 3× slower, measured).
pub(crate) fn blob_dot(query: &[f32], blob: &[u8]) -> Option<f32> {
    if blob.len() != query.len() * 4 {
        return None;
    }
    let mut sums = [0f32; 8];
    let blocks = blob.chunks_exact(32);
    let rest = blocks.remainder();
    let mut q_blocks = query.chunks_exact(8);
    for (b, q) in blocks.zip(&mut q_blocks) {
        for ((s, x), y) in sums.iter_mut().zip(b.chunks_exact(4)).zip(q) {
            *s += blob_value(x) * y;
        }
    }
    let tail: f32 = rest
        .chunks_exact(4)
        .zip(q_blocks.remainder())
        .map(|(x, y)| blob_value(x) * y)
        .sum();
    Some(sums.iter().sum::<f32>() + tail)
}

/// Scores a stored vector and keeps it in `heap` when among the best `candidates`.
fn keep(heap: &mut BinaryHeap<Scored>, query: &[f32], blob: &[u8], id: i64, candidates: usize) {
    let Some(score) = blob_dot(query, blob) else {
        return;
    };
    // Nothing in common is no evidence of meaning.
    if score <= 0.0 || !score.is_finite() {
        return;
    }
    heap.push(Scored(score, id));
    if heap.len() > candidates {
        heap.pop();
    }
}

/// What the semantic scan keeps: the filters' SQL and how many chunks.
#[derive(Clone, Copy)]
pub(crate) struct Scan<'a> {
    pub(crate) cond: &'a str,
    pub(crate) filter_params: &'a [Value],
    pub(crate) candidates: usize,
}

/// Why an index cannot be searched by meaning, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotSearchable {
    #[error("no sentence model is loaded, so the search is by words only")]
    NoModel,
    #[error("no vectors are computed yet (run the index update)")]
    NoVectors,
    /// The index's model differs from the encoder's, or the index cannot be read.
    #[error("{0}")]
    Index(Box<IndexError>),
}

impl Index {
    /// The encoder when its vectors can be searched, else why not.
    pub(crate) fn semantic_ready<'e>(
        &self,
        encoder: Option<&'e dyn Encoder>,
        with_vectors: u64,
    ) -> std::result::Result<&'e dyn Encoder, NotSearchable> {
        let Some(encoder) = encoder else {
            return Err(NotSearchable::NoModel);
        };
        match self.check_model(&encoder.identity()) {
            Ok(()) if with_vectors > 0 => Ok(encoder),
            Ok(()) => Err(NotSearchable::NoVectors),
            Err(e) => Err(NotSearchable::Index(Box::new(e))),
        }
    }

    pub(crate) fn semantic_candidates(
        &self,
        encoder: &dyn Encoder,
        text: &str,
        scan: &Scan<'_>,
        cache: Option<(&VectorCache, Coverage)>,
    ) -> Result<Vec<Candidate>> {
        let Scan {
            cond,
            filter_params,
            candidates,
        } = *scan;
        let query = Some(encoder.encode_query(text)?)
            .filter(|v| v.len() == encoder.dims())
            .ok_or_else(|| {
                IndexError::Encode(crate::encoder::EncodeError(
                    "the encoder gave no vector of its dimensions for the query".into(),
                ))
            })?;
        // The documents the filters allow, unless they allow all: a set to look the
        // scanned vectors' documents up in, so the scan reads the vectors alone.
        let filtered = cond != "1";
        let read_allowed = || -> Result<DocSet> {
            let sql = format!(
                "SELECT d.id FROM documents d
                 LEFT JOIN documents it ON it.key = d.item_key AND it.kind IN ('item', 'note')
                 WHERE {cond}"
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(filter_params.iter()), |r| r.get(0))?;
            Ok(DocSet::new(rows.collect::<rusqlite::Result<_>>()?))
        };
        let copy = match cache {
            Some((cache, coverage)) => {
                let key = self.cache_key_with(
                    encoder.dims(),
                    coverage.chunks_total,
                    coverage.chunks_with_vectors,
                )?;
                cache.get(self, &key)?
            }
            None => None,
        };
        let best = match copy {
            Some(copy) => {
                let allowed = match filtered {
                    true => {
                        let filter = format!("{cond}\u{1f}{filter_params:?}");
                        Some(copy.allowed(&filter, read_allowed)?)
                    }
                    false => None,
                };
                let picked = copy.top(
                    &query,
                    allowed.as_deref(),
                    candidates.saturating_mul(OVERSAMPLE),
                );
                drop(copy);
                self.rescore(&query, &picked, allowed.as_deref(), candidates)?
            }
            None => {
                let allowed = filtered.then(read_allowed).transpose()?;
                self.exact_scan(&query, allowed.as_ref(), candidates)?
            }
        };
        let mut key_of = self
            .conn
            .prepare_cached("SELECT item_key FROM chunks WHERE id = ?1")?;
        let mut out = Vec::with_capacity(best.len());
        for Scored(score, id) in best {
            let item_key: String = key_of.query_row([id], |r| r.get(0))?;
            out.push(Candidate {
                chunk_id: id,
                item_key,
                score: f64::from(score),
            });
        }
        Ok(out)
    }

    /// The best `candidates` vectors of the allowed documents by the dot product with
    /// `query`, best first, reading the whole vector table.
    fn exact_scan(
        &self,
        query: &[f32],
        allowed: Option<&DocSet>,
        candidates: usize,
    ) -> Result<Vec<Scored>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT chunk_id, doc_id, vector FROM vectors")?;
        let mut rows = stmt.query([])?;
        let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(candidates + 1);
        while let Some(row) = rows.next()? {
            let doc: i64 = row.get(1)?;
            if allowed.is_some_and(|a| !a.contains(doc)) {
                continue;
            }
            let id: i64 = row.get(0)?;
            let rusqlite::types::ValueRef::Blob(blob) = row.get_ref(2)? else {
                continue;
            };
            keep(&mut heap, query, blob, id, candidates);
        }
        Ok(heap.into_sorted_vec()) // ascending by Ord, i.e. best score first
    }

    /// As [`Index::exact_scan`], over the chunks `picked` only (by the int8 copy): their
    /// stored vectors scored exactly, the document filter checked again on the stored row.
    fn rescore(
        &self,
        query: &[f32],
        picked: &[i64],
        allowed: Option<&DocSet>,
        candidates: usize,
    ) -> Result<Vec<Scored>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT doc_id, vector FROM vectors WHERE chunk_id = ?1")?;
        // In chunk id order, the order of the table's pages: fewer pages read, each once.
        let mut picked = picked.to_vec();
        picked.sort_unstable();
        let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(candidates + 1);
        for id in picked {
            let mut rows = stmt.query([id])?;
            // A chunk gone since the copy was read (a write between the key and now) is
            // simply not found.
            let Some(row) = rows.next()? else {
                continue;
            };
            let doc: i64 = row.get(0)?;
            if allowed.is_some_and(|a| !a.contains(doc)) {
                continue;
            }
            let rusqlite::types::ValueRef::Blob(blob) = row.get_ref(1)? else {
                continue;
            };
            keep(&mut heap, query, blob, id, candidates);
        }
        Ok(heap.into_sorted_vec())
    }
}
