//! Reading a request body within the limits: its size, its share of the bytes all
//! connections and its own connection may buffer, an idle and a total timeout.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::CONTENT_LENGTH;
use hyper::StatusCode;
use tokio::time::Instant;

use super::limits::Limits;
use super::refusal::Refusal;

/// Bytes of request bodies held in memory, against a bound: the server's (all connections)
/// or one connection's.
#[derive(Debug)]
pub(super) struct Budget {
    used: AtomicUsize,
    max: usize,
}

impl Budget {
    pub(super) fn new(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            max,
        })
    }

    /// Takes `n` bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|total| *total <= self.max)
            })
            .is_ok()
    }

    fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What one connection reads request bodies with.
pub(super) struct Reader {
    pub(super) limits: Limits,
    pub(super) server: Arc<Budget>,
    pub(super) connection: Arc<Budget>,
}

impl Reader {
    pub(super) fn hold(&self) -> Held {
        Held {
            server: self.server.clone(),
            connection: self.connection.clone(),
            bytes: 0,
        }
    }
}

/// What one request holds of the server's and its connection's budgets, given back when it
/// is dropped: once its answer is made, since the body, and what rmcp parses of it, live
/// that long.
pub(super) struct Held {
    server: Arc<Budget>,
    connection: Arc<Budget>,
    bytes: usize,
}

impl Held {
    /// Holds `total` bytes in all, or refuses the request with `503`.
    fn grow_to(&mut self, total: usize) -> Result<(), Refusal> {
        let more = total.saturating_sub(self.bytes);
        if more == 0 {
            return Ok(());
        }
        if !self.server.take(more) {
            return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, SERVER_FULL));
        }
        if !self.connection.take(more) {
            self.server.give(more);
            return Err(Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                CONNECTION_FULL,
            ));
        }
        self.bytes += more;
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.server.give(self.bytes);
        self.connection.give(self.bytes);
    }
}

const SERVER_FULL: &str = "Service Unavailable: the bodies of requests in progress fill the \
                           server's buffer (ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES); retry shortly";
const CONNECTION_FULL: &str = "Service Unavailable: the requests in progress on this \
                               connection hold the largest body already; retry shortly";
const BODY_IDLE: &str = "Request Timeout: the body stopped arriving \
                         (ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS)";
const BODY_TOO_SLOW: &str = "Request Timeout: the body took too long to arrive \
                             (ZOTERO_MCP_HTTP_BODY_TIMEOUT_SECONDS)";

/// Reads a request body within `limits`: at most `limits.body` bytes, held against the
/// budgets as they arrive (a declared length is held before anything is read, so that a
/// client announcing a large body is refused at once when there is no room for it), never
/// waiting more than `body_idle` for the next bytes nor `body_total` for all of them.
pub(super) async fn read_body<B>(
    mut body: B,
    declared: Option<u64>,
    limits: &Limits,
    held: &mut Held,
) -> Result<Bytes, Refusal>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    if let Some(n) = declared {
        held.grow_to(usize::try_from(n).unwrap_or(usize::MAX))?;
    }
    let deadline = Instant::now() + limits.body_total;
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut len = 0usize;
    loop {
        let wake = deadline.min(Instant::now() + limits.body_idle);
        let frame = match tokio::time::timeout_at(wake, body.frame()).await {
            Err(_) if wake >= deadline => {
                return Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, BODY_TOO_SLOW));
            }
            Err(_) => return Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, BODY_IDLE)),
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                tracing::debug!(error = %e, "http.body_unreadable");
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: unreadable body",
                ));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        // Trailers carry nothing the server reads.
        let Ok(data) = frame.into_data() else {
            continue;
        };
        len = len.saturating_add(data.len());
        if len > limits.body {
            return Err(Refusal::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE));
        }
        held.grow_to(len)?;
        if !data.is_empty() {
            chunks.push(data);
        }
    }
    Ok(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.pop().unwrap_or_default(),
        _ => {
            let mut all = Vec::with_capacity(len);
            for chunk in &chunks {
                all.extend_from_slice(chunk);
            }
            Bytes::from(all)
        }
    })
}

/// The `Content-Length` of a request, when it has a valid one.
pub(super) fn declared_length(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

pub(super) const TOO_LARGE: &str =
    "Payload Too Large: the body exceeds the largest message accepted \
                         (ZOTERO_UPLOAD_MAX_BYTES as base64, plus 1 MiB, within \
                         ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES)";

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use super::*;

    /// A body fed from a channel: a chunk per message, stalled while the channel is empty.
    struct Fed(tokio::sync::mpsc::Receiver<Bytes>);

    impl hyper::body::Body for Fed {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            self.0
                .poll_recv(cx)
                .map(|o| o.map(|b| Ok(hyper::body::Frame::data(b))))
        }
    }

    fn limits(body: usize, buffered: usize, idle_ms: u64, total_ms: u64) -> Limits {
        Limits {
            body,
            buffered,
            body_idle: Duration::from_millis(idle_ms),
            body_total: Duration::from_millis(total_ms),
            connections: 8,
        }
    }

    fn reader(limits: Limits, server: &Arc<Budget>) -> Reader {
        Reader {
            connection: Budget::new(limits.body),
            limits,
            server: server.clone(),
        }
    }

    async fn read(
        r: &Reader,
        declared: Option<u64>,
        chunks: Vec<&'static [u8]>,
        close: bool,
    ) -> (Result<Bytes, Refusal>, Held) {
        let (tx, rx) = tokio::sync::mpsc::channel(chunks.len().max(1));
        for c in chunks {
            tx.send(Bytes::from_static(c)).await.unwrap();
        }
        if close {
            drop(tx);
        } else {
            // Kept open: the body stalls once the chunks are read.
            std::mem::forget(tx);
        }
        let mut held = r.hold();
        let got = read_body(Fed(rx), declared, &r.limits, &mut held).await;
        (got, held)
    }

    #[tokio::test]
    async fn a_body_is_read_whole_and_its_bytes_given_back() {
        let server = Budget::new(100);
        let r = reader(limits(50, 100, 60_000, 60_000), &server);
        let (got, held) = read(&r, Some(6), vec![b"abc", b"def"], true).await;
        assert_eq!(got.unwrap(), Bytes::from_static(b"abcdef"));
        assert_eq!(server.used.load(Ordering::SeqCst), 6);
        assert_eq!(r.connection.used.load(Ordering::SeqCst), 6);
        drop(held);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
        assert_eq!(r.connection.used.load(Ordering::SeqCst), 0);
        // Streamed past the largest body: 413.
        let (got, _) = read(&r, None, vec![&[b'x'; 30], &[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn past_the_servers_buffer_a_body_is_refused_with_503() {
        let server = Budget::new(100);
        let a = reader(limits(60, 100, 60_000, 60_000), &server);
        let b = reader(limits(60, 100, 60_000, 60_000), &server);
        // A body on `a` holds 60 (declared, still arriving).
        let mut held_a = a.hold();
        held_a.grow_to(60).unwrap();
        // `b` declares 50: no room, refused before it is read.
        let (got, held_b) = read(&b, Some(50), vec![b"x"], true).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.reason, SERVER_FULL);
        drop(held_b);
        // Streamed without a length, refused once it passes the room left.
        let (got, _) = read(&b, None, vec![&[b'x'; 30], &[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().reason, SERVER_FULL);
        // A small one fits.
        let (got, _) = read(&b, Some(5), vec![b"hello"], true).await;
        assert_eq!(got.unwrap(), Bytes::from_static(b"hello"));
        drop(held_a);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
        let (got, _) = read(&b, Some(50), vec![&[b'x'; 50]], true).await;
        assert_eq!(got.unwrap().len(), 50);
    }

    #[tokio::test]
    async fn requests_on_one_connection_share_its_bound() {
        let server = Budget::new(1000);
        let r = reader(limits(60, 1000, 60_000, 60_000), &server);
        let mut first = r.hold();
        first.grow_to(40).unwrap();
        let (got, _) = read(&r, Some(30), vec![&[b'x'; 30]], true).await;
        assert_eq!(got.unwrap_err().reason, CONNECTION_FULL);
        // What the connection refused is not kept by the server.
        assert_eq!(server.used.load(Ordering::SeqCst), 40);
    }

    #[tokio::test]
    async fn a_stalled_body_ends_at_the_idle_timeout() {
        let server = Budget::new(100);
        let r = reader(limits(60, 100, 50, 600_000), &server);
        let (got, held) = read(&r, Some(60), vec![b"{\"jsonrpc\""], false).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(refused.reason, BODY_IDLE);
        drop(held);
        assert_eq!(server.used.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_trickling_body_ends_at_the_total_timeout() {
        let server = Budget::new(100);
        // Never idle for long (a byte every 5 ms against 10 minutes), but never done.
        let r = reader(limits(60, 100, 600_000, 100), &server);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let feeder = tokio::spawn(async move {
            loop {
                if tx.send(Bytes::from_static(b" ")).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let mut held = r.hold();
        let got = read_body(Fed(rx), None, &r.limits, &mut held).await;
        let refused = got.unwrap_err();
        assert_eq!(refused.status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(refused.reason, BODY_TOO_SLOW);
        feeder.abort();
    }
}
