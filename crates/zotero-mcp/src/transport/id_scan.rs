//! Finding the `id` of a message too large to read whole, from the bounded head and tail kept
//! of it, so its refusal can still be matched to the request. The head is read forward as
//! JSON (rmcp and the Python SDK write `id` before `params`); the tail is read backward (the
//! TypeScript SDK writes `id` last), accepting only a top-level member `,"id":<value>}`.

use serde::de::IgnoredAny;
use serde_json::{Deserializer, Value};

/// How much of the start of an oversized message is kept to look for its `id`.
pub const HEAD_BYTES: usize = 64 * 1024;
/// How much of the end of an oversized message is kept to look for its `id`.
pub const TAIL_BYTES: usize = 4 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The `id` member of the top-level object whose text starts with `head` (which may stop
/// anywhere), when it appears in `head` and is a string, a number or null.
pub fn id_in_head(head: &[u8]) -> Option<Value> {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let mut at = skip_ws(head, 0);
    if head.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        let (key, end) = first_value::<String>(head, at)?;
        at = skip_ws(head, end);
        if head.get(at) != Some(&b':') {
            return None;
        }
        if key == "id" {
            let (id, end) = first_value::<Value>(head, at + 1)?;
            // A number cut short by the end of the head would read as another number.
            return matches!(head.get(skip_ws(head, end)), Some(b',' | b'}'))
                .then_some(id)
                .filter(echoable);
        }
        let (IgnoredAny, end) = first_value::<IgnoredAny>(head, at + 1)?;
        at = skip_ws(head, end);
        match head.get(at) {
            Some(b',') => at += 1,
            _ => return None,
        }
    }
}

/// The `id` member that ends the top-level object whose text ends with `tail`, when it is a
/// string, a number or null. In valid JSON, `,"id":<value>}` or `{"id":<value>}` right before
/// the final `}` can only be a member of the top-level object.
pub fn id_in_tail(tail: &[u8]) -> Option<Value> {
    let end = trim_ws_end(tail, tail.len());
    let close = end.checked_sub(1)?;
    if tail.get(close) != Some(&b'}') {
        return None;
    }
    let value_end = trim_ws_end(tail, close);
    let value_start = value_start(tail, value_end)?;
    let id: Value = serde_json::from_slice(tail.get(value_start..value_end)?).ok()?;
    let colon = trim_ws_end(tail, value_start).checked_sub(1)?;
    if tail.get(colon) != Some(&b':') {
        return None;
    }
    let key_end = trim_ws_end(tail, colon);
    let key_start = key_end.checked_sub(4)?;
    if tail.get(key_start..key_end) != Some(b"\"id\"".as_slice()) {
        return None;
    }
    let before = trim_ws_end(tail, key_start).checked_sub(1)?;
    matches!(tail.get(before), Some(b',' | b'{'))
        .then_some(id)
        .filter(echoable)
}

/// Whether an id can be sent back as it came: JSON-RPC ids are strings, numbers or null.
fn echoable(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

/// Where the JSON value that ends at `end` starts, for the shapes an id can take.
fn value_start(text: &[u8], end: usize) -> Option<usize> {
    let last = *text.get(end.checked_sub(1)?)?;
    match last {
        b'"' => {
            // The opening quote: the nearest quote before that no backslash escapes.
            let mut at = end.checked_sub(1)?;
            loop {
                at = text.get(..at)?.iter().rposition(|b| *b == b'"')?;
                let backslashes = text
                    .get(..at)?
                    .iter()
                    .rev()
                    .take_while(|b| **b == b'\\')
                    .count();
                if backslashes % 2 == 0 {
                    return Some(at);
                }
            }
        }
        b'0'..=b'9' => {
            let number = text
                .get(..end)?
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                .count();
            Some(end - number)
        }
        b'l' => end.checked_sub(4),
        _ => None,
    }
}

/// The first JSON value at `at` and where it ends.
fn first_value<'de, T: serde::Deserialize<'de>>(text: &'de [u8], at: usize) -> Option<(T, usize)> {
    let rest = text.get(at..)?;
    let mut values = Deserializer::from_slice(rest).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(text: &[u8], at: usize) -> usize {
    at + text
        .get(at..)
        .map_or(0, |rest| rest.iter().take_while(|b| is_ws(**b)).count())
}

fn trim_ws_end(text: &[u8], end: usize) -> usize {
    end - text.get(..end).map_or(0, |before| {
        before.iter().rev().take_while(|b| is_ws(**b)).count()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_head_gives_the_top_level_id_before_the_cut() {
        let cases: &[(&[u8], Option<Value>)] = &[
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"data":"AAAA"#,
                Some(json!(5)),
            ),
            (br#"{ "id" : "a\"b" , "params":"#, Some(json!("a\"b"))),
            (b"\xEF\xBB\xBF{\"id\":null,", Some(Value::Null)),
            (br#"{"params":{"id":1},"id":2,"method":"#, Some(json!(2))),
            (br#"{"method":"x","params":{"id":1,"data":"AAA"#, None),
            // Cut inside the id: 12 may be the start of 123.
            (br#"{"jsonrpc":"2.0","id":12"#, None),
            (br#"{"jsonrpc":"2.0","id":"abc"#, None),
            (br#"{"id":{"a":1},"#, None),
            (br#"[{"id":1},"#, None),
            (br#"xx{"id":1,"#, None),
        ];
        for (head, id) in cases {
            assert_eq!(&id_in_head(head), id, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn the_tail_gives_the_id_that_ends_the_top_level_object() {
        let cases: &[(&[u8], Option<Value>)] = &[
            (br#"AAAA"}},"jsonrpc":"2.0","id":7}"#, Some(json!(7))),
            (b"AAAA\"}}, \"id\" : -1.5e3 }\r\n", Some(json!(-1.5e3))),
            (br#"AAAA"},"id":"x\"y\\"}"#, Some(json!("x\"y\\"))),
            (br#"AAAA"},"id":null}"#, Some(Value::Null)),
            (br#"{"id":"only"}"#, Some(json!("only"))),
            // The final `}` closes a nested object, or the id is not a member.
            (br#"AAAA","x":{"id":7}}"#, None),
            (br#"xxxxx"id":3}"#, None),
            (br#"AAAA\"id\":3}"#, None),
            (br#"AAAA"},"id":true}"#, None),
            (br#"AAAA"},"id":7]"#, None),
            (br#"AAAA"},"xid":7}"#, None),
            (b"", None),
        ];
        for (tail, id) in cases {
            assert_eq!(&id_in_tail(tail), id, "{}", String::from_utf8_lossy(tail));
        }
    }
}
