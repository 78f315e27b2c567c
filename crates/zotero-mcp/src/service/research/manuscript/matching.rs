//! Finding a quotation in a full text: both normalized alike (case, curly and straight
//! quotes, dashes, ligatures, whitespace and line breaks, words hyphenated across lines),
//! an ellipsis in the quotation a gap; exact when every piece is there in order, else the
//! most similar passage (words in order, as a share of the quotation's) when it is similar
//! enough. Offsets are characters of the original full text; pages come from its page breaks
//! (form feeds). Pure functions.

use std::collections::HashMap;

use super::work::Work;

/// The least similarity a passage needs to be reported as a fuzzy match.
pub const FUZZY_MIN: f64 = 0.6;
/// How far apart (bytes of normalized text) two pieces of a quotation cut by an ellipsis may be.
const MAX_GAP: usize = 5_000;
/// Words a fuzzy window may hold beyond the quotation's, per ellipsis.
const GAP_WORDS: usize = 120;
/// The most characters of a passage reported.
pub const PASSAGE_CHARS: usize = 300;
/// A word found more often than this in one text does not vote for where a quotation starts.
const COMMON_WORD: usize = 400;

/// A text normalized for comparison, with the original character offset of each byte.
#[derive(Debug, Default)]
pub struct Normalized {
    pub text: String,
    /// `map[b]`: the character offset in the original text of normalized byte `b`.
    pub map: Vec<usize>,
}

fn fold(c: char, out: &mut String) {
    match c {
        '‘' | '’' | '‚' | '‛' | '′' | '`' | '´' => out.push('\''),
        '“' | '”' | '„' | '‟' | '″' | '«' | '»' => out.push('"'),
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => out.push('-'),
        'ﬀ' => out.push_str("ff"),
        'ﬁ' => out.push_str("fi"),
        'ﬂ' => out.push_str("fl"),
        'ﬃ' => out.push_str("ffi"),
        'ﬄ' => out.push_str("ffl"),
        'ﬅ' | 'ﬆ' => out.push_str("st"),
        '…' => out.push_str("..."),
        _ => out.extend(c.to_lowercase()),
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{c}' | '\u{2028}' | '\u{2029}')
}

/// `text` normalized: lower case, quotes and dashes plain, ligatures spelt out, every run of
/// whitespace one space, a word hyphenated across a line break joined (`exam-\nple`), soft
/// hyphens and square brackets gone.
pub fn normalize(text: &str) -> Normalized {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Normalized {
        text: String::with_capacity(text.len()),
        map: Vec::with_capacity(text.len()),
    };
    let mut buf = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        // Soft hyphens, and brackets: a quotation's editorial `[t]he` is the text's `the`.
        if matches!(c, '\u{ad}' | '[' | ']') {
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            let mut j = i;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            if !out.text.is_empty() && !out.text.ends_with(' ') {
                out.text.push(' ');
                out.map.push(i);
            }
            i = j;
            continue;
        }
        if matches!(c, '-' | '‐' | '‑')
            && out
                .text
                .chars()
                .next_back()
                .is_some_and(char::is_alphabetic)
        {
            // A hyphen at the end of a line with a lower-case letter on the next: one word.
            let mut j = i + 1;
            let mut saw_break = false;
            while let Some(&w) = chars.get(j) {
                if !w.is_whitespace() {
                    break;
                }
                saw_break |= is_break(w);
                j += 1;
            }
            if saw_break && chars.get(j).is_some_and(|n| n.is_lowercase()) {
                i = j;
                continue;
            }
        }
        buf.clear();
        fold(c, &mut buf);
        for _ in 0..buf.len() {
            out.map.push(i);
        }
        out.text.push_str(&buf);
        i += 1;
    }
    if out.text.ends_with(' ') {
        out.text.pop();
        out.map.pop();
    }
    out
}

/// The pieces of a quotation between its ellipses (`…`, `...`, `. . .`, `[...]`, `[…]`),
/// each normalized (editorial brackets, `[t]he`, dropped), trimmed of spaces and of the
/// punctuation a quotation adds at its ends. Empty pieces are left out.
pub fn pieces(quote: &str) -> Vec<String> {
    let mut q = quote.to_string();
    for gap in ["[...]", "[…]", "(...)", "(…)", ". . .", "..."] {
        q = q.replace(gap, "…");
    }
    q.split('…')
        .map(|p| {
            let n = normalize(p).text;
            n.trim_matches(|c: char| c.is_whitespace() || ",.;:!?\"'".contains(c))
                .to_string()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// Where an exact match lies: normalized byte span.
fn exact(full: &Normalized, pieces: &[String]) -> Option<(usize, usize)> {
    let (first, rest) = pieces.split_first()?;
    for (start, _) in full.text.match_indices(first.as_str()) {
        let mut end = start + first.len();
        let mut ok = true;
        for p in rest {
            let window_end = (end + MAX_GAP + p.len()).min(full.text.len());
            let found = full
                .text
                .get(end..window_end)
                .or_else(|| full.text.get(end..))
                .and_then(|w| w.find(p.as_str()));
            match found {
                Some(at) => end = end + at + p.len(),
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Some((start, end));
        }
    }
    None
}

/// The words of a normalized text with their byte spans (punctuation around a word dropped).
fn words(text: &str) -> Vec<(&str, usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    for w in text.split(' ') {
        let start = pos;
        pos += w.len() + 1;
        let lead = w.len() - w.trim_start_matches(|c: char| !c.is_alphanumeric()).len();
        let trimmed = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !trimmed.is_empty() {
            out.push((trimmed, start + lead, start + lead + trimmed.len()));
        }
    }
    out
}

/// A full text prepared for finding quotations in it, once per text.
pub struct Haystack {
    pub original: String,
    norm: Normalized,
    words: Vec<(usize, usize)>,
    word_ids: Vec<u32>,
    postings: HashMap<String, Vec<usize>>,
    /// Character offsets of page breaks (form feeds) in the original text.
    breaks: Vec<usize>,
    /// Pages Zotero took the text from (a PDF's `indexedPages`).
    pub indexed_pages: Option<u64>,
}

/// Where a quotation was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// 1.0 for an exact match; below for a fuzzy one.
    pub score: f64,
    pub exact: bool,
    /// Character span in the original full text.
    pub start: usize,
    pub end: usize,
    /// The original text there (at most [`PASSAGE_CHARS`] characters).
    pub passage: String,
    /// The page it starts on, and the one it ends on, where known.
    pub page: Option<u64>,
    pub end_page: Option<u64>,
}

impl Haystack {
    pub fn new(original: String, indexed_pages: Option<u64>) -> Haystack {
        let norm = normalize(&original);
        let spans = words(&norm.text);
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut postings: HashMap<String, Vec<usize>> = HashMap::new();
        let mut word_ids = Vec::with_capacity(spans.len());
        for (n, (w, _, _)) in spans.iter().enumerate() {
            let next = ids.len() as u32;
            word_ids.push(*ids.entry((*w).to_string()).or_insert(next));
            postings.entry((*w).to_string()).or_default().push(n);
        }
        let breaks = original
            .chars()
            .enumerate()
            .filter(|(_, c)| *c == '\u{c}')
            .map(|(i, _)| i)
            .collect();
        Haystack {
            words: spans.iter().map(|(_, s, e)| (*s, *e)).collect(),
            word_ids,
            postings,
            norm,
            original,
            breaks,
            indexed_pages,
        }
    }

    /// The page of character offset `at`: counted from page breaks, or 1 when the text is
    /// of one page; unknown otherwise.
    pub fn page_of(&self, at: usize) -> Option<u64> {
        if self.breaks.is_empty() {
            return (self.indexed_pages == Some(1)).then_some(1);
        }
        Some(1 + self.breaks.iter().take_while(|b| **b < at).count() as u64)
    }

    fn original_span(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.norm.map.get(start).copied().unwrap_or(0);
        let e = end
            .checked_sub(1)
            .and_then(|l| self.norm.map.get(l))
            .map_or(s, |e| e + 1);
        (s, e)
    }

    fn found(&self, score: f64, exact: bool, start: usize, end: usize) -> Found {
        let (s, e) = self.original_span(start, end);
        let passage: String = self
            .original
            .chars()
            .skip(s)
            .take((e - s).min(PASSAGE_CHARS))
            .collect();
        let page = self.page_of(s);
        let end_page = self
            .page_of(e.saturating_sub(1))
            .filter(|p| Some(*p) != page);
        Found {
            score,
            exact,
            start: s,
            end: e,
            passage,
            page,
            end_page,
        }
    }

    /// Where `quote` is in this text: exactly, or the most similar passage when at least
    /// [`FUZZY_MIN`] similar, else `None` with the best similarity seen.
    pub fn find(&self, quote: &str) -> Result<Found, f64> {
        self.find_with(quote, &Work::unlimited())
    }

    /// [`Haystack::find`], metered by `work`: a long quotation's comparisons (its words
    /// times a window's) stop once it is cancelled, with what they found so far.
    pub fn find_with(&self, quote: &str, work: &Work) -> Result<Found, f64> {
        let pieces = pieces(quote);
        if pieces.is_empty() {
            return Err(0.0);
        }
        if let Some((s, e)) = exact(&self.norm, &pieces) {
            return Ok(self.found(1.0, true, s, e));
        }
        let joined = pieces.join(" ");
        let q: Vec<&str> = words(&joined).into_iter().map(|(w, _, _)| w).collect();
        if q.is_empty() {
            return Err(0.0);
        }
        let slack = q.len() / 4 + 3 + GAP_WORDS * (pieces.len() - 1);
        // Each quotation word votes for the start its occurrences imply.
        let mut votes: HashMap<usize, usize> = HashMap::new();
        for (j, w) in q.iter().enumerate() {
            let Some(at) = self.postings.get(*w) else {
                continue;
            };
            if at.len() > COMMON_WORD {
                continue;
            }
            for p in at {
                *votes.entry(p.saturating_sub(j)).or_default() += 1;
            }
        }
        let mut starts: Vec<(usize, usize)> = votes.into_iter().collect();
        starts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let q_ids: Vec<Option<u32>> = q
            .iter()
            .map(|w| {
                self.postings
                    .get(*w)
                    .and_then(|p| p.first())
                    .and_then(|first| self.word_ids.get(*first).copied())
            })
            .collect();
        let mut best: Option<(f64, usize, usize)> = None;
        for (start, _) in starts.into_iter().take(8) {
            let from = start.saturating_sub(slack / 2);
            let to = (start + q.len() + slack).min(self.words.len());
            let window = self.word_ids.get(from..to).unwrap_or_default();
            let (matched, first, last) = lcs(&q_ids, window, work);
            if matched == 0 {
                continue;
            }
            let score = matched as f64 / q.len() as f64;
            if best.is_none_or(|(b, _, _)| score > b) {
                best = Some((score, from + first, from + last));
            }
        }
        match best {
            Some((score, first, last)) if score >= FUZZY_MIN => {
                let s = self.words.get(first).map_or(0, |w| w.0);
                let e = self.words.get(last).map_or(s, |w| w.1);
                Ok(self.found(score, false, s, e))
            }
            Some((score, _, _)) => Err(score),
            None => Err(0.0),
        }
    }
}

/// The longest common subsequence of `q` (words absent from the text are `None`) and
/// `window`: its length, and the window's first and last matched positions.
fn lcs(q: &[Option<u32>], window: &[u32], work: &Work) -> (usize, usize, usize) {
    let n = window.len();
    if n == 0 || q.is_empty() {
        return (0, 0, 0);
    }
    // dp over the window for each quotation word, with where the first match began.
    let mut prev = vec![(0usize, usize::MAX); n + 1];
    let mut cur = vec![(0usize, usize::MAX); n + 1];
    let mut best = (0usize, 0usize, 0usize);
    for w in q {
        if !work.go(n) {
            break;
        }
        for j in 1..=n {
            let same = w.is_some() && window.get(j - 1).copied() == *w;
            let diag = prev.get(j - 1).copied().unwrap_or((0, usize::MAX));
            let up = prev.get(j).copied().unwrap_or((0, usize::MAX));
            let left = cur.get(j - 1).copied().unwrap_or((0, usize::MAX));
            let value = if same {
                let first = if diag.0 == 0 { j - 1 } else { diag.1 };
                let v = (diag.0 + 1, first);
                if v.0 > best.0 {
                    best = (v.0, first, j - 1);
                }
                v
            } else if up.0 >= left.0 {
                up
            } else {
                left
            };
            if let Some(c) = cur.get_mut(j) {
                *c = value;
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

/// Similarity of two strings from 0 to 1: one minus their edit distance over the longer
/// length (characters, case folded; the first 200 of each).
pub fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.to_lowercase().chars().take(200).collect();
    let b: Vec<char> = b.to_lowercase().chars().take(200).collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = i;
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let up = row.get(j + 1).copied().unwrap_or(0);
            let left = row.get(j).copied().unwrap_or(0);
            let v = (diag + usize::from(ca != cb)).min(up + 1).min(left + 1);
            diag = up;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = v;
            }
        }
    }
    let d = row.last().copied().unwrap_or(longest);
    1.0 - d as f64 / longest as f64
}

/// A string as `similarity` compares it: case folded, its first 200 characters.
pub fn folded(s: &str) -> Vec<char> {
    s.to_lowercase().chars().take(200).collect()
}

/// `similarity` of two strings already `folded`, when it is at least `floor`; `None` when it
/// is less. Only a band of the edit table as wide as the distance `floor` allows is filled,
/// and the work stops once a row is beyond it: comparing one key with every entry of a large
/// library costs what the close ones cost, not a full table each. `row` is scratch space.
pub fn similarity_at_least(
    a: &[char],
    b: &[char],
    floor: f64,
    row: &mut Vec<usize>,
) -> Option<f64> {
    let longest = a.len().max(b.len());
    if longest == 0 {
        return (1.0 >= floor).then_some(1.0);
    }
    if floor > 1.0 {
        return None;
    }
    // score = 1 - d / longest >= floor  <=>  d <= (1 - floor) * longest; one more for the
    // rounding of the product, the exact score is compared below.
    let allowed = ((1.0 - floor.max(0.0)) * longest as f64).floor() as usize + 1;
    let d = bounded_distance(a, b, allowed, row)?;
    let score = 1.0 - d as f64 / longest as f64;
    (score >= floor).then_some(score)
}

/// The edit distance of `a` and `b` when it is at most `k` (Ukkonen's band: cells farther
/// than `k` from the diagonal cannot lead to a distance within `k`).
fn bounded_distance(a: &[char], b: &[char], k: usize, row: &mut Vec<usize>) -> Option<usize> {
    if a.len().abs_diff(b.len()) > k {
        return None;
    }
    let over = k.saturating_add(1);
    row.clear();
    // Row 0 of the table, capped: a column beyond the band is `over` until the band reaches it.
    row.extend((0..=b.len()).map(|j| j.min(over)));
    for (i, ca) in a.iter().enumerate() {
        let i1 = i + 1;
        let lo = i1.saturating_sub(k).max(1);
        let hi = (i1 + k).min(b.len());
        let mut diag = row.get(lo - 1).copied().unwrap_or(over);
        let first = if lo == 1 { i1.min(over) } else { over };
        if let Some(c) = row.get_mut(lo - 1) {
            *c = first;
        }
        let (mut left, mut least) = (first, first);
        for j in lo..=hi {
            let up = row.get(j).copied().unwrap_or(over);
            let same = b.get(j - 1) == Some(ca);
            let v = (diag + usize::from(!same))
                .min(up + 1)
                .min(left + 1)
                .min(over);
            diag = up;
            if let Some(c) = row.get_mut(j) {
                *c = v;
            }
            left = v;
            least = least.min(v);
        }
        if least > k {
            return None;
        }
    }
    row.get(b.len()).copied().filter(|d| *d <= k)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The dominant sequence transduction models are based on complex \
        recurrent or convolutional neural networks. We propose a new simple network \
        architecture, the Trans-\nformer, based solely on attention mechanisms, dispensing \
        with recurrence and convolutions entirely.\u{c}Experiments on two machine translation \
        tasks show these models to be superior in quality while being more parallelizable.";

    fn hay() -> Haystack {
        Haystack::new(TEXT.to_string(), Some(2))
    }

    #[test]
    fn normalizing_folds_quotes_whitespace_and_hyphenation() {
        let n = normalize("  “Curly”  and\n\n‘single’ —\tdash exam-\n  ple ﬁne\u{ad}ly END ");
        assert_eq!(n.text, "\"curly\" and 'single' - dash example finely end");
        assert_eq!(n.map.len(), n.text.len());
        // A hyphen before a capital stays (a name split at a line break).
        assert_eq!(normalize("Jean-\nPaul").text, "jean- paul");
    }

    #[test]
    fn pieces_split_at_every_kind_of_ellipsis() {
        assert_eq!(
            pieces("a b … c d [...] e . . . f...g"),
            ["a b", "c d", "e", "f", "g"]
        );
        assert_eq!(pieces("“[T]he end,”"), ["the end"]);
        assert!(pieces(" … ").is_empty());
    }

    #[test]
    fn exact_with_straight_quotes_line_breaks_and_hyphenation() {
        let h = hay();
        let f = h
            .find("the Transformer, based solely on attention")
            .unwrap();
        assert!(f.exact);
        assert_eq!(f.score, 1.0);
        assert!(f.passage.starts_with("the Trans-\nformer"));
        assert_eq!(
            TEXT.chars().skip(f.start).take(3).collect::<String>(),
            "the"
        );
        assert_eq!(f.page, Some(1));
        assert_eq!(f.end_page, None);
    }

    #[test]
    fn an_ellipsis_is_a_gap_and_a_quotation_may_span_two_pages() {
        let h = hay();
        let f = h
            .find("We propose a new simple network architecture … entirely. Experiments on two")
            .unwrap();
        assert!(f.exact);
        assert_eq!((f.page, f.end_page), (Some(1), Some(2)));
        let f = h
            .find("show these models [...] more parallelizable")
            .unwrap();
        assert_eq!(f.page, Some(2));
    }

    #[test]
    fn near_misses_are_fuzzy_with_a_score_and_far_ones_are_not_found() {
        let h = hay();
        let f = h
            .find("We propose a novel simple network architecture, the Transformer, based only on attention")
            .unwrap();
        assert!(!f.exact);
        assert!(f.score >= FUZZY_MIN && f.score < 1.0, "{}", f.score);
        assert!(f.passage.contains("We propose a new simple network"));
        let missing = h.find("Colorless green ideas sleep furiously tonight in Paris");
        assert!(missing.is_err());
    }

    #[test]
    fn pages_without_breaks_are_known_for_one_page_only() {
        assert_eq!(Haystack::new("x".into(), Some(1)).page_of(0), Some(1));
        assert_eq!(Haystack::new("x".into(), Some(3)).page_of(0), None);
        assert_eq!(
            Haystack::new("a\u{c}b\u{c}c".into(), None).page_of(4),
            Some(3)
        );
    }

    /// A long quotation compared word by word (not found exactly) stops once cancelled.
    #[test]
    fn a_long_fuzzy_comparison_stops_once_cancelled() {
        let words: Vec<String> = (0..3_000).map(|i| format!("w{i}")).collect();
        let hay = Haystack::new(words.join(" "), None);
        let quote: Vec<&str> = words
            .iter()
            .enumerate()
            .map(|(i, w)| if i % 10 == 0 { "x" } else { w.as_str() })
            .collect();
        let quote = quote.join(" ");
        let whole = Work::unlimited();
        assert!(hay.find_with(&quote, &whole).is_ok_and(|f| !f.exact));
        let work = Work::cancelled_after(whole.steps() / 10);
        let _ = hay.find_with(&quote, &work);
        assert!(
            work.steps() < whole.steps() / 5,
            "{} of {} steps",
            work.steps(),
            whole.steps()
        );
    }

    #[test]
    fn the_banded_similarity_is_the_similarity_when_it_reaches_the_floor() {
        use proptest::prelude::*;
        let word = "[abc ]{0,12}";
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&(word, word, 0u8..=20), |(a, b, f)| {
                let floor = f64::from(f) / 20.0;
                let full = similarity(&a, &b);
                let mut row = Vec::new();
                let banded = similarity_at_least(&folded(&a), &folded(&b), floor, &mut row);
                let want = (full >= floor).then_some(full);
                prop_assert_eq!(banded, want, "{:?} {:?} floor {}", a, b, floor);
                Ok(())
            })
            .unwrap();
        let mut row = Vec::new();
        let (a, b) = (folded("smith2020"), folded("Smith2021"));
        assert_eq!(similarity_at_least(&a, &b, 0.8, &mut row), Some(8.0 / 9.0));
        assert_eq!(similarity_at_least(&a, &b, 0.9, &mut row), None);
        assert_eq!(similarity_at_least(&[], &[], 1.0, &mut row), Some(1.0));
    }

    #[test]
    fn similarity_is_one_minus_the_edit_distance_share() {
        assert_eq!(similarity("abc", "ABC"), 1.0);
        assert!((similarity("smith2020", "smith2021") - 8.0 / 9.0).abs() < 1e-9);
        assert_eq!(similarity("", "abc"), 0.0);
    }
}
