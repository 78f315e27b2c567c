//! The text FTS5 is given and the phrases a query becomes (the tokenizer is described in
//! the module notes of [`crate::store`]).

/// Whether the tokenizer should see `c` as a word of its own: Han, kana, Hangul, whose
/// scripts do not put spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xF900..=0xFAFF // Han compatibility
        | 0xFF66..=0xFF9F // half-width Katakana
        | 0x1100..=0x11FF // Hangul Jamo
        | 0x3130..=0x318F // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0x20000..=0x2FFFF // Han extensions B…
    )
}

/// The text the keyword index is given: `text` with a space around each CJK character, so
/// that the tokenizer makes each one a token (see the module's notes).
pub(crate) fn fts_text(text: &str) -> String {
    if !text.chars().any(is_cjk) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    for c in text.chars() {
        if is_cjk(c) {
            out.push(' ');
            out.push(c);
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The English stop words of Lucene's `EnglishAnalyzer` (the BM25 baselines of Anserini,
/// Pyserini and Elasticsearch's `english` analyzer): words that say nothing of a topic.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
];

/// Whether a query piece is one stop word (case aside, its punctuation around it too).
fn is_stop_word(piece: &str) -> bool {
    let word = piece.trim_matches(|c: char| !c.is_alphanumeric());
    word.chars().all(|c| c.is_ascii_alphabetic())
        && STOP_WORDS.contains(&word.to_ascii_lowercase().as_str())
}

/// A user's query as the pieces of an FTS5 expression that cannot be a syntax error nor
/// mean anything but "any of these words" once joined by OR: each whitespace-separated
/// piece becomes a quoted string (quotes inside are dropped: the tokenizer separates words
/// at them anyway), which FTS5 reads as a phrase of the piece's tokens (so
/// `sleep-deprivation` and a CJK run are phrases); BM25 ranks chunks matching more and
/// rarer pieces higher. Operators (`AND`, `NEAR`, `-`, `*`, `^`, `:`, parentheses) inside
/// quotes are plain text; control characters are spaces. Empty when nothing in the query
/// can match.
///
/// Stop words ([`STOP_WORDS`]) are left out when the query has other words, as BM25
/// baselines do: "the effect of sleep on memory" is searched as "effect sleep memory". They
/// stay in the index, so that a query of stop words alone ("to be or not") still finds them.
pub(crate) fn fts_pieces(query: &str) -> Vec<String> {
    let pieces: Vec<&str> = query
        .split_whitespace()
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .take(64)
        .collect();
    let content: Vec<&str> = pieces
        .iter()
        .copied()
        .filter(|p| !is_stop_word(p))
        .collect();
    let pieces = if content.is_empty() { pieces } else { content };
    pieces
        .into_iter()
        .map(|p| {
            // FTS5 reads the expression as a C string: a NUL would end it mid-quote.
            let p: String = p
                .chars()
                .map(|c| if c == '"' || c.is_control() { ' ' } else { c })
                .collect();
            format!("\"{}\"", fts_text(&p))
        })
        .collect()
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

    /// The expression a search gives FTS5.
    fn fts_query(query: &str) -> Option<String> {
        let pieces = fts_pieces(query);
        (!pieces.is_empty()).then(|| pieces.join(" OR "))
    }

    #[test]
    fn queries_are_quoted_phrases() {
        assert_eq!(
            fts_query("z \"b c"),
            Some("\"z\" OR \" b\" OR \"c\"".to_string())
        );
        assert_eq!(
            fts_query("画像認識"),
            Some("\" 画  像  認  識 \"".to_string())
        );
        assert_eq!(fts_query(" - * ( ) "), None);
    }

    #[test]
    fn stop_words_are_left_out_unless_alone() {
        assert_eq!(
            fts_query("The effect of sleep on memory"),
            Some("\"effect\" OR \"sleep\" OR \"memory\"".to_string())
        );
        // Punctuation around a stop word does not keep it; a phrase keeps its words.
        assert_eq!(
            fts_query("(the) state-of-the-art"),
            Some("\"state-of-the-art\"".to_string())
        );
        assert_eq!(fts_query("The Who"), Some("\"Who\"".to_string()));
        // Nothing but stop words: searched as they are.
        assert_eq!(
            fts_query("to be or not"),
            Some("\"to\" OR \"be\" OR \"or\" OR \"not\"".to_string())
        );
    }
}
