//! zotero.org's OAuth for `zotero-mcp login`: the application's credentials
//! (`ZOTERO_OAUTH_CLIENT_KEY`, `ZOTERO_OAUTH_CLIENT_SECRET`, from an application registered at
//! zotero.org/oauth/apps) and where the OAuth endpoints are (`ZOTERO_OAUTH_BASE`, zotero.org
//! by default; the emulator in tests).

use zotero_api::oauth::{ClientCredentials, DEFAULT_BASE};
use zotero_api::ApiKey;

use super::parse::{parse_base_or, Vars};
use super::ConfigError;

/// The variables of the application's credentials.
pub const CLIENT_VARS: [&str; 2] = ["ZOTERO_OAUTH_CLIENT_KEY", "ZOTERO_OAUTH_CLIENT_SECRET"];

/// zotero.org's OAuth, as `login` needs it. A half-set pair is not an error at start (only
/// `login` uses it); `login` names what is missing.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// Without a trailing slash.
    pub base: String,
    /// `None` until both variables are set.
    pub client: Option<ClientCredentials>,
    missing: Vec<&'static str>,
}

impl OAuthConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let base = parse_base_or(get, "ZOTERO_OAUTH_BASE", DEFAULT_BASE)?;
        let (key, secret) = (get(CLIENT_VARS[0]), get(CLIENT_VARS[1]));
        let missing = CLIENT_VARS
            .iter()
            .zip([key.is_none(), secret.is_none()])
            .filter(|(_, absent)| *absent)
            .map(|(v, _)| *v)
            .collect();
        let client = key.zip(secret).map(|(key, secret)| ClientCredentials {
            key,
            secret: ApiKey::new(secret),
        });
        Ok(OAuthConfig {
            base,
            client,
            missing,
        })
    }

    /// The variables `login` still needs.
    pub fn missing(&self) -> &[&'static str] {
        &self.missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_pairs(pairs: &[(&str, &str)]) -> Result<OAuthConfig, ConfigError> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OAuthConfig::parse(&|k: &str| map.get(k).cloned())
    }

    #[test]
    fn both_credentials_or_none_and_the_secret_never_shown() {
        let c = parse_pairs(&[]).unwrap();
        assert_eq!(c.base, "https://www.zotero.org");
        assert_eq!(c.missing(), CLIENT_VARS);
        let c = parse_pairs(&[
            ("ZOTERO_OAUTH_CLIENT_KEY", "k"),
            ("ZOTERO_OAUTH_CLIENT_SECRET", "s3cret"),
            ("ZOTERO_OAUTH_BASE", "http://127.0.0.1:9/"),
        ])
        .unwrap();
        assert!(c.missing().is_empty());
        assert_eq!(c.base, "http://127.0.0.1:9");
        assert!(!format!("{c:?}").contains("s3cret"));
        let half = parse_pairs(&[("ZOTERO_OAUTH_CLIENT_SECRET", "s3cret")]).unwrap();
        assert!(half.client.is_none());
        assert_eq!(half.missing(), ["ZOTERO_OAUTH_CLIENT_KEY"]);
    }
}
