//! Stalled request bodies against `serve --http`: 50 connections each declare a body of
//! 16,000,000 bytes, send 15 MiB of it and stop. Prints the server's memory (`VmRSS`, peak
//! `VmHWM`) before, while they stall and after the server has ended them, with how each was
//! answered, and the machine's load. Run once with the shipped bounds and once with a buffer
//! of 17 MB (room for one such body).
//!
//! A plain binary (`harness = false`) that prints figures; it asserts only that every
//! connection is answered and none with success.
//! Run with `cargo build --release && cargo bench --bench http_stall`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CONNECTIONS: usize = 50;
const DECLARED: usize = 16_000_000;
const SENT: usize = 15 * 1024 * 1024;

/// How one connection went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Answered before its body was sent, with this status.
    RefusedAtOnce(u16),
    /// Sent its 15 MiB, then answered with this status.
    Answered(u16),
    /// Closed or reset by the server before an answer could be read.
    Closed,
}

/// The status in the first line of what `stream` answers, if anything.
async fn status(stream: &mut TcpStream) -> Option<u16> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got)
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
}

/// One stalled body: the head, then (unless answered at once) 15 MiB; reports on `sent`
/// when it has stopped sending, then waits for the answer.
async fn stalled(addr: SocketAddr, sent: tokio::sync::mpsc::Sender<()>) -> Outcome {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {DECLARED}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // A refusal comes as soon as the head is read.
    if let Ok(answer) = tokio::time::timeout(Duration::from_millis(300), status(&mut stream)).await
    {
        let _ = sent.send(()).await;
        return answer.map_or(Outcome::Closed, Outcome::RefusedAtOnce);
    }
    let chunk = vec![b'a'; 64 * 1024];
    let mut written = 0;
    while written < SENT {
        if stream.write_all(&chunk).await.is_err() {
            break;
        }
        written += chunk.len();
    }
    let _ = sent.send(()).await;
    match status(&mut stream).await {
        Some(code) => Outcome::Answered(code),
        None => Outcome::Closed,
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Starts the server with these variables; its pid and address.
fn start(bin: &Path, extra: &[(&str, &str)]) -> (std::process::Child, SocketAddr) {
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--http", "127.0.0.1:0"])
        .env_clear()
        .env("ZOTERO_EMBEDDING_MODEL", "none")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn zotero-mcp");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr: SocketAddr = loop {
        let line = lines.next().expect("the server logs its address").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_default();
        if v["fields"]["message"] == "http.listening" {
            break v["fields"]["addr"].as_str().unwrap().parse().unwrap();
        }
    };
    // Keep reading stderr so that the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn run(bin: &Path, rt: &tokio::runtime::Runtime, label: &str, extra: &[(&str, &str)]) {
    let (mut child, addr) = start(bin, extra);
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(300));
    let (rss, hwm) = support::memory(pid);
    println!(
        "{label}: before: VmRSS {rss:.1} MB, VmHWM {hwm:.1} MB; load {}",
        loadavg()
    );
    let started = Instant::now();
    let outcomes = rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel(CONNECTIONS);
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|_| tokio::spawn(stalled(addr, tx.clone())))
            .collect();
        for _ in 0..CONNECTIONS {
            rx.recv().await.unwrap();
        }
        // Every connection has stopped sending: what the server holds now is the stall.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (rss, hwm) = support::memory(pid);
        println!(
            "{label}: during ({CONNECTIONS} stalled, {:.1} s in): VmRSS {rss:.1} MB, \
             VmHWM {hwm:.1} MB; load {}",
            started.elapsed().as_secs_f64(),
            loadavg()
        );
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(t.await.unwrap());
        }
        outcomes
    });
    let ended = started.elapsed();
    let (rss, hwm) = support::memory(pid);
    let mut counts = BTreeMap::new();
    for o in &outcomes {
        *counts.entry(*o).or_insert(0) += 1;
    }
    println!(
        "{label}: after (all answered, {:.1} s in): VmRSS {rss:.1} MB, VmHWM {hwm:.1} MB; \
         load {}; outcomes {counts:?}",
        ended.as_secs_f64(),
        loadavg()
    );
    assert!(
        !outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Answered(200) | Outcome::RefusedAtOnce(200))),
        "{counts:?}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let (bin, rt) = support::setup();
    println!(
        "{CONNECTIONS} connections, each declaring {DECLARED} bytes and sending {SENT} of them"
    );
    run(&bin, &rt, "shipped bounds", &[]);
    run(
        &bin,
        &rt,
        "ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES=17000000",
        &[("ZOTERO_MCP_HTTP_MAX_BUFFERED_BYTES", "17000000")],
    );
}
