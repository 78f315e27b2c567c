//! Streamable HTTP bounds over raw TCP against the built binary: stalled request bodies are
//! refused with 503 past the buffer all connections share and ended (408) by the idle
//! timeout, giving their room back; connections past the bound get 503; an ambiguous `Host`
//! (several headers, none, or an absolute-form target naming another host) gets 400.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::http_transport::HttpServer;

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// Variables for a server without credentials (a ping needs none) and with these bounds.
fn env(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = vec![("ZOTERO_EMBEDDING_MODEL".to_string(), "none".to_string())];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

/// The status of the answer read from `stream` (the first line), waiting at most 60 s as a
/// guard against a hung server, not as a measure.
async fn status_of(stream: &mut TcpStream) -> Option<u16> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(60), async {
        while !got.windows(2).any(|w| w == b"\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer in 60 s");
    let line = String::from_utf8_lossy(&got);
    line.strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
}

/// One request written as is on a new connection (which it asks to close): the status and
/// the whole answer.
async fn raw(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).to_string();
    let status = answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
    (status, answer)
}

/// A ping whose head carries `target` and these `Host` lines.
fn ping_with(target: &str, hosts: &[&str]) -> String {
    let mut head = format!("POST {target} HTTP/1.1\r\n");
    for host in hosts {
        head.push_str(&format!("Host: {host}\r\n"));
    }
    format!(
        "{head}accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{PING}",
        PING.len()
    )
}

/// A connection that declares a body of 16,000,000 bytes, sends its first KiB and stalls.
async fn stalled_body(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: 16000000\r\n\r\n\
         {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\""
    )
    .into_bytes();
    request.resize(request.len() + 1024, b'a');
    stream.write_all(&request).await.unwrap();
    stream
}

/// `n` stalled bodies at once; each task answers its connection's status.
async fn stall(addr: SocketAddr, n: usize) -> JoinSet<Option<u16>> {
    let mut tasks = JoinSet::new();
    for _ in 0..n {
        let mut stream = stalled_body(addr).await;
        tasks.spawn(async move { status_of(&mut stream).await });
    }
    tasks
}

#[tokio::test]
async fn stalled_bodies_are_refused_past_the_shared_buffer() {
    // The largest body is then 16 MiB and the buffer 64 MiB: room for four bodies of
    // 16,000,000 bytes. The idle timeout is far away: the four held stay held.
    let http = HttpServer::start(&env(&[
        ("ZOTERO_UPLOAD_MAX_BYTES", "1000"),
        ("ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", "3600"),
    ]))
    .await;
    let mut tasks = stall(http.addr, 50).await;
    // 46 are refused at once, before their bodies are read; 4 wait for theirs.
    for _ in 0..46 {
        let status = tasks.join_next().await.unwrap().unwrap();
        assert_eq!(status, Some(503));
    }
    assert_eq!(tasks.len(), 4);
    assert!(tasks.try_join_next().is_none(), "a held body was answered");
    // A small request still fits in what is left, and is served.
    let (status, answer) = raw(http.addr, &ping_with("/mcp", &[&http.addr.to_string()])).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains(r#""result":{}"#), "{answer}");
    // Another large one does not.
    let mut more = stall(http.addr, 1).await;
    assert_eq!(more.join_next().await.unwrap().unwrap(), Some(503));
    tasks.abort_all();
}

#[tokio::test]
async fn stalled_bodies_end_at_the_idle_timeout_and_give_their_room_back() {
    let http = HttpServer::start(&env(&[
        ("ZOTERO_UPLOAD_MAX_BYTES", "1000"),
        ("ZOTERO_MCP_HTTP_BODY_IDLE_SECONDS", "0.3"),
    ]))
    .await;
    let mut tasks = stall(http.addr, 50).await;
    let mut ended = 0;
    let mut refused = 0;
    while let Some(status) = tasks.join_next().await {
        match status.unwrap() {
            Some(408) => ended += 1,
            Some(503) => refused += 1,
            other => panic!("a stalled body got {other:?}"),
        }
    }
    // Every one is answered; a refusal means four were held then, and those ended.
    assert_eq!(ended + refused, 50);
    assert!(ended >= 4, "{ended} ended, {refused} refused");
    // All of the room is back: four bodies fit again (and end again).
    let mut again = stall(http.addr, 4).await;
    while let Some(status) = again.join_next().await {
        assert_eq!(status.unwrap(), Some(408));
    }
    let (status, answer) = raw(http.addr, &ping_with("/mcp", &[&http.addr.to_string()])).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn connections_past_the_bound_get_503() {
    let http = HttpServer::start(&env(&[("ZOTERO_MCP_HTTP_MAX_CONNECTIONS", "2")])).await;
    let _first = TcpStream::connect(http.addr).await.unwrap();
    let _second = TcpStream::connect(http.addr).await.unwrap();
    let (status, answer) = raw(http.addr, &ping_with("/mcp", &[&http.addr.to_string()])).await;
    assert_eq!(status, 503, "{answer}");
    assert!(
        answer.contains("ZOTERO_MCP_HTTP_MAX_CONNECTIONS"),
        "{answer}"
    );
}

#[tokio::test]
async fn an_ambiguous_host_is_refused() {
    let http = HttpServer::start(&env(&[])).await;
    let addr = http.addr.to_string();
    // RFC 9112 §3.2: several Host lines are a bad request, even when they agree.
    for hosts in [vec!["localhost", "evil.example"], vec![&addr, &addr]] {
        let (status, answer) = raw(http.addr, &ping_with("/mcp", &hosts)).await;
        assert_eq!(status, 400, "{hosts:?}: {answer}");
        assert!(answer.contains("more than one Host"), "{answer}");
    }
    // And so is none at all in HTTP/1.1.
    let (status, answer) = raw(http.addr, &ping_with("/mcp", &[])).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("no Host header"), "{answer}");
    // An absolute-form target names the host: a Host naming another is refused, and the
    // target's own authority must be allowed.
    let (status, answer) = raw(
        http.addr,
        &ping_with("http://evil.example/mcp", &["localhost"]),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = raw(
        http.addr,
        &ping_with("http://evil.example/mcp", &["evil.example"]),
    )
    .await;
    assert_eq!(status, 403, "{answer}");
    // Consistent, it is served.
    let target = format!("http://{addr}/mcp");
    let (status, answer) = raw(http.addr, &ping_with(&target, &[&addr])).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains(r#""result":{}"#), "{answer}");
}
