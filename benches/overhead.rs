//! What the server costs: cold start (spawn to the `initialize` answer), idle memory, and the
//! time it adds to a search compared with calling the (emulated) Zotero API directly.
//!
//! A plain binary (`harness = false`): it prints figures and asserts nothing. The server is
//! driven with raw JSON-RPC lines over stdio, no MCP client library in between.
//! Run with `cargo build --release && cargo bench --bench overhead`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "../tests/emulator/mod.rs"]
mod emulator;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use emulator::{Emulator, Library, API_KEY, USER_ID};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

const COLD_RUNS: usize = 20;
const WARMUP: usize = 20;
const SEARCHES: usize = 200;
const QUERY: &str = "graph";
const LIMIT: u32 = 25;

/// `$ZOTERO_MCP_BENCH_BIN` if set; else the shipped static binary
/// (`target/x86_64-unknown-linux-musl/release`) or `target/release/zotero-mcp`, whichever was
/// built; else the binary next to this bench's build dir.
fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("ZOTERO_MCP_BENCH_BIN") {
        return PathBuf::from(bin);
    }
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    for built in [
        "x86_64-unknown-linux-musl/release/zotero-mcp",
        "release/zotero-mcp",
    ] {
        if target.join(built).is_file() {
            return target.join(built);
        }
    }
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/overhead-<hash> → target/<profile>/zotero-mcp
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("zotero-mcp"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| panic!("no zotero-mcp binary; run `cargo build --release` first"))
}

/// A server process spoken to with JSON-RPC lines.
struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Proc {
    fn spawn(bin: &PathBuf, base: &str) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("ZOTERO_API_BASE", base)
            .env("ZOTERO_USER_ID", USER_ID.to_string())
            .env("ZOTERO_API_KEY", API_KEY)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn zotero-mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Proc {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and reads lines until its answer.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read from server");
            assert!(n > 0, "server closed stdout while waiting for answer {id}");
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "overhead-bench", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    fn search(&mut self) -> Value {
        let v = self.request(
            "tools/call",
            json!({"name": "zotero_search_items",
                   "arguments": {"query": QUERY, "limit": LIMIT, "sort": "dateModified"}}),
        );
        let env = &v["result"]["structuredContent"];
        assert_eq!(env["ok"], true, "search failed: {v}");
        v
    }

    /// `VmRSS` and `VmHWM` from `/proc/<pid>/status`, in MB.
    fn memory(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let kb = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        (kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// (min, median, p90) in ms.
fn stats(samples: &[Duration]) -> (f64, f64, f64) {
    let mut v: Vec<f64> = samples.iter().map(|d| ms(*d)).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (v[0], at(0.5), at(0.9))
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let bin = server_binary();
    println!("binary: {}", bin.display());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let emu = rt.block_on(Emulator::with_library(Library::synthetic(230, 1)));
    let base = emu.uri();

    // Cold start: spawn → initialize answer.
    let mut cold = Vec::with_capacity(COLD_RUNS);
    for _ in 0..COLD_RUNS {
        let t = Instant::now();
        let mut p = Proc::spawn(&bin, &base);
        p.initialize();
        cold.push(t.elapsed());
        p.stop();
    }
    let (min, med, p90) = stats(&cold);
    println!("cold start (spawn → initialize answer), {COLD_RUNS} runs: min {min:.2} ms, median {med:.2} ms, p90 {p90:.2} ms");

    // Idle memory after initialize + tools/list.
    let mut server = Proc::spawn(&bin, &base);
    server.initialize();
    let tools = server.request("tools/list", json!({}));
    let n_tools = tools["result"]["tools"].as_array().map_or(0, Vec::len);
    let (rss, hwm) = server.memory();
    println!("idle memory after initialize + tools/list ({n_tools} tools): VmRSS {rss:.2} MB, VmHWM {hwm:.2} MB");

    // Overhead per search, with 5 ms of emulated network latency.
    emu.set_latency(Duration::from_millis(5));
    let url = format!(
        "{base}/users/{USER_ID}/items/top?q={QUERY}&sort=dateModified&format=json&limit={LIMIT}&start=0"
    );
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let direct_get = || {
        rt.block_on(async {
            let req = hyper::Request::get(url.as_str())
                .header("Zotero-API-Version", "3")
                .header("Zotero-API-Key", API_KEY)
                .body(Empty::<Bytes>::new())
                .expect("request");
            let resp = client.request(req).await.expect("GET");
            assert_eq!(resp.status(), 200);
            resp.into_body().collect().await.expect("body").to_bytes()
        })
    };
    let mut direct = Vec::with_capacity(SEARCHES);
    for _ in 0..WARMUP {
        direct_get();
    }
    for _ in 0..SEARCHES {
        let t = Instant::now();
        let body = direct_get();
        direct.push(t.elapsed());
        assert!(!body.is_empty());
    }

    let mut through = Vec::with_capacity(SEARCHES);
    let mut total = Value::Null;
    for _ in 0..WARMUP {
        total = server.search()["result"]["structuredContent"]["data"]["total"].clone();
    }
    let before = emu.requests().len();
    for _ in 0..SEARCHES {
        let t = Instant::now();
        server.search();
        through.push(t.elapsed());
    }
    let upstream = emu.requests().len() - before;
    let (_, d_med, d_p90) = stats(&direct);
    let (_, s_med, s_p90) = stats(&through);
    println!(
        "search '{QUERY}', {SEARCHES} calls each after {WARMUP} warm-up (latency 5 ms, {total} matches of 230 items, limit {LIMIT}):"
    );
    println!("  direct HTTP GET:           median {d_med:.2} ms, p90 {d_p90:.2} ms");
    println!("  zotero_search_items (MCP): median {s_med:.2} ms, p90 {s_p90:.2} ms ({upstream} upstream requests)");
    println!(
        "  added by the server:       median {:.2} ms, p90 {:.2} ms",
        s_med - d_med,
        s_p90 - d_p90
    );
    let (rss, hwm) = server.memory();
    println!("memory after the searches: VmRSS {rss:.2} MB, peak VmHWM {hwm:.2} MB");
    server.stop();
}
