//! The question and the answer: a [`SearchQuery`] (text, mode, filters, limit) and the
//! [`SearchAnswer`] with its [`Hit`]s and their passages, and the bounds they are read with.

use crate::chunk::{Matched, PageRef};

use super::fuse::Fusion;

/// How hybrid search fuses the items found by words and by meaning (chosen on the test
/// collection, see the crate's README).
pub const FUSION: Fusion = Fusion::Convex { keyword: 0.5 };
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

#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    pub text: String,
    pub mode: Mode,
    pub filters: Filters,
    /// How many hits (items); 0 means [`DEFAULT_LIMIT`], more than [`MAX_LIMIT`] is cut.
    pub limit: usize,
    /// How hybrid search fuses the two signals: [`FUSION`] unless a bench compares others.
    pub fusion: Fusion,
}

impl SearchQuery {
    pub fn new(text: &str) -> Self {
        SearchQuery {
            text: text.to_string(),
            mode: Mode::default(),
            filters: Filters::default(),
            limit: DEFAULT_LIMIT,
            fusion: FUSION,
        }
    }

    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    pub fn fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
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
    /// For full text: the `offset` to give `zotero_get_item_fulltext` with `doc_key` (and
    /// with `page`'s label as `pages` when there is a page).
    pub fulltext_offset: Option<u64>,
    /// For text read from a file page by page: the page it is on.
    pub page: Option<PageRef>,
    pub score: f64,
}
