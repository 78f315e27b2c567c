//! The bounds on what the server holds for its clients: bodies, buffers, time, connections.

use std::time::Duration;

use crate::config::Config;
use crate::transport::lines::max_message_bytes;

/// The bytes of bodies all connections may buffer together when
/// `ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES` is unset, unless the largest body needs more.
const DEFAULT_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

/// What the server holds for its clients, at most (each in the README's Security section).
#[derive(Debug, Clone)]
pub(super) struct Limits {
    /// The largest request body: a stdio message, within `buffered`.
    pub(super) body: usize,
    /// The bytes of request bodies all connections together may hold in memory.
    pub(super) buffered: usize,
    /// How long a body may send nothing.
    pub(super) body_idle: Duration,
    /// How long a whole body may take.
    pub(super) body_total: Duration,
    /// The connections open at once.
    pub(super) connections: usize,
}

impl Limits {
    pub(super) fn new(config: &Config) -> Self {
        let message = max_message_bytes(config.uploads.max_bytes);
        let buffered = match config.http.max_buffered_bytes {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            // Room for the largest message, so that an upload is never refused for want of
            // room while nothing else is being read.
            None => message.max(DEFAULT_BUFFERED_BYTES),
        };
        Limits {
            body: message.min(buffered),
            buffered,
            body_idle: config.http.body_idle,
            body_total: config.http.body_timeout,
            connections: config.http.max_connections,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn the_buffer_holds_the_largest_body_and_bounds_it() {
        let env = |vars: &[(&str, &str)]| {
            let env: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Limits::new(&Config::from_map(&env).unwrap())
        };
        let default = env(&[]);
        assert_eq!(default.body, 70_953_644);
        assert_eq!(default.buffered, 70_953_644);
        assert_eq!(default.connections, 512);
        let small = env(&[("ZOTERO_UPLOAD_MAX_BYTES", "1000")]);
        assert_eq!(small.body, 16 * 1024 * 1024);
        assert_eq!(small.buffered, 64 * 1024 * 1024);
        let tight = env(&[("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "2000000")]);
        assert_eq!((tight.body, tight.buffered), (2_000_000, 2_000_000));
    }
}
