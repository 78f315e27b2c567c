//! Text as plain characters: on one line, cut at a character.

/// `text` cut to at most `max` characters (never inside one), and whether it was cut.
pub fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text.get(..at).unwrap_or(text), true),
        None => (text, false),
    }
}

/// Link text on one line (a line break would end the link).
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        assert_eq!(cut_chars("aé😀b", 3), ("aé😀", true));
        assert_eq!(cut_chars("aé", 5), ("aé", false));
    }
}
