//! How a request is turned away: a status and a short reason, for the client and the log.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};

/// The body of every answer: rmcp's and the server's own.
pub(super) type Body = BoxBody<Bytes, Infallible>;

/// Why a request was refused: the status, a short text for the client and the log.
#[derive(Debug, PartialEq)]
pub(super) struct Refusal {
    pub(super) status: StatusCode,
    pub(super) reason: &'static str,
}

impl Refusal {
    pub(super) fn new(status: StatusCode, reason: &'static str) -> Self {
        Refusal { status, reason }
    }

    pub(super) fn response(self) -> Response<Body> {
        tracing::warn!(
            status = self.status.as_u16(),
            reason = self.reason,
            "http.refused"
        );
        let mut response = Response::new(Full::new(Bytes::from(self.reason)).boxed());
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"zotero-mcp\""),
            );
        }
        response
    }
}
