//! A hit as it is answered: its item's metadata and its best chunks as passages, each cut
//! to a window around the query's words.

use rusqlite::OptionalExtension;

use crate::chunk::{Matched, PageRef};
use crate::error::Result;
use crate::store::Index;

use super::fuse::Group;
use super::query::{Hit, HitPassage, MAX_PASSAGES, PASSAGE_MAX_CHARS};

impl Index {
    pub(crate) fn hit(&self, g: Group, terms: &[Vec<char>]) -> Result<Hit> {
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
            "SELECT c.matched, c.text, c.start_char, d.key, c.page_index, c.page_label
             FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
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
                    match (r.get::<_, Option<u32>>(4)?, r.get::<_, Option<String>>(5)?) {
                        (Some(index), Some(label)) => Some(PageRef { index, label }),
                        _ => None,
                    },
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
            let (kind, text, start, doc_key, page) = chunk_stmt.query_row([f.chunk_id], get)?;
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
                page,
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
pub(crate) fn fold(c: char) -> char {
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

pub(crate) fn query_terms(q: &str) -> Vec<Vec<char>> {
    q.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.chars().map(fold).collect::<Vec<char>>())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The words a passage is looked for by: the query's words (stop words left out when
/// there are others, as the keyword search does), each cut to a stem-like prefix (its first
/// two thirds, at least four characters), so that "retraction" is found in "retracted" as
/// the stemming keyword index found it.
pub(crate) fn passage_terms(q: &str) -> Vec<Vec<char>> {
    let all = query_terms(q);
    let is_stop = |t: &Vec<char>| {
        let w: String = t.iter().collect();
        crate::store::STOP_WORDS.contains(&w.as_str())
    };
    let content: Vec<Vec<char>> = all.iter().filter(|t| !is_stop(t)).cloned().collect();
    let terms = if content.is_empty() { all } else { content };
    terms
        .into_iter()
        .map(|t| {
            let keep = if t.len() <= 4 {
                t.len()
            } else {
                (t.len() * 2).div_ceil(3).max(4)
            };
            t.into_iter().take(keep).collect()
        })
        .collect()
}

/// Whether `text` holds one of `terms` (folded as [`fold`] does).
pub(crate) fn mentions(text: &str, terms: &[Vec<char>]) -> bool {
    let folded: Vec<char> = text.chars().map(fold).collect();
    terms
        .iter()
        .filter(|t| !t.is_empty())
        .any(|t| folded.windows(t.len()).any(|w| w == t.as_slice()))
}

/// At most `max` characters of `text` centred on the first query term found (the start when
/// none is), cut at spaces near the edges; answers where it starts, in characters.
pub(crate) fn window(text: &str, terms: &[Vec<char>], max: usize) -> (usize, String) {
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
