//! Vectors for the pending chunks with encoding and writing overlapped: this thread reads
//! windows of pending chunks, sorts each by length and cuts it into batches of similar
//! lengths, encoder threads turn batches into vectors, and this thread (the connection's)
//! commits each batch's vectors while the next batches are encoded. Queues between them are
//! bounded, so memory stays that of a few batches whatever the index's size.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use rusqlite::params;

use crate::chunk::Matched;
use crate::encoder::{EncodeError, Encoder, ModelIdentity};
use crate::error::{IndexError, Result};

use super::document::PendingChunk;
use super::update::Updater;

/// How [`Updater::embed_pending_overlapped`] cuts the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedPlan {
    /// Pending chunks read at a time (in the index's order: items' chunks, then notes and
    /// annotations, then full text), sorted by length within the window.
    pub window: usize,
    /// Characters of text per batch at most (a longer chunk is a batch alone): a batch is
    /// one encoder call and one transaction.
    pub batch_chars: usize,
    /// Chunks per batch at most.
    pub batch_chunks: usize,
    /// Threads calling the encoder at the same time.
    pub workers: usize,
}

impl Default for EmbedPlan {
    /// A window of 512 chunks; batches of at most 16,000 characters (about 4,000 tokens of
    /// English for a WordPiece model) and 256 chunks; one encoder thread per core, at most 2
    /// (each holds a batch's activations: ~100 MB for a MiniLM at 4,096 tokens).
    fn default() -> Self {
        EmbedPlan {
            window: 512,
            batch_chars: 16_000,
            batch_chunks: 256,
            workers: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .clamp(1, 2),
        }
    }
}

/// A batch's vectors, or why the encoder failed.
type Encoded = std::result::Result<Vec<(i64, Vec<f32>)>, IndexError>;

impl Updater<'_> {
    /// Up to `limit` chunks without a vector after `(priority, id)` in the index's order,
    /// each with its priority.
    fn pending_after(&self, after: (i64, i64), limit: usize) -> Result<Vec<(i64, PendingChunk)>> {
        let conn = &self.index.conn;
        let run = || -> Result<Vec<(i64, PendingChunk)>> {
            let mut stmt = conn.prepare_cached(
                "SELECT id, matched, text, priority FROM chunks INDEXED BY chunks_pending
                 WHERE embedded = 0 AND (priority, id) > (?1, ?2)
                 ORDER BY priority, id LIMIT ?3",
            )?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![after.0, after.1, limit], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, matched, text, priority) = row?;
                let matched = Matched::parse(&matched).unwrap_or(Matched::Fulltext);
                out.push((priority, PendingChunk { id, matched, text }));
            }
            Ok(out)
        };
        run().map_err(|e| e.at(&self.index.path))
    }

    /// Computes a vector for every chunk lacking one, as [`Updater::embed_pending`] does, but
    /// with `plan.workers` threads encoding while this one writes (see the module's doc).
    /// Each batch is committed on its own; `committed(n)` is told after each commit and
    /// answers whether to go on: on `false` no new batch is started, the batches being
    /// encoded are finished and written, and the call returns. Answers how many chunks got a
    /// vector.
    pub fn embed_pending_overlapped(
        &mut self,
        encoder: &dyn Encoder,
        plan: EmbedPlan,
        mut committed: impl FnMut(usize) -> bool,
    ) -> Result<usize> {
        let model = encoder.identity();
        self.index.check_model(&model)?;
        let workers = plan.workers.max(1);
        let stop = AtomicBool::new(false);
        let (work_tx, work_rx) = sync_channel::<Vec<PendingChunk>>(workers);
        let (done_tx, done_rx) = sync_channel::<Encoded>(workers);
        let work_rx = Mutex::new(work_rx);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (work_rx, done_tx, stop, model) = (&work_rx, done_tx.clone(), &stop, &model);
                scope.spawn(move || encode_worker(encoder, model, work_rx, &done_tx, stop));
            }
            drop(done_tx);
            let result =
                self.feed_and_write(&model, plan, work_tx, &done_rx, &stop, &mut committed);
            // Whatever ended the loop (done, told to stop, an error), the workers start nothing
            // more; those encoding finish their batch and find nobody to take it.
            stop.store(true, Ordering::Relaxed);
            drop(done_rx);
            result
        })
    }

    /// The writer's side: keeps the workers fed, at most `2 × workers` batches out, and
    /// commits each batch's vectors as they come.
    fn feed_and_write(
        &mut self,
        model: &ModelIdentity,
        plan: EmbedPlan,
        work_tx: SyncSender<Vec<PendingChunk>>,
        done_rx: &Receiver<Encoded>,
        stop: &AtomicBool,
        committed: &mut impl FnMut(usize) -> bool,
    ) -> Result<usize> {
        let most_out = 2 * plan.workers.max(1);
        let mut work_tx = Some(work_tx);
        let mut ready: VecDeque<Vec<PendingChunk>> = VecDeque::new();
        let mut cursor = (i64::MIN, i64::MIN);
        let mut exhausted = false;
        let mut out = 0usize;
        let mut done = 0usize;
        loop {
            while let Some(tx) = work_tx.as_ref() {
                if out >= most_out {
                    break;
                }
                if ready.is_empty() && !exhausted {
                    let window = self.pending_after(cursor, plan.window.max(1))?;
                    match window.last() {
                        Some((priority, chunk)) => cursor = (*priority, chunk.id),
                        None => exhausted = true,
                    }
                    ready.extend(batches_by_length(
                        window.into_iter().map(|(_, c)| c).collect(),
                        plan.batch_chars,
                        plan.batch_chunks,
                    ));
                }
                let Some(batch) = ready.pop_front() else {
                    break;
                };
                if tx.send(batch).is_err() {
                    return Err(stopped());
                }
                out += 1;
            }
            if out == 0 {
                return Ok(done);
            }
            let Ok(encoded) = done_rx.recv() else {
                // Told to stop, the workers leave the batches still queued undone.
                return if work_tx.is_none() {
                    Ok(done)
                } else {
                    Err(stopped())
                };
            };
            out -= 1;
            let vectors = encoded?;
            self.write_vectors(model, &vectors)?;
            done += vectors.len();
            if !committed(vectors.len()) && work_tx.is_some() {
                // No new batch; those already sent are finished and written.
                work_tx = None;
                stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// The encoder threads ended without an answer (one panicked): a defect, reported as such.
fn stopped() -> IndexError {
    IndexError::Encode(EncodeError(
        "the encoder threads stopped unexpectedly".to_string(),
    ))
}

/// One encoder thread: batches in, vectors out, until the queue closes or `stop` is set.
fn encode_worker(
    encoder: &dyn Encoder,
    model: &ModelIdentity,
    work_rx: &Mutex<Receiver<Vec<PendingChunk>>>,
    done_tx: &SyncSender<Encoded>,
    stop: &AtomicBool,
) {
    loop {
        let next = match work_rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(batch) = next else {
            return;
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if done_tx.send(encode(encoder, model, &batch)).is_err() {
            return;
        }
    }
}

/// A batch's vectors with their chunk ids, checked against the model's contract.
fn encode(encoder: &dyn Encoder, model: &ModelIdentity, batch: &[PendingChunk]) -> Encoded {
    let texts: Vec<&str> = batch.iter().map(|p| p.text.as_str()).collect();
    let vectors = encoder.encode(&texts)?;
    if vectors.len() != batch.len() {
        return Err(IndexError::Encode(EncodeError(format!(
            "the encoder answered {} vectors for {} texts",
            vectors.len(),
            batch.len()
        ))));
    }
    if let Some(v) = vectors.iter().find(|v| v.len() != model.dims) {
        return Err(IndexError::Encode(EncodeError(format!(
            "the model {} gave a vector of {} values, not {}",
            model.id,
            v.len(),
            model.dims
        ))));
    }
    Ok(batch.iter().map(|p| p.id).zip(vectors).collect())
}

/// `chunks` sorted by length (shortest first) and cut into batches of at most `max_chars`
/// characters (a longer chunk alone) and `max_chunks` chunks: texts of similar lengths are
/// encoded together, and a batch of short texts holds many of them.
fn batches_by_length(
    mut chunks: Vec<PendingChunk>,
    max_chars: usize,
    max_chunks: usize,
) -> Vec<Vec<PendingChunk>> {
    chunks.sort_by_key(|c| (c.text.len(), c.id));
    let mut out = Vec::new();
    let mut batch: Vec<PendingChunk> = Vec::new();
    let mut chars = 0usize;
    for chunk in chunks {
        let len = chunk.text.len();
        if !batch.is_empty() && (batch.len() >= max_chunks.max(1) || chars + len > max_chars) {
            out.push(std::mem::take(&mut batch));
            chars = 0;
        }
        chars += len;
        batch.push(chunk);
    }
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, Condvar};
    use std::time::Duration;

    use super::*;
    use crate::chunk::ItemMeta;
    use crate::encoder::SynonymEncoder;
    use crate::store::{Document, Index, LibraryId};

    /// An index of `n` items (title, metadata and abstract chunks), no vectors yet.
    fn index_of(dir: &std::path::Path, n: usize) -> Index {
        let mut index = Index::open(dir, &LibraryId::User).unwrap();
        {
            let mut up = index.updater().unwrap();
            let mut b = up.batch().unwrap();
            for i in 0..n {
                let meta = ItemMeta {
                    title: format!("Sleep loss and memory, study {i}"),
                    creators: format!("Author {i}"),
                    year: Some(1990 + (i % 30) as i32),
                    item_type: "journalArticle".into(),
                    abstract_note: "insomnia impairs recall in older adults. ".repeat(1 + i % 40),
                    ..ItemMeta::default()
                };
                b.upsert(&Document::item(&format!("K{i:05}"), 1, meta, false))
                    .unwrap();
            }
            b.commit().unwrap();
        }
        index
    }

    /// chunk id → vector blob, every vector of the index.
    fn vectors(index: &Index) -> std::collections::BTreeMap<i64, Vec<u8>> {
        let mut stmt = index
            .conn
            .prepare("SELECT chunk_id, vector FROM vectors")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    }

    /// The stand-in encoder, which records how many calls run at once and, until two have
    /// (or 20 s passed, for a defect to fail rather than hang), holds each call.
    struct Gate {
        inner: SynonymEncoder,
        running: AtomicUsize,
        most: Mutex<usize>,
        two_seen: Condvar,
    }

    impl Encoder for Gate {
        fn identity(&self) -> ModelIdentity {
            self.inner.identity()
        }
        fn dims(&self) -> usize {
            self.inner.dims()
        }
        fn encode(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EncodeError> {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            {
                let mut most = self.most.lock().unwrap();
                *most = (*most).max(now);
                self.two_seen.notify_all();
                let _unused = self
                    .two_seen
                    .wait_timeout_while(most, Duration::from_secs(20), |m| *m < 2)
                    .unwrap();
            }
            let out = self.inner.encode(texts);
            self.running.fetch_sub(1, Ordering::SeqCst);
            out
        }
    }

    /// Every chunk gets the vector the one-batch-at-a-time path gives it, with two encoder
    /// calls at once (the gate holds the first until a second runs: a sequential loop
    /// would be seen waiting 20 s and fail).
    #[test]
    fn every_chunk_gets_its_vector_from_encoders_running_at_once() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut sequential = index_of(a.path(), 150);
        let mut overlapped = index_of(b.path(), 150);
        let enc = SynonymEncoder::default();
        sequential
            .updater()
            .unwrap()
            .embed_pending(&enc, 32, usize::MAX)
            .unwrap();
        let gate = Arc::new(Gate {
            inner: enc,
            running: AtomicUsize::new(0),
            most: Mutex::new(0),
            two_seen: Condvar::new(),
        });
        let plan = EmbedPlan {
            window: 100,
            batch_chars: 2_000,
            batch_chunks: 16,
            workers: 2,
        };
        let mut commits = 0;
        let n = overlapped
            .updater()
            .unwrap()
            .embed_pending_overlapped(gate.as_ref(), plan, |_| {
                commits += 1;
                true
            })
            .unwrap();
        let (total, with_vectors) = overlapped.counts().unwrap();
        assert_eq!((n as u64, with_vectors), (total, total));
        assert!(commits > 10, "{commits} commits");
        assert_eq!(*gate.most.lock().unwrap(), 2, "two encoder calls at once");
        assert_eq!(vectors(&overlapped), vectors(&sequential));
    }

    /// Told to stop after the first commit, no other batch starts: what was committed
    /// stays, and the next call embeds the rest.
    #[test]
    fn a_stop_starts_no_new_batch_and_the_next_call_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = index_of(dir.path(), 60);
        let enc = SynonymEncoder::default();
        let plan = EmbedPlan {
            window: 40,
            batch_chars: 1_000,
            batch_chunks: 8,
            workers: 1,
        };
        let mut up = index.updater().unwrap();
        let mut commits = 0;
        let first = up
            .embed_pending_overlapped(&enc, plan, |_| {
                commits += 1;
                false
            })
            .unwrap();
        // The batch told about, and at most the two already handed out (2 × workers).
        assert!(
            commits <= 2 && first <= 16,
            "{commits} commits, {first} chunks"
        );
        let rest = up.embed_pending_overlapped(&enc, plan, |_| true).unwrap();
        drop(up);
        let (total, with_vectors) = index.counts().unwrap();
        assert_eq!((first + rest) as u64, total);
        assert_eq!(with_vectors, total);
    }

    fn chunk(id: i64, len: usize) -> PendingChunk {
        PendingChunk {
            id,
            matched: Matched::Abstract,
            text: "x".repeat(len),
        }
    }

    #[test]
    fn batches_hold_similar_lengths_within_their_bounds() {
        let chunks = vec![
            chunk(1, 900),
            chunk(2, 10),
            chunk(3, 500),
            chunk(4, 12),
            chunk(5, 3_000),
            chunk(6, 11),
        ];
        let batches = batches_by_length(chunks, 1_000, 2);
        let ids: Vec<Vec<i64>> = batches
            .iter()
            .map(|b| b.iter().map(|c| c.id).collect())
            .collect();
        // Shortest first, two at most, 1,000 characters at most, the long one alone.
        assert_eq!(ids, [vec![2, 6], vec![4, 3], vec![1], vec![5]]);
    }
}
