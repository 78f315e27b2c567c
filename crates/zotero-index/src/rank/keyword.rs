//! The keyword signal: BM25 over the FTS5 table, the filters as SQL, and a shortcut for
//! queries whose words are in most rows.

use rusqlite::types::Value;
use rusqlite::{params_from_iter, OptionalExtension};

use crate::error::Result;
use crate::store::Index;

use super::fuse::Candidate;
use super::query::Filters;

/// The SQL condition and parameters of `filters`, over `d` (the chunk's document) and `it`
/// (its top-level item's document, LEFT JOINed).
pub(crate) fn filter_sql(filters: &Filters) -> (String, Vec<Value>) {
    let mut cond = Vec::new();
    let mut params = Vec::new();
    if !filters.include_trashed {
        cond.push("d.deleted = 0 AND COALESCE(it.deleted, 0) = 0".to_string());
    }
    if let Some(t) = &filters.item_type {
        cond.push("it.item_type = ?".to_string());
        params.push(Value::Text(t.clone()));
    }
    let enclosed = |s: &str| Value::Text(format!("\u{1f}{s}\u{1f}"));
    if let Some(c) = &filters.collection_key {
        cond.push("instr(it.collections, ?) > 0".to_string());
        params.push(enclosed(c));
    }
    for t in &filters.tags {
        cond.push("instr(it.tags, ?) > 0".to_string());
        params.push(enclosed(t));
    }
    if let Some(y) = filters.year_from {
        cond.push("it.year >= ?".to_string());
        params.push(Value::Integer(i64::from(y)));
    }
    if let Some(y) = filters.year_to {
        cond.push("it.year <= ?".to_string());
        params.push(Value::Integer(i64::from(y)));
    }
    if cond.is_empty() {
        cond.push("1".to_string());
    }
    (cond.join(" AND "), params)
}

/// FTS5's BM25 (k1 = 1.2, b = 0.75, IDF log((N − n + ½)/(n + ½))), negative (lower is
/// better), with a weight per column (title, meta, body): a word of the title counts as
/// twice (chosen on the test collection, see the crate's README).
pub(crate) const BM25: &str = "bm25(chunks_fts, 2.0, 1.0, 1.0)";

/// The keyword rows a query is limited to: rowids from the first to the second, both
/// included; `None` for all.
pub(crate) type RowRange = Option<(i64, i64)>;

/// The SQL limiting `column` (a keyword rowid) to `rows`, and its parameters.
fn range_sql(column: &str, rows: RowRange) -> (String, Vec<Value>) {
    match rows {
        Some((first, last)) => (
            format!(" AND {column} BETWEEN ? AND ?"),
            vec![Value::Integer(first), Value::Integer(last)],
        ),
        None => (String::new(), Vec::new()),
    }
}

/// Rowids up to `last` in `parts` ranges of about equal length, the first from the least
/// rowid, the last to the greatest.
pub(crate) fn split_rowids(last: i64, parts: usize) -> Vec<RowRange> {
    let n = i64::try_from(parts.max(1)).unwrap_or(1);
    let step = last / n + 1;
    (0..n)
        .map(|i| {
            let first = if i == 0 { i64::MIN } else { i * step };
            let end = if i == n - 1 {
                i64::MAX
            } else {
                (i + 1) * step - 1
            };
            Some((first, end))
        })
        .collect()
}

/// The best `candidates` of the keyword parts' answers (each best first), in the order one
/// query over all their rows gives: by score, then rowid. One part is answered as it is.
pub(crate) fn merge_parts(mut parts: Vec<Vec<Candidate>>, candidates: usize) -> Vec<Candidate> {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut all: Vec<Candidate> = parts.into_iter().flatten().collect();
    all.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    all.truncate(candidates);
    all
}

pub(crate) const JOINS: &str = "JOIN documents d ON d.id = c.doc_id
    LEFT JOIN documents it ON it.key = c.item_key AND it.kind IN ('item', 'note')";

impl Index {
    /// The best `candidates` chunks by BM25 for the query's pieces (see `fts_pieces`).
    ///
    /// FTS5's BM25 gives a piece found in more than half the rows an IDF of 1e-6 (it clamps
    /// log((N − n + ½)/(n + ½)) ≤ 0): such a piece ("the", "and", "of") moves no score, but
    /// makes the query read and score nearly every row (230 ms at 157,000 chunks where the
    /// rare pieces alone take a few). So the pieces that common are left out as long as
    /// the others find at least `candidates` chunks, which then rank as they would with
    /// them; otherwise, or when every piece is that common, all pieces are searched.
    #[cfg(test)]
    pub(crate) fn keyword_candidates(
        &self,
        pieces: &[String],
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
    ) -> Result<Vec<Candidate>> {
        self.keyword_candidates_in(pieces, cond, filter_params, candidates, None)
    }

    /// [`Index::keyword_candidates`] among the keyword rows of `range` only (all when
    /// `None`): the best `candidates` of those rows, each scored as over all rows (BM25's
    /// IDF and mean row length are the whole table's).
    pub(crate) fn keyword_candidates_in(
        &self,
        pieces: &[String],
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        range: RowRange,
    ) -> Result<Vec<Candidate>> {
        if pieces.is_empty() {
            return Ok(Vec::new());
        }
        if pieces.len() > 1 {
            self.words_view()?;
            let rows = self.keyword_rows()?;
            let mut rare = Vec::with_capacity(pieces.len());
            for p in pieces {
                if !self.in_most_rows(p, rows)? {
                    rare.push(p.as_str());
                }
            }
            if !rare.is_empty() && rare.len() < pieces.len() {
                let found = self.keyword_query_in(
                    &rare.join(" OR "),
                    cond,
                    filter_params,
                    candidates,
                    range,
                )?;
                if found.len() >= candidates {
                    return Ok(found);
                }
            }
        }
        self.keyword_query_in(&pieces.join(" OR "), cond, filter_params, candidates, range)
    }

    /// How many rows the keyword index has (an item is one, each other chunk one): read
    /// from the count of its row sizes, which SQLite counts from the table's pages.
    pub(crate) fn keyword_rows(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM chunks_fts_docsize")?
            .query_row([], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    /// Whether the quoted `piece` is one word found in more than half of the `rows`
    /// rows of the keyword index. Only a piece of ASCII letters and digits is looked up (it
    /// is one token, and its token is its lowercase, unless stemming changes it: then it
    /// is not found and taken as rare, as is any other piece, which costs time, never
    /// ranking). Needs [`Index::words_view`] first.
    /// Makes `temp.chunks_words`: the keyword index's words and how many rows hold each
    /// (`fts5vocab`), for this connection only (a temporary table: the file is not written).
    pub(crate) fn words_view(&self) -> Result<()> {
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_words
             USING fts5vocab(main, chunks_fts, row)",
        )?;
        Ok(())
    }

    pub(crate) fn in_most_rows(&self, piece: &str, rows: u64) -> Result<bool> {
        let word = piece.trim_matches('"');
        if word.is_empty() || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(false);
        }
        let doc: Option<i64> = self
            .conn
            .prepare_cached("SELECT doc FROM temp.chunks_words WHERE term = ?1")?
            .query_row([word.to_ascii_lowercase()], |r| r.get(0))
            .optional()?;
        Ok(doc.is_some_and(|d| d.max(0) as u64 * 2 > rows))
    }

    /// The best `candidates` chunks by BM25 for the FTS5 expression `expr` that pass the
    /// filters. The best rows are found in the FTS table alone (four times as many as asked
    /// when there are filters), and only they are looked up and filtered: that is exact
    /// once `candidates` of them pass (any row after them ranks lower), which the usual
    /// filter (not in the trash) nearly always allows. Only when too few pass is every
    /// match joined and filtered ([`Index::keyword_query_joined`]).
    #[cfg(test)]
    pub(crate) fn keyword_query(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
    ) -> Result<Vec<Candidate>> {
        self.keyword_query_in(expr, cond, filter_params, candidates, None)
    }

    /// [`Index::keyword_query`] among the keyword rows of `rows` only.
    pub(crate) fn keyword_query_in(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        rows: RowRange,
    ) -> Result<Vec<Candidate>> {
        let unfiltered = cond == "1";
        let (within, bounds) = range_sql("rowid", rows);
        let read = if unfiltered {
            candidates
        } else {
            candidates.saturating_mul(4)
        };
        let sql = format!(
            "SELECT c.id, c.item_key, -t.score FROM
               (SELECT rowid AS id, {BM25} AS score FROM chunks_fts
                WHERE chunks_fts MATCH ?{within} ORDER BY score, rowid LIMIT ?) t
             JOIN chunks c ON c.id = t.id {JOINS}
             WHERE {cond} ORDER BY t.score, t.id LIMIT ?"
        );
        let params = std::iter::once(Value::Text(expr.to_string()))
            .chain(bounds.clone())
            .chain(std::iter::once(Value::Integer(
                read.min(i64::MAX as usize) as i64
            )))
            .chain(filter_params.iter().cloned())
            .chain(std::iter::once(Value::Integer(candidates as i64)));
        let found = self.candidates_of(&sql, params)?;
        // Without filters, fewer than asked means the matches ran out.
        if unfiltered || found.len() >= candidates {
            return Ok(found);
        }
        self.keyword_query_joined_in(expr, cond, filter_params, candidates, rows)
    }

    /// [`Index::keyword_query`] by joining and filtering every match before ranking.
    #[cfg(test)]
    pub(crate) fn keyword_query_joined(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
    ) -> Result<Vec<Candidate>> {
        self.keyword_query_joined_in(expr, cond, filter_params, candidates, None)
    }

    fn keyword_query_joined_in(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        rows: RowRange,
    ) -> Result<Vec<Candidate>> {
        let (within, bounds) = range_sql("f.rowid", rows);
        let sql = format!(
            "SELECT c.id, c.item_key, -{BM25} AS score
             FROM chunks_fts f JOIN chunks c ON c.id = f.rowid {JOINS}
             WHERE chunks_fts MATCH ?{within} AND {cond}
             ORDER BY score DESC, c.id LIMIT ?"
        );
        let params = std::iter::once(Value::Text(expr.to_string()))
            .chain(bounds)
            .chain(filter_params.iter().cloned())
            .chain(std::iter::once(Value::Integer(candidates as i64)));
        self.candidates_of(&sql, params)
    }

    fn candidates_of(
        &self,
        sql: &str,
        params: impl Iterator<Item = Value>,
    ) -> Result<Vec<Candidate>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params_from_iter(params), |r| {
            Ok(Candidate {
                chunk_id: r.get(0)?,
                item_key: r.get(1)?,
                score: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
