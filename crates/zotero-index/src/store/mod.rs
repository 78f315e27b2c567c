//! The index of one library: one SQLite file.
//!
//! # Schema (version [`SCHEMA_VERSION`], `PRAGMA application_id` = [`APPLICATION_ID`])
//!
//! - `meta(key, value)`: the model identity of the stored vectors (`model_id`,
//!   `model_revision`, `model_hashes` as `name=hash` lines, `model_dims`), whether full
//!   text is included (`fulltext_included`), the time of the last committed update
//!   (`last_update`, Unix seconds), the marks of a source that has no library version
//!   (`mark:<name>`, e.g. how far Zotero's own database was read), and `data_generation`: raised by every committed write
//!   of documents or vectors (to at least the time in nanoseconds, so that a rebuilt file
//!   does not start again where the old one was), which tells an in-memory copy of the
//!   vectors ([`crate::vcache`]) that it is stale.
//! - `sync(kind, version)`: the Zotero library version up to which each kind of object
//!   ("items", "fulltext", "deleted"… as the sync chooses) is indexed. It is written in the
//!   same transaction as the objects, so an update killed at any point resumes from what
//!   was committed.
//! - `documents`: one row per indexed Zotero object, unique by `(kind, key)`, `kind` being
//!   `item`, `note`, `annotation` or `fulltext` (an attachment's text, keyed by the
//!   attachment). `item_key` is the top-level item it belongs to (itself for an item or a
//!   standalone note), `parent_key` its direct parent. The row whose `key` is an
//!   `item_key` carries the metadata that filters and answers use: title, creators, year,
//!   item type, collection keys and tags (each list stored as `\x1f`-separated and
//!   -enclosed text, so that one is found with `instr`), the trashed flag, the version.
//! - `chunks`: the searchable pieces (see [`crate::chunk`]): `matched` (title, metadata,
//!   abstract, note, annotation, fulltext), the text, `start_char`/`end_char` (character
//!   offsets into the source text, when it has some), `priority` (the order vectors are
//!   computed in), `embedded` (whether its vector is stored), and for text read from a
//!   file page by page `page_index` (0-based) and `page_label` (printed): no such chunk
//!   crosses a page.
//! - `files`: the attachments whose files an update reads for their text: the
//!   attachment's top-level item and trash flag, what identifies its file's bytes (`state`,
//!   the caller's: an MD5, a version), what reading it needs (`source`, the caller's), and
//!   what came of the last read (`read_state`, `outcome`). A full text read from a file is
//!   an attachment's `fulltext` document like Zotero's, told apart by its chunks' pages.
//! - `vectors(chunk_id, doc_id, vector)`: each chunk's vector, `dims` f32 little-endian.
//!   A table of its own rather than a column of `chunks`, so that a semantic search scans
//!   vectors without reading text (2.7× faster on 114,000 chunks: 283 → 105 ms) and
//!   writing a vector does not rewrite and split the pages of chunk rows; `doc_id` lets
//!   the scan apply filters from a set of allowed documents without a join.
//! - `chunks_fts`: an FTS5 table, contentless (the text is in `chunks`;
//!   `contentless_delete` lets a row be removed by id), columns `title`, `meta`, `body`.
//!   An item is one row, under its first chunk's id: its title, metadata and whole
//!   abstract, so that BM25 scores the document, not each chunk alone. A note, annotation
//!   or full text is one row per chunk (`body`), `rowid` = chunk id: a long text counts by
//!   its best passage.
//!
//! # Tokenizer
//!
//! `porter unicode61 remove_diacritics 2`: words of any alphabetic script, case- and
//! diacritic-insensitive ("Müller" = "Muller", "Gödel" = "Godel"; mode 2 also folds
//! letters with several diacritics), then reduced to their Porter stems ("retracted" =
//! "retraction"; the stemmer changes only English suffixes). It sees a run of CJK characters as one word, so the
//! text given to FTS puts a space around each Han, kana and Hangul character
//! (`fts_text`) and a query's CJK run becomes a phrase of its characters: "画像認識"
//! finds "深層学習による画像認識", and a one- or two-character query works too, which a
//! `trigram` table (three characters at least, and one more table) would not.
//! Before FTS5 sees it, text (and a query alike) is folded as Zotero 10 folds it for its
//! own search (`zotero_db::fold_for_search`, `normalizeForSearch`): NFKD with the marks
//! U+0300–U+036F dropped, then ø→o, æ→ae, œ→oe, ł→l, ß→ss, þ→th, đ/ð→d, ı→i, curly quotes
//! and dashes to ASCII; so "soren" finds "Søren" and "strasse" "Straße", which
//! `remove_diacritics` alone does not do.
//! Limits: Greek breathings and accents outside U+0300–U+036F stay; Thai, Lao, Khmer and Burmese, written without spaces,
//! are not cut into words (a query finds only a whole run between spaces or punctuation).
//!
//! # Concurrency
//!
//! WAL mode: a search sees the last committed state while an update writes. Writes go
//! through an [`Updater`], which holds an advisory lock (`flock` on `<file>.lock`) for the
//! whole update, so a second updater gets [`IndexError::Busy`] at once; each [`Batch`] is
//! one `BEGIN IMMEDIATE` transaction.
//!
//! # The parts
//!
//! From the bottom: `schema` (the tables, the checks of a file, the migration from version
//! 3) and `document` (what is indexed); `open` makes an [`Index`]; `read` and `sync` answer
//! from it; `update` takes the lock and gives an [`Updater`], whose [`Batch`]es (`write`)
//! write documents and chunks and whose `vectors` computes and stores vectors; `files`
//! keeps the attachments' files to read and what came of each; `fts` makes the text FTS5
//! sees.

mod document;
mod embed;
mod files;
mod fts;
mod open;
mod read;
mod schema;
mod sync;
mod update;
mod vectors;
mod write;

pub use document::{default_dir, DocKind, Document, LibraryId, PendingChunk, Status};
pub use embed::EmbedPlan;
pub use files::{FileDue, FileEntry};
pub(crate) use fts::fts_pieces;
pub use fts::STOP_WORDS;
pub use open::Index;
#[cfg(test)]
pub(crate) use schema::SCHEMA;
pub use schema::{check_dir, APPLICATION_ID, SCHEMA_VERSION};
pub use update::{UpdateLock, Updater};
pub use write::Batch;
