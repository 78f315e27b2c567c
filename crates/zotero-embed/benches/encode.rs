//! Encoding speed on a model of all-MiniLM-L6-v2's exact shape (6 layers, hidden 384, 12 heads,
//! intermediate 1536, vocab 30,522, max_seq_length 256) with random weights, written into a
//! temporary directory at run time (90 MB: not for git). Speed does not depend on the weights'
//! values, so the figures are those of the real model.
//!
//!     cargo bench -p zotero-embed --bench encode
//!
//! Prints documents per second for 256-token chunks at batch 32 (the PyTorch reference:
//! 14–19 docs/s on 2 cores) and the median latency of one short query (reference ~18 ms).
//! BENCH_DOCS sets the number of chunks (default 96), BENCH_QUERIES the number of queries,
//! BENCH_BATCH the batch size (default 32), BENCH_BATCH_TOKENS the tokens a batch at most
//! (default `DEFAULT_BATCH_TOKENS`). BENCH_MODEL_DIR loads a model's files from there
//! instead (the real all-MiniLM-L6-v2: the queries then have real words); BENCH_ONLY=queries
//! times the queries alone, with the process's CPU time a query.
//!
//! The allocator is the binary's: mimalloc with zotero-mcp's options (alloc.rs), freed memory
//! returned at once; BENCH_PURGE_DELAY sets mimalloc's purge delay in ms instead (-1: never).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::time::{Duration, Instant};

use zotero_embed::random_model::{self, word, Shape};
use zotero_embed::SentenceEncoder;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// zotero-mcp's alloc.rs `tune()`, with the purge delay given.
fn tune_allocator(purge_delay: i64) {
    use libmimalloc_sys::{mi_option_set, mi_option_t};
    // Option numbers of mimalloc v3's `mi_option_e`, as in alloc.rs.
    const ARENA_EAGER_COMMIT: mi_option_t = 4;
    const PURGE_DELAY: mi_option_t = 15;
    const ARENA_PURGE_MULT: mi_option_t = 24;
    const ALLOW_THP: mi_option_t = 43;
    for (option, value) in [
        (ARENA_EAGER_COMMIT, 0),
        (PURGE_DELAY, purge_delay),
        (ARENA_PURGE_MULT, 1),
        (ALLOW_THP, 0),
    ] {
        unsafe { mi_option_set(option, value as std::os::raw::c_long) };
    }
}

const VOCAB: usize = Shape::MINILM_L6.vocab;
const MAX_SEQ: usize = Shape::MINILM_L6.max_seq_length;

fn write_model(dir: &Path) {
    random_model::write(dir, Shape::MINILM_L6).unwrap();
}

/// A deterministic stream of vocabulary words (xorshift; the values do not matter).
struct Words(u64);

impl Words {
    fn text(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                word(5 + (self.0 % (VOCAB as u64 - 5)) as usize)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let purge_delay = std::env::var("BENCH_PURGE_DELAY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    tune_allocator(purge_delay);
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let given = std::env::var_os("BENCH_MODEL_DIR").map(std::path::PathBuf::from);
    let model_dir = match &given {
        Some(d) => d.as_path(),
        None => {
            write_model(dir.path());
            dir.path()
        }
    };
    let batch = env_usize("BENCH_BATCH", 32);
    let batch_tokens = env_usize("BENCH_BATCH_TOKENS", zotero_embed::DEFAULT_BATCH_TOKENS);
    let encoder = SentenceEncoder::load(model_dir)
        .unwrap()
        .with_batch_size(batch)
        .with_batch_tokens(batch_tokens);
    println!(
        "model: MiniLM-L6 shape, random weights, written and loaded in {:.1?}; candle uses {} \
         threads (RAYON_NUM_THREADS, else the cores); mimalloc, purge delay {purge_delay} ms",
        start.elapsed(),
        candle_core::utils::get_num_threads()
    );

    let mut words = Words(0x9e37_79b9_7f4a_7c15);
    if std::env::var("BENCH_ONLY").as_deref() == Ok("queries") {
        time_queries(&encoder, &mut words);
        return;
    }
    let docs_n = env_usize("BENCH_DOCS", 96);
    // 254 words = 256 tokens with [CLS] and [SEP]: the chunk size.
    let docs: Vec<String> = (0..docs_n).map(|_| words.text(MAX_SEQ - 2)).collect();
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    assert_eq!(encoder.token_ids(docs[0]).unwrap().len(), MAX_SEQ);

    // Warm-up: first-touch allocations and thread pool start.
    encoder.encode(&docs[..docs.len().min(batch)]).unwrap();
    let start = Instant::now();
    let vectors = encoder.encode(&docs).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(vectors.len(), docs.len());
    let rate = docs.len() as f64 / elapsed.as_secs_f64();
    println!(
        "documents: {} chunks of 256 tokens, batch {batch} ≤ {batch_tokens} tokens: {:.2?} → \
         {rate:.1} docs/s, {:.2}–{:.2}× PyTorch's 14–19",
        docs.len(),
        elapsed,
        rate / 19.0,
        rate / 14.0
    );

    // Mixed lengths, as a library's last chunks are.
    let mixed: Vec<String> = (0..docs_n)
        .map(|i| words.text(8 + (i * 37) % (MAX_SEQ - 10)))
        .collect();
    let mixed: Vec<&str> = mixed.iter().map(String::as_str).collect();
    let tokens: usize = mixed
        .iter()
        .map(|t| encoder.token_ids(t).unwrap().len())
        .sum();
    let start = Instant::now();
    encoder.encode(&mixed).unwrap();
    let elapsed = start.elapsed();
    println!(
        "mixed lengths: {} texts, {:.0} tokens on average: {:.2?} → {:.1} docs/s, {:.0} tokens/s",
        mixed.len(),
        tokens as f64 / mixed.len() as f64,
        elapsed,
        mixed.len() as f64 / elapsed.as_secs_f64(),
        tokens as f64 / elapsed.as_secs_f64()
    );

    time_queries(&encoder, &mut words);
}

/// The CPU time of all the process's threads, from /proc/self/stat (user + system, in
/// clock ticks of 10 ms: time many queries).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are 14th and 15th.
    let after = stat.rsplit(')').next().unwrap_or_default();
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Cranfield-like queries of about 20 tokens, for a model with real words.
const REAL_QUERIES: &[&str] = &[
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "what are the structural and aeroelastic problems associated with flight of high speed aircraft",
    "how can the aerodynamic performance of channel flow ground effect machines be calculated",
    "what is the effect of pressure gradient on laminar separation in supersonic flow",
    "flutter of panels at supersonic speeds and the effect of in-plane loads",
    "heat transfer to a blunt body in hypersonic flow with a turbulent boundary layer",
];

fn time_queries(encoder: &SentenceEncoder, words: &mut Words) {
    let queries_n = env_usize("BENCH_QUERIES", 100);
    let real = std::env::var_os("BENCH_MODEL_DIR").is_some();
    let queries: Vec<String> = (0..queries_n)
        .map(|i| match real {
            true => REAL_QUERIES[i % REAL_QUERIES.len()].to_string(),
            false => words.text(4 + i % 8),
        })
        .collect();
    let tokens: usize = queries
        .iter()
        .map(|q| encoder.token_ids(q).unwrap().len())
        .sum();
    encoder.encode_query(&queries[0]).unwrap();
    let cpu = process_cpu();
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|q| {
            let start = Instant::now();
            encoder.encode_query(q).unwrap();
            start.elapsed()
        })
        .collect();
    let cpu = (process_cpu() - cpu) / queries_n.max(1) as u32;
    times.sort();
    println!(
        "queries: {} of {:.1} tokens on average: p50 {:.2?}, p90 {:.2?}, max {:.2?}, CPU {:.2?} a \
         query (PyTorch: ~18 ms)",
        times.len(),
        tokens as f64 / queries_n.max(1) as f64,
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        times.last().copied().unwrap_or_default(),
        cpu
    );
}
