//! The search index end to end, as the issue measures it: a generated library of 10,000
//! items with abstracts, 2,000 of them with a 50,000-character full text, served by the
//! emulator; a model of all-MiniLM-L6-v2's exact shape with random weights (speed does not
//! depend on the weights' values). It prints:
//!
//! - the time to a complete keyword index (`zotero-mcp update-db` without a model) and that
//!   process's peak RSS;
//! - vectors per second: the encoder alone on 256-token chunks at batch 32 (the issue's
//!   PyTorch reference on this machine: 14–19 docs/s, printed as a ratio), and `update-db`
//!   with the model for `BENCH_VECTOR_SECS` (default 60) before it is stopped with SIGINT:
//!   chunks and tokens per second of what it embedded, and its peak RSS;
//! - the index's size once every chunk has a vector (those the update did not reach get
//!   random unit vectors written by this bench, so that searches scan the full library);
//! - query p50/p99 of `zotero_semantic_search` over stdio, hybrid and semantic (the query's
//!   embedding included) and keyword, and the server's peak RSS;
//! - an incremental update after 10 edits and 5 deletions in Zotero.
//!
//! A plain binary (`harness = false`): `cargo bench -p zotero-mcp --bench semantic` measures
//! the newest release build (`support::server_binary`). BENCH_ITEMS, BENCH_FULLTEXTS and
//! BENCH_VECTOR_SECS shrink it for a quick look.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use support::Proc;
use zotero_embed::random_model::{self, Shape};
use zotero_emulator::{Emulator, FullText, Library, ZoteroEdit, API_KEY, USER_ID};
use zotero_index::{Index, LibraryId};

const FULLTEXT_CHARS: usize = 50_000;
/// The reference for sentence-transformers on PyTorch, MiniLM-L6, 256-token
/// chunks, batch 32, on this machine's 2 cores (docs/s).
const PYTORCH_DOCS_PER_SEC: (f64, f64) = (14.0, 19.0);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Deterministic words of the model's vocabulary, short ones far more often than long ones
/// (as in prose), so that a 1,000-character passage is about 256 tokens.
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn word(&mut self) -> String {
        let r = self.next();
        // Zipf-like: id ≈ 5 + 30,000^u.
        let u = (r % 10_000) as f64 / 10_000.0;
        let id = 5 + (30_000f64.powf(u) as usize).min(Shape::MINILM_L6.vocab - 6);
        random_model::word(id)
    }
    /// A query as people write them: 1–5 content words (past the 100 most frequent), and
    /// in every other one a function word among the 10 most frequent ("the", "and").
    fn query(&mut self, i: usize) -> String {
        let mut q = Vec::new();
        for _ in 0..1 + i % 5 {
            let w = loop {
                let w = self.word();
                if w[1..].parse::<usize>().is_ok_and(|id| id >= 105) {
                    break w;
                }
            };
            q.push(w);
        }
        if i % 2 == 1 {
            q.insert(
                q.len() / 2,
                random_model::word(5 + (self.next() % 10) as usize),
            );
        }
        q.join(" ")
    }
    fn text(&mut self, words: usize) -> String {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push_str(if i.is_multiple_of(19) { ". " } else { " " });
            }
            s.push_str(&self.word());
        }
        s
    }
    fn chars(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        let mut i = 0usize;
        while s.len() < n {
            if i > 0 {
                s.push_str(if i.is_multiple_of(23) { ".\n\n" } else { " " });
            }
            s.push_str(&self.word());
            i += 1;
        }
        s.truncate(n);
        s
    }
}

/// `items` synthetic items with 200-word abstracts; the first `fulltexts` get a PDF
/// attachment with a `FULLTEXT_CHARS` full text.
fn library(items: usize, fulltexts: usize) -> Library {
    let mut lib = Library::synthetic(items, 42);
    let mut words = Words(0x2545_f491_4f6c_dd1d);
    for item in &mut lib.items {
        item["data"]["abstractNote"] = json!(words.text(200));
    }
    let mut attachments = Vec::new();
    for (i, item) in lib.items.iter().take(fulltexts).enumerate() {
        let parent = item["key"].as_str().unwrap().to_string();
        let key = format!("PDF{i:05}");
        let version = (items + i + 1) as u64;
        let mut att = item.clone();
        att["key"] = json!(key);
        att["version"] = json!(version);
        att["meta"] = json!({});
        att["data"] = json!({
            "key": key, "version": version, "itemType": "attachment", "parentItem": parent,
            "linkMode": "imported_file", "title": "Full Text PDF", "accessDate": "", "url": "",
            "note": "", "contentType": "application/pdf", "charset": "",
            "filename": format!("{parent}.pdf"), "md5": null, "mtime": null, "tags": [],
            "relations": {}, "dateAdded": "2024-01-01T00:00:00Z",
            "dateModified": "2024-01-01T00:00:00Z"
        });
        let mut ft = FullText::pdf(&words.chars(FULLTEXT_CHARS), 20, 20);
        ft.version = version;
        lib.fulltext.insert(key, ft);
        attachments.push(att);
    }
    lib.items.extend(attachments);
    lib.version = (items + fulltexts) as u64;
    lib
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    ms(sorted[((sorted.len() - 1) as f64 * p).round() as usize])
}

/// The server's variables: the emulator, the index directory, the model.
fn server_env(base: &str, index: &Path, model: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ZOTERO_API_BASE", base.to_string()),
        ("ZOTERO_USER_ID", USER_ID.to_string()),
        ("ZOTERO_API_KEY", API_KEY.to_string()),
        ("ZOTERO_INDEX_DIR", index.display().to_string()),
        ("ZOTERO_EMBEDDING_MODEL", model.to_string()),
        ("HF_HUB_OFFLINE", "1".to_string()),
    ]
}

/// A running `update-db`: its stderr lines as they come (with their time) and the highest
/// VmHWM seen while it ran.
struct UpdateDb {
    child: Child,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
    peak_mb: Arc<Mutex<f64>>,
}

impl UpdateDb {
    fn start(bin: &Path, env: &[(&str, String)]) -> UpdateDb {
        let mut cmd = Command::new(bin);
        cmd.arg("update-db").env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn update-db");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push((Instant::now(), line));
            }
        });
        // VmHWM only grows, so polling misses at most the last interval's growth.
        let peak_mb = Arc::new(Mutex::new(0.0f64));
        let (pid, peak) = (child.id(), peak_mb.clone());
        std::thread::spawn(move || loop {
            let (_, hwm) = support::memory(pid);
            if hwm.is_nan() {
                break;
            }
            let mut p = peak.lock().unwrap();
            *p = p.max(hwm);
            drop(p);
            std::thread::sleep(Duration::from_millis(50));
        });
        UpdateDb {
            child,
            lines,
            peak_mb,
        }
    }

    /// Waits for the end; stdout (the report line), the peak RSS in MB and stderr's lines.
    /// A stopped update-db exits with 1 (it says so), a finished one with 0.
    fn finish(self, stopped: bool) -> (String, f64, Vec<(Instant, String)>) {
        let out = self.child.wait_with_output().expect("update-db");
        let report = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let cancelled = self
            .lines
            .lock()
            .unwrap()
            .iter()
            .any(|(_, l)| l.contains("cancelled; run update-db again"));
        assert!(
            out.status.success() || (stopped && cancelled && !report.is_empty()),
            "update-db failed: {report} {:?}",
            self.lines.lock().unwrap()
        );
        let peak = *self.peak_mb.lock().unwrap();
        let lines = self.lines.lock().unwrap().clone();
        (report, peak, lines)
    }
}

/// `(time, done)` of update-db's `vectors: D of T chunks …` progress lines.
fn vector_progress(lines: &[(Instant, String)]) -> Vec<(Instant, u64)> {
    lines
        .iter()
        .filter_map(|(t, l)| {
            let rest = l.strip_prefix("vectors: ")?;
            let done = rest.split_whitespace().next()?.parse().ok()?;
            Some((*t, done))
        })
        .collect()
}

/// One tool call; its envelope's `data`, and the time the call took.
fn call(p: &mut Proc, tool: &str, args: Value) -> (Value, Duration) {
    let t = Instant::now();
    let v = p.request("tools/call", json!({"name": tool, "arguments": args}));
    let took = t.elapsed();
    let env = &v["result"]["structuredContent"];
    assert_eq!(env["ok"], true, "{tool} failed: {v}");
    (env["data"].clone(), took)
}

fn main() {
    let (bin, rt) = support::setup();
    let items = env_usize("BENCH_ITEMS", 10_000);
    let fulltexts = env_usize("BENCH_FULLTEXTS", 2_000).min(items);
    let vector_secs = env_usize("BENCH_VECTOR_SECS", 60) as u64;

    let t = Instant::now();
    let lib = library(items, fulltexts);
    // The last 15 items (not attachments): 10 to edit and 5 to delete at the end.
    let keys: Vec<String> = lib.items[..items]
        .iter()
        .rev()
        .take(15)
        .map(|i| i["key"].as_str().unwrap().to_string())
        .collect();
    let emu = rt.block_on(Emulator::with_library(lib));
    let base = emu.uri();
    println!(
        "library: {items} items with 200-word abstracts, {fulltexts} with a full text of \
         {FULLTEXT_CHARS} characters (made in {:.1} s)",
        t.elapsed().as_secs_f64()
    );

    let mut work = tempfile::tempdir().unwrap();
    if std::env::var_os("BENCH_KEEP").is_some() {
        // For a look at the index afterwards (sqlite3, db-status).
        println!("kept: {}", work.path().display());
        work.disable_cleanup(true);
    }
    let model_dir = work.path().join("minilm-l6-shape");
    std::fs::create_dir_all(&model_dir).unwrap();
    random_model::write(&model_dir, Shape::MINILM_L6).unwrap();
    let index_dir = work.path().join("index");
    let model = model_dir.display().to_string();

    // 1. The keyword index, no model.
    let t = Instant::now();
    let run = UpdateDb::start(&bin, &server_env(&base, &index_dir, "none"));
    let (report, peak, _) = run.finish(false);
    let keyword_secs = t.elapsed().as_secs_f64();
    println!("keyword index: {keyword_secs:.1} s (aim ≤ 60 s), peak RSS {peak:.1} MB\n  {report}");

    // 2. The encoder alone, on chunks of exactly 256 tokens.
    let encoder = zotero_embed::SentenceEncoder::load(&model_dir).unwrap();
    let mut words = Words(7);
    let docs: Vec<String> = (0..64)
        .map(|_| (0..254).map(|_| words.word()).collect::<Vec<_>>().join(" "))
        .collect();
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    assert_eq!(encoder.token_ids(docs[0]).unwrap().len(), 256);
    encoder.encode(&docs[..32]).unwrap();
    let t = Instant::now();
    encoder.encode(&docs).unwrap();
    let rate = docs.len() as f64 / t.elapsed().as_secs_f64();
    println!(
        "encoder (in this process): {rate:.1} docs/s for 256-token chunks, batch 32: \
         {:.2}–{:.2}× PyTorch's {}–{} docs/s",
        rate / PYTORCH_DOCS_PER_SEC.1,
        rate / PYTORCH_DOCS_PER_SEC.0,
        PYTORCH_DOCS_PER_SEC.0,
        PYTORCH_DOCS_PER_SEC.1
    );

    // 3. update-db with the model for a while: the chunks it embeds are the first pending
    // ones in the index's order, so their token counts are known beforehand.
    let pending = {
        let mut index = Index::open(&index_dir, &LibraryId::User).unwrap();
        let up = index.updater().unwrap();
        up.pending_vectors(usize::MAX).unwrap()
    };
    let mut run = UpdateDb::start(&bin, &server_env(&base, &index_dir, &model));
    let deadline = Instant::now() + Duration::from_secs(vector_secs);
    let mut stopped = false;
    while run.child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            // update-db stops after the batch it is computing; what was committed stays.
            let _ = Command::new("kill")
                .args(["-INT", &run.child.id().to_string()])
                .status();
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let (report, peak, lines) = run.finish(stopped);
    let progress = vector_progress(&lines);
    let vectors_added: usize = report
        .split(" chunks written, ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let embedded = &pending[..vectors_added.min(pending.len())];
    let tokens: usize = embedded
        .iter()
        .map(|c| encoder.token_ids(&c.text).unwrap().len())
        .sum();
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in embedded {
        *kinds.entry(c.matched.as_str()).or_default() += 1;
    }
    if let (Some(first), Some(last)) = (progress.first(), progress.last()) {
        let secs = last.0.duration_since(first.0).as_secs_f64().max(1e-3);
        let chunks = last.1.saturating_sub(first.1) as f64;
        let mean_tokens = tokens as f64 / embedded.len().max(1) as f64;
        println!(
            "update-db with the model for {vector_secs} s: {vectors_added} of {} chunks \
             embedded ({kinds:?}), {mean_tokens:.0} tokens each on average; between its \
             first and last progress lines {:.1} chunks/s, {:.0} tokens/s; peak RSS \
             {peak:.1} MB (aim ≤ 400 MB)\n  {report}",
            pending.len(),
            chunks / secs,
            chunks * mean_tokens / secs
        );
    } else {
        println!("update-db with the model: no vector progress seen\n  {report}\n  {lines:?}");
    }

    // 4. Every other chunk gets a random unit vector of the model's identity.
    let t = Instant::now();
    let filled = {
        let mut index = Index::open(&index_dir, &LibraryId::User).unwrap();
        let identity = index
            .model()
            .unwrap()
            .expect("the update recorded its model");
        let mut up = index.updater().unwrap();
        let mut filled = 0;
        let mut r = Words(99);
        loop {
            let batch = up.pending_vectors(2_000).unwrap();
            if batch.is_empty() {
                break filled;
            }
            let vectors: Vec<(i64, Vec<f32>)> = batch
                .iter()
                .map(|c| {
                    let v: Vec<f32> = (0..identity.dims)
                        .map(|_| (r.next() % 2_001) as f32 / 1_000.0 - 1.0)
                        .collect();
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                    (c.id, v.into_iter().map(|x| x / norm).collect())
                })
                .collect();
            up.write_vectors(&identity, &vectors).unwrap();
            filled += batch.len();
        }
    };
    println!(
        "random vectors written for the {filled} chunks the update did not reach ({:.1} s)",
        t.elapsed().as_secs_f64()
    );

    // 5. Searches through the server.
    let env = server_env(&base, &index_dir, &model);
    let mut server = Proc::spawn(&bin, &base, &env[3..]);
    server.initialize();
    let (status, _) = call(&mut server, "zotero_get_search_database_status", json!({}));
    let lib_status = &status["libraries"][0];
    println!(
        "index: {} items, {} chunks, {} with vectors, {:.1} MB on disk",
        lib_status["items"],
        lib_status["chunks"],
        lib_status["chunks_with_vectors"],
        lib_status["size_bytes"].as_f64().unwrap_or(f64::NAN) / 1e6
    );
    let mut words = Words(1234);
    for (mode, n) in [("hybrid", 100), ("semantic", 50), ("keyword", 50)] {
        // The first search loads the model and warms the caches.
        for _ in 0..3 {
            call(
                &mut server,
                "zotero_semantic_search",
                json!({"query": words.query(3), "mode": mode}),
            );
        }
        let mut times: Vec<Duration> = (0..n)
            .map(|i| {
                let (data, took) = call(
                    &mut server,
                    "zotero_semantic_search",
                    json!({"query": words.query(i), "mode": mode}),
                );
                assert!(data["results"].is_array(), "{data}");
                took
            })
            .collect();
        times.sort();
        println!(
            "search {mode}: {n} queries of 1–6 words, p50 {:.1} ms, p99 {:.1} ms{}",
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            if mode == "keyword" {
                ""
            } else {
                " (query embedding included; aim p50 ≤ 30 ms)"
            }
        );
    }
    let (rss, hwm) = server.memory();
    println!("server after the searches: VmRSS {rss:.1} MB, peak {hwm:.1} MB");

    // 6. 10 edits and 5 deletions in Zotero, then an incremental update.
    for (n, key) in keys[..10].iter().enumerate() {
        emu.edit_in_zotero(
            &ZoteroEdit::item(key).set("title", json!(format!("Edited title number {n}"))),
        )
        .unwrap();
    }
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let version = emu.library_version();
    let status_code = rt.block_on(async {
        let req = hyper::Request::delete(format!(
            "{base}/users/{USER_ID}/items?itemKey={}",
            keys[10..].join(",")
        ))
        .header("Zotero-API-Version", "3")
        .header("Zotero-API-Key", API_KEY)
        .header("If-Unmodified-Since-Version", version.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
        client.request(req).await.unwrap().status()
    });
    assert_eq!(status_code, 204, "the deletion");
    let (report, took) = call(&mut server, "zotero_update_search_database", json!({}));
    println!(
        "incremental update after 10 edits and 5 deletions: {:.2} s (aim ≤ 2 s): {} objects \
         read, {} removed, {} chunks written, {} vectors added, {} requests",
        took.as_secs_f64(),
        report["objects_read"],
        report["removed"],
        report["chunks_written"],
        report["vectors_added"],
        report["requests"]
    );
    let (data, _) = call(
        &mut server,
        "zotero_semantic_search",
        json!({"query": "Edited title number 3", "mode": "keyword"}),
    );
    assert_eq!(
        data["results"][0]["item_key"],
        json!(keys[3]),
        "the edit is searchable: {data}"
    );
    let (rss, hwm) = server.memory();
    println!("server at the end: VmRSS {rss:.1} MB, peak {hwm:.1} MB");
    server.stop();
}
