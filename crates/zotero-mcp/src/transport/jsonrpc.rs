//! What each input line is, by JSON-RPC 2.0: a message rmcp can take, or one refused here
//! with the answer the spec asks for (a parse error or an invalid request, carrying the
//! request's `id` when it can be read and `null` otherwise), or with deliberate silence.
//!
//! rmcp (3.9) ignores unparsable lines, answers a well-formed message of the wrong shape with
//! an error that has no `id` member at all, and answers invalid params of a method it knows
//! with "method not found". Those are decided here, before rmcp; everything rmcp answers
//! right (an unknown method, the handlers' own errors) stays with rmcp.
//!
//! Silence is for messages that asked for no answer: notifications (no `id` member) and
//! responses (`result` / `error` without `method`). Answering a bad response or notification
//! could start an error storm with a peer that echoes what it gets.
//!
//! Batches (JSON arrays) are refused with one `-32600` error (id `null`): MCP 2025-06-18
//! removed JSON-RPC batching, and no version this server speaks needs it.

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, CustomRequest, ErrorCode, ErrorData,
    GetMeta, InitializeRequest, JsonRpcMessage, ListToolsRequest, PingRequest, ProtocolVersion,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::shape::{Shape, SERVED_METHODS};

/// The served methods that the 2026-07-28 lifecycle removed. A request that declares that
/// lifecycle in its `_meta` goes to rmcp whatever its params, which answers it "method not
/// found" (404 over HTTP), as that revision asks: judging its params as the older
/// revisions' would answer "invalid params" to a method that no longer exists.
const REMOVED_IN_2026_07_28: [&str; 2] = ["initialize", "ping"];

/// How much of a refused message's `id` a log line shows.
const LOGGED_ID_CHARS: usize = 64;

/// What to do with one line.
#[derive(Debug)]
pub enum Verdict {
    /// A message for rmcp.
    Deliver(Box<ClientJsonRpcMessage>),
    /// Refused with this answer (one line, newline included).
    Answer { line: Vec<u8>, refusal: Refusal },
    /// Refused without an answer.
    Silence(Refusal),
    /// A blank line: no message at all.
    Skip,
}

/// A refused message, as logged: what was wrong and its id, never its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub kind: &'static str,
    /// The `id` as JSON text, capped; `None` when there was none to read.
    pub id: Option<String>,
    pub bytes: usize,
    /// The JSON-RPC error code answered; `None` for silence.
    pub code: Option<i32>,
}

impl Refusal {
    fn new(kind: &'static str, id: Option<&Value>, bytes: usize, code: Option<ErrorCode>) -> Self {
        let id = id.map(|id| {
            let text = id.to_string();
            match text.char_indices().nth(LOGGED_ID_CHARS) {
                Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or_default()),
                None => text,
            }
        });
        Refusal {
            kind,
            id,
            bytes,
            code: code.map(|c| c.0),
        }
    }

    /// One bounded log line on stderr.
    pub fn log(&self) {
        tracing::warn!(
            kind = self.kind,
            id = self.id.as_deref(),
            bytes = self.bytes,
            code = self.code,
            "jsonrpc.refused"
        );
    }
}

/// Decides what `line` (without its newline) is.
pub fn classify(line: &[u8]) -> Verdict {
    let bytes = line.len();
    // rmcp's own transport also tolerates a byte-order mark and a CRLF line end.
    let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    if std::str::from_utf8(body).is_err() {
        return parse_error("invalid_utf8", "Parse error: not UTF-8".into(), bytes);
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
        Ok(message) => accept(message, bytes),
        // A syntax error (recursion deeper than 128 included) or a cut message.
        Err(e) if e.is_syntax() || e.is_eof() => {
            parse_error("parse_error", format!("Parse error: {e}"), bytes)
        }
        Err(_) => refuse(body, bytes),
    }
}

/// The answer to a message longer than the limit, with its `id` if one was found.
pub fn oversized(id: Option<Value>, len: usize, max: usize) -> (Vec<u8>, Refusal) {
    let id = id.unwrap_or(Value::Null);
    let message = format!("Invalid Request: message too large (over {max} bytes)");
    let line = error_line(&id, ErrorCode::INVALID_REQUEST, &message);
    let refusal = Refusal::new(
        "oversized",
        Some(&id).filter(|id| !id.is_null()),
        len,
        Some(ErrorCode::INVALID_REQUEST),
    );
    (line, refusal)
}

/// One JSON-RPC error response, newline included.
pub fn error_line(id: &Value, code: ErrorCode, message: &str) -> Vec<u8> {
    let error = ErrorData::new(code, message.to_owned(), None);
    error_response_line(id, &error).unwrap_or_else(|_| INTERNAL_ERROR_LINE.to_vec())
}

/// An error response with the members in the usual order, newline included.
pub fn error_response_line(id: &Value, error: &ErrorData) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        error: &'a ErrorData,
    }
    let mut line = serde_json::to_vec(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error,
    })?;
    line.push(b'\n');
    Ok(line)
}

/// Never needed (an `ErrorData` always serializes), but an answer is owed even then.
const INTERNAL_ERROR_LINE: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}\n";

fn parse_error(kind: &'static str, message: String, bytes: usize) -> Verdict {
    Verdict::Answer {
        line: error_line(&Value::Null, ErrorCode::PARSE_ERROR, &message),
        refusal: Refusal::new(kind, None, bytes, Some(ErrorCode::PARSE_ERROR)),
    }
}

/// A message rmcp parsed: delivered, unless it is a served method whose params did not fit.
fn accept(message: ClientJsonRpcMessage, bytes: usize) -> Verdict {
    if let JsonRpcMessage::Request(request) = &message {
        if let ClientRequest::CustomRequest(custom) = &request.request {
            let method = custom.method.as_str();
            let removed =
                REMOVED_IN_2026_07_28.contains(&method) && declares_stateless_lifecycle(custom);
            if SERVED_METHODS.contains(&method) && !removed {
                let request_json = json!({"method": custom.method, "params": custom.params});
                let why = params_error(&custom.method, request_json);
                let id = request.id.clone().into_json_value();
                return Verdict::Answer {
                    line: error_line(
                        &id,
                        ErrorCode::INVALID_PARAMS,
                        &format!("Invalid params: {why}"),
                    ),
                    refusal: Refusal::new(
                        "invalid_params",
                        Some(&id),
                        bytes,
                        Some(ErrorCode::INVALID_PARAMS),
                    ),
                };
            }
        }
    }
    Verdict::Deliver(Box::new(message))
}

/// Whether the request's `_meta` (which rmcp keeps apart from `params`) names a protocol
/// version of 2026-07-28 or later.
fn declares_stateless_lifecycle(request: &CustomRequest) -> bool {
    request
        .get_meta()
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Why the request of a served method did not parse, in serde's words.
fn params_error(method: &str, request: Value) -> String {
    fn why<T: DeserializeOwned>(request: Value) -> String {
        match serde_json::from_value::<T>(request) {
            Ok(_) => "not accepted".into(),
            Err(e) => e.to_string(),
        }
    }
    match method {
        "initialize" => why::<InitializeRequest>(request),
        "ping" => why::<PingRequest>(request),
        "tools/list" => why::<ListToolsRequest>(request),
        _ => why::<CallToolRequest>(request),
    }
}

/// A line that is JSON but that rmcp did not take: parsed again, cheaply, for its shape.
fn refuse(body: &[u8], bytes: usize) -> Verdict {
    let shape = match serde_json::from_slice::<Shape>(body) {
        Ok(shape) => shape,
        // Trailing characters after a well-formed value.
        Err(e) if e.is_syntax() || e.is_eof() => {
            return parse_error("parse_error", format!("Parse error: {e}"), bytes)
        }
        Err(_) => return invalid(None, "Invalid Request", "invalid_request", bytes),
    };
    let members = match shape {
        Shape::Array => {
            let why = "Invalid Request: batches are not supported (MCP removed JSON-RPC batching)";
            return invalid(None, why, "batch", bytes);
        }
        Shape::Scalar => {
            return invalid(
                None,
                "Invalid Request: a request is a JSON object",
                "not_an_object",
                bytes,
            )
        }
        Shape::Object(members) => members,
    };
    if members.method.is_none() && (members.result || members.error) {
        return Verdict::Silence(Refusal::new(
            "invalid_response",
            members.id.as_ref(),
            bytes,
            None,
        ));
    }
    let Some(id) = &members.id else {
        return Verdict::Silence(Refusal::new("invalid_notification", None, bytes, None));
    };
    let answered_id = match id {
        Value::String(_) | Value::Number(_) if !members.duplicate => id.clone(),
        _ => Value::Null,
    };
    let (code, why) = members.fault();
    Verdict::Answer {
        line: error_line(&answered_id, code, &why),
        refusal: Refusal::new("invalid_request", Some(id), bytes, Some(code)),
    }
}

fn invalid(id: Option<&Value>, why: &str, kind: &'static str, bytes: usize) -> Verdict {
    let code = ErrorCode::INVALID_REQUEST;
    Verdict::Answer {
        line: error_line(id.unwrap_or(&Value::Null), code, why),
        refusal: Refusal::new(kind, id, bytes, Some(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> (Value, Refusal) {
        match classify(line.as_bytes()) {
            Verdict::Answer { line, refusal } => {
                assert_eq!(line.last(), Some(&b'\n'));
                assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
                (serde_json::from_slice(&line).unwrap(), refusal)
            }
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn valid_messages_go_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
            r#"{"jsonrpc":"2.0","id":"a","method":"nope","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            // Removed by the 2026-07-28 lifecycle that its _meta declares: rmcp answers
            // "method not found".
            r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Verdict::Deliver(_)),
                "{line}"
            );
        }
        assert!(matches!(classify(b" \t\r"), Verdict::Skip));
    }

    #[test]
    fn each_fault_is_named_and_the_id_kept() {
        let cases = [
            (
                r#"{"id":1,"method":"ping"}"#,
                -32600,
                json!(1),
                r#""jsonrpc" must be "2.0""#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1}"#,
                -32600,
                json!(1),
                r#""method" is missing"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":1}"#,
                -32600,
                json!("x"),
                "must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":1}"#,
                -32600,
                json!(1),
                "object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":1}"#,
                -32600,
                json!(1),
                "result",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
                -32600,
                Value::Null,
                "twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                -32600,
                Value::Null,
                "null",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                -32600,
                json!(1.5),
                "64-bit",
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
                -32600,
                Value::Null,
                "64-bit",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
                -32602,
                json!(1),
                "object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[]}"#,
                -32601,
                json!(1),
                "not found",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
                -32602,
                json!(1),
                "name",
            ),
            ("[]", -32600, Value::Null, "batches"),
            ("7", -32600, Value::Null, "object"),
            ("{", -32700, Value::Null, "EOF"),
            (r#"{"jsonrpc":"1.0"} x"#, -32700, Value::Null, "trailing"),
        ];
        for (line, code, id, why) in cases {
            let (v, refusal) = answer(line);
            assert_eq!(v["error"]["code"], code, "{line}: {v}");
            assert_eq!(v["id"], id, "{line}: {v}");
            assert!(
                v["error"]["message"].as_str().unwrap().contains(why),
                "{line}: {v}"
            );
            assert_eq!(refusal.code, Some(code));
        }
    }

    #[test]
    fn notifications_and_responses_are_refused_in_silence() {
        for (line, kind) in [
            (
                r#"{"jsonrpc":"1.0","method":"ping"}"#,
                "invalid_notification",
            ),
            ("{}", "invalid_notification"),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
                "invalid_response",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":7}"#,
                "invalid_response",
            ),
        ] {
            match classify(line.as_bytes()) {
                Verdict::Silence(refusal) => assert_eq!(refusal.kind, kind, "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_logged_id_is_capped() {
        let long = "i".repeat(1000);
        let (_, refusal) = answer(&format!(
            r#"{{"jsonrpc":"1.0","id":"{long}","method":"x"}}"#
        ));
        let id = refusal.id.unwrap();
        assert_eq!(id.chars().count(), LOGGED_ID_CHARS + 1);
        assert!(id.starts_with("\"iii"));
    }
}
