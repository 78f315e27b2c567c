//! What the client needs to know, given to it by the server (which reads the environment).

use std::fmt;
use std::time::Duration;

use zotero_net::RetryPolicy;

/// The API key. Its `Debug` never shows the key, so it cannot leak into a log line or an
/// error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
    /// The key itself: only for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// The read cache: answers to GETs kept for `ttl`, at most `max_entries` of them.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheConfig {
    pub ttl: Duration,
    pub max_entries: usize,
}

/// The client's configuration.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL without a trailing slash, `http://` or `https://`.
    pub api_base: String,
    pub api_key: Option<ApiKey>,
    pub user_id: Option<u64>,
    /// The variables a user must still set before the client can reach the library (named
    /// in the error every call answers until they are set).
    pub missing_credentials: Vec<&'static str>,
    pub retry: RetryPolicy,
    pub timeout: Duration,
    /// `None` when the read cache is off.
    pub read_cache: Option<CacheConfig>,
    /// The desktop app's local API (`ZOTERO_LOCAL=1`, `ZOTERO_LOCAL_API_BASE`), without a
    /// trailing slash; `None` when it is not used.
    pub local_api_base: Option<String>,
    /// Writes through Zotero 10's local API: the keys and `ZOTERO_WRITE_BACKEND`.
    pub local_writes: LocalWrites,
    /// Where the storage URL of an upload authorization may point (the address guard of
    /// outside requests, `ZOTERO_FETCH_ALLOW_PRIVATE`); a URL on the API's own host and
    /// port is trusted as the API is.
    pub storage_policy: zotero_net::AddressPolicy,
}

/// Which backend writes (`ZOTERO_WRITE_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteBackend {
    /// The desktop app when a local key is set and Zotero 10 answers, else the web API.
    #[default]
    Auto,
    /// Always the desktop app (an error says why when it cannot).
    Local,
    /// Always the web API.
    Web,
}

impl std::str::FromStr for WriteBackend {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(WriteBackend::Auto),
            "local" => Ok(WriteBackend::Local),
            "web" => Ok(WriteBackend::Web),
            _ => Err(()),
        }
    }
}

/// The local keys the server knows: `ZOTERO_LOCAL_API_KEY` (for whatever Zotero answers) and
/// those `zotero-mcp authorize` stored, each for the `Zotero-Server-ID` it was granted by.
#[derive(Debug, Clone, Default)]
pub struct LocalWrites {
    pub backend: WriteBackend,
    /// `ZOTERO_LOCAL_API_KEY`.
    pub key: Option<ApiKey>,
    /// `(server ID, key)` from the key file.
    pub stored: Vec<(String, ApiKey)>,
}

impl LocalWrites {
    /// Whether any local key is configured.
    pub fn has_key(&self) -> bool {
        self.key.is_some() || !self.stored.is_empty()
    }

    /// The key for the database with this server ID: the one granted by it, else the
    /// variable's.
    pub(crate) fn key_for(&self, server_id: &str) -> Option<&ApiKey> {
        self.stored
            .iter()
            .find(|(id, _)| id == server_id)
            .map(|(_, k)| k)
            .or(self.key.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("supersecret");
        assert!(!format!("{key:?}").contains("supersecret"));
    }
}
