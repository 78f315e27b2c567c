//! The encoder against the reference implementation: the tiny models' goldens were made by
//! sentence-transformers (see tools/make_goldens.py and the `implementation` in each file), and
//! every golden text must tokenize to the same ids and embed to the same vector here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::Digest;
use zotero_embed::{Pooling, SentenceEncoder};

/// f32 arithmetic in another order (candle's gemm vs torch's) differs in the last bits.
const TOLERANCE: f32 = 1e-5;

#[derive(Deserialize)]
struct Goldens {
    implementation: serde_json::Value,
    max_seq_length: usize,
    modules: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    input_ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn model_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/models")
        .join(name)
}

fn goldens(name: &str) -> Goldens {
    let text = std::fs::read_to_string(model_dir(name).join("goldens.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn check_model(name: &str, pooling: Pooling, dims: usize) {
    let goldens = goldens(name);
    assert!(
        goldens.implementation["made_by"]
            .as_str()
            .unwrap()
            .starts_with("sentence-transformers"),
        "goldens must come from the reference implementation"
    );
    assert_eq!(goldens.modules, ["Transformer", "Pooling", "Normalize"]);
    let encoder = SentenceEncoder::load(&model_dir(name)).unwrap();
    assert_eq!(encoder.pooling(), pooling);
    assert!(encoder.normalizes());
    assert_eq!(encoder.dims(), dims);
    assert_eq!(encoder.max_seq_length(), goldens.max_seq_length);

    for case in &goldens.cases {
        assert_eq!(
            encoder.token_ids(&case.text).unwrap(),
            case.input_ids,
            "token ids of {:?}",
            case.text
        );
    }
    assert!(
        goldens
            .cases
            .iter()
            .any(|c| c.input_ids.len() == goldens.max_seq_length),
        "some golden text must be truncated"
    );

    // All at once (batched by length, packed), in batches of 3 texts, in batches of at most 50
    // tokens (a truncated text alone), then one by one: all must match.
    let texts: Vec<&str> = goldens.cases.iter().map(|c| c.text.as_str()).collect();
    for (batch_size, batch_tokens) in [(32, 4096), (3, 4096), (32, 50)] {
        let encoder = SentenceEncoder::load(&model_dir(name))
            .unwrap()
            .with_batch_size(batch_size)
            .with_batch_tokens(batch_tokens);
        let vectors = encoder.encode(&texts).unwrap();
        assert_eq!(vectors.len(), texts.len());
        for (case, vector) in goldens.cases.iter().zip(&vectors) {
            let diff = max_abs_diff(vector, &case.embedding);
            assert!(
                diff <= TOLERANCE,
                "{name} batch {batch_size} ≤ {batch_tokens} tokens: {:?} differs by {diff}",
                case.text
            );
        }
    }
    let mut worst = 0.0f32;
    for case in &goldens.cases {
        let vector = encoder.encode(&[case.text.as_str()]).unwrap().remove(0);
        let diff = max_abs_diff(&vector, &case.embedding);
        worst = worst.max(diff);
        assert!(
            diff <= TOLERANCE,
            "{name} alone: {:?} differs by {diff}",
            case.text
        );
        // No query prompt in these models: a query is encoded as a text.
        assert_eq!(encoder.encode_query(&case.text).unwrap(), vector);
    }
    eprintln!("{name}: largest difference from the goldens {worst:e}");
}

#[test]
fn mean_pooling_model_matches_sentence_transformers() {
    check_model("tiny-bert", Pooling::Mean, 32);
}

#[test]
fn cls_pooling_model_matches_sentence_transformers() {
    check_model("tiny-bert-cls", Pooling::Cls, 16);
}

#[test]
fn vectors_are_unit_length_and_differ_between_texts() {
    let encoder = SentenceEncoder::load(&model_dir("tiny-bert")).unwrap();
    let v = encoder
        .encode(&["deep neural networks", "a book about history", ""])
        .unwrap();
    for vector in &v {
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }
    assert!(max_abs_diff(&v[0], &v[1]) > 0.05);
    assert!(encoder.encode(&[]).unwrap().is_empty());
}

#[test]
fn identity_names_the_model_and_hashes_every_file_read() {
    let encoder = SentenceEncoder::load(&model_dir("tiny-bert")).unwrap();
    let identity = encoder.identity();
    assert_eq!(identity.id, "tiny-bert");
    assert_eq!(identity.revision, None);
    assert_eq!(identity.dims, 32);
    let files: Vec<&str> = identity
        .file_hashes
        .iter()
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(
        files,
        [
            "1_Pooling/config.json",
            "config.json",
            "model.safetensors",
            "modules.json",
            "sentence_bert_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
        ]
    );
    for (file, hash) in &identity.file_hashes {
        assert_eq!(hash.len(), 64, "{file}");
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()), "{file}");
    }
    // The hash is the file's sha256, and a second load gives the same.
    let config = std::fs::read(model_dir("tiny-bert").join("config.json")).unwrap();
    let expected: String = sha2::Sha256::digest(&config)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        identity.file_hashes[1],
        ("config.json".to_owned(), expected)
    );
    let again = SentenceEncoder::load_with(
        &model_dir("tiny-bert"),
        zotero_embed::LoadOptions {
            id: Some("sentence-transformers/all-MiniLM-L6-v2".into()),
            revision: Some("r1".into()),
        },
    )
    .unwrap()
    .identity();
    assert_eq!(again.id, "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(again.revision.as_deref(), Some("r1"));
    assert_eq!(again.file_hashes, identity.file_hashes);
    let other = SentenceEncoder::load(&model_dir("tiny-bert-cls"))
        .unwrap()
        .identity();
    assert_ne!(other.file_hashes, identity.file_hashes);
}
