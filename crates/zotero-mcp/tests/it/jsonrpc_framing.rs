//! The JSON-RPC layer of the stdio transport, spoken to the built binary as raw bytes: every
//! line gets a JSON-RPC 2.0 answer (a parse error or an invalid request, with the request's id
//! when it can be read) or, for a notification or a response, a deliberate silence; batches
//! are refused; an oversized message is answered with its id and the server goes on; the
//! largest message follows `ZOTERO_UPLOAD_MAX_BYTES`; every stdout line is one JSON-RPC
//! message; each refusal is logged on stderr without the message's content.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{env_for, tool_call, BIN};

const MIB: usize = 1024 * 1024;

/// Not a timing assertion: it only turns a server that never answers (the bug these tests
/// are about) into a failure instead of a test run that hangs.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// The binary over raw pipes, initialized with protocol 2025-06-18.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Vec<u8>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    pings: u64,
}

impl Raw {
    fn start(env: &[(String, String)]) -> Raw {
        let mut cmd = std::process::Command::new(BIN);
        cmd.env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn zotero-mcp");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || loop {
            let mut line = Vec::new();
            match out.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut raw = Raw {
            child,
            stdin: Some(stdin),
            stdout,
            stderr: Some(stderr),
            pings: 0,
        };
        raw.send_json(
            json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "framing-test", "version": "0"}}}),
        );
        let init = raw.next();
        assert_eq!(init["id"], "init", "{init}");
        assert!(init.get("result").is_some(), "{init}");
        raw.send_json(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        raw
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send_json(&mut self, v: Value) {
        self.send(v.to_string().as_bytes());
    }

    /// The next stdout line, checked: one JSON-RPC 2.0 response.
    fn next(&mut self) -> Value {
        let line = match self.stdout.recv_timeout(HANG_GUARD) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no answer at all"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        };
        check_response_line(&line)
    }

    /// Sends `line`, then a ping; returns every answer that came before the ping's.
    fn answers_before_ping(&mut self, line: &[u8]) -> Vec<Value> {
        self.send(line);
        self.pings += 1;
        let ping_id = format!("ping-{}", self.pings);
        self.send_json(json!({"jsonrpc":"2.0","id":ping_id,"method":"ping"}));
        let mut before = Vec::new();
        loop {
            let v = self.next();
            if v["id"] == ping_id.as_str() {
                assert_eq!(v["result"], json!({}), "{v}");
                return before;
            }
            before.push(v);
        }
    }

    /// Sends a request rmcp serves and returns the next answer, which must be its own.
    /// (rmcp answers each request from a task of its own, so a following ping may overtake
    /// it: the ping pattern is for what this layer answers or silences.)
    fn request(&mut self, line: &[u8]) -> Value {
        self.send(line);
        self.next()
    }

    /// The one answer `line` gets (before a following ping's).
    fn answer(&mut self, line: &[u8]) -> Value {
        let mut answers = self.answers_before_ping(line);
        assert_eq!(
            answers.len(),
            1,
            "one answer to {}: {answers:?}",
            preview(line)
        );
        answers.remove(0)
    }

    /// Closes stdin; the server answers what is still in flight, closes stdout and exits.
    /// Returns those last answers, whether it exited with success, and its stderr.
    fn finish(mut self) -> (Vec<Value>, bool, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        loop {
            match self.stdout.recv_timeout(HANG_GUARD) {
                Ok(line) => rest.push(check_response_line(&line)),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("stdout still open after stdin closed"),
            }
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (rest, status.success(), stderr)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn preview(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned()
}

/// One JSON object per line, a JSON-RPC 2.0 response: `jsonrpc: "2.0"`, an `id` member, and
/// either a `result` or an `error` with an integer code and a string message.
fn check_response_line(line: &[u8]) -> Value {
    assert_eq!(line.last(), Some(&b'\n'), "a whole line");
    let body = &line[..line.len() - 1];
    assert!(!body.contains(&b'\n'));
    let v: Value = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {}", preview(body)));
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(o.get("jsonrpc"), Some(&json!("2.0")), "{v}");
    let id = o.get("id").unwrap_or_else(|| panic!("no id member: {v}"));
    assert!(id.is_string() || id.is_number() || id.is_null(), "{v}");
    match (o.get("result"), o.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "{v}");
            assert!(e["message"].is_string(), "{v}");
        }
        _ => panic!("neither a result nor an error: {v}"),
    }
    v
}

fn assert_error(v: &Value, code: i64, id: &Value, what: &str) {
    assert_eq!(v["error"]["code"], code, "{what}: {v}");
    assert_eq!(&v["id"], id, "{what}: {v}");
}

/// A ping padded with spaces to exactly `len` bytes (without the newline).
fn padded_ping(id: &str, len: usize) -> Vec<u8> {
    let mut line =
        format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":{{}}"#).into_bytes();
    line.resize(len - 1, b' ');
    line.push(b'}');
    line
}

#[test]
fn unparsable_lines_get_a_parse_error_with_a_null_id() {
    let mut s = Raw::start(&[]);
    let deep_array = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_params =
        format!(r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"a":{deep_array}}}}}"#);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "bad JSON",
            br#"{"jsonrpc":"2.0","id":5,"method":"ping""#.to_vec(),
        ),
        ("not JSON", b"hello".to_vec()),
        (
            "trailing garbage",
            br#"{"jsonrpc":"2.0","id":5,"method":"ping"} x"#.to_vec(),
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"\xff\xfe\"}".to_vec(),
        ),
        ("10,000-deep nesting", deep_array.into_bytes()),
        ("10,000-deep params", deep_params.into_bytes()),
    ];
    for (what, line) in cases {
        let v = s.answer(&line);
        assert_error(&v, -32700, &Value::Null, what);
    }
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

/// Well-formed JSON objects that are not valid requests, each with the `id` member 7.
fn invalid_request_shapes() -> Vec<(&'static str, Value)> {
    vec![
        ("no jsonrpc", json!({"method": "ping"})),
        ("jsonrpc 1.0", json!({"jsonrpc": "1.0", "method": "ping"})),
        ("jsonrpc a number", json!({"jsonrpc": 2, "method": "ping"})),
        ("no method", json!({"jsonrpc": "2.0"})),
        ("method a number", json!({"jsonrpc": "2.0", "method": 7})),
        ("method null", json!({"jsonrpc": "2.0", "method": null})),
        (
            "params a string",
            json!({"jsonrpc": "2.0", "method": "ping", "params": "x"}),
        ),
        (
            "params a number",
            json!({"jsonrpc": "2.0", "method": "tools/list", "params": 3}),
        ),
        (
            "a request and a result",
            json!({"jsonrpc": "2.0", "method": "ping", "result": {}}),
        ),
    ]
}

#[test]
fn invalid_requests_are_answered_with_their_id() {
    let mut s = Raw::start(&[]);
    for id in [json!(7), json!("req-7")] {
        for (what, mut shape) in invalid_request_shapes() {
            shape["id"] = id.clone();
            let v = s.answer(shape.to_string().as_bytes());
            assert_error(&v, -32600, &id, what);
        }
    }
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn invalid_params_of_a_served_method_are_invalid_params_with_the_id() {
    let mut s = Raw::start(&[]);
    let cases = [
        json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"nam":"x"}}),
        json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":"y"}}),
        json!({"jsonrpc":"2.0","id":8,"method":"ping","params":[]}),
    ];
    for line in cases {
        let v = s.answer(line.to_string().as_bytes());
        assert_error(&v, -32602, &json!(8), &line.to_string());
    }
    // An array of params for a method nobody serves: the method is what is missing.
    let v = s.answer(br#"{"jsonrpc":"2.0","id":9,"method":"nope","params":[1]}"#);
    assert_error(&v, -32601, &json!(9), "array params, unknown method");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

/// What rmcp already answered right stays so: an unknown method is -32601 with its id.
#[test]
fn an_unknown_method_is_method_not_found_with_its_id() {
    let mut s = Raw::start(&[]);
    let v = s.request(br#"{"jsonrpc":"2.0","id":"u","method":"nope","params":{}}"#);
    assert_error(&v, -32601, &json!("u"), "unknown method");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn an_id_that_cannot_be_echoed_is_null_and_one_that_can_is_echoed() {
    let mut s = Raw::start(&[]);
    let cases = [
        (json!({"a": 1}), Value::Null),
        (json!([1]), Value::Null),
        (json!(true), Value::Null),
        (Value::Null, Value::Null),
        (json!(1.5), json!(1.5)),
        (json!(u64::MAX), json!(u64::MAX)),
    ];
    for (id, answered) in cases {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let v = s.answer(line.to_string().as_bytes());
        assert_error(&v, -32600, &answered, &line.to_string());
    }
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn invalid_notifications_and_responses_get_silence() {
    let mut s = Raw::start(&[]);
    let mut lines: Vec<String> = invalid_request_shapes()
        .into_iter()
        .map(|(_, shape)| shape.to_string())
        .collect();
    lines.extend([
        json!({}).to_string(),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}).to_string(),
        // Responses are never answered, however wrong: an echoed error must not start a storm.
        json!({"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}).to_string(),
        json!({"jsonrpc":"1.0","id":5,"result":{}}).to_string(),
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
            .to_string(),
        json!({"jsonrpc":"2.0","id":5,"error":"x"}).to_string(),
        // A blank line is no message at all.
        "   ".to_string(),
    ]);
    for line in lines {
        let answers = s.answers_before_ping(line.as_bytes());
        assert!(answers.is_empty(), "{line} was answered: {answers:?}");
    }
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn batches_and_non_objects_are_refused_with_a_null_id() {
    let mut s = Raw::start(&[]);
    for line in [
        "[]",
        r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#,
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
        "42",
        r#""x""#,
        "null",
    ] {
        let v = s.answer(line.as_bytes());
        assert_error(&v, -32600, &Value::Null, line);
    }
    // An unparsable batch is a parse error.
    let v = s.answer(br#"[{"jsonrpc":"2.0","id":5,"method":"ping"},"#);
    assert_error(&v, -32700, &Value::Null, "unparsable batch");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

/// 17 MiB of params, the id before them (as rmcp and the Python SDK write it) or after
/// them (as the TypeScript SDK writes it).
fn oversized_call(id: &Value, id_first: bool) -> Vec<u8> {
    let data = "A".repeat(17 * MIB);
    let params = format!(r#""params":{{"name":"x","arguments":{{"data":"{data}"}}}}"#);
    let id = format!(r#""id":{id}"#);
    let line = if id_first {
        format!(r#"{{"jsonrpc":"2.0",{id},"method":"tools/call",{params}}}"#)
    } else {
        format!(r#"{{"method":"tools/call",{params},"jsonrpc":"2.0",{id}}}"#)
    };
    line.into_bytes()
}

/// An upload limit small enough that the message limit is its 16 MiB floor (the default
/// 50 MiB upload makes it about 71 MB).
fn floor_limit() -> Vec<(String, String)> {
    vec![("ZOTERO_UPLOAD_MAX_BYTES".into(), MIB.to_string())]
}

#[test]
fn an_oversized_message_is_answered_with_its_id_and_the_server_goes_on() {
    let mut s = Raw::start(&floor_limit());
    for (id, id_first) in [
        (json!(11), true),
        (json!("big-12"), false),
        (json!("with \"quotes\" \\"), false),
    ] {
        let v = s.answer(&oversized_call(&id, id_first));
        assert_error(&v, -32600, &id, "oversized");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("too large"),
            "{v}"
        );
    }
    // No id to be found (a notification, or garbage): still an answer, with a null id.
    let mut garbage = vec![b'x'; 17 * MIB];
    garbage.extend_from_slice(br#""id":3}"#);
    let v = s.answer(&garbage);
    assert_error(&v, -32600, &Value::Null, "oversized garbage");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn a_message_at_the_limit_is_served_and_one_byte_more_is_refused() {
    let mut s = Raw::start(&floor_limit());
    let v = s.request(&padded_ping("at-limit", 16 * MIB));
    assert_eq!(v["id"], "at-limit", "{v}");
    assert_eq!(v["result"], json!({}), "{v}");
    let v = s.answer(&padded_ping("over", 16 * MIB + 1));
    assert_error(&v, -32600, &json!("over"), "one byte over");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn the_message_limit_follows_the_upload_limit() {
    // 15 MiB of file is 20 MiB of base64: a 17 MiB message must get through.
    let mut s = Raw::start(&[("ZOTERO_UPLOAD_MAX_BYTES".into(), (15 * MIB).to_string())]);
    let v = s.request(&padded_ping("17MiB", 17 * MIB));
    assert_eq!(v["id"], "17MiB", "{v}");
    assert_eq!(v["result"], json!({}), "{v}");
    let (rest, ok, _) = s.finish();
    assert!(rest.is_empty() && ok);
}

#[test]
fn each_refusal_is_logged_once_without_the_message() {
    let mut s = Raw::start(&floor_limit());
    s.answer(br#"{"jsonrpc":"2.0","id":21,"method":"ping","params":{"secret":"SECRET-PARSE""#);
    s.answer(br#"{"jsonrpc":"1.0","id":22,"method":"SECRET-INVALID"}"#);
    s.answers_before_ping(br#"{"jsonrpc":"1.0","method":"SECRET-NOTIFICATION"}"#);
    let mut big = oversized_call(&json!(23), true);
    big.splice(30..30, b"SECRET-BIG".iter().copied());
    s.answer(&big);
    let (_, ok, stderr) = s.finish();
    assert!(ok);
    assert!(!stderr.contains("SECRET"), "message content in the logs");
    let refusals: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["fields"]["message"] == "jsonrpc.refused")
        .collect();
    let kinds: Vec<(&str, &Value)> = refusals
        .iter()
        .map(|l| (l["fields"]["kind"].as_str().unwrap(), &l["fields"]["id"]))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("parse_error", &Value::Null),
            ("invalid_request", &json!("22")),
            ("invalid_notification", &Value::Null),
            ("oversized", &json!("23")),
        ],
        "{stderr}"
    );
}

/// Closing stdin while a call is still running: its answer still comes, then a clean exit.
#[tokio::test]
async fn an_answer_in_flight_when_stdin_closes_is_still_written() {
    let emu = zotero_emulator::Emulator::start().await;
    emu.inject(zotero_emulator::Fault::once(
        zotero_emulator::FaultKind::Slow(Duration::from_millis(300)),
    ));
    let env = env_for(
        &emu.uri(),
        zotero_emulator::USER_ID,
        zotero_emulator::API_KEY,
    );
    let (rest, ok, _) = tokio::task::spawn_blocking(move || {
        let mut s = Raw::start(&env);
        let mut call = tool_call("zotero_search_items", json!({"query": "attention"}));
        call["jsonrpc"] = json!("2.0");
        call["id"] = json!("slow");
        s.send_json(call);
        s.finish()
    })
    .await
    .unwrap();
    assert!(ok);
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], "slow");
    assert!(rest[0]["result"]["content"].is_array(), "{}", rest[0]);
}
