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
//!
//! The parts: `query` (the question and the answer) and `fuse` (reciprocal rank fusion,
//! grouping) at the bottom; `keyword` and `semantic` find candidates; `passage` makes a
//! hit of a group; `search` ([`Index::search`](crate::Index::search)) runs them in order.

mod fuse;
mod keyword;
mod passage;
mod query;
mod search;
mod semantic;
#[cfg(test)]
mod tests;

pub use fuse::{fuse, fuse_items, group, Candidate, Fused, FusedItem, Fusion, Group};
pub use query::{
    Coverage, Filters, Hit, HitPassage, Mode, SearchAnswer, SearchQuery, CANDIDATES, DEFAULT_LIMIT,
    FUSION, MAX_LIMIT, MAX_PASSAGES, PASSAGE_MAX_CHARS, RRF_K,
};
