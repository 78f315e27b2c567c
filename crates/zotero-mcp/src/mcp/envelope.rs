//! The response envelope every tool answers with: `{ok, data, error}` (its schema is
//! `tools::support::publish::output_schema`; the codes are `crate::error`'s).

use serde_json::{json, Value};

use crate::error::ToolError;

/// The envelope for a successful call.
pub fn ok(data: Value) -> Value {
    json!({ "ok": true, "data": data, "error": null })
}

/// The envelope for a failed call.
pub fn err(e: &ToolError) -> Value {
    json!({
        "ok": false,
        "data": null,
        "error": { "code": e.code.as_str(), "message": e.message, "details": e.details }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_have_the_seed_shape() {
        let e = ToolError::invalid("limit", "limit must be between 1 and 100");
        let v = err(&e);
        assert_eq!(v["ok"], false);
        assert_eq!(v["data"], Value::Null);
        assert_eq!(v["error"]["code"], "ZOTERO_VALIDATION_ERROR");
        assert_eq!(v["error"]["details"]["field"], "limit");
        let v = ok(json!({"x": 1}));
        assert_eq!(v["ok"], true);
        assert_eq!(v["error"], Value::Null);
        assert_eq!(v["data"]["x"], 1);
    }
}
