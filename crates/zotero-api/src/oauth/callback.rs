//! Zotero's redirect back to the application after the person answered (RFC 5849 §2.2):
//! `oauth_token` (which must be the temporary token this sign-in asked for) and
//! `oauth_verifier` when the key was approved. The callback may reach a listener, or be
//! pasted from a browser's address bar.

use super::sign::form_pairs;

/// The proof that the person approved, exchanged once for the key (never shown).
#[derive(Clone, PartialEq, Eq)]
pub struct Verifier(String);

impl Verifier {
    /// The verifier itself: only for the signed exchange.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifier(<redacted>)")
    }
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callback {
    Approved(Verifier),
    /// No verifier: the person denied (zotero.org's `oauth_problem`, if it sent one).
    Denied {
        problem: Option<String>,
    },
}

/// A callback that is not the answer to this sign-in; it is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    #[error("it has no oauth_token")]
    NoToken,
    #[error("its oauth_token is not the one this sign-in asked Zotero for")]
    OtherToken,
}

/// The query of a callback URL, or the text itself when it is a bare query.
pub fn query_of(url_or_query: &str) -> &str {
    let s = url_or_query.trim();
    let s = s.split('#').next().unwrap_or_default();
    s.split_once('?').map_or(s, |(_, q)| q)
}

/// Reads a callback's query: the person's answer when its `oauth_token` is `expected`.
pub fn read_callback(query: &str, expected: &str) -> Result<Callback, CallbackError> {
    let pairs = form_pairs(query);
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let token = value("oauth_token").ok_or(CallbackError::NoToken)?;
    if !same(token.as_bytes(), expected.as_bytes()) {
        return Err(CallbackError::OtherToken);
    }
    Ok(match value("oauth_verifier").filter(|v| !v.is_empty()) {
        Some(v) => Callback::Approved(Verifier(v.to_string())),
        None => Callback::Denied {
            problem: value("oauth_problem").map(str::to_string),
        },
    })
}

/// Equality in time independent of where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_expected_token_is_read() {
        let ok = read_callback("oauth_token=abc&oauth_verifier=v%2B1", "abc").unwrap();
        assert_eq!(ok, Callback::Approved(Verifier("v+1".into())));
        assert!(!format!("{ok:?}").contains("v+1"), "Debug redacts");
        assert_eq!(
            read_callback("oauth_token=abd&oauth_verifier=v", "abc"),
            Err(CallbackError::OtherToken)
        );
        assert_eq!(
            read_callback("oauth_token=ab&oauth_verifier=v", "abc"),
            Err(CallbackError::OtherToken)
        );
        assert_eq!(
            read_callback("oauth_verifier=v", "abc"),
            Err(CallbackError::NoToken)
        );
        assert_eq!(
            read_callback("oauth_token=abc&oauth_problem=user_refused", "abc"),
            Ok(Callback::Denied {
                problem: Some("user_refused".into())
            })
        );
        assert_eq!(
            read_callback("oauth_token=abc&oauth_verifier=", "abc"),
            Ok(Callback::Denied { problem: None })
        );
    }

    #[test]
    fn a_pasted_url_or_query_gives_its_query() {
        assert_eq!(
            query_of(" http://127.0.0.1:5/callback?oauth_token=a&x=1#frag\n"),
            "oauth_token=a&x=1"
        );
        assert_eq!(query_of("oauth_token=a"), "oauth_token=a");
    }
}
