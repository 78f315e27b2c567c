//! One request through rmcp: refused by the guard, or its body read within the limits and
//! judged by the same JSON-RPC rules as a stdio line, then served by rmcp's service,
//! stateless or keeping sessions (at most `ZOTERO_MCP_HTTP_MAX_SESSIONS`).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::StreamableHttpService;

use super::body::{declared_length, read_body, Reader};
use super::guard::Guard;
use super::refusal::{Body, Refusal};
use crate::mcp::server::ZoteroServer;
use crate::transport::jsonrpc::{self, Verdict};

/// rmcp's service, stateless or keeping sessions (`ZOTERO_MCP_HTTP_SESSIONS`).
pub(super) enum Mcp {
    Stateless(StreamableHttpService<ZoteroServer, NeverSessionManager>),
    Sessions {
        service: StreamableHttpService<ZoteroServer, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        /// `ZOTERO_MCP_HTTP_MAX_SESSIONS`.
        max: usize,
    },
}

impl Mcp {
    async fn handle<B>(&self, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        match self {
            Mcp::Stateless(service) => service.handle(req).await,
            Mcp::Sessions {
                service,
                sessions,
                max,
            } => {
                // A request without a session asks for a new one: bounded, so that clients
                // that never close theirs cannot exhaust the server (idle sessions end after
                // rmcp's keep-alive, 5 minutes).
                let opens =
                    req.method() == Method::POST && !req.headers().contains_key("mcp-session-id");
                if opens && sessions.sessions.read().await.len() >= *max {
                    tracing::warn!(max = *max, "http.too_many_sessions");
                    return Refusal::new(StatusCode::SERVICE_UNAVAILABLE, TOO_MANY_SESSIONS)
                        .response();
                }
                service.handle(req).await
            }
        }
    }
}

const TOO_MANY_SESSIONS: &str = "Service Unavailable: too many open sessions \
                                 (ZOTERO_MCP_HTTP_MAX_SESSIONS); close one with DELETE, or \
                                 retry when idle sessions have ended";

/// One request: refused by the guard, or read (within the limits) and judged by the same
/// JSON-RPC rules as a stdio line, then served by rmcp.
pub(super) async fn answer(
    guard: &Guard,
    mcp: &Mcp,
    reader: &Reader,
    req: Request<Incoming>,
) -> Response<Body> {
    if let Err(refusal) = guard.check(&req) {
        return refusal.response();
    }
    if req.method() != Method::POST {
        return mcp.handle(req).await;
    }
    let (parts, body) = req.into_parts();
    let declared = declared_length(&parts.headers);
    let mut held = reader.hold();
    let bytes = match read_body(body, declared, &reader.limits, &mut held).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal.response(),
    };
    let response = judge_and_serve(mcp, parts, bytes).await;
    drop(held);
    response
}

/// A body judged by the same JSON-RPC rules as a stdio line; served by rmcp when valid.
async fn judge_and_serve(
    mcp: &Mcp,
    parts: hyper::http::request::Parts,
    bytes: Bytes,
) -> Response<Body> {
    match jsonrpc::classify(&bytes) {
        Verdict::Deliver(_) => {
            mcp.handle(Request::from_parts(parts, Full::new(bytes)))
                .await
        }
        Verdict::Answer { line, refusal } => {
            refusal.log();
            // A message that is not JSON-RPC at all is a bad request; a request with bad
            // params is answered like any other error of a method.
            let status = match refusal.code {
                Some(code) if code == ErrorCode::PARSE_ERROR.0 => StatusCode::BAD_REQUEST,
                Some(code) if code == ErrorCode::INVALID_REQUEST.0 => StatusCode::BAD_REQUEST,
                _ => StatusCode::OK,
            };
            let mut response = Response::new(Full::new(Bytes::from(line)).boxed());
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        // An invalid notification or response: nothing to answer, but not accepted either.
        Verdict::Silence(refusal) => {
            refusal.log();
            Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: invalid message").response()
        }
        Verdict::Skip => {
            Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: empty body").response()
        }
    }
}
