//! The network layer every outside request of zotero-mcp goes through: the TLS connector
//! (rustls with ring and the webpki roots), the user agent, the one retry loop (backoff with
//! jitter, `Retry-After`, the `Backoff` gate (one per service), cancellation), the SSRF guard
//! of every request to an outside host (`guard`), the one path of upstream text to answers
//! and logs (`upstream_text`: secrets scrubbed, length bounded), the bounds on requests in
//! flight and idle connections per backend (`limit`), byte streams for uploads and error
//! chains for messages. It knows nothing of Zotero or MCP.

pub mod body;
pub mod error_chain;
pub mod guard;
pub mod limit;
pub mod retry;
pub mod sync;
pub mod tls;
pub mod upstream_text;

pub use body::{empty_body, full_body, ByteStream, RequestBody};
pub use error_chain::ErrorChain;
pub use guard::{
    find_forbidden, guarded_https_connector, AddressPolicy, ForbiddenAddress, GuardedConnector,
};
pub use limit::{
    pooled_client, InFlight, MAX_IN_FLIGHT_PER_BACKEND, POOL_IDLE_TIMEOUT, POOL_MAX_IDLE_PER_HOST,
};
pub use retry::{
    backoff_delay, ceil_secs, retry_after, sleep, Attempt, Cancelled, Gate, Retry, RetryError,
    RetryPolicy,
};
pub use sync::lock;
pub use tls::{https_connector, user_agent, TlsSetupError};
pub use upstream_text::{SecretString, Secrets};
