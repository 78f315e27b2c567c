//! Streamable HTTP under load: 50 clients, each on its own keep-alive connection, send
//! `tools/call` one after another to `serve --http` (stateless, as shipped) against the
//! emulator: `zotero_get_sort_values` (the server's own cost: no upstream request) and
//! `zotero_search_items` (one emulated Zotero request each). Prints requests per second,
//! latency percentiles and the server's peak RSS (`VmHWM`).
//!
//! A plain binary (`harness = false`): it prints figures and asserts only that every answer
//! is right. The emulator runs in this process and shares the machine's cores with the
//! server, so the search figures include its work.
//! Run with `cargo build --release && cargo bench --bench http`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use zotero_emulator::{Emulator, Library, API_KEY, USER_ID};

const CLIENTS: usize = 50;
const CALLS_PER_CLIENT: usize = 60;

/// One client: a connection, `calls` requests in turn; the latency of each.
async fn client(addr: SocketAddr, calls: usize, tool: &'static str, args: Value) -> Vec<Duration> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut took = Vec::with_capacity(calls);
    for i in 0..calls {
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}});
        let req = Request::post("/mcp")
            .header("host", addr.to_string())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::from(serde_json::to_vec(&body).unwrap())))
            .unwrap();
        let started = Instant::now();
        sender.ready().await.unwrap();
        let res = sender.send_request(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        took.push(started.elapsed());
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], i);
        assert_eq!(
            answer["result"]["structuredContent"]["ok"], true,
            "{answer}"
        );
    }
    took
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `CLIENTS` clients at once; prints the figures.
async fn load(addr: SocketAddr, pid: u32, tool: &'static str, args: Value) {
    // Warm-up: one call per client.
    let warm: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(client(addr, 1, tool, args.clone())))
        .collect();
    for w in warm {
        w.await.unwrap();
    }
    let started = Instant::now();
    let runs: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(client(addr, CALLS_PER_CLIENT, tool, args.clone())))
        .collect();
    let mut all = Vec::new();
    for r in runs {
        all.extend(r.await.unwrap());
    }
    let wall = started.elapsed();
    all.sort();
    let at = |q: f64| ms(all[((all.len() - 1) as f64 * q).round() as usize]);
    let (rss, hwm) = support::memory(pid);
    println!(
        "{tool}: {} calls by {CLIENTS} clients in {:.2} s: {:.0} calls/s; latency p50 {:.2} ms, \
         p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; server VmRSS {rss:.1} MB, peak VmHWM {hwm:.1} MB",
        all.len(),
        wall.as_secs_f64(),
        all.len() as f64 / wall.as_secs_f64(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
    );
}

fn main() {
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::with_library(Library::synthetic(230, 1)));
    {
        let mut child = Command::new(&bin)
            .args(["serve", "--http", "127.0.0.1:0"])
            .env_clear()
            .env("ZOTERO_API_BASE", emu.uri())
            .env("ZOTERO_USER_ID", USER_ID.to_string())
            .env("ZOTERO_API_KEY", API_KEY)
            // Logs at the default level (info), as shipped: a few JSON lines per call.
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn zotero-mcp");
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
        let pid = child.id();
        let (rss, hwm) = support::memory(pid);
        println!("serve --http (stateless) at {addr}: idle VmRSS {rss:.1} MB, VmHWM {hwm:.1} MB");
        rt.block_on(async {
            load(addr, pid, "zotero_get_sort_values", json!({})).await;
            load(
                addr,
                pid,
                "zotero_search_items",
                json!({"query": "graph", "limit": 25}),
            )
            .await;
        });
        let _ = child.kill();
        let _ = child.wait();
    }
}
