//! The passages closest to a quote that was not found, so a refusal can show the caller what
//! the document says instead (a misremembered word, another edition's wording).
//!
//! Similarity is the share of the quote's character trigrams (after normalisation) that a
//! window of the same length holds, counted as multisets; the window slides one character at
//! a time with the counts kept up to date, so a page costs time linear in its length.

use std::collections::HashMap;

use super::norm::NormChar;

/// A passage near the quote: where, how similar (0 to 1), and the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub page_index: u32,
    pub page_label: String,
    /// The share of the quote's trigrams the passage has, rounded to 2 decimals.
    pub similarity: f64,
    /// The passage as the page's text has it (cut at [`MAX_EXCERPT_CHARS`]).
    pub excerpt: String,
}

/// The longest excerpt returned.
pub const MAX_EXCERPT_CHARS: usize = 400;

type Gram = (char, char, char);

fn gram(w: &[NormChar], quote_len: usize, i: usize) -> Option<Gram> {
    let at = |k: usize| w.get(i + k).map(|n| n.c);
    match quote_len {
        0 => None,
        1 => Some((at(0)?, '\0', '\0')),
        2 => Some((at(0)?, at(1)?, '\0')),
        _ => Some((at(0)?, at(1)?, at(2)?)),
    }
}

fn gram_width(quote_len: usize) -> usize {
    quote_len.clamp(1, 3)
}

/// The best window of `hay` for `quote`: (similarity, first char, last char).
pub(crate) fn best_window(hay: &[NormChar], quote: &[char]) -> Option<(f64, usize, usize)> {
    let m = quote.len();
    let width = gram_width(m);
    if m == 0 || hay.len() < m {
        return None;
    }
    let quote_chars: Vec<NormChar> = quote
        .iter()
        .map(|&c| NormChar {
            c,
            start: 0,
            end: 0,
        })
        .collect();
    let total = m + 1 - width;
    let mut want: HashMap<Gram, i32> = HashMap::new();
    for i in 0..total {
        if let Some(g) = gram(&quote_chars, m, i) {
            *want.entry(g).or_insert(0) += 1;
        }
    }
    let mut have: HashMap<Gram, i32> = HashMap::new();
    let mut shared = 0i32;
    let add = |g: Gram, have: &mut HashMap<Gram, i32>, shared: &mut i32, delta: i32| {
        let Some(&w) = want.get(&g) else { return };
        let h = have.entry(g).or_insert(0);
        if delta > 0 {
            if *h < w {
                *shared += 1;
            }
            *h += 1;
        } else {
            *h -= 1;
            if *h < w {
                *shared -= 1;
            }
        }
    };
    // Grams of the first window: those starting at 0..total.
    for i in 0..total {
        if let Some(g) = gram(hay, m, i) {
            add(g, &mut have, &mut shared, 1);
        }
    }
    let mut best = (shared, 0usize);
    for start in 1..=(hay.len() - m) {
        if let Some(g) = gram(hay, m, start - 1) {
            add(g, &mut have, &mut shared, -1);
        }
        if let Some(g) = gram(hay, m, start + total - 1) {
            add(g, &mut have, &mut shared, 1);
        }
        if shared > best.0 {
            best = (shared, start);
        }
    }
    let similarity = f64::from(best.0) / total as f64;
    Some((similarity, best.1, best.1 + m - 1))
}

/// The page text from the first to the last normalised character, cut.
pub(crate) fn excerpt(text: &str, hay: &[NormChar], first: usize, last: usize) -> String {
    let (Some(a), Some(b)) = (hay.get(first), hay.get(last)) else {
        return String::new();
    };
    let s = text.get(a.start..b.end).unwrap_or("");
    let mut out: String = s.chars().take(MAX_EXCERPT_CHARS).collect();
    if s.chars().count() > MAX_EXCERPT_CHARS {
        out.push('…');
    }
    out
}

pub(crate) fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::super::norm::{normalise, normalise_chars};
    use super::*;

    #[test]
    fn the_best_window_is_the_one_sharing_most_trigrams() {
        let hay = normalise("nothing here; the quick brown fox jumps; other words");
        let quote = normalise_chars("the quick brawn fox jumps");
        let (sim, a, b) = best_window(&hay, &quote).expect("a window");
        assert!(sim > 0.6 && sim < 1.0, "{sim}");
        let text = "nothing here; the quick brown fox jumps; other words";
        assert_eq!(excerpt(text, &hay, a, b), "the quick brown fox jumps");
    }

    #[test]
    fn an_exact_window_scores_one() {
        let hay = normalise("aaa the words bbb");
        let (sim, ..) = best_window(&hay, &normalise_chars("the words")).expect("a window");
        assert_eq!(sim, 1.0);
        assert!(best_window(&hay, &normalise_chars("far too long a quote to fit")).is_none());
    }
}
