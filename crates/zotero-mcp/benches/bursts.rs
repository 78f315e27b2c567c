//! Bursts against the bounds on upstream requests: 2,000 `resources/subscribe` of one URI,
//! then 2,000 `tools/call`, each sent at once over stdio to the built binary against the
//! emulator. Prints the upstream requests they caused, the most file descriptors the server
//! had open at once (sampled every millisecond), its RSS after the burst and its peak
//! (`VmHWM`), and how many calls failed. Run under `ulimit -n 256` to see a desktop's limit.
//!
//! A plain binary (`harness = false`): it prints figures and asserts nothing but answers.
//! Run with `cargo build --release && cargo bench --bench bursts`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zotero_emulator::Emulator;

const BURST: u64 = 2_000;

/// Sends `BURST` requests of `method` at once and reads every answer; prints the figures.
fn burst(p: &mut support::Proc, emu: &Emulator, what: &str, method: &str, params: Value) {
    let pid = p.child.id();
    emu.reset_counts();
    let fds_before = support::open_fds(pid);
    let most_fds = Arc::new(AtomicUsize::new(fds_before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (most_fds, done) = (most_fds.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                most_fds.fetch_max(support::open_fds(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let started = Instant::now();
    for i in 0..BURST {
        p.send(
            &json!({"jsonrpc": "2.0", "id": 1_000_000 + i, "method": method,
                       "params": params}),
        );
    }
    let (mut answered, mut failed) = (0, 0);
    let mut first_error = None;
    while answered < BURST {
        let m = p.next_message();
        if m.get("id").is_none() {
            continue;
        }
        answered += 1;
        let tool_failed = m["result"]["isError"] == true;
        if m.get("error").is_some() || tool_failed {
            failed += 1;
            first_error.get_or_insert(m);
        }
    }
    let took = started.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let (rss, hwm) = p.memory();
    println!(
        "{BURST} {what} in {:.2} s: {} upstream requests, {failed} failed; open fds {fds_before} \
         before, at most {} during; VmRSS after {rss:.1} MB, peak VmHWM {hwm:.1} MB",
        took.as_secs_f64(),
        emu.requests().len(),
        most_fds.load(Ordering::Relaxed),
    );
    if let Some(e) = first_error {
        println!("  first failure: {e}");
    }
}

fn main() {
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::start());
    let mut p = support::Proc::spawn(
        &bin,
        &emu.uri(),
        &[
            ("ZOTERO_SUBSCRIBE_POLL_SECONDS", "3600".to_string()),
            ("ZOTERO_EMBEDDING_MODEL", "none".to_string()),
        ],
    );
    p.initialize();
    let (rss, hwm) = p.memory();
    println!(
        "stdio server: idle VmRSS {rss:.1} MB, VmHWM {hwm:.1} MB, open fds {}",
        support::open_fds(p.child.id())
    );
    burst(
        &mut p,
        &emu,
        "subscribes of one URI",
        "resources/subscribe",
        json!({"uri": "zotero://user/items/VASWANI7"}),
    );
    burst(
        &mut p,
        &emu,
        "tool calls",
        "tools/call",
        json!({"name": "zotero_get_item", "arguments": {"item_key": "RESNET52"}}),
    );
    p.stop();
}
