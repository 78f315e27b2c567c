//! The shape of a JSON text that rmcp did not take as a message, read without keeping its
//! `params`, `result` or `error`: enough to decide whether it gets an answer, with which id,
//! and which fault to name.

use std::fmt;

use rmcp::model::{ErrorCode, RequestId};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The methods this server answers (its capabilities are tools). rmcp turns invalid params
/// of any of them into a custom request, which would be answered "method not found".
pub const SERVED_METHODS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// The shape of a JSON text, read without keeping `params`, `result` or `error`.
pub enum Shape {
    Object(Members),
    Array,
    Scalar,
}

#[derive(Default)]
pub struct Members {
    pub jsonrpc: Option<Value>,
    pub id: Option<Value>,
    pub method: Option<Value>,
    pub params: Option<Params>,
    pub result: bool,
    pub error: bool,
    /// One of the members above appears twice.
    pub duplicate: bool,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Params {
    Object,
    Array,
    Other,
}

impl Members {
    /// The error code and message for a request that is not valid, first fault first.
    pub fn fault(&self) -> (ErrorCode, String) {
        let invalid = |why: &str| {
            (
                ErrorCode::INVALID_REQUEST,
                format!("Invalid Request: {why}"),
            )
        };
        let method = self.method.as_ref().and_then(Value::as_str);
        if self.duplicate {
            return invalid("a member appears twice");
        }
        if self.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
            return invalid(r#""jsonrpc" must be "2.0""#);
        }
        let Some(method) = method else {
            return invalid(match self.method {
                None => r#""method" is missing"#,
                Some(_) => r#""method" must be a string"#,
            });
        };
        if self.result || self.error {
            return invalid(r#"a request has no "result" or "error""#);
        }
        let id = self.id.clone().unwrap_or(Value::Null);
        if id.is_null() {
            return invalid(r#""id" must not be null"#);
        }
        if serde_json::from_value::<RequestId>(id).is_err() {
            return invalid(r#""id" must be a string or a 64-bit integer"#);
        }
        match self.params {
            Some(Params::Other) => invalid(r#""params" must be an object"#),
            Some(Params::Array) if SERVED_METHODS.contains(&method) => (
                ErrorCode::INVALID_PARAMS,
                r#"Invalid params: "params" must be an object"#.into(),
            ),
            Some(Params::Array) => (ErrorCode::METHOD_NOT_FOUND, "Method not found".into()),
            _ => invalid("not a valid JSON-RPC 2.0 request"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut m = Members::default();
        while let Some(key) = map.next_key::<String>()? {
            let seen = match key.as_str() {
                "jsonrpc" => m.jsonrpc.replace(map.next_value()?).is_some(),
                "id" => m.id.replace(map.next_value()?).is_some(),
                "method" => m.method.replace(map.next_value()?).is_some(),
                "params" => m
                    .params
                    .replace(map.next_value::<ParamsKind>()?.0)
                    .is_some(),
                "result" => {
                    map.next_value::<IgnoredAny>()?;
                    std::mem::replace(&mut m.result, true)
                }
                "error" => {
                    map.next_value::<IgnoredAny>()?;
                    std::mem::replace(&mut m.error, true)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    false
                }
            };
            m.duplicate |= seen;
        }
        Ok(Shape::Object(m))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Array)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
}

/// What `params` is, without keeping it.
struct ParamsKind(Params);

impl<'de> serde::Deserialize<'de> for ParamsKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = ParamsKind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamsKind, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ParamsKind(Params::Object))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamsKind, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ParamsKind(Params::Array))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ParamsKind, E> {
                Ok(ParamsKind(Params::Other))
            }
        }
        deserializer.deserialize_any(KindVisitor)
    }
}
