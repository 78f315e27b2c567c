//! [`Index::search`]: both signals asked, fused, grouped by item, cut to the limit.

use crate::encoder::Encoder;
use crate::error::{IndexError, Result};
use crate::store::{fts_pieces, Index};
use crate::vcache::VectorCache;

use super::fuse::{fuse, group};
use super::keyword::filter_sql;
use super::passage::query_terms;
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
}
