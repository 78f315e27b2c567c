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

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use support::Proc;
use zotero_emulator::{Emulator, Library, API_KEY, USER_ID};

const COLD_RUNS: usize = 20;
const WARMUP: usize = 20;
const SEARCHES: usize = 200;
const QUERY: &str = "graph";
const LIMIT: u32 = 25;

fn search(p: &mut Proc) -> Value {
    let v = p.request(
        "tools/call",
        json!({"name": "zotero_search_items",
               "arguments": {"query": QUERY, "limit": LIMIT, "sort": "dateModified"}}),
    );
    let env = &v["result"]["structuredContent"];
    assert_eq!(env["ok"], true, "search failed: {v}");
    v
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
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::with_library(Library::synthetic(230, 1)));
    let base = emu.uri();

    // Cold start: spawn → initialize answer.
    let mut cold = Vec::with_capacity(COLD_RUNS);
    for _ in 0..COLD_RUNS {
        let t = Instant::now();
        let mut p = Proc::spawn(&bin, &base, &[]);
        p.initialize();
        cold.push(t.elapsed());
        p.stop();
    }
    let (min, med, p90) = stats(&cold);
    println!("cold start (spawn → initialize answer), {COLD_RUNS} runs: min {min:.2} ms, median {med:.2} ms, p90 {p90:.2} ms");

    // Idle memory after initialize + tools/list.
    let mut server = Proc::spawn(&bin, &base, &[]);
    server.initialize();
    let tools = server.request("tools/list", json!({}));
    let n_tools = tools["result"]["tools"].as_array().map_or(0, Vec::len);
    let (rss, hwm) = server.memory();
    println!("idle memory after initialize + tools/list ({n_tools} tools): VmRSS {rss:.2} MB, VmHWM {hwm:.2} MB");
    // The size an agent's context pays for the tool list (the `tools` array as JSON).
    let list_bytes = serde_json::to_string(&tools["result"]["tools"]).map_or(0, |s| s.len());
    println!(
        "tools/list: {list_bytes} bytes for {n_tools} tools, {:.0} bytes a tool",
        list_bytes as f64 / n_tools.max(1) as f64
    );

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
        total = search(&mut server)["result"]["structuredContent"]["data"]["total"].clone();
    }
    let before = emu.requests().len();
    for _ in 0..SEARCHES {
        let t = Instant::now();
        search(&mut server);
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
