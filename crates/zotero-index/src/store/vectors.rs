//! The vectors of an index: the chunks still without one, writing them, computing them
//! with an encoder, and dropping them for another model.

use rusqlite::{params, TransactionBehavior};

use crate::chunk::Matched;
use crate::encoder::{Encoder, ModelIdentity};
use crate::error::{IndexError, Result};

use super::document::PendingChunk;
use super::schema::{bump_generation, read_model, write_model};
use super::update::Updater;
use crate::blob::vector_blob;

impl Updater<'_> {
    /// Up to `limit` chunks without a vector, those describing items first, then notes
    /// and annotations, then full text.
    pub fn pending_vectors(&self, limit: usize) -> Result<Vec<PendingChunk>> {
        let conn = &self.index.conn;
        let run = || -> Result<Vec<PendingChunk>> {
            let mut stmt = conn.prepare(
                "SELECT id, matched, text FROM chunks INDEXED BY chunks_pending
                 WHERE embedded = 0 ORDER BY priority, id LIMIT ?1",
            )?;
            let rows = stmt.query_map([limit.min(i64::MAX as usize) as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, matched, text) = row?;
                out.push(PendingChunk {
                    id,
                    matched: Matched::parse(&matched).unwrap_or(Matched::Fulltext),
                    text,
                });
            }
            Ok(out)
        };
        run().map_err(|e| e.at(&self.index.path))
    }

    /// Stores vectors of `model` for chunks (by id) in one transaction. The first vectors
    /// record the model; vectors of another model than the recorded one are refused
    /// ([`IndexError::ModelMismatch`]: [`Updater::reset_vectors`] first).
    pub fn write_vectors(
        &mut self,
        model: &ModelIdentity,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<()> {
        self.index.check_model(model)?;
        let path = self.index.path.clone();
        let mut run = || -> Result<()> {
            let tx = self
                .index
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            if read_model(&tx)?.is_none() {
                write_model(&tx, model)?;
            }
            {
                let mut stmt = tx.prepare(
                    "INSERT OR REPLACE INTO vectors (chunk_id, doc_id, vector)
                     SELECT id, doc_id, ?2 FROM chunks WHERE id = ?1",
                )?;
                let mut mark = tx.prepare("UPDATE chunks SET embedded = 1 WHERE id = ?1")?;
                for (id, v) in vectors {
                    if v.len() != model.dims {
                        return Err(IndexError::Encode(crate::encoder::EncodeError(format!(
                            "the model {} gave a vector of {} values, not {}",
                            model.id,
                            v.len(),
                            model.dims
                        ))));
                    }
                    stmt.execute(params![id, vector_blob(v)])?;
                    mark.execute([id])?;
                }
            }
            bump_generation(&tx)?;
            tx.commit()?;
            Ok(())
        };
        run().map_err(|e| e.at(&path))
    }

    /// Computes vectors for up to `max_chunks` chunks lacking one, `batch` at a time, each
    /// batch committed on its own (so that a long run can be stopped and resumed).
    /// Answers how many chunks got a vector.
    pub fn embed_pending(
        &mut self,
        encoder: &dyn Encoder,
        batch: usize,
        max_chunks: usize,
    ) -> Result<usize> {
        let model = encoder.identity();
        self.index.check_model(&model)?;
        let mut done = 0;
        while done < max_chunks {
            let pending = self.pending_vectors(batch.max(1).min(max_chunks - done))?;
            if pending.is_empty() {
                break;
            }
            let texts: Vec<&str> = pending.iter().map(|p| p.text.as_str()).collect();
            let vectors = encoder.encode(&texts)?;
            if vectors.len() != pending.len() {
                return Err(IndexError::Encode(crate::encoder::EncodeError(format!(
                    "the encoder answered {} vectors for {} texts",
                    vectors.len(),
                    pending.len()
                ))));
            }
            let batch: Vec<(i64, Vec<f32>)> = pending.iter().map(|p| p.id).zip(vectors).collect();
            self.write_vectors(&model, &batch)?;
            done += batch.len();
        }
        Ok(done)
    }

    /// Drops every vector and records `model` as the index's model: the way to change
    /// models. Keyword search keeps working while the vectors are recomputed.
    pub fn reset_vectors(&mut self, model: &ModelIdentity) -> Result<()> {
        let path = self.index.path.clone();
        let mut run = || -> Result<()> {
            let tx = self
                .index
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("UPDATE chunks SET embedded = 0 WHERE embedded = 1", [])?;
            tx.execute("DELETE FROM vectors", [])?;
            write_model(&tx, model)?;
            bump_generation(&tx)?;
            tx.commit()?;
            Ok(())
        };
        run().map_err(|e| e.at(&path))
    }
}
