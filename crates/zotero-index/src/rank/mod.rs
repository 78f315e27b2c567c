//! Answering a query: BM25 over the FTS5 table (an item is one row: title, metadata and
//! abstract; a note, annotation or full text one row per chunk) and cosine over the stored
//! vectors (one per chunk), each giving a ranked list, fused per item ([`fuse_items`] by
//! [`FUSION`]: each signal's score over its best, combined with weights), then each item's
//! chunks ordered by reciprocal rank (`k` = [`RRF_K`]) for its passages.
//!
//! Scores: an item's score is in [0, 1], 1.0 meaning "first by every signal used"; an item
//! counts in each signal by its best row or chunk. Vectors are scanned as they are read (no copy of
//! the vector table in memory), keeping the best candidates in a heap: ten chunks per hit
//! asked for, at least [`CANDIDATES`] (several chunks of one long text may come first).
//! With a [`VectorCache`] ([`Index::search_cached`]) an int8 copy in memory is scanned
//! instead, for [`crate::vcache::OVERSAMPLE`] times as many, which are then scored exactly
//! from the stored vectors: the same candidates in the same order, in a few milliseconds.
//!
//! The two signals are searched at once: the semantic one (the query's embedding and the
//! scan) on the calling thread, the keyword one on another with a connection of its own,
//! split by rowid into one part per core (each on its thread) from
//! `SPLIT_ROWS` (20,000) keyword rows, since FTS5 scores every row holding a query word;
//! each part is scored with the whole table's statistics, so the merged parts are the
//! answer of one query. With the caches ([`Index::search_cached`](crate::Index::search_cached))
//! BM25 is scored in memory instead (`bm25`, over [`crate::kwcache`]), unsplit: the same
//! chunks, scores and order, without FTS5 reading each matching row's size.
//!
//! The parts: `query` (the question and the answer) and `fuse` (fusion of items, order of
//! chunks, grouping) at the bottom; `keyword`, `bm25` and `semantic` find candidates;
//! `passage` makes a hit of a group; `search` ([`Index::search`](crate::Index::search)) runs
//! them in order.

mod bm25;
mod fuse;
mod keyword;
mod passage;
mod query;
mod search;
mod semantic;
#[cfg(test)]
mod tests;

pub use fuse::{fuse, fuse_items, group, Candidate, Fused, FusedItem, Fusion, Group, RRF_K};
#[cfg(test)]
pub(crate) use keyword::{filter_sql, BM25};
pub use query::{
    Coverage, Filters, Hit, HitPassage, Mode, SearchAnswer, SearchQuery, CANDIDATES, DEFAULT_LIMIT,
    FUSION, MAX_LIMIT, MAX_PASSAGES, PASSAGE_MAX_CHARS,
};
