//! What FTS5's `bm25()` reads, kept in memory, so that the keyword signal is scored without
//! FTS5 probing the row-size table for every row holding a query word (67% of a keyword
//! search's CPU at 160,000 chunks, most of it in `sqlite3Fts5StorageDocsize`).
//!
//! # What is kept
//!
//! Per index file: each keyword row's length in tokens, as the factor of BM25's denominator
//! it gives ([`Stats`]), and the table's totals (FTS5's "averages" record: the rows ever
//! inserted and their tokens; a `contentless_delete` table never lowers them on a delete,
//! so they are read as FTS5 reads them, never recounted). Per query word (an FTS5 token),
//! its postings: the rows holding it and its weighted frequency in each ([`Postings`]),
//! read from `fts5vocab(…, instance)` by term (a seek, not a scan), tombstoned rows left out
//! as FTS5 leaves them out. Rows are 16 bytes each (63,000 rows at 160,000 chunks: 1 MB);
//! a posting 12 bytes, so a word in every row of that index is 0.75 MB.
//!
//! # Validity
//!
//! A copy is used only while its [`KeywordKey`] is the file's: its (device, inode), the
//! `data_generation` every committed write raises (as for [`crate::vcache`]), and FTS5's own
//! averages and structure records, which every write to the keyword index changes (a new
//! segment, a merge, a tombstone), also one by a program that does not raise the
//! generation. The key, the rows and the postings a search uses are read in one read
//! transaction, so they are of one committed state; a copy of another state is replaced
//! whole.
//!
//! # Memory
//!
//! All copies together stay within [`DEFAULT_BUDGET_BYTES`]: the least recently used
//! postings go first, then other indexes' copies. Nothing is read before the first keyword
//! search of an index through [`crate::Index::search_cached`].

mod load;
#[cfg(test)]
mod tests;

use crate::sync::lock;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::Connection;

use crate::error::Result;

pub(crate) use load::{KeywordKey, Postings, Stats, K1};

/// The memory all copies may take together: 32 MiB, 2.7 million postings. A search of the
/// 160,000-chunk test index reads the postings of its rarer words only (see
/// `rank::bm25`): the 225 Cranfield queries together keep about 4 MB.
pub const DEFAULT_BUDGET_BYTES: usize = 32 << 20;

/// How many pieces' tokens are remembered; all are forgotten when more are seen.
const TOKEN_MEMO: usize = 4096;

/// The tokenizer of the keyword index (`chunks_fts`): a query piece is reduced to the
/// tokens FTS5 makes of it by this same tokenizer, so that postings are looked up by the
/// very term FTS5 would look up.
pub(crate) const TOKENIZE: &str = "porter unicode61 remove_diacritics 2";

#[derive(Debug)]
struct Entry {
    stats: Arc<Stats>,
    last_used: u64,
    postings: HashMap<String, (Arc<Postings>, u64)>,
    /// Rows holding a term (FTS5's vocabulary), for terms whose postings are not read.
    doc_counts: HashMap<String, u64>,
    /// Score accumulators of finished searches, one per row, all 0.
    scratch: Vec<Vec<f64>>,
}

#[derive(Debug)]
struct Inner {
    budget: usize,
    entries: HashMap<PathBuf, Entry>,
    clock: u64,
}

#[derive(Debug, Default)]
struct Tokens {
    conn: Option<Connection>,
    memo: HashMap<String, Option<String>>,
}

/// The in-memory copies of the keyword indexes searched (see the module's notes), shared by
/// all searches of a process: safe to use from any thread.
#[derive(Debug)]
pub struct KeywordCache {
    inner: Mutex<Inner>,
    tokens: Mutex<Tokens>,
}

impl Default for KeywordCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

impl KeywordCache {
    /// A cache whose copies together take at most `budget` bytes.
    pub fn with_budget(budget: usize) -> Self {
        KeywordCache {
            inner: Mutex::new(Inner {
                budget,
                entries: HashMap::new(),
                clock: 0,
            }),
            tokens: Mutex::new(Tokens::default()),
        }
    }

    /// The cache of this process, which [`crate::Index::search_cached`] uses.
    pub fn shared() -> &'static KeywordCache {
        static SHARED: OnceLock<KeywordCache> = OnceLock::new();
        SHARED.get_or_init(KeywordCache::default)
    }

    /// The bytes the copies take now.
    pub fn bytes(&self) -> usize {
        lock(&self.inner).entries.values().map(Entry::bytes).sum()
    }

    /// Drops every copy.
    pub fn clear(&self) {
        lock(&self.inner).entries.clear();
    }

    /// The one token FTS5 makes of each quoted query piece (`"word"`, as `fts_pieces`
    /// gives), in order; `None` when a piece is not exactly one token (a phrase, as a CJK
    /// run is, or nothing), which only FTS5 itself answers.
    pub(crate) fn tokens(&self, pieces: &[String]) -> Result<Option<Vec<String>>> {
        let mut t = lock(&self.tokens);
        let mut out = Vec::with_capacity(pieces.len());
        for p in pieces {
            let token = match t.memo.get(p) {
                Some(token) => token.clone(),
                None => {
                    let token = t.tokenize(p)?;
                    if t.memo.len() >= TOKEN_MEMO {
                        t.memo.clear();
                    }
                    t.memo.insert(p.clone(), token.clone());
                    token
                }
            };
            match token {
                Some(token) => out.push(token),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// The rows of the index at `path` in the state `key`, if kept.
    pub(crate) fn stats(&self, path: &Path, key: &KeywordKey) -> Option<Arc<Stats>> {
        let mut inner = lock(&self.inner);
        inner.clock += 1;
        let now = inner.clock;
        let e = inner.entries.get_mut(path)?;
        if &e.stats.key != key {
            return None;
        }
        e.last_used = now;
        Some(Arc::clone(&e.stats))
    }

    /// Keeps `stats` for `path`, replacing what was kept for it (another state).
    pub(crate) fn keep_stats(&self, path: &Path, stats: Arc<Stats>) {
        let mut inner = lock(&self.inner);
        inner.entries.remove(path);
        let need = stats.bytes();
        inner.make_room(need, path);
        if need > inner.budget {
            return;
        }
        inner.clock += 1;
        let now = inner.clock;
        inner.entries.insert(
            path.to_path_buf(),
            Entry {
                stats,
                last_used: now,
                postings: HashMap::new(),
                doc_counts: HashMap::new(),
                scratch: Vec::new(),
            },
        );
    }

    /// The postings of `term` kept for the index at `path` in the state of `stats`.
    pub(crate) fn postings(&self, path: &Path, stats: &Stats, term: &str) -> Option<Arc<Postings>> {
        let mut inner = lock(&self.inner);
        inner.clock += 1;
        let now = inner.clock;
        let e = inner.entries.get_mut(path)?;
        if e.stats.key != stats.key {
            return None;
        }
        let (p, used) = e.postings.get_mut(term)?;
        *used = now;
        Some(Arc::clone(p))
    }

    /// Keeps the postings of `term`, read in the state of `stats`, when they fit.
    pub(crate) fn keep_postings(
        &self,
        path: &Path,
        stats: &Stats,
        term: &str,
        postings: Arc<Postings>,
    ) {
        let mut inner = lock(&self.inner);
        let need = postings.bytes() + term.len();
        inner.make_room(need, path);
        if inner.used().saturating_add(need) > inner.budget {
            return;
        }
        inner.clock += 1;
        let now = inner.clock;
        if let Some(e) = inner.entries.get_mut(path) {
            if e.stats.key == stats.key {
                e.postings.insert(term.to_string(), (postings, now));
            }
        }
    }

    /// How many rows hold `term`, as remembered for the state of `stats`.
    pub(crate) fn doc_count(&self, path: &Path, stats: &Stats, term: &str) -> Option<u64> {
        let inner = lock(&self.inner);
        let e = inner.entries.get(path)?;
        if e.stats.key != stats.key {
            return None;
        }
        e.postings
            .get(term)
            .map(|(p, _)| p.len() as u64)
            .or_else(|| e.doc_counts.get(term).copied())
    }

    /// Remembers how many rows hold `term` in the state of `stats`.
    pub(crate) fn keep_doc_count(&self, path: &Path, stats: &Stats, term: &str, n: u64) {
        let mut inner = lock(&self.inner);
        if let Some(e) = inner.entries.get_mut(path) {
            // A term and a count: a few dozen bytes, left out of the budget but bounded.
            if e.stats.key == stats.key && e.doc_counts.len() < TOKEN_MEMO {
                e.doc_counts.insert(term.to_string(), n);
            }
        }
    }

    /// A score accumulator of `rows` zeros, one kept from an earlier search when there is
    /// one: allocating it afresh would fault in its pages at every search (the server's
    /// allocator gives freed memory back at once).
    pub(crate) fn scratch(&self, path: &Path, rows: usize) -> Vec<f64> {
        let mut inner = lock(&self.inner);
        inner
            .entries
            .get_mut(path)
            .and_then(|e| e.scratch.pop())
            .filter(|s| s.len() == rows)
            .unwrap_or_else(|| vec![0.0; rows])
    }

    /// Gives back an accumulator [`KeywordCache::scratch`] gave, all zeros again.
    pub(crate) fn keep_scratch(&self, path: &Path, stats: &Stats, scratch: Vec<f64>) {
        let mut inner = lock(&self.inner);
        if let Some(e) = inner.entries.get_mut(path) {
            // Two are enough for two searches at once; more would be memory for nothing.
            if e.stats.key == stats.key && scratch.len() == e.stats.len() && e.scratch.len() < 2 {
                e.scratch.push(scratch);
            }
        }
    }
}

impl Entry {
    fn bytes(&self) -> usize {
        self.stats.bytes()
            + self
                .postings
                .iter()
                .map(|(t, (p, _))| t.len() + p.bytes())
                .sum::<usize>()
    }
}

impl Inner {
    fn used(&self) -> usize {
        self.entries.values().map(Entry::bytes).sum()
    }

    /// Drops the least recently used postings, then other indexes' copies, until `need`
    /// more bytes fit in the budget; `keep` (the index being searched) keeps its rows.
    fn make_room(&mut self, need: usize, keep: &Path) {
        while self.used().saturating_add(need) > self.budget {
            let oldest = self
                .entries
                .iter()
                .flat_map(|(path, e)| e.postings.iter().map(move |(t, (_, u))| (*u, path, t)))
                .min_by_key(|(u, _, _)| *u)
                .map(|(_, path, t)| (path.clone(), t.clone()));
            if let Some((path, term)) = oldest {
                if let Some(e) = self.entries.get_mut(&path) {
                    e.postings.remove(&term);
                }
                continue;
            }
            let other = self
                .entries
                .iter()
                .filter(|(p, _)| p.as_path() != keep)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(p, _)| p.clone());
            match other {
                Some(p) => {
                    self.entries.remove(&p);
                }
                None => return,
            }
        }
    }
}

impl Tokens {
    /// The tokens FTS5's tokenizer makes of the piece's text (the quotes taken off), by a
    /// table of that tokenizer in a connection of its own, in memory; `Some` when exactly
    /// one.
    fn tokenize(&mut self, piece: &str) -> Result<Option<String>> {
        let Some(text) = piece
            .strip_prefix('"')
            .and_then(|p| p.strip_suffix('"'))
            .filter(|t| !t.contains('"'))
        else {
            return Ok(None);
        };
        if self.conn.is_none() {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(&format!(
                "CREATE VIRTUAL TABLE piece USING fts5 (text, tokenize = '{TOKENIZE}');
                 CREATE VIRTUAL TABLE piece_tokens USING fts5vocab (piece, instance);"
            ))?;
            self.conn = Some(conn);
        }
        let Some(conn) = &self.conn else {
            return Ok(None);
        };
        conn.prepare_cached("INSERT INTO piece (rowid, text) VALUES (1, ?1)")?
            .execute([text])?;
        let terms: rusqlite::Result<Vec<String>> = conn
            .prepare_cached("SELECT term FROM piece_tokens")?
            .query_map([], |r| r.get(0))?
            .collect();
        conn.prepare_cached("DELETE FROM piece")?.execute([])?;
        let mut terms = terms?;
        Ok(match terms.len() {
            1 => terms.pop(),
            _ => None,
        })
    }
}
