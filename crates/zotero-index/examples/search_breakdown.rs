//! Where a search's time goes, in this process: `search_breakdown DIR [QUERIES_FILE] [N]`
//! opens the user index in DIR afresh for each query (as the server does) and prints the
//! p50 of opening it and of keyword, semantic and hybrid searches with a [`VectorCache`]
//! kept across them. The query vector is a stored chunk's vector (an encoder that answers
//! it), so the model's time is not in these figures: add the encoder's time for a query.
//!
//! A QUERIES file in Cranfield's format (`cran.qry`: `.I` and `.W` lines) gives its
//! queries whole, as the server bench (`build_speed.py`) reads them; any other file one
//! query a line. (Read a line at a time, `cran.qry` made half its queries `.I 001` and
//! `.W`, the others half queries: keyword searches far cheaper than the server's.) The first
//! round (cold: the int8 copy and the keyword postings read) is printed apart.
//! `BREAKDOWN_CHECK=1` also checks that every keyword answer (BM25 in memory) equals the
//! uncached search's (FTS5), with 100 hits as the ranking bench asks.
//!
//! Build with symbols for `perf record` with `cargo build --profile bench -p zotero-index
//! --example search_breakdown`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::print_stdout
)]

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use zotero_index::{
    EncodeError, Encoder, Index, KeywordCache, LibraryId, Mode, ModelIdentity, SearchQuery,
    VectorCache,
};

/// Answers the vector it was last given, whatever the text.
struct Fixed {
    identity: ModelIdentity,
    vector: Mutex<Vec<f32>>,
}

impl Encoder for Fixed {
    fn identity(&self) -> ModelIdentity {
        self.identity.clone()
    }
    fn dims(&self) -> usize {
        self.identity.dims
    }
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        let v = self.vector.lock().unwrap().clone();
        Ok(texts.iter().map(|_| v.clone()).collect())
    }
}

const QUERIES: &[&str] = &[
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "boundary layer transition",
    "heat transfer in hypersonic flow",
    "buckling of cylindrical shells",
    "supersonic inlet design",
    "how can the aerodynamic performance of channel flow ground effect machines be calculated",
    "effect of pressure gradient on laminar separation",
    "flutter of panels at supersonic speeds",
];

/// The CPU time this thread has used: what other work on the machine changes least.
fn cpu(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(clock, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn thread_cpu() -> Duration {
    cpu(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// All threads' CPU time: the searches' parts run on threads of their own.
fn process_cpu() -> Duration {
    cpu(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn p50(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

/// The queries of a file: Cranfield's `.I`/`.W` records whole, else one a line.
fn read_queries(text: &str) -> Vec<String> {
    if !text.lines().any(|l| l.starts_with(".I")) {
        return text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
    }
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        if line.starts_with(".I") {
            out.extend(cur.take());
        } else if line.trim() == ".W" {
            cur = Some(String::new());
        } else if let Some(c) = cur.as_mut() {
            c.push(' ');
            c.push_str(line);
        }
    }
    out.extend(cur);
    out.into_iter()
        .map(|q| q.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|q| !q.is_empty())
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(
        args.get(1)
            .expect("usage: search_breakdown DIR [QUERIES] [N]"),
    );
    let queries: Vec<String> = match args.get(2) {
        Some(f) if f != "-" => read_queries(&std::fs::read_to_string(f).unwrap()),
        _ => QUERIES.iter().map(|s| s.to_string()).collect(),
    };
    let n: usize = args.get(3).map_or(100, |s| s.parse().unwrap());
    let only = std::env::var("BREAKDOWN_MODE").ok();

    let index = Index::open(dir, &LibraryId::User).unwrap();
    let identity = index.model().unwrap().expect("an index with vectors");
    drop(index);
    let conn = Connection::open(dir.join(LibraryId::User.file_name())).unwrap();
    let (chunks, last): (i64, i64) = conn
        .query_row("SELECT count(*), max(chunk_id) FROM vectors", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let mut vec_of = conn
        .prepare("SELECT vector FROM vectors WHERE chunk_id >= ?1 ORDER BY chunk_id LIMIT 1")
        .unwrap();
    let encoder = Fixed {
        identity,
        vector: Mutex::new(Vec::new()),
    };
    let cache = VectorCache::default();
    let modes = [
        ("keyword", Mode::Keyword),
        ("semantic", Mode::Semantic),
        ("hybrid", Mode::Hybrid),
    ];
    let mut open = Vec::new();
    let mut took: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    let mut all_cpu: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    for i in 0..=n {
        let q = &queries[i % queries.len()];
        let blob: Vec<u8> = vec_of
            .query_row([(i as i64 * 7919) % last.max(1)], |r| r.get(0))
            .unwrap();
        *encoder.vector.lock().unwrap() = blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        for (m, (name, mode)) in modes.iter().enumerate() {
            if only.as_deref().is_some_and(|o| o != *name) {
                continue;
            }
            let (t, c, a) = (Instant::now(), thread_cpu(), process_cpu());
            let index = Index::open(dir, &LibraryId::User).unwrap();
            let opened = t.elapsed();
            let query = SearchQuery::new(q).mode(*mode);
            let answer = index.search_cached(Some(&encoder), &query, &cache).unwrap();
            assert!(!answer.hits.is_empty() || q.trim().is_empty());
            // The first round loads the int8 copy and the keyword postings: apart.
            if i == 0 {
                println!(
                    "  first {name} search (cold): {:.2} ms",
                    t.elapsed().as_secs_f64() * 1e3
                );
            } else {
                open.push(opened);
                took[m].push(t.elapsed());
                cpu[m].push(thread_cpu() - c);
                all_cpu[m].push(process_cpu() - a);
            }
        }
    }
    println!(
        "{chunks} chunks with vectors, {n} queries a mode, index opened afresh each time \
         (p50 {:.2} ms), query embedding NOT included:",
        p50(open)
    );
    for (m, (name, _)) in modes.iter().enumerate() {
        if !took[m].is_empty() {
            println!(
                "  {name}: p50 {:.2} ms; CPU p50 {:.2} ms on the calling thread, {:.2} ms on all",
                p50(took[m].clone()),
                p50(cpu[m].clone()),
                p50(all_cpu[m].clone())
            );
        }
    }
    println!(
        "  vector cache: {} MB; keyword cache: {:.1} MB",
        cache.bytes() >> 20,
        KeywordCache::shared().bytes() as f64 / 1e6
    );
    if std::env::var_os("BREAKDOWN_CHECK").is_some() {
        let index = Index::open(dir, &LibraryId::User).unwrap();
        let mut same = 0;
        for q in &queries {
            let mut query = SearchQuery::new(q).mode(Mode::Keyword);
            query.limit = 100;
            let fts5 = index.search(None, &query).unwrap();
            let memory = index.search_cached(None, &query, &cache).unwrap();
            same += usize::from(fts5 == memory);
        }
        println!(
            "  keyword answers (100 hits) in memory equal to FTS5's: {same} of {}",
            queries.len()
        );
    }
}
