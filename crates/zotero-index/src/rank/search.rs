//! [`Index::search`]: both signals asked, fused, grouped by item, cut to the limit.

use std::collections::HashSet;

use crate::encoder::Encoder;
use crate::error::{IndexError, Result};
use crate::kwcache::KeywordCache;
use crate::store::{fts_pieces, Index};
use crate::vcache::VectorCache;

use super::fuse::{fuse, fuse_items, group, Candidate, FusedItem};
use super::keyword::{filter_sql, merge_parts, split_rowids, RowRange};
use super::passage::{mentions, passage_terms};
use super::query::{
    Coverage, Mode, SearchAnswer, SearchQuery, CANDIDATES, DEFAULT_LIMIT, MAX_LIMIT,
};
use super::semantic::Scan;

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
        // On a connection kept from an earlier search, whose page cache holds what
        // searches read again; this one only checked the file.
        let run = || -> Result<SearchAnswer> {
            let reader = cache.reader(self)?;
            let answer = reader.search_inner(encoder, query, Some(cache))?;
            cache.keep_reader(reader);
            Ok(answer)
        };
        run().map_err(|e| e.at(&self.path))
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
                    let why = why.to_string();
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

        let pieces = if want_keyword {
            fts_pieces(&query.text)
        } else {
            Vec::new()
        };
        let meaning = encoder.filter(|_| !query.text.trim().is_empty());
        // With the caches (the server), BM25 is scored in memory when every piece is one
        // token; FTS5 answers the rest, split by rowid where that pays.
        let memory = match cache {
            Some(_) if !pieces.is_empty() => KeywordCache::shared().tokens(&pieces)?,
            _ => None,
        };
        let parts = if pieces.is_empty() {
            Vec::new()
        } else if memory.is_some() {
            vec![None]
        } else {
            self.keyword_parts()?
        };
        let words = |index: &Index, rows: RowRange| -> Result<Vec<Candidate>> {
            if let Some(tokens) = &memory {
                let shared = KeywordCache::shared();
                let found = index.keyword_in_memory(
                    &pieces,
                    tokens,
                    &cond,
                    &filter_params,
                    candidates,
                    shared,
                )?;
                if let Some(found) = found {
                    return Ok(found);
                }
            }
            index.keyword_candidates_in(&pieces, &cond, &filter_params, candidates, rows)
        };
        // The keyword parts and the semantic signal at once, each keyword part but the one
        // searched here on a thread and a connection of its own; none is searched here
        // when the semantic signal is.
        let (keyword, semantic) = std::thread::scope(|s| -> Result<_> {
            let here = usize::from(meaning.is_none());
            let (path, file, library) = (&self.path, self.file_id, self.library());
            let spawned: Vec<_> = parts
                .iter()
                .skip(here)
                .map(|&rows| {
                    s.spawn(move || match cache {
                        Some(c) => {
                            let reader = c.reader_of(path, file, library)?;
                            let found = words(&reader, rows)?;
                            c.keep_reader(reader);
                            Ok(found)
                        }
                        None => words(&Index::open_file(path, library.clone())?, rows),
                    })
                })
                .collect();
            let semantic = match meaning {
                Some(e) => {
                    let cached = cache.map(|c| (c, coverage));
                    let scan = Scan {
                        cond: &cond,
                        filter_params: &filter_params,
                        candidates,
                    };
                    self.semantic_candidates(e, &query.text, &scan, cached)?
                }
                None => Vec::new(),
            };
            let mut found = Vec::new();
            for &rows in parts.iter().take(here) {
                found.push(words(self, rows)?);
            }
            for part in spawned {
                // A part that panicked panics here, as it would have inline.
                found.push(
                    part.join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))?,
                );
            }
            Ok((merge_parts(found, candidates), semantic))
        })?;
        // Items are ranked by both signals at the item level; each item's chunks are then
        // ordered by reciprocal rank only to choose its passages.
        let used = (want_keyword, encoder.is_some());
        let items: Vec<FusedItem> = fuse_items(&keyword, &semantic, used, query.fusion)
            .into_iter()
            .take(limit)
            .collect();
        let terms = passage_terms(&query.text);
        let keyword = self.record_chunks(&keyword, &items, &terms)?;
        let signals = usize::from(used.0) + usize::from(used.1);
        let groups = group(items, fuse(&keyword, &semantic, signals));
        let mut hits = Vec::new();
        for g in groups {
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
}

/// Keyword rows from which the keyword search is split by rowid into parts searched at
/// once, one per core (at most [`MAX_PARTS`]): FTS5 scores every row that holds a query
/// word, which at 63,000 rows (160,000 chunks) took 44 ms of CPU for a typical query, far
/// more than the rest of a search. Each part is scored as over the whole table (BM25's IDF
/// and mean row length are the table's), so the merged best are those of one query.
pub(crate) const SPLIT_ROWS: u64 = 20_000;
/// The most parts a keyword search is split into.
const MAX_PARTS: usize = 4;

#[cfg(test)]
thread_local! {
    /// (rows from which to split, parts) for the searches of this thread: tests split
    /// small indexes.
    pub(crate) static SPLIT_FOR_TEST: std::cell::Cell<Option<(u64, usize)>> =
        const { std::cell::Cell::new(None) };
}

impl Index {
    /// The rowid ranges the keyword search is split into: all rows in one below
    /// [`SPLIT_ROWS`] rows or on one core, else one range per core over rowids 1 to the
    /// last.
    fn keyword_parts(&self) -> Result<Vec<RowRange>> {
        let cores = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_PARTS);
        #[cfg(test)]
        let (split_rows, cores) = SPLIT_FOR_TEST
            .with(|c| c.get())
            .unwrap_or((SPLIT_ROWS, cores));
        #[cfg(not(test))]
        let split_rows = SPLIT_ROWS;
        if cores < 2 || self.keyword_rows()? < split_rows {
            return Ok(vec![None]);
        }
        let last: Option<i64> = self
            .conn
            .prepare_cached("SELECT max(id) FROM chunks_fts_docsize")?
            .query_row([], |r| r.get(0))?;
        let Some(last) = last.filter(|&l| l > 0) else {
            return Ok(vec![None]);
        };
        Ok(split_rowids(last, cores))
    }
}

impl Index {
    /// The keyword candidates of the `items` kept, as chunks: a chunk of a note, an
    /// annotation or a full text as it is; an item's one keyword row (its title, metadata
    /// and abstract) as those of its chunks that mention a query word (by `terms`), or
    /// its first chunk when none does (the words matched by their stems only). In the
    /// keyword order.
    fn record_chunks(
        &self,
        keyword: &[Candidate],
        items: &[FusedItem],
        terms: &[Vec<char>],
    ) -> Result<Vec<Candidate>> {
        let kept: HashSet<&str> = items.iter().map(|i| i.item_key.as_str()).collect();
        let mut kind_of = self.conn.prepare_cached(
            "SELECT d.id, d.kind FROM chunks c JOIN documents d ON d.id = c.doc_id
             WHERE c.id = ?1",
        )?;
        let mut chunks_of = self
            .conn
            .prepare_cached("SELECT id, text FROM chunks WHERE doc_id = ?1 ORDER BY id")?;
        let mut out = Vec::new();
        for c in keyword
            .iter()
            .filter(|c| kept.contains(c.item_key.as_str()))
        {
            let (doc, kind): (i64, String) =
                kind_of.query_row([c.chunk_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            if kind != "item" {
                out.push(c.clone());
                continue;
            }
            let all: Vec<(i64, String)> = chunks_of
                .query_map([doc], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut found = all
                .iter()
                .filter(|(_, text)| mentions(text, terms))
                .map(|(id, _)| *id)
                .peekable();
            let ids: Vec<i64> = if found.peek().is_some() {
                found.collect()
            } else {
                all.first().map(|(id, _)| *id).into_iter().collect()
            };
            out.extend(ids.into_iter().map(|id| Candidate {
                chunk_id: id,
                item_key: c.item_key.clone(),
                score: c.score,
            }));
        }
        Ok(out)
    }
}
