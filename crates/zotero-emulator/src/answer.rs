//! The emulator's answer to one request, before it becomes a wiremock `ResponseTemplate`:
//! a leaf that every handler (web API, desktop, its Zotero 10 wire server) builds, below the
//! dispatch in `respond.rs`; and the refusal (`BadRequest`) that becomes a `400`.

use std::fmt;

/// An answer before it becomes a wiremock `ResponseTemplate`.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// `None`: no body at all.
    pub(crate) content_type: Option<String>,
    /// Sent by the desktop's HTTP server itself, not by an API endpoint: no API headers.
    pub(crate) bare: bool,
}

impl Answer {
    /// A plain-text error answer, as the real server writes them.
    pub(crate) fn text(status: u16, body: &str) -> Answer {
        Answer::raw(
            status,
            body.as_bytes().to_vec(),
            "text/plain; charset=utf-8",
        )
    }

    pub(crate) fn json(value: &serde_json::Value) -> Answer {
        Answer::raw(
            200,
            serde_json::to_vec_pretty(value).unwrap(),
            "application/json",
        )
    }

    /// Any body with this content type (`""` sends no `Content-Type`).
    pub(crate) fn raw(status: u16, body: Vec<u8>, content_type: &str) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body,
            content_type: Some(content_type.to_string()),
            bare: false,
        }
    }

    /// No body (204, 302, ...).
    pub(crate) fn empty(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            content_type: None,
            bare: false,
        }
    }

    pub(crate) fn header(mut self, name: &str, value: impl ToString) -> Answer {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// A request refused with `400` and this plain-text body, worded as the real server words it
/// (the web API and the desktop each send it with their own content type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadRequest(String);

impl BadRequest {
    /// The body of the `400`.
    pub(crate) fn body(&self) -> &str {
        &self.0
    }
}

impl From<String> for BadRequest {
    fn from(body: String) -> Self {
        BadRequest(body)
    }
}

impl From<&str> for BadRequest {
    fn from(body: &str) -> Self {
        BadRequest(body.to_string())
    }
}

impl fmt::Display for BadRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRequest {}
