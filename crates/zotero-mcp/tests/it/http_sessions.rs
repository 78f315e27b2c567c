//! What a server sends unasked: log messages (`logging/setLevel`) over stdio and HTTP, and
//! Streamable HTTP with sessions (`ZOTERO_MCP_HTTP_SESSIONS=1`), where subscriptions work as
//! on stdio; the library pollers behind subscriptions (one per library for every session,
//! `If-Modified-Since-Version`, `Backoff` honoured); the bound on open sessions.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, Recorded, ZoteroEdit, API_KEY, USER_ID};

use crate::common::{env_for, in_process_as, TestClient};
use crate::http_transport::{emulator_env, messages, post, HttpServer};

/// Waits (up to 60 s: a bound for a hung test, not a timing) until `done` holds of what
/// `read` returns; returns the last reading.
pub(crate) async fn eventually<T>(read: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = read();
        if done(&now) || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
#[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
async fn log_messages_follow_the_level_the_client_asks_for() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let client = TestClient::default();
    let s = in_process_as(&env, client.clone()).await;
    let caps = &s.client.peer_info().unwrap().capabilities;
    assert!(caps.logging.is_some(), "logging is offered");
    let logged = || client.logged.lock().unwrap().clone();

    // Nothing before the client asks.
    s.call("zotero_get_sort_values", json!({}))
        .await
        .expect_ok();
    s.call("zotero_get_item", json!({"item_key": "ZZZZ2345"}))
        .await;
    assert!(logged().is_empty(), "{:?}", logged());

    // At warning: failures only, with their code and message.
    s.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    s.call("zotero_get_sort_values", json!({}))
        .await
        .expect_ok();
    s.call("zotero_get_item", json!({"item_key": "ZZZZ2345"}))
        .await;
    let got = eventually(logged, |l| !l.is_empty()).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["level"], "warning");
    assert_eq!(got[0]["logger"], "zotero-mcp");
    assert_eq!(got[0]["data"]["tool"], "zotero_get_item");
    assert_eq!(got[0]["data"]["ok"], false);
    assert_eq!(got[0]["data"]["code"], "ZOTERO_NOT_FOUND");
    assert!(got[0]["data"]["message"]
        .as_str()
        .unwrap()
        .contains("ZZZZ2345"));

    // At info: every call.
    s.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    s.call("zotero_get_sort_values", json!({}))
        .await
        .expect_ok();
    let got = eventually(logged, |l| l.len() >= 2).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1]["level"], "info");
    assert_eq!(got[1]["data"]["tool"], "zotero_get_sort_values");
    assert_eq!(got[1]["data"]["ok"], true);
    assert!(got[1]["data"]["elapsed_ms"].is_u64());
    // The key never appears in what the client hears.
    assert!(!serde_json::to_string(&got).unwrap().contains(API_KEY));
}

/// A session of the HTTP server: its id, and a `GET` stream collecting what the server
/// sends outside of answers.
pub(crate) struct Session {
    addr: SocketAddr,
    id: String,
    pub(crate) unasked: Arc<Mutex<Vec<Value>>>,
    stream: tokio::task::JoinHandle<()>,
}

impl Session {
    /// `initialize`, `notifications/initialized`, then the `GET` stream.
    pub(crate) async fn open(addr: SocketAddr) -> (Session, Value) {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let (status, headers, body) = post(addr, &[], serde_json::to_vec(&init).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let id = headers
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_string();
        let result = messages(&body).into_iter().find(|m| m["id"] == 1).unwrap()["result"].clone();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = post(
            addr,
            &[("mcp-session-id", &id)],
            serde_json::to_vec(&note).unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED);

        let unasked = Arc::new(Mutex::new(Vec::new()));
        let stream = tokio::spawn(read_stream(addr, id.clone(), unasked.clone()));
        let session = Session {
            addr,
            id,
            unasked,
            stream,
        };
        (session, result)
    }

    /// One request in this session: every message of its answer stream (notifications
    /// first, the answer last).
    pub(crate) async fn request(&self, id: u64, method: &str, params: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, _, body) = post(
            self.addr,
            &[
                ("mcp-session-id", &self.id),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        messages(&body)
    }

    fn updated(&self) -> Vec<String> {
        self.unasked
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == "notifications/resources/updated")
            .map(|m| m["params"]["uri"].as_str().unwrap().to_string())
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stream.abort();
    }
}

/// Reads the session's `GET` stream until it ends, keeping each JSON-RPC message.
async fn read_stream(addr: SocketAddr, id: String, sink: Arc<Mutex<Vec<Value>>>) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::get("/mcp")
        .header("host", addr.to_string())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-11-25")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let res = sender.send_request(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.into_body();
    let mut pending = String::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        pending.push_str(&String::from_utf8_lossy(&data));
        while let Some(end) = pending.find("\n\n") {
            let event: String = pending.drain(..end + 2).collect();
            sink.lock().unwrap().extend(messages(event.as_bytes()));
        }
    }
}

fn sessions_env(emu: &Emulator, poll: &str) -> Vec<(String, String)> {
    let mut env = emulator_env(emu);
    env.push(("ZOTERO_MCP_HTTP_SESSIONS".into(), "1".into()));
    env.push(("ZOTERO_SUBSCRIBE_POLL_SECONDS".into(), poll.into()));
    env
}

/// The library pollers' requests: a one-item listing of versions.
fn polls(emu: &Emulator) -> Vec<Recorded> {
    emu.requests()
        .into_iter()
        .filter(|r| {
            r.method == "GET"
                && r.path == format!("/users/{USER_ID}/items")
                && r.query_param("format") == Some("versions")
                && r.query_param("limit") == Some("1")
        })
        .collect()
}

#[tokio::test]
#[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
async fn with_sessions_http_carries_subscriptions_and_log_messages() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&sessions_env(&emu, "0.1")).await;
    let (a, init) = Session::open(server.addr).await;
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    assert!(init["capabilities"]["logging"].is_object());

    // Log messages come on the session's stream (rmcp sends notifications not tied to a
    // request there), the answer on the call's own.
    let set = a
        .request(2, "logging/setLevel", json!({"level": "info"}))
        .await;
    assert!(set.last().unwrap()["result"].is_object(), "{set:?}");
    let answer = a
        .request(
            3,
            "tools/call",
            json!({"name": "zotero_get_sort_values", "arguments": {}}),
        )
        .await;
    assert_eq!(answer.last().unwrap()["id"], 3);
    assert_eq!(
        answer.last().unwrap()["result"]["structuredContent"]["ok"],
        true
    );
    let logged = |s: &Session| -> Vec<Value> {
        let unasked = s.unasked.lock().unwrap().clone();
        unasked
            .into_iter()
            .filter(|m| m["method"] == "notifications/message")
            .collect()
    };
    let got = eventually(|| logged(&a), |l| !l.is_empty()).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["params"]["data"]["tool"], "zotero_get_sort_values");
    assert_eq!(got[0]["params"]["level"], "info");

    // Two sessions subscribe to items of the same library.
    let (b, _) = Session::open(server.addr).await;
    let item_a = "zotero://user/items/VASWANI7";
    let item_b = "zotero://user/items/RESNET52";
    let sub = a
        .request(4, "resources/subscribe", json!({"uri": item_a}))
        .await;
    assert!(sub.last().unwrap()["result"].is_object(), "{sub:?}");
    let sub = b
        .request(4, "resources/subscribe", json!({"uri": item_b}))
        .await;
    assert!(sub.last().unwrap()["result"].is_object(), "{sub:?}");

    // Zotero changes item_a once the poller knows the library's version (its first poll: an
    // event, where a fixed 300 ms could pass before it on a loaded machine): session a hears
    // of it, b does not.
    let first = polls(&emu).len();
    eventually(|| polls(&emu).len(), |n| *n > first).await;
    emu.edit_in_zotero(&ZoteroEdit::item("VASWANI7").set("title", json!("Changed in Zotero")))
        .unwrap();
    let got = eventually(|| a.updated(), |u| !u.is_empty()).await;
    assert_eq!(got, [item_a]);
    // Then item_b: b hears of it, a not again.
    emu.edit_in_zotero(&ZoteroEdit::item("RESNET52").set("title", json!("Also changed")))
        .unwrap();
    let got = eventually(|| b.updated(), |u| !u.is_empty()).await;
    assert_eq!(got, [item_b]);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(a.updated(), [item_a]);
    assert_eq!(b.updated(), [item_b]);
    // Each session has its own log level: b never asked.
    assert!(logged(&b).is_empty());

    // One poller served both sessions: polls are never closer together than the interval
    // (two pollers started together would poll in pairs), and each after the first asks
    // with the version it knows.
    let seen = polls(&emu);
    assert!(seen.len() >= 3, "{} polls", seen.len());
    for pair in seen.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(gap >= Duration::from_millis(90), "polls {gap:?} apart");
    }
    for p in &seen[1..] {
        assert!(
            p.header("if-modified-since-version").is_some(),
            "{:?}",
            p.query
        );
    }

    // Both unsubscribe: the poller stops.
    for s in [&a, &b] {
        for uri in [item_a, item_b] {
            s.request(5, "resources/unsubscribe", json!({"uri": uri}))
                .await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = polls(&emu).len();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(polls(&emu).len(), before, "no poll without subscriptions");
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the subscription of protocols before 2026-07-28
async fn a_quiet_library_is_polled_with_304s_and_backoff_holds_the_poller() {
    use rmcp::model::SubscribeRequestParams;
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_SUBSCRIBE_POLL_SECONDS".into(), "0.05".into()));
    let client = TestClient::default();
    let s = in_process_as(&env, client.clone()).await;
    s.client
        .subscribe(SubscribeRequestParams::new("zotero://user/items/VASWANI7"))
        .await
        .unwrap();
    // Nothing changes: every poll after the first asks about the library's version now,
    // which Zotero answers 304 with no body (the emulator does as the dataserver does).
    let seen = eventually(|| polls(&emu), |p| p.len() >= 4).await;
    let version = emu.library_version();
    for p in &seen[1..] {
        assert_eq!(
            p.header("if-modified-since-version"),
            Some(version.to_string().as_str())
        );
    }
    // Quiet, it backs off: each wait at least as long as the one before (less jitter of
    // the scheduler).
    let gaps: Vec<Duration> = seen
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect();
    for w in gaps.windows(2) {
        assert!(
            w[1] + Duration::from_millis(20) >= w[0],
            "waits shrink: {gaps:?}"
        );
    }
    assert!(client.updated.lock().unwrap().is_empty());

    // Zotero asks for a 2-second Backoff on a poll: the next poll waits for it.
    emu.inject(
        Fault::once(FaultKind::BackoffHeader(2))
            .path_suffix("/items")
            .method("GET"),
    );
    let hit = eventually(|| emu.faults_pending(), |n| *n == 0).await;
    assert_eq!(hit, 0);
    let count = polls(&emu).len();
    let after = eventually(|| polls(&emu), |p| p.len() > count).await;
    assert!(after.len() > count, "polling went on");
    let backed_off = after[count].at.duration_since(after[count - 1].at);
    assert!(
        backed_off >= Duration::from_millis(1900),
        "the poll after Backoff: 2 came {backed_off:?} later"
    );
    assert!(client.updated.lock().unwrap().is_empty());
}

#[tokio::test]
async fn open_sessions_are_bounded() {
    let emu = Emulator::start().await;
    let mut env = sessions_env(&emu, "30");
    env.push(("ZOTERO_MCP_HTTP_MAX_SESSIONS".into(), "2".into()));
    let server = HttpServer::start(&env).await;
    let (first, _) = Session::open(server.addr).await;
    let (_second, _) = Session::open(server.addr).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, _, body) = post(server.addr, &[], serde_json::to_vec(&init).unwrap()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(String::from_utf8_lossy(&body).contains("ZOTERO_MCP_HTTP_MAX_SESSIONS"));
    // The open sessions still work.
    let answer = first
        .request(
            2,
            "tools/call",
            json!({"name": "zotero_get_sort_values", "arguments": {}}),
        )
        .await;
    assert_eq!(
        answer.last().unwrap()["result"]["structuredContent"]["ok"],
        true
    );
}

/// The requests that read the item `key` (its metadata and its children), polls aside.
fn reads_of(emu: &Emulator, key: &str) -> usize {
    emu.requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains(key))
        .count()
}

#[tokio::test]
async fn sessions_subscribed_to_one_uri_share_one_read_per_change() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&sessions_env(&emu, "0.1")).await;
    let uri = "zotero://user/items/VASWANI7";
    let mut sessions = Vec::new();
    for _ in 0..6 {
        sessions.push(Session::open(server.addr).await.0);
    }
    emu.reset_counts();
    // The first subscription reads the resource; the others, in other sessions, share it.
    let sub = sessions[0]
        .request(2, "resources/subscribe", json!({"uri": uri}))
        .await;
    assert!(sub.last().unwrap()["result"].is_object(), "{sub:?}");
    let one_read = reads_of(&emu, "VASWANI7");
    assert!(one_read >= 1);
    for s in &sessions[1..] {
        let sub = s
            .request(2, "resources/subscribe", json!({"uri": uri}))
            .await;
        assert!(sub.last().unwrap()["result"].is_object(), "{sub:?}");
    }
    assert_eq!(reads_of(&emu, "VASWANI7"), one_read);

    // One change: every session hears of it, from one read between them.
    emu.edit_in_zotero(&ZoteroEdit::item("VASWANI7").set("title", json!("Changed in Zotero")))
        .unwrap();
    for s in &sessions {
        let got = eventually(|| s.updated(), |u| !u.is_empty()).await;
        assert_eq!(got, [uri]);
    }
    assert_eq!(reads_of(&emu, "VASWANI7"), 2 * one_read);
}
