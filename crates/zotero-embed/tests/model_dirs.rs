//! Model directories that are not quite the tiny fixture: missing files, other architectures,
//! mismatched shapes, broken weights, other pipelines. Each must give an error that says what
//! is wrong and where (never a panic), or load with the documented defaults.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use zotero_embed::{EmbedError, Pooling, SentenceEncoder};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/models/tiny-bert")
}

/// A writable copy of the tiny mean-pooling model.
fn copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in ["", "1_Pooling", "2_Normalize"] {
        let from = fixture().join(entry);
        let to = dir.path().join(entry);
        std::fs::create_dir_all(&to).unwrap();
        for file in std::fs::read_dir(&from).unwrap() {
            let file = file.unwrap();
            if file.file_type().unwrap().is_file() {
                std::fs::copy(file.path(), to.join(file.file_name())).unwrap();
            }
        }
    }
    dir
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

fn load_err(dir: &Path) -> (EmbedError, String) {
    let err = SentenceEncoder::load(dir).unwrap_err();
    let message = err.to_string();
    (err, message)
}

#[test]
fn missing_files_are_named_with_the_model_dir() {
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let dir = copy();
        std::fs::remove_file(dir.path().join(file)).unwrap();
        let (err, message) = load_err(dir.path());
        assert!(matches!(err, EmbedError::MissingFile { .. }), "{message}");
        assert!(message.contains(file), "{message}");
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );
    }
    // modules.json names the pooling config, so it must be there.
    let dir = copy();
    std::fs::remove_file(dir.path().join("1_Pooling/config.json")).unwrap();
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::MissingFile { .. }), "{message}");
    assert!(message.contains("1_Pooling/config.json"), "{message}");
}

#[test]
fn other_architectures_are_refused_with_the_supported_ones() {
    let dir = copy();
    edit_json(&dir.path().join("config.json"), |c| {
        c["model_type"] = json!("xlm-roberta");
        c["architectures"] = json!(["XLMRobertaModel"]);
    });
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::UnsupportedArchitecture { .. }),
        "{message}"
    );
    assert!(message.contains("xlm-roberta"), "{message}");
    assert!(message.contains("BERT-family"), "{message}");

    let dir = copy();
    edit_json(&dir.path().join("config.json"), |c| {
        c["hidden_act"] = json!("silu");
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{message}");
    assert!(
        message.contains("silu") && message.contains("gelu"),
        "{message}"
    );
}

#[test]
fn shape_mismatches_are_reported() {
    // The pooling config's dimension against config.json's.
    let dir = copy();
    edit_json(&dir.path().join("1_Pooling/config.json"), |c| {
        c["word_embedding_dimension"] = json!(384);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Shape { .. }), "{message}");
    assert!(
        message.contains("384") && message.contains("32"),
        "{message}"
    );

    // config.json against the weights.
    let dir = copy();
    edit_json(&dir.path().join("config.json"), |c| {
        c["intermediate_size"] = json!(128);
    });
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::BadSafetensors { .. }),
        "{message}"
    );
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(message.contains("shape mismatch"), "{message}");
    // Even with RUST_BACKTRACE set, no stack in a user's message.
    assert!(!message.contains("candle_core::"), "{message}");

    // The tokenizer against the embedding table.
    let dir = copy();
    edit_json(&dir.path().join("tokenizer.json"), |t| {
        t["model"]["vocab"]["zotero-extra-token"] = json!(200);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Shape { .. }), "{message}");
    assert!(
        message.contains("201 tokens") && message.contains("200"),
        "{message}"
    );

    let dir = copy();
    edit_json(&dir.path().join("config.json"), |c| {
        c["num_attention_heads"] = json!(5);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Shape { .. }), "{message}");
}

#[test]
fn broken_weights_and_configs_are_errors() {
    let dir = copy();
    let weights = dir.path().join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::BadSafetensors { .. }),
        "{message}"
    );

    std::fs::write(&weights, b"not safetensors at all").unwrap();
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::BadSafetensors { .. }),
        "{message}"
    );

    let dir = copy();
    std::fs::write(dir.path().join("config.json"), b"{ not json").unwrap();
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::BadConfig { .. }), "{message}");
    assert!(message.contains("config.json"), "{message}");

    let dir = copy();
    std::fs::write(dir.path().join("tokenizer.json"), b"{}").unwrap();
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Tokenizer { .. }), "{message}");

    let dir = copy();
    edit_json(&dir.path().join("sentence_bert_config.json"), |c| {
        c["max_seq_length"] = json!(1);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::BadConfig { .. }), "{message}");
}

#[test]
fn unsupported_pipelines_are_refused() {
    let dir = copy();
    edit_json(&dir.path().join("modules.json"), |m| {
        m.as_array_mut().unwrap().push(json!({
            "idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"
        }));
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{message}");
    assert!(message.contains("Dense"), "{message}");

    // Transformer and Normalize, no Pooling: no sentence vector to normalize.
    let dir = copy();
    edit_json(&dir.path().join("modules.json"), |m| {
        m.as_array_mut().unwrap().remove(1);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{message}");
    assert!(message.contains("without a Pooling module"), "{message}");

    let dir = copy();
    edit_json(&dir.path().join("1_Pooling/config.json"), |c| {
        c["pooling_mode_mean_tokens"] = json!(false);
        c["pooling_mode_max_tokens"] = json!(true);
    });
    let (err, message) = load_err(dir.path());
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{message}");
    assert!(message.contains("max"), "{message}");
}

#[test]
fn without_modules_json_the_pooling_config_is_used_and_nothing_normalizes() {
    let texts = ["deep neural networks", "a book", ""];
    let reference = SentenceEncoder::load(&fixture())
        .unwrap()
        .encode(&texts)
        .unwrap();

    let dir = copy();
    std::fs::remove_file(dir.path().join("modules.json")).unwrap();
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(encoder.pooling(), Pooling::Mean);
    assert!(!encoder.normalizes());
    let raw = encoder.encode(&texts).unwrap();
    for (raw, unit) in raw.iter().zip(&reference) {
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() > 1e-3, "not normalized: {norm}");
        for (r, u) in raw.iter().zip(unit) {
            assert!((r / norm - u).abs() < 1e-5);
        }
    }

    // Neither modules.json nor a pooling config: mean pooling, as sentence-transformers does.
    std::fs::remove_dir_all(dir.path().join("1_Pooling")).unwrap();
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(encoder.pooling(), Pooling::Mean);
    assert_eq!(encoder.encode(&texts).unwrap(), raw);
    assert!(!encoder
        .identity()
        .file_hashes
        .iter()
        .any(|(f, _)| f == "modules.json"));
}

#[test]
fn a_query_prompt_is_put_before_queries() {
    let dir = copy();
    std::fs::write(
        dir.path().join("config_sentence_transformers.json"),
        serde_json::to_vec(&json!({"prompts": {"query": "query: ", "document": ""}})).unwrap(),
    )
    .unwrap();
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    let query = encoder.encode_query("neural networks").unwrap();
    let text = encoder.encode(&["query: neural networks"]).unwrap();
    assert_eq!(query, text[0]);
    assert_ne!(query, encoder.encode(&["neural networks"]).unwrap()[0]);
    // The search index asks for a query's vector through its Encoder trait: with the prompt.
    let through_index = zotero_index::Encoder::encode_query(&encoder, "neural networks").unwrap();
    assert_eq!(through_index, query);
}

#[test]
fn tanh_gelu_names_are_accepted() {
    let dir = copy();
    edit_json(&dir.path().join("config.json"), |c| {
        c["hidden_act"] = json!("gelu_new");
    });
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(encoder.encode(&["text"]).unwrap()[0].len(), 32);
}

#[test]
fn old_style_module_type_names_are_read() {
    // Models saved by sentence-transformers 1.x name the class twice.
    let dir = copy();
    edit_json(&dir.path().join("modules.json"), |m| {
        for module in m.as_array_mut().unwrap() {
            let kind = module["type"].as_str().unwrap().to_owned();
            let class = kind.rsplit('.').next().unwrap().to_owned();
            module["type"] = json!(format!("{kind}.{class}"));
        }
    });
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(encoder.pooling(), Pooling::Mean);
    assert!(encoder.normalizes());
    let reference = SentenceEncoder::load(&fixture()).unwrap();
    assert_eq!(
        encoder.encode(&["a text"]).unwrap(),
        reference.encode(&["a text"]).unwrap()
    );
}

#[test]
fn without_max_seq_length_the_tokenizer_limit_and_the_position_table_bound_it() {
    let dir = copy();
    std::fs::remove_file(dir.path().join("sentence_bert_config.json")).unwrap();
    // tokenizer_config.json's model_max_length is the position table's size, 64.
    assert_eq!(
        SentenceEncoder::load(dir.path()).unwrap().max_seq_length(),
        64
    );
    edit_json(&dir.path().join("tokenizer_config.json"), |c| {
        c["model_max_length"] = json!(40);
    });
    assert_eq!(
        SentenceEncoder::load(dir.path()).unwrap().max_seq_length(),
        40
    );
    // transformers' "no limit".
    edit_json(&dir.path().join("tokenizer_config.json"), |c| {
        c["model_max_length"] = json!(1e30);
    });
    assert_eq!(
        SentenceEncoder::load(dir.path()).unwrap().max_seq_length(),
        64
    );
    // A max_seq_length past the position table is cut to it.
    std::fs::write(
        dir.path().join("sentence_bert_config.json"),
        br#"{"max_seq_length": 512}"#,
    )
    .unwrap();
    let encoder = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(encoder.max_seq_length(), 64);
    let long = "word ".repeat(200);
    assert_eq!(encoder.token_ids(&long).unwrap().len(), 64);
    assert_eq!(encoder.encode(&[long.as_str()]).unwrap()[0].len(), 32);
}

/// A 1 GiB file (sparse: nothing written) whose header claims 2^40 bytes: refused from its
/// first 8 bytes, before it is hashed or read (it used to be read whole first: 1 GB of memory
/// and half a minute). Another, whose header is sound JSON but whose tensor runs past the end
/// of the file, is refused from its header too.
#[test]
fn weights_are_refused_from_their_header_before_being_read() {
    use std::io::Write;
    let dir = copy();
    let weights = dir.path().join("model.safetensors");
    let file = std::fs::File::create(&weights).unwrap();
    file.set_len(1 << 30).unwrap();
    (&file).write_all(&(1u64 << 40).to_le_bytes()).unwrap();
    drop(file);
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::BadSafetensors { .. }),
        "{message}"
    );
    assert!(
        message.contains("header length is 1099511627776 bytes"),
        "{message}"
    );
    assert!(
        message.contains("download model.safetensors again"),
        "{message}"
    );

    let header = br#"{"embeddings.word_embeddings.weight":{"dtype":"F32","shape":[1000000,1000],"data_offsets":[0,4000000000]}}"#;
    let file = std::fs::File::create(&weights).unwrap();
    file.set_len(1 << 30).unwrap();
    (&file)
        .write_all(&(header.len() as u64).to_le_bytes())
        .unwrap();
    (&file).write_all(header).unwrap();
    drop(file);
    let (err, message) = load_err(dir.path());
    assert!(
        matches!(err, EmbedError::BadSafetensors { .. }),
        "{message}"
    );
    assert!(message.contains("ends at byte 4000000000"), "{message}");
}
