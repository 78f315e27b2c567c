//! Answering a query: BM25 over the FTS5 table and cosine over the stored vectors, each
//! giving a ranked list of chunks, fused by reciprocal rank (`k` = [`RRF_K`]), then
//! grouped by item (one hit per item, its best chunks as passages).
//!
//! Scores: a chunk's fused score is Σ 1/(k + rank) over the signals used, divided by its
//! highest possible value (first in every signal), so 1.0 means "first by every signal";
//! an item's score is its best chunk's. Vectors are scanned as they are read (no copy of
//! the vector table in memory), keeping the best candidates in a heap: ten chunks per hit
//! asked for, at least [`CANDIDATES`] (several chunks of one long text may come first).
//! With a [`VectorCache`] ([`Index::search_cached`]) an int8 copy in memory is scanned
//! instead, for [`crate::vcache::OVERSAMPLE`] times as many, which are then scored exactly
//! from the stored vectors: the same candidates in the same order, in a few milliseconds.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use rusqlite::types::Value;
use rusqlite::{params_from_iter, OptionalExtension};

use crate::chunk::Matched;
use crate::encoder::Encoder;
use crate::error::{IndexError, Result};
use crate::blob::blob_value;
use crate::store::{fts_pieces, Index};
use crate::vcache::{DocSet, VectorCache, OVERSAMPLE};

/// The reciprocal rank fusion constant of Cormack et al. (2009).
pub const RRF_K: f64 = 60.0;
/// The fewest chunks each signal contributes to the fusion (ten per hit asked for when
/// that is more).
pub const CANDIDATES: usize = 200;
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 100;
/// The most passages a hit carries, and the most characters in each.
pub const MAX_PASSAGES: usize = 3;
pub const PASSAGE_MAX_CHARS: usize = 400;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Words and meaning, fused; words only when no vectors can be used (the answer says so).
    #[default]
    Hybrid,
    /// Meaning only; an error when it cannot be done.
    Semantic,
    /// Words only (BM25).
    Keyword,
}

/// What hits must be. All given filters must hold; they apply to the top-level item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    pub item_type: Option<String>,
    pub collection_key: Option<String>,
    /// Every one of these tags.
    pub tags: Vec<String>,
    pub year_from: Option<i32>,
    pub year_to: Option<i32>,
    /// Items in the trash (and trashed notes or annotations) are left out unless this is set.
    pub include_trashed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub text: String,
    pub mode: Mode,
    pub filters: Filters,
    /// How many hits (items); 0 means [`DEFAULT_LIMIT`], more than [`MAX_LIMIT`] is cut.
    pub limit: usize,
}

impl SearchQuery {
    pub fn new(text: &str) -> Self {
        SearchQuery {
            text: text.to_string(),
            mode: Mode::default(),
            filters: Filters::default(),
            limit: DEFAULT_LIMIT,
        }
    }

    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }
}

/// How much of the index can be searched by meaning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub chunks_total: u64,
    pub chunks_with_vectors: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchAnswer {
    pub hits: Vec<Hit>,
    pub mode: Mode,
    /// Whether vectors took part; when not in hybrid mode, `semantic_note` says why.
    pub semantic_used: bool,
    pub semantic_note: Option<String>,
    pub coverage: Coverage,
}

/// One item found.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub item_key: String,
    pub title: String,
    pub creators: String,
    pub year: Option<i32>,
    pub item_type: String,
    /// In [0, 1]: 1 is first by every signal used.
    pub score: f64,
    /// The item's rank (from 1) among items found by words, by meaning; `None` when that
    /// signal did not find it (or was not used).
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// What matched, over all the item's chunks found, in [`Matched`] order.
    pub matched: Vec<Matched>,
    /// Up to [`MAX_PASSAGES`], best first.
    pub passages: Vec<HitPassage>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HitPassage {
    pub matched: Matched,
    /// The object the text is from: the item, note, annotation, or attachment (full text).
    pub doc_key: String,
    /// At most [`PASSAGE_MAX_CHARS`] characters of the chunk, around the first word of the
    /// query found in it.
    pub text: String,
    /// Where `text` starts, in characters of the source (a note's Markdown, an attachment's
    /// full text), when the chunk has offsets.
    pub source_offset: Option<u64>,
    /// For full text: the `offset` to give `zotero_get_item_fulltext` with `doc_key`.
    pub fulltext_offset: Option<u64>,
    pub score: f64,
}

/// A chunk a signal found, in that signal's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub chunk_id: i64,
    pub item_key: String,
}

/// A chunk after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub chunk_id: i64,
    pub item_key: String,
    /// In [0, 1].
    pub score: f64,
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
}

/// Fuses two ranked chunk lists by reciprocal rank; `signals` is how many lists were
/// searched (1 or 2), which sets the best possible score. Best first; a chunk appearing
/// twice in a list counts at its first place.
pub fn fuse(keyword: &[Candidate], semantic: &[Candidate], signals: usize) -> Vec<Fused> {
    let best = signals.max(1) as f64 / (RRF_K + 1.0);
    let mut by_chunk: HashMap<i64, Fused> = HashMap::new();
    for (list, is_keyword) in [(keyword, true), (semantic, false)] {
        for (i, c) in list.iter().enumerate() {
            let f = by_chunk.entry(c.chunk_id).or_insert_with(|| Fused {
                chunk_id: c.chunk_id,
                item_key: c.item_key.clone(),
                score: 0.0,
                keyword_rank: None,
                semantic_rank: None,
            });
            let rank = if is_keyword {
                &mut f.keyword_rank
            } else {
                &mut f.semantic_rank
            };
            if rank.is_none() {
                *rank = Some(i + 1);
                f.score += 1.0 / (RRF_K + (i + 1) as f64);
            }
        }
    }
    let mut out: Vec<Fused> = by_chunk
        .into_values()
        .map(|mut f| {
            f.score = (f.score / best).clamp(0.0, 1.0);
            f
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    out
}

/// The chunks of one item after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub item_key: String,
    /// Its best chunk's score.
    pub score: f64,
    /// The item's place among items in each signal's list.
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// All its chunks, best first.
    pub chunks: Vec<Fused>,
}

fn item_ranks(list: &[Candidate]) -> HashMap<&str, usize> {
    let mut ranks = HashMap::new();
    for c in list {
        let next = ranks.len() + 1;
        ranks.entry(c.item_key.as_str()).or_insert(next);
    }
    ranks
}

/// Groups fused chunks by item: one group per item, best first (ties by item key).
pub fn group(fused: Vec<Fused>, keyword: &[Candidate], semantic: &[Candidate]) -> Vec<Group> {
    let (kw, sem) = (item_ranks(keyword), item_ranks(semantic));
    let mut groups: Vec<Group> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    // `fused` is best first, so each group's first chunk is its best.
    for f in fused {
        match at.get(&f.item_key).and_then(|&i| groups.get_mut(i)) {
            Some(g) => g.chunks.push(f),
            None => {
                at.insert(f.item_key.clone(), groups.len());
                groups.push(Group {
                    item_key: f.item_key.clone(),
                    score: f.score,
                    keyword_rank: kw.get(f.item_key.as_str()).copied(),
                    semantic_rank: sem.get(f.item_key.as_str()).copied(),
                    chunks: vec![f],
                });
            }
        }
    }
    for g in &mut groups {
        g.score = g.chunks.iter().map(|c| c.score).fold(0.0, f64::max);
    }
    groups.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.item_key.cmp(&b.item_key))
    });
    groups
}

/// The SQL condition and parameters of `filters`, over `d` (the chunk's document) and `it`
/// (its top-level item's document, LEFT JOINed).
fn filter_sql(filters: &Filters) -> (String, Vec<Value>) {
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

const JOINS: &str = "JOIN documents d ON d.id = c.doc_id
    LEFT JOIN documents it ON it.key = c.item_key AND it.kind IN ('item', 'note')";

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
fn blob_dot(query: &[f32], blob: &[u8]) -> Option<f32> {
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
struct Scan<'a> {
    cond: &'a str,
    filter_params: &'a [Value],
    candidates: usize,
}

impl Index {
    /// Searches the index; `encoder` (the model that made the stored vectors) is needed for
    /// meaning, and without it hybrid search is by words only.
    pub fn search(
        &self,
        encoder: Option<&dyn Encoder>,
        query: &SearchQuery,
    ) -> Result<SearchAnswer> {
        self.search_inner(encoder, query, None)
            .map_err(|e| e.at(&self.path))
    }

    /// [`Index::search`], scanning the copy of the vectors in `cache` (loaded or reloaded
    /// when it is missing or stale) rather than the vector table; the exact scan when the
    /// copy would not fit in the cache's budget. The answer is the same.
    pub fn search_cached(
        &self,
        encoder: Option<&dyn Encoder>,
        query: &SearchQuery,
        cache: &VectorCache,
    ) -> Result<SearchAnswer> {
        self.search_inner(encoder, query, Some(cache))
            .map_err(|e| e.at(&self.path))
    }

    fn search_inner(
        &self,
        encoder: Option<&dyn Encoder>,
        query: &SearchQuery,
        cache: Option<&VectorCache>,
    ) -> Result<SearchAnswer> {
        let (chunks_total, chunks_with_vectors) = self.counts()?;
        let coverage = Coverage {
            chunks_total,
            chunks_with_vectors,
        };
        let want_keyword = query.mode != Mode::Semantic;
        let mut semantic_note = None;
        let encoder = if query.mode == Mode::Keyword {
            None
        } else {
            match self.semantic_ready(encoder, chunks_with_vectors) {
                Ok(e) => Some(e),
                Err(why) => {
                    if query.mode == Mode::Semantic {
                        return Err(IndexError::NoSemantic { why });
                    }
                    semantic_note = Some(why);
                    None
                }
            }
        };
        let limit = match query.limit {
            0 => DEFAULT_LIMIT,
            n => n.min(MAX_LIMIT),
        };
        let (cond, filter_params) = filter_sql(&query.filters);
        let candidates = (limit * 10).max(CANDIDATES);

        let keyword = if want_keyword {
            let pieces = fts_pieces(&query.text);
            self.keyword_candidates(&pieces, &cond, &filter_params, candidates, chunks_total)?
        } else {
            Vec::new()
        };
        let semantic = match encoder {
            Some(e) if !query.text.trim().is_empty() => {
                let cached = cache.map(|c| (c, coverage));
                let scan = Scan {
                    cond: &cond,
                    filter_params: &filter_params,
                    candidates,
                };
                self.semantic_candidates(e, &query.text, &scan, cached)?
            }
            _ => Vec::new(),
        };
        let signals = usize::from(want_keyword) + usize::from(encoder.is_some());
        let groups = group(fuse(&keyword, &semantic, signals), &keyword, &semantic);
        let terms = query_terms(&query.text);
        let mut hits = Vec::new();
        for g in groups.into_iter().take(limit) {
            hits.push(self.hit(g, &terms)?);
        }
        Ok(SearchAnswer {
            hits,
            mode: query.mode,
            semantic_used: encoder.is_some(),
            semantic_note,
            coverage,
        })
    }

    /// The encoder when its vectors can be searched, else why not.
    fn semantic_ready<'e>(
        &self,
        encoder: Option<&'e dyn Encoder>,
        with_vectors: u64,
    ) -> std::result::Result<&'e dyn Encoder, String> {
        let Some(encoder) = encoder else {
            return Err("no sentence model is loaded, so the search is by words only".into());
        };
        match self.check_model(&encoder.identity()) {
            Ok(()) if with_vectors > 0 => Ok(encoder),
            Ok(()) => Err("no vectors are computed yet (run the index update)".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The best `candidates` chunks by BM25 for the query's pieces (see `fts_pieces`).
    ///
    /// FTS5's BM25 gives a piece found in more than half the rows an IDF of 1e-6 (it clamps
    /// log((N − n + ½)/(n + ½)) ≤ 0): such a piece ("the", "and", "of") moves no score, but
    /// makes the query read and score nearly every row (230 ms at 157,000 chunks where the
    /// rare pieces alone take a few). So the pieces that common are left out as long as
    /// the others find at least `candidates` chunks, which then rank as they would with
    /// them; otherwise, or when every piece is that common, all pieces are searched.
    fn keyword_candidates(
        &self,
        pieces: &[String],
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
        rows: u64,
    ) -> Result<Vec<Candidate>> {
        if pieces.is_empty() {
            return Ok(Vec::new());
        }
        if pieces.len() > 1 {
            self.words_view()?;
            let mut rare = Vec::with_capacity(pieces.len());
            for p in pieces {
                if !self.in_most_rows(p, rows)? {
                    rare.push(p.as_str());
                }
            }
            if !rare.is_empty() && rare.len() < pieces.len() {
                let found =
                    self.keyword_query(&rare.join(" OR "), cond, filter_params, candidates)?;
                if found.len() >= candidates {
                    return Ok(found);
                }
            }
        }
        self.keyword_query(&pieces.join(" OR "), cond, filter_params, candidates)
    }

    /// Whether the quoted `piece` is one word found in more than half of the `rows`
    /// chunks. Only a piece of ASCII letters and digits is looked up (it is one token, and
    /// its token is its lowercase); any other is taken as rare, which costs time, never
    /// ranking. Needs [`Index::words_view`] first.
    /// Makes `temp.chunks_words`: the keyword index's words and how many rows hold each
    /// (`fts5vocab`), for this connection only (a temporary table: the file is not written).
    fn words_view(&self) -> Result<()> {
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_words
             USING fts5vocab(main, chunks_fts, row)",
        )?;
        Ok(())
    }

    fn in_most_rows(&self, piece: &str, rows: u64) -> Result<bool> {
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
    fn keyword_query(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
    ) -> Result<Vec<Candidate>> {
        let unfiltered = cond == "1";
        let read = if unfiltered {
            candidates
        } else {
            candidates.saturating_mul(4)
        };
        let sql = format!(
            "SELECT c.id, c.item_key FROM
               (SELECT rowid AS id, bm25(chunks_fts) AS score FROM chunks_fts
                WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) t
             JOIN chunks c ON c.id = t.id {JOINS}
             WHERE {cond} ORDER BY t.score, t.id LIMIT ?"
        );
        let params = [
            Value::Text(expr.to_string()),
            Value::Integer(read.min(i64::MAX as usize) as i64),
        ]
        .into_iter()
        .chain(filter_params.iter().cloned())
        .chain(std::iter::once(Value::Integer(candidates as i64)));
        let found = self.candidates_of(&sql, params)?;
        // Without filters, fewer than asked means the matches ran out.
        if unfiltered || found.len() >= candidates {
            return Ok(found);
        }
        self.keyword_query_joined(expr, cond, filter_params, candidates)
    }

    /// [`Index::keyword_query`] by joining and filtering every match before ranking.
    fn keyword_query_joined(
        &self,
        expr: &str,
        cond: &str,
        filter_params: &[Value],
        candidates: usize,
    ) -> Result<Vec<Candidate>> {
        let sql = format!(
            "SELECT c.id, c.item_key FROM chunks_fts f JOIN chunks c ON c.id = f.rowid {JOINS}
             WHERE chunks_fts MATCH ? AND {cond}
             ORDER BY bm25(chunks_fts), c.id LIMIT ?"
        );
        let params = std::iter::once(Value::Text(expr.to_string()))
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
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn semantic_candidates(
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
        let query = encoder
            .encode(&[text])?
            .into_iter()
            .next()
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
        for Scored(_, id) in best {
            let item_key: String = key_of.query_row([id], |r| r.get(0))?;
            out.push(Candidate {
                chunk_id: id,
                item_key,
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

    fn hit(&self, g: Group, terms: &[Vec<char>]) -> Result<Hit> {
        let meta = self
            .conn
            .prepare_cached(
                "SELECT title, creators, year, item_type FROM documents
                 WHERE key = ?1 AND kind IN ('item', 'note')",
            )?
            .query_row([&g.item_key], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<i32>>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .optional()?;
        let (title, creators, year, item_type) = meta.unwrap_or_default();
        let mut chunk_stmt = self.conn.prepare_cached(
            "SELECT c.matched, c.text, c.start_char, d.key FROM chunks c
             JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
        )?;
        let mut matched = Vec::new();
        let mut passages = Vec::new();
        for (i, f) in g.chunks.iter().enumerate() {
            let get = |r: &rusqlite::Row<'_>| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, String>(3)?,
                ))
            };
            // Every chunk's kind counts in `matched`; only the best few are read whole.
            if i >= MAX_PASSAGES {
                let kind: String = self
                    .conn
                    .prepare_cached("SELECT matched FROM chunks WHERE id = ?1")?
                    .query_row([f.chunk_id], |r| r.get(0))?;
                matched.extend(Matched::parse(&kind));
                continue;
            }
            let (kind, text, start, doc_key) = chunk_stmt.query_row([f.chunk_id], get)?;
            let kind = Matched::parse(&kind).unwrap_or(Matched::Fulltext);
            matched.push(kind);
            let (at, text) = window(&text, terms, PASSAGE_MAX_CHARS);
            let source_offset = start.map(|s| s.max(0) as u64 + at as u64);
            passages.push(HitPassage {
                matched: kind,
                doc_key,
                text,
                source_offset,
                fulltext_offset: source_offset.filter(|_| kind == Matched::Fulltext),
                score: f.score,
            });
        }
        matched.sort();
        matched.dedup();
        Ok(Hit {
            item_key: g.item_key,
            title,
            creators,
            year,
            item_type,
            score: g.score,
            keyword_rank: g.keyword_rank,
            semantic_rank: g.semantic_rank,
            matched,
            passages,
        })
    }
}

/// Lowercase without the common Latin diacritics, one char for one: for finding where a
/// query word is in a passage (the FTS tokenizer does the real matching).
fn fold(c: char) -> char {
    let c = c.to_lowercase().next().unwrap_or(c);
    match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'č' => 'c',
        'è'..='ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
        'ì'..='ï' | 'ī' | 'į' | 'ı' => 'i',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò'..='ö' | 'ø' | 'ō' | 'ő' => 'o',
        'ù'..='ü' | 'ū' | 'ů' | 'ű' => 'u',
        'ý' | 'ÿ' => 'y',
        'ś' | 'š' => 's',
        'ź' | 'ž' | 'ż' => 'z',
        'ł' => 'l',
        'ř' => 'r',
        'ť' => 't',
        'ď' => 'd',
        _ => c,
    }
}

fn query_terms(q: &str) -> Vec<Vec<char>> {
    q.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.chars().map(fold).collect::<Vec<char>>())
        .filter(|w| !w.is_empty())
        .collect()
}

/// At most `max` characters of `text` centred on the first query term found (the start when
/// none is), cut at spaces near the edges; answers where it starts, in characters.
fn window(text: &str, terms: &[Vec<char>], max: usize) -> (usize, String) {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    if n <= max {
        return (0, text.to_string());
    }
    let folded: Vec<char> = chars.iter().map(|&c| fold(c)).collect();
    let found = (0..n).find_map(|i| {
        terms
            .iter()
            .find(|t| folded.get(i..i + t.len()) == Some(t.as_slice()))
            .map(|t| (i, t.len()))
    });
    let mut start = match found {
        Some((i, len)) => (i + len / 2).saturating_sub(max / 2).min(n - max),
        None => 0,
    };
    let mut end = start + max;
    // Whole words at the edges, when a space is near.
    if start > 0 {
        if let Some(s) = (start..(start + 20).min(end))
            .find(|&i| chars.get(i - 1).is_some_and(|c| c.is_whitespace()))
        {
            start = s;
        }
    }
    if end < n {
        if let Some(e) = ((end.saturating_sub(20)).max(start + 1)..end)
            .rev()
            .find(|&i| chars.get(i).is_some_and(|c| c.is_whitespace()))
        {
            end = e;
        }
    }
    (
        start,
        chars.get(start..end).unwrap_or_default().iter().collect(),
    )
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
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn cands(v: &[(i64, u8)]) -> Vec<Candidate> {
        v.iter()
            .map(|&(id, item)| Candidate {
                chunk_id: id,
                item_key: format!("ITEM{item}"),
            })
            .collect()
    }

    /// An index of `n` items whose titles and abstracts draw from ten words: `w0` and `w1`
    /// in every one, `w2` in about half, the others rarer (deterministic per `seed`).
    fn word_index(dir: &std::path::Path, n: usize, seed: u64) -> Index {
        use crate::store::{Document, LibraryId};
        let mut index = Index::open(dir, &LibraryId::User).unwrap();
        {
            let mut up = index.updater().unwrap();
            let mut b = up.batch().unwrap();
            let mut x = seed | 1;
            for i in 0..n {
                let mut words = vec!["w0".to_string()];
                for w in 1..10u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Word w is in about 1/w of the texts, 1..4 times.
                    if x.is_multiple_of(w) {
                        for _ in 0..1 + x % 4 {
                            words.push(format!("w{w}"));
                        }
                    }
                }
                // Title and abstract alike: the words are in (nearly) every chunk.
                let meta = crate::chunk::ItemMeta {
                    title: words.join(" "),
                    abstract_note: format!("{} A{i}", words.join(" ")),
                    item_type: "journalArticle".into(),
                    year: Some(1990 + (i % 30) as i32),
                    ..Default::default()
                };
                // One in seven is in the trash.
                b.upsert(&Document::item(&format!("K{i:05}"), 1, meta, i % 7 == 3))
                    .unwrap();
            }
            b.commit().unwrap();
        }
        index
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Ranking the best rows first and filtering them after gives exactly what
        /// filtering every match first gives, for loose filters (the trash) and tight ones.
        #[test]
        fn filtering_the_best_rows_equals_filtering_every_match(
            seed in 1u64..1_000,
            words in proptest::collection::vec(0u64..10, 1..4),
            candidates in 1usize..60,
            years in proptest::option::of((1990i32..2020, 0i32..30)),
            include_trashed in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let index = word_index(dir.path(), 150, seed);
            let filters = Filters {
                include_trashed,
                year_from: years.map(|(from, _)| from),
                year_to: years.map(|(from, span)| from + span / 4),
                ..Default::default()
            };
            let (cond, params) = filter_sql(&filters);
            let expr = words.iter().map(|w| format!("\"w{w}\"")).collect::<Vec<_>>().join(" OR ");
            let ids = |v: Vec<Candidate>| v.into_iter().map(|c| c.chunk_id).collect::<Vec<_>>();
            prop_assert_eq!(
                ids(index.keyword_query(&expr, &cond, &params, candidates).unwrap()),
                ids(index.keyword_query_joined(&expr, &cond, &params, candidates).unwrap())
            );
        }
    }

    #[test]
    fn words_in_most_rows_are_found_by_the_vocabulary() {
        let dir = tempfile::tempdir().unwrap();
        let index = word_index(dir.path(), 200, 7);
        let (rows, _) = index.counts().unwrap();
        index.words_view().unwrap();
        assert!(index.in_most_rows("\"w0\"", rows).unwrap());
        assert!(!index.in_most_rows("\"w9\"", rows).unwrap());
        assert!(!index.in_most_rows("\"nowhere\"", 0).unwrap());
        // Case folds as the tokenizer folds it; other pieces are never looked up.
        assert!(index.in_most_rows("\"W1\"", rows).unwrap());
        assert!(!index.in_most_rows("\"w0 w1\"", 1).unwrap());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Leaving out the words in most rows changes neither which chunks come first nor
        /// their order, but among chunks whose full BM25 differs by what those words add
        /// (≤ 1e-5: their IDF is 1e-6).
        #[test]
        fn leaving_out_common_words_keeps_the_ranking(
            seed in 1u64..1_000,
            words in proptest::collection::vec(0u64..10, 1..5),
            candidates in 1usize..80,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let index = word_index(dir.path(), 120, seed);
            let pieces: Vec<String> = words.iter().map(|w| format!("\"w{w}\"")).collect();
            let (rows, _) = index.counts().unwrap();
            let pruned = index.keyword_candidates(&pieces, "1", &[], candidates, rows).unwrap();
            let full = index.keyword_query(&pieces.join(" OR "), "1", &[], candidates).unwrap();
            prop_assert_eq!(pruned.len(), full.len());
            let score: HashMap<i64, f64> = index
                .conn
                .prepare("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1")
                .unwrap()
                .query_map([pieces.join(" OR ")], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            const EPS: f64 = 1e-5;
            for (p, f) in pruned.iter().zip(&full) {
                prop_assert!((score[&p.chunk_id] - score[&f.chunk_id]).abs() <= EPS,
                    "{} {} vs {} {}", p.chunk_id, score[&p.chunk_id], f.chunk_id, score[&f.chunk_id]);
            }
        }
    }

    #[test]
    fn first_in_both_scores_one() {
        let k = cands(&[(1, 1), (2, 2)]);
        let s = cands(&[(1, 1), (3, 3)]);
        let f = fuse(&k, &s, 2);
        assert_eq!(f[0].chunk_id, 1);
        assert!((f[0].score - 1.0).abs() < 1e-12);
        let g = group(f, &k, &s);
        assert_eq!(g[0].item_key, "ITEM1");
        assert_eq!((g[0].keyword_rank, g[0].semantic_rank), (Some(1), Some(1)));
        assert_eq!((g[2].keyword_rank, g[2].semantic_rank), (None, Some(2)));
    }

    #[test]
    fn blob_dot_is_the_dot_product() {
        for n in [0usize, 1, 7, 8, 9, 384, 389] {
            let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
            let b: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
            let blob = crate::blob::vector_blob(&b);
            let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((blob_dot(&a, &blob).unwrap() - want).abs() < 1e-3, "{n}");
        }
        assert_eq!(blob_dot(&[1.0], &[0, 0]), None);
    }

    #[test]
    fn window_centres_on_the_word() {
        let text = format!("{} Gödel numbering {}", "a ".repeat(400), "b ".repeat(400));
        let (at, w) = window(&text, &query_terms("godel"), 100);
        assert!(w.contains("Gödel"), "{w}");
        assert!(w.chars().count() <= 100);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(
            chars[at..at + w.chars().count()].iter().collect::<String>(),
            w
        );
    }

    /// Each text a pseudo-random unit vector (seeded by the text): vectors with no
    /// structure, the hardest case for choosing candidates by int8 scores.
    struct RandomEncoder(usize);

    impl Encoder for RandomEncoder {
        fn identity(&self) -> crate::encoder::ModelIdentity {
            crate::encoder::ModelIdentity {
                id: "random".into(),
                revision: "1".into(),
                file_hashes: Vec::new(),
                dims: self.0,
            }
        }
        fn dims(&self) -> usize {
            self.0
        }
        fn encode(
            &self,
            texts: &[&str],
        ) -> std::result::Result<Vec<Vec<f32>>, crate::encoder::EncodeError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut seed = t.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                    });
                    let v: Vec<f32> = (0..self.0)
                        .map(|_| {
                            seed = seed
                                .wrapping_mul(6_364_136_223_846_793_005)
                                .wrapping_add(1_442_695_040_888_963_407);
                            (seed >> 33) as f32 / (1u64 << 31) as f32 - 0.5
                        })
                        .collect();
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.into_iter().map(|x| x / norm).collect()
                })
                .collect())
        }
    }

    #[test]
    fn the_int8_copy_gives_the_exact_candidates() {
        use crate::store::{Document, LibraryId};
        use crate::ItemMeta;
        let dir = tempfile::tempdir().unwrap();
        let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
        let enc = RandomEncoder(384);
        {
            let mut up = index.updater().unwrap();
            let mut b = up.batch().unwrap();
            for i in 0..600 {
                let meta = ItemMeta {
                    title: format!("title {i}"),
                    year: Some(1950 + i % 70),
                    item_type: "book".into(),
                    abstract_note: format!("abstract number {i}"),
                    ..ItemMeta::default()
                };
                b.upsert(&Document::item(&format!("ITEM{i:04}"), 1, meta, i % 9 == 0))
                    .unwrap();
            }
            b.commit().unwrap();
            up.embed_pending(&enc, 64, usize::MAX).unwrap();
        }
        let (chunks_total, chunks_with_vectors) = index.counts().unwrap();
        assert!(chunks_with_vectors > 1000, "{chunks_with_vectors}");
        let coverage = Coverage {
            chunks_total,
            chunks_with_vectors,
        };
        let cache = VectorCache::default();
        let filters = [
            Filters::default(),
            Filters {
                include_trashed: true,
                ..Filters::default()
            },
            Filters {
                year_from: Some(1990),
                year_to: Some(2000),
                ..Filters::default()
            },
        ];
        for (n, f) in filters.iter().enumerate() {
            let (cond, filter_params) = filter_sql(f);
            for candidates in [1, 10, 50, 200] {
                let scan = Scan {
                    cond: &cond,
                    filter_params: &filter_params,
                    candidates,
                };
                for query in 0..20 {
                    let text = format!("query {query}");
                    let exact = index.semantic_candidates(&enc, &text, &scan, None).unwrap();
                    let cached = index
                        .semantic_candidates(&enc, &text, &scan, Some((&cache, coverage)))
                        .unwrap();
                    assert_eq!(cached, exact, "filters {n}, {candidates}, {text}");
                    assert!(!exact.is_empty());
                }
            }
        }
        assert_eq!(cache.vectors() as u64, chunks_with_vectors);
    }

    proptest! {
        #[test]
        fn fusion_and_grouping_keep_best_and_never_repeat(
            k in proptest::collection::vec((0i64..60, 0u8..12), 0..80),
            s in proptest::collection::vec((0i64..60, 0u8..12), 0..80),
        ) {
            // A chunk belongs to one item whatever list it is in.
            let fix = |v: Vec<(i64, u8)>| v.into_iter().map(|(id, _)| (id, (id % 12) as u8)).collect::<Vec<_>>();
            let (k, s) = (cands(&fix(k)), cands(&fix(s)));
            let fused = fuse(&k, &s, 2);
            let groups = group(fused.clone(), &k, &s);
            let mut seen = HashSet::new();
            for g in &groups {
                prop_assert!(seen.insert(g.item_key.clone()), "item twice");
                prop_assert!((0.0..=1.0).contains(&g.score));
                // The group's first chunk is the item's best fused chunk.
                let best = fused.iter().filter(|f| f.item_key == g.item_key).map(|f| f.score).fold(0.0, f64::max);
                prop_assert_eq!(g.chunks[0].score, best);
                prop_assert_eq!(g.score, best);
            }
            for w in groups.windows(2) {
                prop_assert!(w[0].score >= w[1].score);
            }
            // Every candidate item is in a group.
            let items: HashSet<_> = k.iter().chain(&s).map(|c| c.item_key.clone()).collect();
            prop_assert_eq!(items, seen);
        }
    }
}
