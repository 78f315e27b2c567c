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
//! (default `DEFAULT_BATCH_TOKENS`).
//!
//! The allocator is the binary's: mimalloc with zotero-mcp's options (alloc.rs), freed memory
//! returned at once; BENCH_PURGE_DELAY sets mimalloc's purge delay in ms instead (-1: never).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use serde_json::{json, Value};
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

const VOCAB: usize = 30_522;
const HIDDEN: usize = 384;
const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const MAX_SEQ: usize = 256;

/// Words that are each one token of the generated vocabulary.
fn word(i: usize) -> String {
    format!("w{i}")
}

fn write_model(dir: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/models/tiny-bert");
    // The tiny model's tokenizer pipeline (BERT uncased), with a MiniLM-sized vocabulary.
    let mut tokenizer: Value =
        serde_json::from_slice(&std::fs::read(fixture.join("tokenizer.json")).unwrap()).unwrap();
    let mut vocab = serde_json::Map::new();
    for (i, special) in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .enumerate()
    {
        vocab.insert((*special).to_owned(), json!(i));
    }
    for i in vocab.len()..VOCAB {
        vocab.insert(word(i), json!(i));
    }
    tokenizer["model"]["vocab"] = Value::Object(vocab);
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();

    let config = json!({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": 12,
        "intermediate_size": INTERMEDIATE, "vocab_size": VOCAB, "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02, "position_embedding_type": "absolute"
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        json!({"max_seq_length": MAX_SEQ, "do_lower_case": false}).to_string(),
    )
    .unwrap();
    std::fs::copy(fixture.join("modules.json"), dir.join("modules.json")).unwrap();
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    std::fs::create_dir_all(dir.join("2_Normalize")).unwrap();
    let mut pooling: Value =
        serde_json::from_slice(&std::fs::read(fixture.join("1_Pooling/config.json")).unwrap())
            .unwrap();
    pooling["word_embedding_dimension"] = json!(HIDDEN);
    std::fs::write(dir.join("1_Pooling/config.json"), pooling.to_string()).unwrap();

    let dev = Device::Cpu;
    let randn = |shape: &[usize]| Tensor::randn(0f32, 0.05, shape, &dev).unwrap();
    let mut t: HashMap<String, Tensor> = HashMap::new();
    let ln = |t: &mut HashMap<String, Tensor>, p: &str| {
        t.insert(
            format!("{p}.weight"),
            Tensor::ones(HIDDEN, DType::F32, &dev).unwrap(),
        );
        t.insert(
            format!("{p}.bias"),
            Tensor::zeros(HIDDEN, DType::F32, &dev).unwrap(),
        );
    };
    t.insert(
        "embeddings.word_embeddings.weight".into(),
        randn(&[VOCAB, HIDDEN]),
    );
    t.insert(
        "embeddings.position_embeddings.weight".into(),
        randn(&[512, HIDDEN]),
    );
    t.insert(
        "embeddings.token_type_embeddings.weight".into(),
        randn(&[2, HIDDEN]),
    );
    ln(&mut t, "embeddings.LayerNorm");
    for i in 0..LAYERS {
        let p = format!("encoder.layer.{i}");
        for (name, out, inp) in [
            ("attention.self.query", HIDDEN, HIDDEN),
            ("attention.self.key", HIDDEN, HIDDEN),
            ("attention.self.value", HIDDEN, HIDDEN),
            ("attention.output.dense", HIDDEN, HIDDEN),
            ("intermediate.dense", INTERMEDIATE, HIDDEN),
            ("output.dense", HIDDEN, INTERMEDIATE),
        ] {
            t.insert(format!("{p}.{name}.weight"), randn(&[out, inp]));
            t.insert(format!("{p}.{name}.bias"), randn(&[out]));
        }
        ln(&mut t, &format!("{p}.attention.output.LayerNorm"));
        ln(&mut t, &format!("{p}.output.LayerNorm"));
    }
    candle_core::safetensors::save(&t, dir.join("model.safetensors")).unwrap();
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
    write_model(dir.path());
    let batch = env_usize("BENCH_BATCH", 32);
    let batch_tokens = env_usize("BENCH_BATCH_TOKENS", zotero_embed::DEFAULT_BATCH_TOKENS);
    let encoder = SentenceEncoder::load(dir.path())
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

    let queries_n = env_usize("BENCH_QUERIES", 100);
    let queries: Vec<String> = (0..queries_n).map(|i| words.text(4 + i % 8)).collect();
    encoder.encode_query(&queries[0]).unwrap();
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|q| {
            let start = Instant::now();
            encoder.encode_query(q).unwrap();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "queries: {} of 6–13 tokens: p50 {:.2?}, p90 {:.2?}, max {:.2?} (PyTorch: ~18 ms)",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        times.last().copied().unwrap_or_default()
    );
}
