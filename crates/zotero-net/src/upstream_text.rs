//! Text that came from an outside host (an error body, a record's field in a message): the
//! one path it takes before it reaches a tool answer or a log line. Every configured secret
//! is replaced, as it is and percent-encoded (a service may echo the query string it got),
//! and the text is cut to a bound, so that an answer of megabytes cannot become a message of
//! megabytes.

use std::sync::Arc;

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// The configured secrets (API keys, tokens) that must never be shown. Empty and very short
/// values are not kept: replacing them would garble the text and hide nothing.
#[derive(Clone, Default)]
pub struct Secrets(Arc<Vec<String>>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} set)", self.0.len())
    }
}

/// One secret value (an API key of an outside service): shown by `Debug` as [`REDACTED`], so
/// that a configuration printed for a diagnosis never carries it; `expose` is the one way out.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    pub fn new(value: impl Into<String>) -> Self {
        SecretString(value.into())
    }

    /// The value, for the one request that must carry it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl From<&str> for SecretString {
    fn from(value: &str) -> Self {
        SecretString(value.to_string())
    }
}

impl From<String> for SecretString {
    fn from(value: String) -> Self {
        SecretString(value)
    }
}

/// The shortest value treated as a secret (the NCBI key has 36 characters, a Zotero key 24).
const MIN_SECRET: usize = 4;

impl Secrets {
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut kept: Vec<String> = Vec::new();
        for v in values {
            let v = v.as_ref().trim();
            if v.chars().count() < MIN_SECRET {
                continue;
            }
            for form in [v.to_string(), percent_encoded(v)] {
                if !kept.contains(&form) {
                    kept.push(form);
                }
            }
        }
        // The longest first, so that a secret inside another is not replaced first.
        kept.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Secrets(Arc::new(kept))
    }

    /// `text` with every secret replaced by [`REDACTED`], then cut to `max_chars` characters
    /// (saying how long it was).
    pub fn clean(&self, text: &str, max_chars: usize) -> String {
        let mut out = text.to_string();
        for secret in self.0.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        cut(&mut out, max_chars);
        out
    }
}

/// Cuts `s` to `max` characters, saying so.
pub fn cut(s: &mut String, max: usize) {
    if let Some((at, _)) = s.char_indices().nth(max) {
        let total = s.chars().count();
        s.truncate(at);
        s.push_str(&format!("… [cut: {total} characters in all]"));
    }
}

/// `s` as a query value would carry it (what is not unreserved, percent-encoded).
fn percent_encoded(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod secret_string_tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = SecretString::new("ncbi-key-0123456789");
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(
            format!("{:?}", Some(s.clone())),
            format!("Some({REDACTED})")
        );
        assert_eq!(s.expose(), "ncbi-key-0123456789");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced_as_they_are_and_encoded_then_the_text_is_cut() {
        let s = Secrets::new(["ncbi-key-0123456789", "zotero+key/abc", "", "ab"]);
        let body = r#"{"error":"API key invalid","api-key":"ncbi-key-0123456789","q":"zotero%2Bkey%2Fabc"}"#;
        let clean = s.clean(body, 1_000);
        assert!(!clean.contains("ncbi-key"), "{clean}");
        assert!(!clean.contains("zotero%2Bkey"), "{clean}");
        assert_eq!(clean.matches(REDACTED).count(), 2, "{clean}");
        // Short values are not secrets worth garbling a text for.
        assert_eq!(s.clean("ab cd", 100), "ab cd");
        let long = "é".repeat(10_000);
        let cut_text = s.clean(&long, 300);
        assert!(cut_text.chars().count() < 340, "{}", cut_text.len());
        assert!(cut_text.ends_with("[cut: 10000 characters in all]"));
        assert!(!format!("{s:?}").contains("ncbi"));
    }
}
