//! The answer budget: a tool called with its defaults answers at most [`ANSWER_CHARS`]
//! characters of text (its envelope as JSON, the text content of the MCP answer), and says
//! how to get the rest. Pages keep the entries that fit and move `next_start` back to the
//! first left out; texts are cut where their JSON would pass the budget.

use serde::Serialize;

/// The most characters of text (the envelope as JSON) an answer holds by default.
pub const ANSWER_CHARS: usize = 20_000;
/// What a page's entries may take: the budget less room for the envelope and the page's
/// other fields (total, next_start, notes of what was cut).
pub const PAGE_CHARS: usize = ANSWER_CHARS - 2_000;

/// Characters `v` takes as JSON (as the envelope writes it: compact).
pub fn json_chars<T: Serialize + ?Sized>(v: &T) -> usize {
    serde_json::to_string(v).map_or(usize::MAX, |s| s.chars().count())
}

/// Characters `c` takes inside a JSON string.
fn escaped_chars(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        _ => 1,
    }
}

/// The longest start of `text` that takes at most `max` characters inside a JSON string,
/// with the number of characters of `text` it holds; `None` when all of `text` fits.
pub fn cut_json(text: &str, max: usize) -> Option<(&str, usize)> {
    let mut used = 0;
    for (n, (at, c)) in text.char_indices().enumerate() {
        used += escaped_chars(c);
        if used > max {
            return Some((text.get(..at).unwrap_or_default(), n));
        }
    }
    None
}

/// The first `entries` whose JSON (a comma each) fits in `max` characters, at least one
/// (each entry is bounded on its own), and whether some were left out.
pub fn fit_page<T: Serialize>(mut entries: Vec<T>, max: usize) -> (Vec<T>, bool) {
    let mut used = 0;
    let mut keep = entries.len();
    for (n, e) in entries.iter().enumerate() {
        used += json_chars(e).saturating_add(1);
        if used > max && n > 0 {
            keep = n;
            break;
        }
    }
    let cut = keep < entries.len();
    entries.truncate(keep);
    (entries, cut)
}

/// Where the next page starts once a page from `start` was fitted to `kept` entries: after
/// them when some were left out, else where the listing said (`next`).
pub fn next_start(start: u64, kept: usize, cut: bool, next: Option<u64>) -> Option<u64> {
    if cut {
        Some(start.saturating_add(kept as u64))
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cut_by_their_json() {
        assert_eq!(cut_json("abc", 3), None);
        assert_eq!(cut_json("abcd", 3), Some(("abc", 3)));
        // A quote takes two characters, a control character six.
        assert_eq!(cut_json("a\"b", 2), Some(("a", 1)));
        assert_eq!(cut_json("é\u{1}x", 6), Some(("é", 1)));
        let s = "x\n".repeat(100);
        let (kept, n) = cut_json(&s, 51).unwrap();
        assert!(json_chars(kept) <= 53 && n == kept.chars().count());
    }

    #[test]
    fn pages_keep_what_fits_and_at_least_one() {
        let page = vec!["a".repeat(10), "b".repeat(10), "c".repeat(10)];
        let (kept, cut) = fit_page(page.clone(), 30);
        assert_eq!((kept.len(), cut), (2, true));
        let (kept, cut) = fit_page(page.clone(), 5);
        assert_eq!((kept.len(), cut), (1, true));
        let (kept, cut) = fit_page(page, 1_000);
        assert_eq!((kept.len(), cut), (3, false));
        assert_eq!(next_start(25, 2, true, Some(50)), Some(27));
        assert_eq!(next_start(25, 25, false, None), None);
    }
}
