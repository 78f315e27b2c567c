//! Streamable HTTP (`serve --http`): the built binary on an ephemeral loopback port against
//! the emulator, driven with raw hyper requests. The same calls over stdio and HTTP give the
//! same answers; Host, Origin and the bearer token are enforced before rmcp; bodies are
//! bounded; 200 concurrent calls are all answered right; SIGTERM finishes calls in flight.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

use crate::common::{env_for, spawn, BIN};

const TOKEN: &str = "test-token-0123456789abcdef";

/// The binary serving HTTP, its address and what it wrote to stderr.
pub(crate) struct HttpServer {
    child: tokio::process::Child,
    pub(crate) addr: SocketAddr,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Reads stderr to its end.
    reader: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// Starts `serve --http 127.0.0.1:0` with exactly these variables and waits for the
    /// address it logs.
    pub(crate) async fn start(env: &[(String, String)]) -> HttpServer {
        let mut child = command(env, "127.0.0.1:0").spawn().expect("spawn");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let reader = tokio::spawn(async move {
            let mut tx = Some(tx);
            let mut lines = tokio::io::BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if v["fields"]["message"] == "http.listening" {
                        let addr: SocketAddr =
                            v["fields"]["addr"].as_str().unwrap().parse().unwrap();
                        if let Some(tx) = tx.take() {
                            let _ = tx.send(addr);
                        }
                    }
                }
                sink.lock().unwrap().push(line);
            }
        });
        let addr = tokio::time::timeout(Duration::from_secs(20), rx)
            .await
            .expect("the server logs its address")
            .expect("the server logs its address");
        HttpServer {
            child,
            addr,
            stderr,
            reader,
        }
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        rpc_as(self.addr, &[], 1, method, params).await
    }

    /// Sends SIGTERM.
    fn terminate(&self) {
        let pid = self.child.id().unwrap();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    async fn wait(mut self) -> std::process::ExitStatus {
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the server exits")
            .unwrap();
        let mut out = Vec::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut out)
            .await
            .unwrap();
        assert!(out.is_empty(), "stdout is unused in HTTP mode: {out:?}");
        self.reader.await.unwrap();
        status
    }
}

fn command(env: &[(String, String)], addr: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["serve", "--http", addr])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// One POST to `/mcp` on a fresh connection: status, headers, body.
pub(crate) async fn post(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::post("/mcp")
        .header("host", addr.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(
            hyper::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            hyper::header::HeaderValue::from_str(v).unwrap(),
        );
    }
    let res = sender.send_request(req).await.unwrap();
    let (parts, body) = res.into_parts();
    let body = body.collect().await.unwrap().to_bytes().to_vec();
    (parts.status, parts.headers, body)
}

/// The JSON-RPC messages of an answer: one JSON body, or the `data:` lines of an SSE stream.
pub(crate) fn messages(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).unwrap();
    if text.trim_start().starts_with('{') {
        return vec![serde_json::from_str(text).unwrap()];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// One request; returns the response message with this `id` (the other messages of an SSE
/// answer are notifications).
pub(crate) async fn rpc_as(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let (status, _, body) = post(addr, headers, serde_json::to_vec(&body).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    messages(&body)
        .into_iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {id}: {}", String::from_utf8_lossy(&body)))
}

fn call_params(tool: &str, args: Value) -> Value {
    json!({"name": tool, "arguments": args})
}

pub(crate) fn emulator_env(emu: &Emulator) -> Vec<(String, String)> {
    env_for(&emu.uri(), USER_ID, API_KEY)
}

#[tokio::test]
async fn stdio_and_http_give_the_same_answers() {
    let emu = Emulator::start().await;
    let env = emulator_env(&emu);
    let stdio = spawn(&env).await;
    let http = HttpServer::start(&env).await;

    // initialize: the same server, capabilities and instructions; the version asked for.
    let stdio_init = serde_json::to_value(stdio.client.peer_info().unwrap()).unwrap();
    let version = stdio_init["protocolVersion"].clone();
    let init = http
        .rpc(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    let mut http_init = init["result"].clone();
    assert_eq!(http_init["protocolVersion"], version);
    let mut stdio_init = stdio_init;
    http_init.as_object_mut().unwrap().remove("protocolVersion");
    stdio_init
        .as_object_mut()
        .unwrap()
        .remove("protocolVersion");
    // Subscriptions need a session: stdio offers them, stateless HTTP does not.
    assert_eq!(stdio_init["capabilities"]["resources"]["subscribe"], true);
    assert!(http_init["capabilities"]["resources"]
        .get("subscribe")
        .is_none());
    stdio_init["capabilities"]["resources"]
        .as_object_mut()
        .unwrap()
        .remove("subscribe");
    // So do list changes (zotero_enable_tools): there is no later to send them in.
    assert_eq!(stdio_init["capabilities"]["tools"]["listChanged"], true);
    assert!(http_init["capabilities"]["tools"]
        .get("listChanged")
        .is_none());
    stdio_init["capabilities"]["tools"]
        .as_object_mut()
        .unwrap()
        .remove("listChanged");
    assert_eq!(http_init, stdio_init);

    // tools/list: the same tools, schemas included.
    let stdio_tools = serde_json::to_value(stdio.tools().await).unwrap();
    let listed = http.rpc("tools/list", json!({})).await;
    assert!(listed["result"].get("nextCursor").is_none());
    assert_eq!(listed["result"]["tools"], stdio_tools);

    // Tool calls, a success and failures: the same results (content, structured envelope,
    // isError).
    for (tool, args) in [
        ("zotero_search_items", json!({"query": "attention"})),
        ("zotero_get_sort_values", json!({})),
        ("zotero_get_item", json!({"item_key": "not a key"})),
        ("zotero_get_item", json!({"item_key": "ZZZZZZZZ"})),
        ("zotero_no_such_tool", json!({})),
    ] {
        let over_http = http
            .rpc("tools/call", call_params(tool, args.clone()))
            .await;
        match stdio.call_raw(tool, args).await {
            Ok(result) => {
                assert_eq!(
                    over_http["result"],
                    serde_json::to_value(result).unwrap(),
                    "{tool}"
                );
            }
            // A tool that does not exist is a JSON-RPC error on both.
            Err(rmcp::ServiceError::McpError(e)) => {
                assert_eq!(
                    over_http["error"],
                    serde_json::to_value(e).unwrap(),
                    "{tool}"
                );
            }
            Err(e) => panic!("{tool}: {e}"),
        }
    }
    let failed = http
        .rpc(
            "tools/call",
            call_params("zotero_get_item", json!({"item_key": "not a key"})),
        )
        .await;
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(failed["result"]["structuredContent"]["ok"], false);
    stdio.stop().await;
    http.terminate();
    assert!(http.wait().await.success());
}

/// The answers of the stdio binary to these lines (it ends when its input does).
async fn stdio_answers(lines: &[&str]) -> Vec<Value> {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    }
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn malformed_messages_get_the_same_errors_as_on_stdio() {
    let cases = [
        ("not json", 400),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#,
            200,
        ),
        (r#"{"jsonrpc":"2.0","id":4}"#, 400),
        (r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#, 400),
        ("[]", 400),
    ];
    let lines: Vec<&str> = cases.iter().map(|(l, _)| *l).collect();
    let over_stdio = stdio_answers(&lines).await;
    assert_eq!(over_stdio.len(), cases.len(), "{over_stdio:?}");
    let http = HttpServer::start(&[]).await;
    for ((line, status), expected) in cases.iter().zip(&over_stdio) {
        let (got, _, body) = post(http.addr, &[], line.as_bytes().to_vec()).await;
        assert_eq!(got.as_u16(), *status, "{line}");
        let answer: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(&answer, expected, "{line}");
    }
    // An invalid notification gets no answer on stdio; over HTTP it is not accepted.
    let (got, _, body) = post(http.addr, &[], br#"{"jsonrpc":"2.0","method":5}"#.to_vec()).await;
    assert_eq!(got, StatusCode::BAD_REQUEST);
    assert!(!String::from_utf8_lossy(&body).contains("jsonrpc"));
    // A valid notification is accepted.
    let (got, _, _) = post(
        http.addr,
        &[],
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    )
    .await;
    assert_eq!(got, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let emu = Emulator::start().await;
    let http = HttpServer::start(&emulator_env(&emu)).await;
    let list =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).unwrap();
    for headers in [
        vec![("host", "attacker.example:8000")],
        vec![("origin", "https://attacker.example")],
        vec![("origin", "null")],
    ] {
        let (status, _, body) = post(http.addr, &headers, list.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}");
        assert!(!String::from_utf8_lossy(&body).contains("jsonrpc"));
    }
    for headers in [
        vec![("origin", "http://localhost:5173")],
        vec![("host", "localhost")],
    ] {
        let (status, _, _) = post(http.addr, &headers, list.clone()).await;
        assert_eq!(status, StatusCode::OK, "{headers:?}");
    }
    // Allowed by the variables.
    let mut env = emulator_env(&emu);
    env.push((
        "ZOTERO_MCP_HTTP_ALLOWED_HOSTS".into(),
        "mcp.example.org".into(),
    ));
    env.push((
        "ZOTERO_MCP_HTTP_ALLOWED_ORIGINS".into(),
        "https://app.example.org".into(),
    ));
    let allowing = HttpServer::start(&env).await;
    let headers = [
        ("host", "mcp.example.org:443"),
        ("origin", "https://app.example.org"),
    ];
    let (status, _, _) = post(allowing.addr, &headers, list.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(http
        .stderr
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("http.refused")));
}

#[tokio::test]
async fn a_token_is_required_once_set() {
    let emu = Emulator::start().await;
    let mut env = emulator_env(&emu);
    env.push(("ZOTERO_MCP_HTTP_TOKEN".into(), TOKEN.into()));
    let http = HttpServer::start(&env).await;
    let list =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).unwrap();
    let wrong = format!("Bearer {TOKEN}x");
    for headers in [vec![], vec![("authorization", wrong.as_str())]] {
        let (status, h, _) = post(http.addr, &headers, list.clone()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(h["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer"));
    }
    let right = format!("Bearer {TOKEN}");
    let listed = rpc_as(
        http.addr,
        &[("authorization", right.as_str())],
        7,
        "tools/list",
        json!({}),
    )
    .await;
    assert!(!listed["result"]["tools"].as_array().unwrap().is_empty());
    // The token never reaches the log.
    assert!(!http
        .stderr
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains(TOKEN)));
}

#[tokio::test]
async fn beyond_loopback_without_a_token_it_refuses_to_start() {
    let out = command(&[], "0.0.0.0:0").output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ZOTERO_MCP_HTTP_TOKEN"), "{stderr}");
    assert!(out.stdout.is_empty());
    // A bad token is a configuration error naming the variable.
    let out = command(
        &[("ZOTERO_MCP_HTTP_TOKEN".into(), "short".into())],
        "127.0.0.1:0",
    )
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ZOTERO_MCP_HTTP_TOKEN"));
}

#[tokio::test]
async fn a_body_beyond_the_bound_is_refused_with_413() {
    let emu = Emulator::start().await;
    let mut env = emulator_env(&emu);
    // The smallest bound: rmcp's 16 MiB.
    env.push(("ZOTERO_UPLOAD_MAX_BYTES".into(), "1000".into()));
    let http = HttpServer::start(&env).await;
    let mut stream = tokio::net::TcpStream::connect(http.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{{\"jsonrpc\":",
        http.addr,
        16 * 1024 * 1024 + 1
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Streamed without a length, reading stops at the same bound.
    let mut big =
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"".to_vec();
    big.resize(16 * 1024 * 1024 + 10, b'a');
    big.extend_from_slice(b"\"}}");
    let stream = tokio::net::TcpStream::connect(http.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let body = Chunks(rx);
    let req = Request::post("/mcp")
        .header("host", http.addr.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    let feeder = tokio::spawn(async move {
        for chunk in big.chunks(1 << 20) {
            if tx.send(Bytes::copy_from_slice(chunk)).await.is_err() {
                break;
            }
        }
    });
    let res = sender.send_request(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    feeder.abort();
    // A body within the bound is served.
    let ok = http.rpc("ping", json!({})).await;
    assert_eq!(ok["result"], json!({}));
}

/// A request body fed chunk by chunk (no length, so sent chunked).
struct Chunks(tokio::sync::mpsc::Receiver<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

#[tokio::test]
async fn two_hundred_concurrent_calls_are_all_answered_right() {
    let emu = Emulator::start().await;
    let http = HttpServer::start(&emulator_env(&emu)).await;
    let calls = [
        ("zotero_get_sort_values", json!({})),
        ("zotero_search_items", json!({"query": "attention"})),
        ("zotero_search_items", json!({"query": "sherlock"})),
    ];
    let mut expected = Vec::new();
    for (tool, args) in &calls {
        let answer = http
            .rpc("tools/call", call_params(tool, args.clone()))
            .await;
        assert_eq!(
            answer["result"]["structuredContent"]["ok"], true,
            "{answer}"
        );
        expected.push(answer["result"].clone());
    }
    let addr = http.addr;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200u64 {
        let which = (i % 3) as usize;
        let (tool, args) = calls[which].clone();
        tasks.spawn(async move {
            let answer = rpc_as(addr, &[], 1000 + i, "tools/call", call_params(tool, args)).await;
            (which, answer)
        });
    }
    let mut answered = 0;
    while let Some(done) = tasks.join_next().await {
        let (which, answer) = done.unwrap();
        assert_eq!(answer["result"], expected[which]);
        answered += 1;
    }
    assert_eq!(answered, 200);
}

#[tokio::test]
async fn sigterm_finishes_the_calls_in_flight_and_exits_0() {
    let emu = Emulator::start().await;
    let http = HttpServer::start(&emulator_env(&emu)).await;
    emu.set_latency(Duration::from_millis(1500));
    emu.reset_counts();
    let addr = http.addr;
    let call = tokio::spawn(async move {
        rpc_as(
            addr,
            &[],
            5,
            "tools/call",
            call_params("zotero_search_items", json!({"query": "attention"})),
        )
        .await
    });
    // The call is under way (waiting on the slow emulator) when SIGTERM arrives: sent once
    // the emulator has the call's request (an event; a fixed 500 ms could come first on a
    // loaded machine), which it answers 1.5 s later.
    while !emu.requests().iter().any(|r| r.path.contains("/items")) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    http.terminate();
    let answer = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["ok"], true,
        "{answer}"
    );
    let stderr = http.stderr.clone();
    assert!(http.wait().await.success());
    let lines = stderr.lock().unwrap().clone();
    assert!(
        lines.iter().any(|l| l.contains("http.stopped")),
        "{lines:?}"
    );
    // Nothing listens any more.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
