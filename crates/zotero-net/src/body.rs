//! Request bodies: whole (API requests) or streamed in chunks (uploads).

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};

/// The body type of every request the process sends.
pub type RequestBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The bytes of an upload body, in chunks.
pub type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// A body of these bytes.
pub fn full_body(bytes: Bytes) -> RequestBody {
    Full::new(bytes).map_err(|e| match e {}).boxed_unsync()
}

/// An empty body.
pub fn empty_body() -> RequestBody {
    full_body(Bytes::new())
}
