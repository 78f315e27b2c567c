//! Validation of raw tool arguments against the published input schemas. Every failure is a
//! `ZOTERO_VALIDATION_ERROR` that names the field and says what to send instead; nothing
//! invalid ever reaches Zotero.

use serde_json::{Map, Value};

use crate::envelope::ToolError;

pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> Args<'a> {
    /// Rejects any field outside `allowed` (the schemas say `additionalProperties: false`).
    pub fn new(raw: Option<&'a Map<String, Value>>, allowed: &[&str]) -> Result<Self, ToolError> {
        let map = raw.unwrap_or(&EMPTY);
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            let expected = if allowed.is_empty() {
                "this tool takes no arguments".to_string()
            } else {
                format!("allowed fields: {}", allowed.join(", "))
            };
            return Err(ToolError::invalid(
                unknown,
                format!("unknown field '{unknown}'; {expected}"),
            ));
        }
        Ok(Self { map })
    }

    fn present(&self, field: &str) -> Option<&'a Value> {
        // An explicit null counts as absent: some clients send every optional field.
        self.map.get(field).filter(|v| !v.is_null())
    }

    pub fn has(&self, field: &str) -> bool {
        self.present(field).is_some()
    }

    pub fn string(&self, field: &str, min_len: usize) -> Result<Option<String>, ToolError> {
        match self.present(field) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() >= min_len => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(ToolError::invalid(
                field,
                format!("'{field}' must not be empty"),
            )),
            Some(other) => Err(ToolError::invalid(
                field,
                format!("'{field}' must be a string, got {}", kind(other)),
            )),
        }
    }

    /// An optional string where blank means "not given" (the schemas allow "").
    pub fn optional_text(&self, field: &str) -> Result<Option<String>, ToolError> {
        Ok(self.string(field, 0)?.filter(|s| !s.trim().is_empty()))
    }

    pub fn required_string(&self, field: &str, min_len: usize) -> Result<String, ToolError> {
        self.string(field, min_len)?
            .ok_or_else(|| ToolError::invalid(field, format!("'{field}' is required")))
    }

    /// An integer within `min..=max` (JSON numbers like `5.0` count as integers).
    pub fn integer(&self, field: &str, min: u64, max: u64) -> Result<Option<u64>, ToolError> {
        let Some(v) = self.present(field) else {
            return Ok(None);
        };
        let range = || {
            if max == u64::MAX {
                format!("'{field}' must be an integer of at least {min}")
            } else {
                format!("'{field}' must be an integer from {min} to {max}")
            }
        };
        let n = match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    u
                } else if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0) {
                    if f > u64::MAX as f64 {
                        return Err(ToolError::invalid(field, range()));
                    }
                    f as u64
                } else {
                    return Err(ToolError::invalid(field, format!("{}, got {n}", range())));
                }
            }
            other => {
                return Err(ToolError::invalid(
                    field,
                    format!("{}, got {}", range(), kind(other)),
                ))
            }
        };
        if n < min || n > max {
            return Err(ToolError::invalid(field, format!("{}, got {n}", range())));
        }
        Ok(Some(n))
    }

    /// An array of non-empty strings; duplicates are an error when `unique`.
    pub fn string_array(&self, field: &str, unique: bool) -> Result<Vec<String>, ToolError> {
        let Some(v) = self.present(field) else {
            return Ok(Vec::new());
        };
        let Value::Array(values) = v else {
            return Err(ToolError::invalid(
                field,
                format!("'{field}' must be an array of strings, got {}", kind(v)),
            ));
        };
        let mut out: Vec<String> = Vec::with_capacity(values.len());
        for (i, item) in values.iter().enumerate() {
            match item {
                Value::String(s) if !s.is_empty() => {
                    if unique && out.contains(s) {
                        return Err(ToolError::invalid(
                            field,
                            format!("'{field}' lists '{s}' twice; each entry must be unique"),
                        ));
                    }
                    out.push(s.clone());
                }
                Value::String(_) => {
                    return Err(ToolError::invalid(
                        field,
                        format!("'{field}[{i}]' must not be empty"),
                    ))
                }
                other => {
                    return Err(ToolError::invalid(
                        field,
                        format!("'{field}[{i}]' must be a string, got {}", kind(other)),
                    ))
                }
            }
        }
        Ok(out)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Zotero object keys: 8 characters of `23456789ABCDEFGHIJKLMNPQRSTUVWXYZ`. Checking them
/// here also keeps anything that could change the request path out of the URL.
pub fn object_key(field: &str, key: &str) -> Result<(), ToolError> {
    const ALPHABET: &str = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";
    if key.len() == 8 && key.chars().all(|c| ALPHABET.contains(c)) {
        Ok(())
    } else {
        Err(ToolError::invalid(
            field,
            format!("'{field}' must be a Zotero key: 8 characters from {ALPHABET} (e.g. X42A7DEE), got '{key}'"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn unknown_fields_are_named() {
        let m = map(json!({"query": "x", "qury": 1}));
        let e = Args::new(Some(&m), &["query"]).err().unwrap();
        assert_eq!(e.details["field"], "qury");
    }

    #[test]
    fn integers_are_bounded_and_typed() {
        let m = map(json!({"a": 0, "b": 101, "c": "5", "d": 5.0, "e": -1, "f": 2.5}));
        let a = Args::new(Some(&m), &["a", "b", "c", "d", "e", "f"]).unwrap();
        assert!(a.integer("a", 1, 100).is_err());
        assert!(a.integer("b", 1, 100).is_err());
        assert!(a.integer("c", 1, 100).is_err());
        assert_eq!(a.integer("d", 1, 100).unwrap(), Some(5));
        assert!(a.integer("e", 0, u64::MAX).is_err());
        assert!(a.integer("f", 0, 10).is_err());
        assert_eq!(a.integer("zz", 0, 10).unwrap(), None);
    }

    #[test]
    fn keys_are_checked() {
        assert!(object_key("item_key", "X42A7DEE").is_ok());
        assert!(object_key("item_key", "x42a7dee").is_err());
        assert!(object_key("item_key", "ABC/../x").is_err());
        assert!(object_key("item_key", "ABCDEFG0").is_err());
    }
}
