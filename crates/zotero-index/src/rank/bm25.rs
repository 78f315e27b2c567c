//! The keyword signal scored in memory ([`crate::kwcache`]): the same chunks, scores and
//! order as the FTS5 queries of `keyword` (`bm25(chunks_fts, 2.0, 1.0, 1.0)`), bit for bit,
//! including its leaving out of words in most rows, without FTS5 probing the row-size
//! table for each row that holds a query word.
//!
//! FTS5's formula (`fts5Bm25Function`), for each phrase i of the query in order:
//! `score += idf_i · (f_i · (k1 + 1)) / (f_i + k1 · (1 − b + b · D / avgdl))`, with `f_i`
//! the row's instances of the phrase weighted by column, `D` the row's tokens, `avgdl` the
//! table's tokens over its rows, `idf_i = ln((N − n_i + ½)/(n_i + ½))` (1e-6 when ≤ 0),
//! `n_i` the rows holding the phrase. Here each phrase is one term, its postings added
//! term by term into one accumulator per row: a row lacking a term adds 0.0 where FTS5
//! adds 0.0, so every sum is made of the same terms in the same order.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use crate::error::Result;
use crate::kwcache::{KeywordCache, Postings, Stats, K1};
use crate::store::Index;

use super::fuse::Candidate;
use super::keyword::JOINS;

/// Chunk ids looked up and filtered in one statement.
const BATCH: usize = 1024;

impl Index {
    /// [`Index::keyword_candidates_in`] over all rows, scored in memory with `cache`;
    /// `tokens` are the pieces' tokens ([`KeywordCache::tokens`]). `None` when the file's
    /// keyword index cannot be read as FTS5 reads it (FTS5 then answers, or says what is
    /// wrong).
    pub(crate) fn keyword_in_memory(
        &self,
        pieces: &[String],
        tokens: &[String],
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        cache: &KeywordCache,
    ) -> Result<Option<Vec<Candidate>>> {
        if pieces.is_empty() {
            return Ok(Some(Vec::new()));
        }
        self.instances_view()?;
        self.words_view()?;
        // One read transaction: the key, the rows, the postings and the filters are of one
        // committed state.
        let tx = self.conn.unchecked_transaction()?;
        let Some(stats) = self.keyword_stats_kept(cache)? else {
            return Ok(None);
        };
        let search = Search {
            index: self,
            cache,
            stats: &stats,
            cond,
            filter_params,
            candidates,
        };
        // As `keyword_candidates_in`: the words in most rows are left out while the others
        // find enough chunks.
        if pieces.len() > 1 {
            let rows = stats.len() as u64;
            let mut rare = Vec::with_capacity(pieces.len());
            for (p, t) in pieces.iter().zip(tokens) {
                if !search.in_most_rows(p, t, rows)? {
                    rare.push(t.clone());
                }
            }
            if !rare.is_empty() && rare.len() < pieces.len() {
                let Some(found) = search.query(&rare)? else {
                    return Ok(None);
                };
                if found.len() >= candidates {
                    tx.commit()?;
                    return Ok(Some(found));
                }
            }
        }
        let found = search.query(tokens)?;
        tx.commit()?;
        Ok(found)
    }

    /// The FTS5 query of `keyword_query` for the phrases `tokens` (all of them), scored in
    /// memory.
    #[cfg(test)]
    pub(crate) fn keyword_query_in_memory(
        &self,
        tokens: &[String],
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        cache: &KeywordCache,
    ) -> Result<Option<Vec<Candidate>>> {
        self.instances_view()?;
        let tx = self.conn.unchecked_transaction()?;
        let Some(stats) = self.keyword_stats_kept(cache)? else {
            return Ok(None);
        };
        let search = Search {
            index: self,
            cache,
            stats: &stats,
            cond,
            filter_params,
            candidates,
        };
        let found = search.query(tokens)?;
        tx.commit()?;
        Ok(found)
    }

    /// The rows' statistics of the state now: kept in `cache`, else read (and kept).
    /// Inside the search's read transaction.
    fn keyword_stats_kept(&self, cache: &KeywordCache) -> Result<Option<Arc<Stats>>> {
        let Some(key) = self.keyword_key()? else {
            return Ok(None);
        };
        if let Some(s) = cache.stats(&self.path, &key) {
            return Ok(Some(s));
        }
        let Some(s) = self.keyword_stats(key)? else {
            return Ok(None);
        };
        let s = Arc::new(s);
        cache.keep_stats(&self.path, Arc::clone(&s));
        Ok(Some(s))
    }
}

struct Search<'a> {
    index: &'a Index,
    cache: &'a KeywordCache,
    stats: &'a Stats,
    cond: &'a str,
    filter_params: &'a [Value],
    candidates: usize,
}

impl Search<'_> {
    /// `Index::in_most_rows` for the piece whose token is `token`: the piece's lowercase
    /// is looked up, as there (the token itself when it is that).
    fn in_most_rows(&self, piece: &str, token: &str, rows: u64) -> Result<bool> {
        let word = piece.trim_matches('"');
        if word.is_empty() || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(false);
        }
        let word = word.to_ascii_lowercase();
        let path = &self.index.path;
        let n = match self.cache.doc_count(path, self.stats, &word) {
            Some(n) => n,
            None => {
                let n = if word == token {
                    match self.postings_if_kept(token) {
                        Some(p) => p.len() as u64,
                        None => self.index.term_rows(&word)?,
                    }
                } else {
                    self.index.term_rows(&word)?
                };
                self.cache.keep_doc_count(path, self.stats, &word, n);
                n
            }
        };
        Ok(n * 2 > rows)
    }

    fn postings_if_kept(&self, term: &str) -> Option<Arc<Postings>> {
        self.cache.postings(&self.index.path, self.stats, term)
    }

    fn postings(&self, term: &str) -> Result<Option<Arc<Postings>>> {
        if let Some(p) = self.postings_if_kept(term) {
            return Ok(Some(p));
        }
        let Some(p) = self.index.keyword_postings(self.stats, term)? else {
            return Ok(None);
        };
        let p = Arc::new(p);
        self.cache
            .keep_postings(&self.index.path, self.stats, term, Arc::clone(&p));
        Ok(Some(p))
    }

    /// `Index::keyword_query_in` (all rows) for the phrases `terms`, in order.
    fn query(&self, terms: &[String]) -> Result<Option<Vec<Candidate>>> {
        let mut lists = Vec::with_capacity(terms.len());
        for t in terms {
            match self.postings(t)? {
                Some(p) => lists.push(p),
                None => return Ok(None),
            }
        }
        let n_row = self.stats.n_row;
        if n_row <= 0 && lists.iter().any(|p| p.len() > 0) {
            // FTS5 finds the table corrupt: it says so.
            return Ok(None);
        }
        let path = &self.index.path;
        let mut acc = self.cache.scratch(path, self.stats.len());
        let mut touched: Vec<u32> = Vec::new();
        for p in &lists {
            let n_hit = p.len() as i64;
            let mut idf = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
            if idf <= 0.0 {
                idf = 1e-6;
            }
            for (&slot, &f) in p.slots.iter().zip(&p.freqs) {
                let (Some(a), Some(&norm)) = (
                    acc.get_mut(slot as usize),
                    self.stats.norm.get(slot as usize),
                ) else {
                    continue;
                };
                if *a == 0.0 {
                    touched.push(slot);
                }
                *a += idf * ((f * (K1 + 1.0)) / (f + norm));
            }
        }
        let mut ranked: Vec<(f64, i64)> = Vec::with_capacity(touched.len());
        for &slot in &touched {
            if let (Some(a), Some(&rowid)) = (
                acc.get_mut(slot as usize),
                self.stats.rowids.get(slot as usize),
            ) {
                ranked.push((*a, rowid));
                *a = 0.0;
            }
        }
        self.cache.keep_scratch(path, self.stats, acc);
        self.best(ranked).map(Some)
    }

    /// The best `candidates` of `ranked` (score, rowid) that pass the filters, in FTS5's
    /// order (score, then rowid): as `keyword_query_in`, the best rows (four times as many
    /// with filters) are filtered first; with filters, when too few pass, the next ones in
    /// turn, which is what filtering every match first gives.
    fn best(&self, mut ranked: Vec<(f64, i64)>) -> Result<Vec<Candidate>> {
        let order = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        let unfiltered = self.cond == "1";
        let first = if unfiltered {
            self.candidates
        } else {
            self.candidates.saturating_mul(4)
        };
        let mut out = Vec::new();
        if first < ranked.len() && first > 0 {
            ranked.select_nth_unstable_by(first - 1, order);
            let (head, _) = ranked.split_at_mut(first);
            head.sort_unstable_by(order);
        } else {
            ranked.sort_unstable_by(order);
        }
        let head = ranked.get(..first.min(ranked.len())).unwrap_or_default();
        self.pass(head, &mut out)?;
        if unfiltered || out.len() >= self.candidates || first >= ranked.len() {
            out.truncate(self.candidates);
            return Ok(out);
        }
        let rest = ranked.get_mut(first..).unwrap_or_default();
        rest.sort_unstable_by(order);
        for batch in rest.chunks(BATCH) {
            self.pass(batch, &mut out)?;
            if out.len() >= self.candidates {
                break;
            }
        }
        out.truncate(self.candidates);
        Ok(out)
    }

    /// Appends the chunks of `rows` (in order) that pass the filters, as candidates.
    fn pass(&self, rows: &[(f64, i64)], out: &mut Vec<Candidate>) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let ids = format!(
            "[{}]",
            rows.iter()
                .map(|(_, id)| id.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let sql = format!(
            "SELECT c.id, c.item_key FROM chunks c {JOINS}
             WHERE c.id IN (SELECT value FROM json_each(?)) AND {}",
            self.cond
        );
        let mut stmt = self.index.conn.prepare_cached(&sql)?;
        let params = std::iter::once(Value::Text(ids)).chain(self.filter_params.iter().cloned());
        let mut keys: HashMap<i64, Vec<String>> = HashMap::new();
        let found = stmt.query_map(params_from_iter(params), |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        for f in found {
            let (id, key) = f?;
            keys.entry(id).or_default().push(key);
        }
        for &(score, id) in rows {
            for key in keys.remove(&id).unwrap_or_default() {
                out.push(Candidate {
                    chunk_id: id,
                    item_key: key,
                    score,
                });
            }
        }
        Ok(())
    }
}
