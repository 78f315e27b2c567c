//! Time per write through the web API versus Zotero 10's local API, both emulated on
//! loopback (no network latency on either: what the server and the protocol cost). A plain
//! binary (`harness = false`): it prints figures and asserts nothing.
//! Run with `cargo build --release && cargo bench --bench local_writes`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::Proc;
use zotero_emulator::{DesktopRelease, Emulator};

const WARMUP: usize = 5;
const WRITES: usize = 50;

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

fn call(p: &mut Proc, name: &str, args: Value) -> Value {
    let v = p.request("tools/call", json!({"name": name, "arguments": args}));
    let env = &v["result"]["structuredContent"];
    assert_eq!(env["ok"], true, "{name} failed: {v}");
    env["data"].clone()
}

fn main() {
    let (bin, rt) = support::setup();
    for local in [false, true] {
        let emu = rt.block_on(Emulator::start());
        let mut extra: Vec<(&str, String)> = Vec::new();
        if local {
            emu.set_desktop_release(DesktopRelease::Zotero10);
            let key = emu.grant_local_key("bench", true);
            extra.push(("ZOTERO_LOCAL", "1".into()));
            extra.push(("ZOTERO_LOCAL_API_BASE", emu.local_uri()));
            extra.push(("ZOTERO_LOCAL_API_KEY", key));
        }
        let mut p = Proc::spawn(&bin, &emu.uri(), &extra);
        p.initialize();
        let create = |p: &mut Proc, i: usize| {
            call(
                p,
                "zotero_create_item",
                json!({"item_type": "book", "title": format!("Bench {i}")}),
            )
        };
        for i in 0..WARMUP {
            create(&mut p, i);
        }
        let mut creates = Vec::with_capacity(WRITES);
        let mut keys = Vec::with_capacity(WRITES);
        for i in 0..WRITES {
            let t = Instant::now();
            let d = create(&mut p, i);
            creates.push(t.elapsed());
            keys.push(d["item_key"].as_str().unwrap().to_string());
        }
        let mut updates = Vec::with_capacity(WRITES);
        for k in &keys {
            let t = Instant::now();
            call(
                &mut p,
                "zotero_update_item",
                json!({"item_key": k, "add_tags": ["bench"]}),
            );
            updates.push(t.elapsed());
        }
        let name = if local {
            "local API (Zotero 10)"
        } else {
            "web API"
        };
        let (a, b, c) = stats(&creates);
        println!("{name}: create, {WRITES} writes: min {a:.2} ms, median {b:.2} ms, p90 {c:.2} ms");
        let (a, b, c) = stats(&updates);
        println!("{name}: update (add a tag), {WRITES} writes: min {a:.2} ms, median {b:.2} ms, p90 {c:.2} ms");
        let web = emu.requests().len();
        let desk = emu.local_requests().len();
        println!("{name}: requests to the web API {web}, to the desktop {desk}");
        p.stop();
    }
}
