//! One version-checked `POST` of up to 50 partial objects, and what Zotero answered for
//! each: written, unchanged, stale (412), refused, or unknown (read it again to see).

use hyper::Method;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::merge::Plan;
use super::{FieldChange, ObjectKind};
use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::model::WireObject;
use crate::response::{parse_json, unexpected};

/// A write to send: (index of the edit, its plan, the object as read, the fields to send,
/// the changes they make).
pub(super) type Write = (
    usize,
    Plan,
    WireObject,
    Map<String, Value>,
    Vec<FieldChange>,
);

impl Library<'_> {
    /// One `POST` of up to 50 partial objects, each with the version it was computed from.
    pub(super) async fn write_batch(
        &self,
        kind: ObjectKind,
        batch: &[Write],
        cancel: &CancellationToken,
    ) -> Vec<BatchResult> {
        let every = |result: &dyn Fn() -> BatchResult| batch.iter().map(|_| result()).collect();
        let objects: Vec<Value> = batch
            .iter()
            .map(|(_, plan, object, patch, _)| {
                let mut o = patch.clone();
                o.insert("key".into(), Value::from(plan.edit.key.as_str()));
                o.insert("version".into(), Value::from(object.version.unwrap_or(0)));
                Value::Object(o)
            })
            .collect();
        let body = match serde_json::to_vec(&objects) {
            Ok(b) => b,
            Err(e) => return every(&|| failed(0, &e)),
        };
        // Safe to send again: a repeat of a write that landed meets a newer version (412)
        // and the object is read again.
        let req = ApiRequest::with_body(
            Method::POST,
            kind.path().to_string(),
            "application/json",
            body,
        )
        .repeatable(true);
        let resp = match self.send(&req, cancel).await {
            Ok(resp) => resp,
            Err(e) if e.nothing_written() => {
                let code = if matches!(e, ZoteroError::LibraryAccess { .. }) {
                    403
                } else {
                    0
                };
                return every(&|| failed(code, &e));
            }
            // Lost, cancelled or refused after a repeat: any attempt may have landed.
            Err(_) => return every(&|| BatchResult::Unknown),
        };
        if resp.status != 200 {
            if resp.retries > 0 {
                return every(&|| BatchResult::Unknown);
            }
            let e = unexpected(&resp, &format!("write {}s", kind.noun()));
            return every(&|| failed(resp.status, &e));
        }
        let Ok(answer) = parse_json::<Value>(&resp) else {
            return every(&|| BatchResult::Unknown);
        };
        (0..batch.len())
            .map(|idx| answer_for(&answer, idx, resp.retries > 0))
            .collect()
    }
}

fn failed(code: u16, e: &dyn std::fmt::Display) -> BatchResult {
    BatchResult::Failed {
        code,
        message: e.to_string(),
    }
}

/// What Zotero's answer to a batch (`successful`, `unchanged`, `failed`, by index) says of
/// the object at `idx`. `repeated`: the batch was sent more than once.
fn answer_for(answer: &Value, idx: usize, repeated: bool) -> BatchResult {
    let idx = idx.to_string();
    if let Some(obj) = answer.get("successful").and_then(|s| s.get(&idx)) {
        return match serde_json::from_value::<WireObject>(obj.clone()) {
            Ok(wire) => BatchResult::Written(wire),
            Err(_) => BatchResult::Unknown,
        };
    }
    if answer.get("unchanged").and_then(|s| s.get(&idx)).is_some() {
        return BatchResult::Unchanged;
    }
    if let Some(failed) = answer.get("failed").and_then(|s| s.get(&idx)) {
        let code = failed
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(400);
        if code == 412 {
            // Changed since read; after a repeat, possibly by our own attempt.
            return if repeated {
                BatchResult::Unknown
            } else {
                BatchResult::Stale
            };
        }
        let message = failed
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no reason given")
            .to_string();
        return BatchResult::Failed { code, message };
    }
    // Zotero answered nothing for it: read it to see.
    BatchResult::Unknown
}

/// What a batch write answered for one object.
pub(super) enum BatchResult {
    Written(WireObject),
    Unchanged,
    /// Refused with 412: changed since it was read, nothing written.
    Stale,
    Failed {
        code: u16,
        message: String,
    },
    /// Not known whether it was written: read it again.
    Unknown,
}
