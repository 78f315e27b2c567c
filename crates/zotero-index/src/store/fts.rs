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

/// A user's query as the pieces of an FTS5 expression that cannot be a syntax error nor
/// mean anything but "any of these words" once joined by OR: each whitespace-separated
/// piece becomes a quoted string (quotes inside are dropped: the tokenizer separates words
/// at them anyway), which FTS5 reads as a phrase of the piece's tokens (so
/// `sleep-deprivation` and a CJK run are phrases); BM25 ranks chunks matching more and
/// rarer pieces higher. Operators (`AND`, `NEAR`, `-`, `*`, `^`, `:`, parentheses) inside
/// quotes are plain text; control characters are spaces. Empty when nothing in the query
/// can match.
pub(crate) fn fts_pieces(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .take(64)
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
            fts_query("a \"b c"),
            Some("\"a\" OR \" b\" OR \"c\"".to_string())
        );
        assert_eq!(
            fts_query("画像認識"),
            Some("\" 画  像  認  識 \"".to_string())
        );
        assert_eq!(fts_query(" - * ( ) "), None);
    }
}
