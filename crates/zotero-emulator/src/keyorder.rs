//! The key order of JSON objects as sent: serde_json's map sorts keys, but the real server
//! reports the first problem of an object in document order.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The key order of a JSON object as sent (serde_json's map sorts keys; the server reports
/// the first problem in document order).
#[derive(Debug, Default, Clone)]
pub(crate) struct KeyOrder(pub(crate) Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyOrder, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    m.next_value::<IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(KeyOrder(keys))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<KeyOrder, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KeyOrder::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_unit<E>(self) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
        }
        d.deserialize_any(V)
    }
}

impl KeyOrder {
    /// The keys of `obj` in document order (keys this order misses come last, sorted).
    pub(crate) fn keys<'a>(&'a self, obj: &'a Map<String, Value>) -> Vec<&'a str> {
        let mut out: Vec<&str> = self
            .0
            .iter()
            .map(String::as_str)
            .filter(|k| obj.contains_key(*k))
            .collect();
        out.dedup();
        for k in obj.keys() {
            if !out.contains(&k.as_str()) {
                out.push(k);
            }
        }
        out
    }
}
