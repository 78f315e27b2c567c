//! A failed write and the two PHP idioms its messages are built with: a leaf below the
//! validation of items and of their properties, which both use it.

use serde_json::{Map, Value};

/// A failed write: the HTTP status (or per-object `code`), the message and optional `data`.
#[derive(Debug, Clone)]
pub(crate) struct Fail {
    pub(crate) code: u16,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl Fail {
    pub(crate) fn new(code: u16, message: impl Into<String>) -> Fail {
        Fail {
            code,
            message: message.into(),
            data: None,
        }
    }
    pub(crate) fn bad(message: impl Into<String>) -> Fail {
        Fail::new(400, message)
    }
}

/// PHP `isset`: present and not null.
pub(crate) fn isset(obj: &Map<String, Value>, k: &str) -> bool {
    obj.get(k).is_some_and(|v| !v.is_null())
}

/// A scalar as PHP would interpolate it into a message.
pub(crate) fn php_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "1".into(),
        Value::Bool(false) | Value::Null => String::new(),
        Value::Number(n) => n.to_string(),
        _ => "Array".into(),
    }
}
