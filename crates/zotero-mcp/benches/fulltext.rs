//! What reading a long full text costs: a 300,000-character text read in pages of 50,000
//! characters with `zotero_get_item_fulltext`, against the same upstream requests made
//! directly (the item's one-key listing and the attachment's full text, and for the parent
//! its attachments too): the time the server adds per page, and its memory (RSS before,
//! after one read-through and after many, and the peak).
//!
//! A plain binary (`harness = false`): it prints figures and asserts nothing but the
//! answers' shape. Run with `cargo bench --bench fulltext`.
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
use zotero_emulator::{Emulator, FullText, Library, API_KEY, USER_ID};

const TEXT_CHARS: usize = 300_000;
const PAGE_CHARS: u64 = 50_000;
const WARMUP_ROUNDS: usize = 3;
const ROUNDS: usize = 90;
/// RSS is read after every this many read-throughs, to show whether it grows.
const RSS_EVERY: usize = 30;

/// Mostly English with some multibyte characters, as extracted PDF text is.
fn long_text() -> String {
    let paragraph = "The Transformer relies on attention alone: softmax(QKᵀ/√dₖ)V relates \
        every position to every other in a constant number of operations, where recurrent \
        layers need O(n) sequential steps. Łukasz Kaiser, Noam Shazeer — and the others — \
        trained it on WMT 2014 English–German in 3.5 days.\n";
    paragraph.chars().cycle().take(TEXT_CHARS).collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// (median, p90) in ms.
fn stats(samples: &[Duration]) -> (f64, f64) {
    let mut v: Vec<f64> = samples.iter().map(|d| ms(*d)).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// Reads the whole text page by page; the time of each page call.
fn read_through(p: &mut Proc, key: &str, total: u64) -> Vec<Duration> {
    let mut offset = 0u64;
    let mut times = Vec::new();
    let mut read = 0u64;
    loop {
        let t = Instant::now();
        let v = p.request(
            "tools/call",
            json!({"name": "zotero_get_item_fulltext",
                   "arguments": {"item_key": key, "offset": offset, "max_chars": PAGE_CHARS}}),
        );
        times.push(t.elapsed());
        let env = &v["result"]["structuredContent"];
        assert_eq!(env["ok"], true, "page failed: {v}");
        let data = &env["data"];
        assert_eq!(data["total_chars"], total);
        read += data["text"].as_str().unwrap().chars().count() as u64;
        match data.get("next_offset").and_then(Value::as_u64) {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(read, total, "the whole text was read");
    times
}

fn main() {
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::with_library(Library::from_fixtures()));
    let text = long_text();
    emu.set_fulltext_of("VASPDF23", FullText::pdf(&text, 15, 15));
    let base = emu.uri();

    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let direct_get = |path: &str| {
        rt.block_on(async {
            let req = hyper::Request::get(format!("{base}/users/{USER_ID}{path}"))
                .header("Zotero-API-Version", "3")
                .header("Zotero-API-Key", API_KEY)
                .body(Empty::<Bytes>::new())
                .expect("request");
            let resp = client.request(req).await.expect("GET");
            assert_eq!(resp.status(), 200, "{path}");
            resp.into_body().collect().await.expect("body").to_bytes()
        })
    };
    // What the server asks Zotero for one page: the item as a one-key listing, (for the
    // parent, its attachments,) the full text.
    let attachment_requests = [
        "/items?itemKey=VASPDF23&includeTrashed=1&format=json".to_string(),
        "/items/VASPDF23/fulltext".to_string(),
    ];
    let parent_requests = [
        "/items?itemKey=VASWANI7&includeTrashed=1&format=json".to_string(),
        "/items/VASWANI7/children?itemType=attachment&format=json&limit=100&start=0".to_string(),
        "/items/VASPDF23/fulltext".to_string(),
    ];
    let pages = TEXT_CHARS.div_ceil(PAGE_CHARS as usize);
    let direct_page = |requests: &[String]| {
        let t = Instant::now();
        for r in requests {
            assert!(!direct_get(r).is_empty());
        }
        t.elapsed()
    };

    let mut server = Proc::spawn(&bin, &base, &[]);
    server.initialize();
    server.request("tools/list", json!({}));
    let (rss0, _) = server.memory();
    println!(
        "full text of {TEXT_CHARS} characters ({} bytes of UTF-8), pages of {PAGE_CHARS} characters",
        text.len()
    );
    println!("memory after initialize: VmRSS {rss0:.2} MB");

    for (label, key, requests) in [
        ("attachment key", "VASPDF23", &attachment_requests[..]),
        ("parent item", "VASWANI7", &parent_requests[..]),
    ] {
        let total = if key == "VASWANI7" {
            let header = "=== PDF: Full Text PDF [VASPDF23] ===\n\n";
            (header.chars().count() + TEXT_CHARS) as u64
        } else {
            TEXT_CHARS as u64
        };
        for _ in 0..WARMUP_ROUNDS {
            read_through(&mut server, key, total);
            for _ in 0..pages {
                direct_page(requests);
            }
        }
        let (rss_warm, _) = server.memory();
        let mut through = Vec::new();
        let mut direct = Vec::new();
        let mut upstream = 0;
        let mut rss_trend = Vec::new();
        for round in 1..=ROUNDS {
            let before = emu.requests().len();
            through.extend(read_through(&mut server, key, total));
            upstream += emu.requests().len() - before;
            for _ in 0..pages {
                direct.push(direct_page(requests));
            }
            if round % RSS_EVERY == 0 {
                rss_trend.push(format!("{:.2}", server.memory().0));
            }
        }
        let (rss, hwm) = server.memory();
        let (d_med, d_p90) = stats(&direct);
        let (s_med, s_p90) = stats(&through);
        println!(
            "{label} {key}: {} pages a read-through, {ROUNDS} read-throughs after {WARMUP_ROUNDS} warm-up",
            through.len() / ROUNDS
        );
        println!(
            "  direct HTTP GETs ({} a page):         median {d_med:.2} ms, p90 {d_p90:.2} ms",
            requests.len()
        );
        println!(
            "  zotero_get_item_fulltext (MCP):      median {s_med:.2} ms, p90 {s_p90:.2} ms ({} upstream requests a page)",
            upstream / through.len()
        );
        println!(
            "  added by the server, per page:       median {:.2} ms, p90 {:.2} ms",
            s_med - d_med,
            s_p90 - d_p90
        );
        println!(
            "  memory: VmRSS {rss_warm:.2} MB after warm-up; every {RSS_EVERY} read-throughs {} MB ({:+.0} KB in all); peak VmHWM {hwm:.2} MB, {:.0} KB above idle",
            rss_trend.join(", "),
            (rss - rss_warm) * 1024.0,
            (hwm - rss0) * 1024.0
        );
    }
    server.stop();
}
