//! Text for messages: how much of a caller's input an error message quotes. A leaf, so
//! that the tools' checks and the service's CLI printing share it without importing each other.

/// How much of a refused value a message quotes: enough to recognise it, never the whole
/// of a huge one.
pub const QUOTE_CHARS: usize = 64;

/// `text` for a message: whole if short, else its first [`QUOTE_CHARS`] characters and how
/// long it was.
pub fn quote(text: &str) -> String {
    let mut chars = text.char_indices();
    match chars.nth(QUOTE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => {
            let head = text.get(..cut).unwrap_or_default();
            format!("{head}… ({} characters)", text.chars().count())
        }
    }
}
