//! The search index of zotero-mcp: search a Zotero library by words and by meaning.
//!
//! One SQLite file per library ([`store`]) holds the indexed objects, their chunks
//! ([`chunk`]), an FTS5 keyword index and sentence vectors made by an [`encoder::Encoder`]
//! (the model lives elsewhere; zotero-hub downloads it); [`rank`] answers a query by BM25 and cosine similarity
//! fused per item, one hit per item. A [`VectorCache`] keeps an int8 copy of the
//! vectors in memory across searches ([`Index::search_cached`]), a [`KeywordCache`] what
//! the keyword signal's BM25 reads.
//!
//! The sync from Zotero feeds an [`Updater`]: per batch of changed objects, `upsert` or
//! `delete` their [`Document`]s, `set_sync_version`, `commit`; then `embed_pending`. Text
//! read from an attachment's file is indexed page by page ([`Document::file_text`]: its
//! chunks and hits name their [`PageRef`]); the index keeps which files are due to be read
//! and what came of each ([`FileEntry`], [`FileDue`]).

mod blob;
mod cache_key;
pub mod chunk;
pub mod encoder;
pub mod error;
pub mod flock;
pub mod kwcache;
pub mod rank;
pub mod store;
mod sync;
pub mod vcache;

pub use chunk::{Chunk, ItemMeta, Matched, PageRef, PageText};
pub use encoder::{EncodeError, Encoder, ModelIdentity, SynonymEncoder};
pub use error::{IndexError, Remedy, Result};
pub use kwcache::KeywordCache;
pub use rank::{
    Coverage, Filters, Fusion, Hit, HitPassage, Mode, SearchAnswer, SearchQuery, FUSION,
};
pub use store::{
    check_dir, default_dir, Batch, DocKind, Document, EmbedPlan, FileDue, FileEntry, Index,
    LibraryId, PendingChunk, Status, UpdateLock, Updater,
};
pub use vcache::VectorCache;
