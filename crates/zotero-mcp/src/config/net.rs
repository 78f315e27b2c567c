//! How requests leave the process: retries, the timeout, and which addresses outside hosts
//! may resolve to. Zotero, the metadata services, file fetches and the model hub share them.

use std::time::Duration;

use super::parse::{parse_bool, parse_num, parse_secs, Vars};
use super::ConfigError;

pub use zotero_net::RetryPolicy as RetryConfig;

/// Retries, timeout and address policy of every outgoing request.
#[derive(Debug, Clone)]
pub struct NetConfig {
    pub retry: RetryConfig,
    pub timeout: Duration,
    /// Which addresses requests to outside hosts may reach (`file_url` and arXiv fetches, the
    /// metadata services and the hosts they redirect to, the model hub): public ones only,
    /// or also loopback, private, link-local and unspecified ones
    /// (`ZOTERO_FETCH_ALLOW_PRIVATE=1`; tests use it to reach the emulator).
    pub fetch_policy: zotero_net::AddressPolicy,
}

impl NetConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let fetch_allow_private = parse_bool(get, "ZOTERO_FETCH_ALLOW_PRIVATE", false)?;
        let max_attempts = parse_num::<u32>(get, "ZOTERO_RETRY_MAX_ATTEMPTS", 3)?;
        if max_attempts == 0 {
            return Err(ConfigError {
                var: "ZOTERO_RETRY_MAX_ATTEMPTS",
                value: "0".into(),
                expected: "a whole number of at least 1 (1 means no retry)".into(),
            });
        }
        let retry = RetryConfig {
            max_attempts,
            base_delay: parse_secs(get, "ZOTERO_RETRY_BASE_DELAY", 0.5)?,
            max_delay: parse_secs(get, "ZOTERO_RETRY_MAX_DELAY", 4.0)?,
            max_wait: parse_secs(get, "ZOTERO_RETRY_MAX_WAIT", 30.0)?,
        };
        let timeout = parse_secs(get, "ZOTERO_TIMEOUT_SECONDS", 30.0)?;
        if timeout.is_zero() {
            return Err(ConfigError {
                var: "ZOTERO_TIMEOUT_SECONDS",
                value: "0".into(),
                expected: "a positive number of seconds".into(),
            });
        }
        Ok(NetConfig {
            retry,
            timeout,
            fetch_policy: zotero_net::AddressPolicy::from_config(fetch_allow_private),
        })
    }

    /// Whether requests may reach this machine and private networks (tests, with the
    /// emulator).
    pub fn allows_private(&self) -> bool {
        matches!(self.fetch_policy, zotero_net::AddressPolicy::Any)
    }
}
