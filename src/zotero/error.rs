//! `ZoteroError`, everything that can go wrong talking to Zotero, and its one mapping to the
//! public error codes.

use serde_json::Value;

use crate::envelope::{ErrorCode, ToolError};

/// Response bodies are cut to this many bytes in error details: enough to read Zotero's
/// message, never a whole page of items.
pub const MAX_BODY_IN_DETAILS: usize = 4096;

/// What an HTTP answer said, kept for the error details.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpstreamAnswer {
    pub status: u16,
    pub body: String,
    pub retry_after: Option<String>,
    pub request_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ZoteroError {
    #[error("Zotero credentials are not configured: set {}", .missing.join(" and "))]
    MissingCredentials { missing: Vec<&'static str> },

    /// Zotero answered with a status the operation did not expect.
    #[error("{message}")]
    Status {
        message: String,
        answer: UpstreamAnswer,
    },

    /// Zotero asked us to wait longer than `ZOTERO_RETRY_MAX_WAIT`; we did not.
    #[error("Zotero asked to wait {wait_secs} s before the next request (more than ZOTERO_RETRY_MAX_WAIT={max_wait_secs} s); try again later")]
    WaitTooLong {
        wait_secs: u64,
        max_wait_secs: u64,
        answer: Option<UpstreamAnswer>,
    },

    #[error("could not reach Zotero at {base}: {reason}")]
    Network { base: String, reason: String },

    #[error("Zotero did not answer within {secs} s (ZOTERO_TIMEOUT_SECONDS)")]
    Timeout { secs: f64 },

    #[error("the call was cancelled by the client")]
    Cancelled,

    #[error("Zotero sent an answer that could not be read: {reason}")]
    BadResponse { reason: String, status: u16 },

    #[error("invalid request: {reason}")]
    InvalidRequest { reason: String },
}

impl ZoteroError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ZoteroError::MissingCredentials { .. } => ErrorCode::Auth,
            ZoteroError::Status { answer, .. } => ErrorCode::for_status(answer.status),
            ZoteroError::WaitTooLong { .. } => ErrorCode::RateLimited,
            ZoteroError::Network { .. }
            | ZoteroError::Timeout { .. }
            | ZoteroError::Cancelled
            | ZoteroError::BadResponse { .. } => ErrorCode::Upstream,
            ZoteroError::InvalidRequest { .. } => ErrorCode::Validation,
        }
    }
}

/// Cuts a body to `MAX_BODY_IN_DETAILS` bytes on a character boundary.
pub fn cut_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.len() <= MAX_BODY_IN_DETAILS {
        return text.into_owned();
    }
    let mut end = MAX_BODY_IN_DETAILS;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn answer_details(e: &mut ToolError, a: &UpstreamAnswer) {
    e.details.insert("status".into(), Value::from(a.status));
    if !a.body.is_empty() {
        e.details.insert("body".into(), Value::from(a.body.clone()));
    }
    if let Some(r) = &a.retry_after {
        e.details
            .insert("retry_after".into(), Value::from(r.clone()));
    }
    if let Some(r) = &a.request_id {
        e.details
            .insert("request_id".into(), Value::from(r.clone()));
    }
}

impl From<ZoteroError> for ToolError {
    fn from(err: ZoteroError) -> ToolError {
        let mut e = ToolError::new(err.code(), err.to_string());
        match &err {
            ZoteroError::MissingCredentials { missing } => {
                e.details.insert(
                    "missing".into(),
                    Value::from(missing.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                );
            }
            ZoteroError::Status { answer, .. } => answer_details(&mut e, answer),
            ZoteroError::WaitTooLong {
                wait_secs, answer, ..
            } => {
                if let Some(a) = answer {
                    answer_details(&mut e, a);
                }
                // The wait the caller should honour, in seconds, whatever form Zotero used.
                e.details
                    .insert("retry_after".into(), Value::from(wait_secs.to_string()));
            }
            ZoteroError::BadResponse { status, .. } => {
                e.details.insert("status".into(), Value::from(*status));
            }
            ZoteroError::Network { .. }
            | ZoteroError::Timeout { .. }
            | ZoteroError::Cancelled
            | ZoteroError::InvalidRequest { .. } => {}
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_cut_on_char_boundaries() {
        let long = "é".repeat(5000);
        let cut = cut_body(long.as_bytes());
        assert!(cut.len() <= MAX_BODY_IN_DETAILS + "…".len());
        assert!(cut.ends_with('…'));
        assert_eq!(cut_body(b"short"), "short");
    }

    #[test]
    fn wait_too_long_is_rate_limited_with_retry_after() {
        let e: ToolError = ZoteroError::WaitTooLong {
            wait_secs: 120,
            max_wait_secs: 30,
            answer: Some(UpstreamAnswer {
                status: 429,
                body: "Too Many Requests".into(),
                retry_after: Some("120".into()),
                request_id: None,
            }),
        }
        .into();
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.details["retry_after"], "120");
        assert_eq!(e.details["status"], 429);
    }
}
