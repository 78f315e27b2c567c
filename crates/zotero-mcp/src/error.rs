//! The errors a tool call can end with: the public codes of the seed's "Error Mapping" and
//! [`ToolError`], built by named constructors so that no workflow picks a wire code by hand.
//! A leaf: it imports only serde; `mcp/errors.rs` maps every domain error into it.

use serde::Serialize;
use serde_json::{Map, Value};

/// The public error codes of the seed's "Error Mapping", plus `ZOTERO_INTERNAL_ERROR` for a
/// defect inside the server itself (a panic caught at the tool boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ErrorCode {
    #[serde(rename = "ZOTERO_AUTH_ERROR")]
    Auth,
    #[serde(rename = "ZOTERO_NOT_FOUND")]
    NotFound,
    #[serde(rename = "ZOTERO_RATE_LIMITED")]
    RateLimited,
    #[serde(rename = "ZOTERO_VALIDATION_ERROR")]
    Validation,
    #[serde(rename = "ZOTERO_UPSTREAM_ERROR")]
    Upstream,
    #[serde(rename = "ZOTERO_INTERNAL_ERROR")]
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 6] = [
        ErrorCode::Auth,
        ErrorCode::NotFound,
        ErrorCode::RateLimited,
        ErrorCode::Validation,
        ErrorCode::Upstream,
        ErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Auth => "ZOTERO_AUTH_ERROR",
            ErrorCode::NotFound => "ZOTERO_NOT_FOUND",
            ErrorCode::RateLimited => "ZOTERO_RATE_LIMITED",
            ErrorCode::Validation => "ZOTERO_VALIDATION_ERROR",
            ErrorCode::Upstream => "ZOTERO_UPSTREAM_ERROR",
            ErrorCode::Internal => "ZOTERO_INTERNAL_ERROR",
        }
    }

    /// The code for an HTTP status that Zotero answered with, as the seed maps it.
    pub fn for_status(status: u16) -> ErrorCode {
        match status {
            401 | 403 => ErrorCode::Auth,
            404 => ErrorCode::NotFound,
            429 => ErrorCode::RateLimited,
            400 | 409 | 412 | 413 | 415 | 422 => ErrorCode::Validation,
            _ => ErrorCode::Upstream,
        }
    }
}

/// A failed tool call, as the caller sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// What was asked is not in the library (or not visible to the key).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// The input is refused: the message says what to change.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Validation, message)
    }

    /// The key (or the desktop) refused the request.
    pub fn auth(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Auth, message)
    }

    /// Zotero or a service asked to slow down.
    pub fn rate_limited(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::RateLimited, message)
    }

    /// Zotero or an outside service failed, or answered what cannot be used.
    pub fn upstream(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Upstream, message)
    }

    /// A defect inside the server itself.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// A failure Zotero answered with `status` (as the seed maps statuses), or an upstream
    /// failure when no status came back.
    pub fn for_status(status: Option<u16>, message: impl Into<String>) -> Self {
        Self::new(
            status.map_or(ErrorCode::Upstream, ErrorCode::for_status),
            message,
        )
    }

    /// A local validation failure naming the offending field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let mut e = Self::new(ErrorCode::Validation, message);
        e.details
            .insert("field".into(), Value::String(field.into()));
        e
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    /// The error with its message and details cut to a bounded size, whatever an input or an
    /// upstream answer put in them: what reaches the caller and the log stays small.
    pub fn bounded(mut self) -> Self {
        cut(&mut self.message, MESSAGE_MAX);
        for v in self.details.values_mut() {
            bound_value(v, 0);
        }
        self
    }
}

/// The most characters of an error message.
const MESSAGE_MAX: usize = 2_000;
/// The most characters of one string inside `details`.
const DETAIL_STRING_MAX: usize = 1_000;
/// The most entries of one array or object inside `details`.
const DETAIL_ENTRIES_MAX: usize = 50;
/// How deep `details` may nest.
const DETAIL_DEPTH_MAX: usize = 4;

/// Cuts `s` to `max` characters, saying so.
fn cut(s: &mut String, max: usize) {
    if let Some((at, _)) = s.char_indices().nth(max) {
        let total = s.chars().count();
        s.truncate(at);
        s.push_str(&format!("… [cut: {total} characters in all]"));
    }
}

fn bound_value(v: &mut Value, depth: usize) {
    match v {
        Value::String(s) => cut(s, DETAIL_STRING_MAX),
        Value::Array(a) => {
            if depth >= DETAIL_DEPTH_MAX {
                a.clear();
            }
            a.truncate(DETAIL_ENTRIES_MAX);
            for e in a {
                bound_value(e, depth + 1);
            }
        }
        Value::Object(o) => {
            if depth >= DETAIL_DEPTH_MAX {
                o.clear();
            }
            let extra: Vec<String> = o.keys().skip(DETAIL_ENTRIES_MAX).cloned().collect();
            for k in extra {
                o.remove(&k);
            }
            for e in o.values_mut() {
                bound_value(e, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounded_errors_cut_messages_and_details_at_any_depth() {
        let big = "é".repeat(100_000);
        let e = ToolError::validation(big.clone())
            .with_detail("field", big.clone())
            .with_detail("list", vec![json!(big.clone()); 500])
            .with_detail(
                "deep",
                json!({"a": {"b": {"c": {"d": {"e": big.clone()}}}}}),
            )
            .with_detail("n", 5)
            .bounded();
        assert!(
            e.message.chars().count() < MESSAGE_MAX + 60,
            "{}",
            e.message.len()
        );
        assert!(e.message.ends_with("[cut: 100000 characters in all]"));
        let all = serde_json::to_string(&e.details).unwrap();
        assert!(all.len() < 150_000, "{}", all.len());
        assert_eq!(
            e.details["list"].as_array().unwrap().len(),
            DETAIL_ENTRIES_MAX
        );
        assert_eq!(e.details["n"], 5);
        // Short errors are left as they are.
        let small = ToolError::invalid("limit", "'limit' must be …").bounded();
        assert_eq!(small, ToolError::invalid("limit", "'limit' must be …"));
    }

    #[test]
    fn status_mapping_follows_the_seed() {
        for (s, c) in [
            (401, "ZOTERO_AUTH_ERROR"),
            (403, "ZOTERO_AUTH_ERROR"),
            (404, "ZOTERO_NOT_FOUND"),
            (429, "ZOTERO_RATE_LIMITED"),
            (400, "ZOTERO_VALIDATION_ERROR"),
            (409, "ZOTERO_VALIDATION_ERROR"),
            (412, "ZOTERO_VALIDATION_ERROR"),
            (413, "ZOTERO_VALIDATION_ERROR"),
            (415, "ZOTERO_VALIDATION_ERROR"),
            (422, "ZOTERO_VALIDATION_ERROR"),
            (500, "ZOTERO_UPSTREAM_ERROR"),
            (503, "ZOTERO_UPSTREAM_ERROR"),
            (302, "ZOTERO_UPSTREAM_ERROR"),
            (418, "ZOTERO_UPSTREAM_ERROR"),
        ] {
            assert_eq!(ErrorCode::for_status(s).as_str(), c, "status {s}");
        }
    }
}
