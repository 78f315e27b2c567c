//! The text FTS5 is given and the phrases a query becomes (the tokenizer is described in
//! the module notes of [`crate::store`]).

use zotero_db::fold_for_search;

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

/// The text the keyword index is given: `text` folded as Zotero folds it for search
/// ([`fold_for_search`]: "Søren" is "soren", "Straße" "strasse", "ﬁle" "file", which
/// FTS5's `remove_diacritics` alone does not do), with a space around each CJK character,
/// so that the tokenizer makes each one a token (see the module's notes). A query is
/// folded alike ([`fts_pieces`]).
pub(crate) fn fts_text(text: &str) -> String {
    spaced(&fold_for_search(text))
}

/// `text` with a space around each CJK character.
fn spaced(text: &str) -> String {
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
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Whether a query word is a stop word (case aside).
fn is_stop_word(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_alphabetic())
        && STOP_WORDS.contains(&word.to_ascii_lowercase().as_str())
}

/// Whether `c` is part of a word for the query's pieces: a letter, a digit, or a
/// combining mark (a decomposed "ü" is one word, as the tokenizer folds it).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c as u32,
            0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// A user's query as the pieces of an FTS5 expression that cannot be a syntax error nor
/// mean anything but "any of these words" once joined by OR: the query is cut into words
/// where the tokenizer cuts it (at spaces, punctuation, quotes, hyphens: `sleep-deprivation`
/// is "sleep" OR "deprivation", as BM25 baselines tokenize it), each a quoted string; a CJK
/// run stays one piece, which FTS5 reads as a phrase of its characters. BM25 ranks chunks
/// matching more and rarer words higher. Operators (`AND`, `NEAR`, `-`, `*`, `^`, `:`,
/// parentheses) are separators or plain words inside quotes. Empty when nothing in the
/// query can match.
///
/// Stop words ([`STOP_WORDS`]) are left out when the query has other words, as BM25
/// baselines do: "the effect of sleep on memory" is searched as "effect sleep memory". They
/// stay in the index, so that a query of stop words alone ("to be or not") still finds them.
///
/// The query is folded first, as the indexed text was ([`fts_text`]), so that FTS5 and the
/// in-memory BM25 (which looks terms up by FTS5's tokens of these pieces) see one term.
pub(crate) fn fts_pieces(query: &str) -> Vec<String> {
    let query = fold_for_search(query);
    let words: Vec<&str> = query
        .split(|c: char| !is_word_char(c))
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .take(64)
        .collect();
    let content: Vec<&str> = words.iter().copied().filter(|w| !is_stop_word(w)).collect();
    let words = if content.is_empty() { words } else { content };
    words
        .into_iter()
        .map(|w| format!("\"{}\"", spaced(w)))
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
    fn queries_are_quoted_words() {
        assert_eq!(
            fts_query("z \"b c"),
            Some("\"z\" OR \"b\" OR \"c\"".to_string())
        );
        assert_eq!(
            fts_query("sleep-deprivation NEAR(x*)"),
            Some("\"sleep\" OR \"deprivation\" OR \"near\" OR \"x\"".to_string())
        );
        assert_eq!(
            fts_query("画像認識"),
            Some("\" 画  像  認  識 \"".to_string())
        );
        // Folded as Zotero folds for search, as the indexed text is.
        assert_eq!(fts_query("Mu\u{308}ller"), Some("\"muller\"".to_string()));
        assert_eq!(
            fts_query("Søren’s Straße—ﬁle"),
            Some("\"soren\" OR \"s\" OR \"strasse\" OR \"file\"".to_string())
        );
        assert_eq!(fts_query(" - * ( ) \0 "), None);
    }

    #[test]
    fn stop_words_are_left_out_unless_alone() {
        assert_eq!(
            fts_query("The effect of sleep on memory"),
            Some("\"effect\" OR \"sleep\" OR \"memory\"".to_string())
        );
        // Punctuation around a stop word does not keep it.
        assert_eq!(
            fts_query("(the) state-of-the-art"),
            Some("\"state\" OR \"art\"".to_string())
        );
        assert_eq!(fts_query("The Who"), Some("\"who\"".to_string()));
        // Nothing but stop words: searched as they are.
        assert_eq!(
            fts_query("to be or not"),
            Some("\"to\" OR \"be\" OR \"or\" OR \"not\"".to_string())
        );
    }
}
