//! Cutting what is indexed into chunks: the unit of both keyword and vector search.
//!
//! - An item gives a `title` chunk (the title alone, so that an exact title match is a
//!   short, strong BM25 hit and the title's meaning is not diluted), a `metadata` chunk
//!   (creators, year, venue, tags: who and where, found by words) and `abstract` chunks.
//! - A note (as Markdown) gives `note` chunks, an annotation one `annotation` chunk of its
//!   text and comment, a full text `fulltext` passages.
//! - Text read from an attachment's file page by page gives `fulltext` passages per page
//!   ([`page_chunks`]): no passage crosses a page, and each knows its page ([`PageRef`]).
//!
//! Long texts are cut into passages of at most [`PASSAGE_CHARS`] characters overlapping by
//! at most [`OVERLAP_CHARS`], cut at a paragraph, sentence or word boundary when there is
//! one in the last half of the passage. Offsets count Unicode scalar values (Rust `char`s),
//! as `zotero_get_item_fulltext` and `zotero_get_notes` count their `offset`: a full-text
//! chunk of an attachment starts at the character its `start` says in that attachment's
//! text, which is the text the tool answers for the attachment's key.

/// The most characters in one passage.
pub const PASSAGE_CHARS: usize = 1000;
/// The most characters two consecutive passages share.
pub const OVERLAP_CHARS: usize = 150;

/// What part of an object a chunk comes from, which a hit reports as `matched`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Matched {
    Title,
    /// Creators, year, venue, tags.
    Metadata,
    Abstract,
    Note,
    Annotation,
    Fulltext,
}

impl Matched {
    pub fn as_str(self) -> &'static str {
        match self {
            Matched::Title => "title",
            Matched::Metadata => "metadata",
            Matched::Abstract => "abstract",
            Matched::Note => "note",
            Matched::Annotation => "annotation",
            Matched::Fulltext => "fulltext",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "title" => Matched::Title,
            "metadata" => Matched::Metadata,
            "abstract" => Matched::Abstract,
            "note" => Matched::Note,
            "annotation" => Matched::Annotation,
            "fulltext" => Matched::Fulltext,
            _ => return None,
        })
    }

    /// The order in which chunks get their vectors (lower first): what describes an item
    /// and what the user wrote come before the bulk of full text.
    pub fn priority(self) -> i64 {
        match self {
            Matched::Title | Matched::Metadata => 0,
            Matched::Abstract => 1,
            Matched::Note | Matched::Annotation => 2,
            Matched::Fulltext => 3,
        }
    }
}

/// One chunk to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub matched: Matched,
    pub text: String,
    /// Character offsets `[start, end)` of `text` in its source text (a note's Markdown,
    /// an abstract, an attachment's full text); `None` for texts made up here (metadata).
    pub span: Option<(u64, u64)>,
    /// The page of the file the text is on, for text read from a file page by page.
    pub page: Option<PageRef>,
}

/// A page of a file: its 0-based index and its printed label (e.g. `iv`, `217`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRef {
    pub index: u32,
    pub label: String,
}

/// One page of a file's text, to cut into passages.
#[derive(Debug, Clone, Copy)]
pub struct PageText<'a> {
    pub index: u32,
    pub label: &'a str,
    pub text: &'a str,
    /// Where the page's text starts, in characters, in the text a reader is given for this
    /// page (after a page header, say); `None`: no reader addresses it by offset, and its
    /// passages have no span.
    pub offset: Option<u64>,
}

/// One passage of a text: character offsets `[start, end)` and the text between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Cuts `text` into passages of at most `max_chars` characters (at least 2) overlapping by
/// at most `overlap` characters (less than half of `max_chars`), covering the whole text.
/// An empty text has no passage.
pub fn passages(text: &str, max_chars: usize, overlap: usize) -> Vec<Passage> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let max_chars = max_chars.max(2);
    let overlap = overlap.min(max_chars / 2 - 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or(' ');
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let hard_end = start.saturating_add(max_chars);
        let end = if hard_end >= n {
            n
        } else {
            // A cut is between i-1 and i; the best one in the passage's last half.
            let lowest = start + max_chars / 2;
            let paragraph = |i: usize| at(i - 1) == '\n' && at(i - 2) == '\n';
            let sentence = |i: usize| {
                let (p, c) = (at(i - 2), at(i - 1));
                (c.is_whitespace() && matches!(p, '.' | '!' | '?' | ';'))
                    || matches!(c, '。' | '！' | '？' | '；')
            };
            let word = |i: usize| at(i - 1).is_whitespace();
            let find = |f: &dyn Fn(usize) -> bool| (lowest.max(2)..=hard_end).rev().find(|&i| f(i));
            find(&paragraph)
                .or_else(|| find(&sentence))
                .or_else(|| find(&word))
                .unwrap_or(hard_end)
        };
        out.push(Passage {
            start,
            end,
            text: chars.get(start..end).unwrap_or_default().iter().collect(),
        });
        if end >= n {
            break;
        }
        // The next passage starts up to `overlap` characters back, at a word if there is one.
        let back = end.saturating_sub(overlap).max(start + 1);
        start = (back..end)
            .find(|&i| i > 0 && at(i - 1).is_whitespace() && !at(i).is_whitespace())
            .unwrap_or(back);
    }
    out
}

fn passage_chunks(matched: Matched, text: &str) -> Vec<Chunk> {
    passages(text, PASSAGE_CHARS, OVERLAP_CHARS)
        .into_iter()
        .filter(|p| !p.text.trim().is_empty())
        .map(|p| Chunk {
            matched,
            text: p.text,
            span: Some((p.start as u64, p.end as u64)),
            page: None,
        })
        .collect()
}

/// What an item says about itself, as the chunks and the search filters need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemMeta {
    pub title: String,
    /// Creators as text, e.g. "Gödel, Kurt; Turing, Alan".
    pub creators: String,
    pub year: Option<i32>,
    /// Zotero's item type, e.g. `journalArticle`.
    pub item_type: String,
    /// Journal, book, proceedings, publisher: where it appeared.
    pub venue: String,
    pub abstract_note: String,
    pub collections: Vec<String>,
    pub tags: Vec<String>,
}

/// An item's chunks: title, metadata, abstract passages.
pub fn item_chunks(meta: &ItemMeta) -> Vec<Chunk> {
    let mut out = Vec::new();
    if !meta.title.trim().is_empty() {
        out.push(Chunk {
            matched: Matched::Title,
            text: meta.title.trim().to_string(),
            span: None,
            page: None,
        });
    }
    let year = meta.year.map(|y| y.to_string()).unwrap_or_default();
    let tags = meta.tags.join("; ");
    let parts: Vec<&str> = [meta.creators.trim(), &year, meta.venue.trim(), &tags]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    if !parts.is_empty() {
        out.push(Chunk {
            matched: Matched::Metadata,
            text: parts.join(". "),
            span: None,
            page: None,
        });
    }
    out.extend(passage_chunks(Matched::Abstract, &meta.abstract_note));
    out
}

/// A note's chunks, from its Markdown; offsets are characters of the Markdown.
pub fn note_chunks(markdown: &str) -> Vec<Chunk> {
    passage_chunks(Matched::Note, markdown)
}

/// An annotation's chunks: the highlighted text and the comment, together (a long one is
/// cut into passages, without offsets, since the two are joined here).
pub fn annotation_chunks(text: &str, comment: &str) -> Vec<Chunk> {
    let joined = [text.trim(), comment.trim()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    passage_chunks(Matched::Annotation, &joined)
        .into_iter()
        .map(|c| Chunk { span: None, ..c })
        .collect()
}

/// An attachment's full text in passages; offsets are characters of `text`.
pub fn fulltext_chunks(text: &str) -> Vec<Chunk> {
    passage_chunks(Matched::Fulltext, text)
}

/// A file's text in passages, page by page: no passage crosses a page, each names its page,
/// and its offsets are characters of its page's text moved by the page's `offset`.
pub fn page_chunks(pages: &[PageText<'_>]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for p in pages {
        let page = PageRef {
            index: p.index,
            label: p.label.to_string(),
        };
        out.extend(
            passage_chunks(Matched::Fulltext, p.text)
                .into_iter()
                .map(|c| Chunk {
                    span: p
                        .offset
                        .zip(c.span)
                        .map(|(at, (start, end))| (at + start, at + end)),
                    page: Some(page.clone()),
                    ..c
                }),
        );
    }
    out
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

    fn check(text: &str, max: usize, overlap: usize) {
        let ps = passages(text, max, overlap);
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            assert!(ps.is_empty());
            return;
        }
        let overlap = overlap.min(max.max(2) / 2 - 1);
        assert_eq!(ps.first().unwrap().start, 0);
        assert_eq!(ps.last().unwrap().end, chars.len());
        for p in &ps {
            assert!(p.end > p.start);
            assert!(p.end - p.start <= max.max(2), "{} > {max}", p.end - p.start);
            let exact: String = chars[p.start..p.end].iter().collect();
            assert_eq!(p.text, exact);
        }
        for w in ps.windows(2) {
            assert!(w[1].start > w[0].start, "no progress");
            assert!(w[1].start <= w[0].end, "gap between passages");
            assert!(w[0].end - w[1].start <= overlap, "overlap too large");
        }
    }

    #[test]
    fn cuts_at_sentences_and_keeps_offsets() {
        let s = "First sentence here. ".repeat(100);
        let ps = passages(&s, 100, 20);
        check(&s, 100, 20);
        for p in &ps[..ps.len() - 1] {
            assert!(p.text.ends_with(". "), "{:?}", p.text);
        }
    }

    #[test]
    fn cjk_and_no_spaces() {
        let s = "深層学習による画像認識。".repeat(300);
        check(&s, 1000, 150);
        let s = "x".repeat(5000);
        check(&s, 1000, 150);
    }

    #[test]
    fn item_chunks_split_title_metadata_abstract() {
        let m = ItemMeta {
            title: "On Computable Numbers".into(),
            creators: "Turing, Alan".into(),
            year: Some(1936),
            item_type: "journalArticle".into(),
            venue: "Proc. London Math. Soc.".into(),
            abstract_note: "The computable numbers may be described briefly.".into(),
            tags: vec!["logic".into()],
            ..ItemMeta::default()
        };
        let c = item_chunks(&m);
        let kinds: Vec<Matched> = c.iter().map(|c| c.matched).collect();
        assert_eq!(
            kinds,
            [Matched::Title, Matched::Metadata, Matched::Abstract]
        );
        assert!(c[1].text.contains("1936") && c[1].text.contains("logic"));
    }

    #[test]
    fn page_chunks_stay_on_their_page_and_name_it() {
        let long = "Words on the second page. ".repeat(100);
        let pages = [
            PageText {
                index: 0,
                label: "iv",
                text: "Short first page.",
                offset: Some(18),
            },
            PageText {
                index: 1,
                label: "217",
                text: &long,
                offset: Some(19),
            },
            PageText {
                index: 2,
                label: "218",
                text: "   ",
                offset: Some(19),
            },
            PageText {
                index: 3,
                label: "219",
                text: "Unaddressed.",
                offset: None,
            },
        ];
        let c = page_chunks(&pages);
        assert_eq!(c[0].text, "Short first page.");
        assert_eq!(c[0].span, Some((18, 35)));
        assert_eq!(
            c[0].page,
            Some(PageRef {
                index: 0,
                label: "iv".into()
            })
        );
        let second: Vec<&Chunk> = c
            .iter()
            .filter(|c| c.page.as_ref().unwrap().index == 1)
            .collect();
        assert!(second.len() > 2, "{}", second.len());
        let chars: Vec<char> = long.chars().collect();
        for ch in &second {
            // Within the page: its text, where its span says (less the page's offset).
            let (s, e) = ch.span.unwrap();
            let exact: String = chars[(s - 19) as usize..(e - 19) as usize].iter().collect();
            assert_eq!(ch.text, exact);
            assert_eq!(ch.page.as_ref().unwrap().label, "217");
        }
        // A blank page has no chunk; a page without an offset has chunks without a span.
        assert!(!c.iter().any(|c| c.page.as_ref().unwrap().index == 2));
        let last = c.last().unwrap();
        assert_eq!((last.text.as_str(), last.span), ("Unaddressed.", None));
        assert_eq!(last.matched, Matched::Fulltext);
    }

    proptest! {
        #[test]
        fn passages_cover_map_back_and_stay_bounded(
            text in "(\\PC{0,12}[ .\n]{0,2}){0,300}",
            max in 2usize..300,
            overlap in 0usize..200,
        ) {
            check(&text, max, overlap);
        }
    }
}
