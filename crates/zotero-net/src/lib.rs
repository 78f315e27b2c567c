//! The network layer every outside request of zotero-mcp goes through: the TLS connector
//! (rustls with ring and the webpki roots), the user agent, the one retry loop (backoff with
//! jitter, `Retry-After`, the `Backoff` gate (one per service), cancellation), byte streams for
//! uploads, error chains for messages, and the bounds on requests in flight and idle
//! connections per backend. It knows nothing of Zotero or MCP.

pub mod body;
pub mod error_chain;
pub mod limit;
pub mod retry;
pub mod tls;

pub use body::{empty_body, full_body, ByteStream, RequestBody};
pub use error_chain::ErrorChain;
pub use limit::{
    pooled_client, InFlight, MAX_IN_FLIGHT_PER_BACKEND, POOL_IDLE_TIMEOUT, POOL_MAX_IDLE_PER_HOST,
};
pub use retry::{
    backoff_delay, ceil_secs, retry_after, sleep, Attempt, Cancelled, Gate, Retry, RetryError,
    RetryPolicy,
};
pub use tls::{https_connector, user_agent};
