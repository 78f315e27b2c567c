//! A sentence-transformers model directory with random weights, of a chosen BERT shape: what
//! the benchmarks measure speed on. Speed does not depend on the weights' values, so a model
//! of all-MiniLM-L6-v2's exact shape ([`Shape::MINILM_L6`]) runs as fast as the real one;
//! its 90 MB are written at run time rather than kept in git. The vocabulary is the special
//! tokens followed by the caller's words, each one token (BERT's uncased pipeline, as the
//! test models in `fixtures/models/` use). Not used by the server.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde_json::{json, Value};

/// The dimensions of a BERT encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub layers: usize,
    pub hidden: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub vocab: usize,
    pub max_seq_length: usize,
}

impl Shape {
    /// sentence-transformers/all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads, intermediate
    /// 1536, 30,522 tokens, max_seq_length 256.
    pub const MINILM_L6: Shape = Shape {
        layers: 6,
        hidden: 384,
        heads: 12,
        intermediate: 1536,
        vocab: 30_522,
        max_seq_length: 256,
    };
}

/// The special tokens that open the vocabulary, in BERT's order.
pub const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// The word with token id `id` (≥ 5) in a vocabulary written by [`write`]: `w<id>`.
pub fn word(id: usize) -> String {
    format!("w{id}")
}

fn io(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn write_json(path: &Path, value: &Value) -> std::io::Result<()> {
    std::fs::write(path, value.to_string())
}

/// Writes a model of `shape` with random weights (normal, σ 0.05; layer norms the identity)
/// into `dir`: `config.json`, `tokenizer.json`, `model.safetensors`, `modules.json`,
/// `sentence_bert_config.json`, mean pooling and normalization. Its vocabulary is
/// [`SPECIAL_TOKENS`] then [`word`]`(5..shape.vocab)`.
pub fn write(dir: &Path, shape: Shape) -> std::io::Result<()> {
    let mut vocab = serde_json::Map::new();
    for (i, special) in SPECIAL_TOKENS.iter().enumerate() {
        vocab.insert((*special).to_owned(), json!(i));
    }
    for i in vocab.len()..shape.vocab {
        vocab.insert(word(i), json!(i));
    }
    let added: Vec<Value> = SPECIAL_TOKENS
        .iter()
        .enumerate()
        .map(|(id, content)| {
            json!({"id": id, "content": content, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let special = |name: &str, id: usize| json!({"id": name, "ids": [id], "tokens": [name]});
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
                       "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {"[CLS]": special("[CLS]", 2), "[SEP]": special("[SEP]", 3)}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": vocab},
    });
    write_json(&dir.join("tokenizer.json"), &tokenizer)?;
    write_json(
        &dir.join("config.json"),
        &json!({
            "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
            "hidden_size": shape.hidden, "num_hidden_layers": shape.layers,
            "num_attention_heads": shape.heads, "intermediate_size": shape.intermediate,
            "vocab_size": shape.vocab, "max_position_embeddings": 512, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12, "pad_token_id": 0, "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
            "position_embedding_type": "absolute"
        }),
    )?;
    write_json(
        &dir.join("sentence_bert_config.json"),
        &json!({"max_seq_length": shape.max_seq_length, "do_lower_case": false}),
    )?;
    let module = |idx: usize, path: &str, kind: &str| {
        json!({"idx": idx, "name": idx.to_string(), "path": path,
               "type": format!("sentence_transformers.models.{kind}")})
    };
    write_json(
        &dir.join("modules.json"),
        &json!([
            module(0, "", "Transformer"),
            module(1, "1_Pooling", "Pooling"),
            module(2, "2_Normalize", "Normalize")
        ]),
    )?;
    std::fs::create_dir_all(dir.join("1_Pooling"))?;
    std::fs::create_dir_all(dir.join("2_Normalize"))?;
    write_json(
        &dir.join("1_Pooling/config.json"),
        &json!({"word_embedding_dimension": shape.hidden, "pooling_mode_cls_token": false,
                "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false,
                "pooling_mode_mean_sqrt_len_tokens": false,
                "pooling_mode_weightedmean_tokens": false, "pooling_mode_lasttoken": false,
                "include_prompt": true}),
    )?;
    candle_core::safetensors::save(&weights(shape).map_err(io)?, dir.join("model.safetensors"))
        .map_err(io)
}

fn weights(shape: Shape) -> candle_core::Result<HashMap<String, Tensor>> {
    let dev = Device::Cpu;
    let h = shape.hidden;
    let mut t: HashMap<String, Tensor> = HashMap::new();
    let randn = |dims: &[usize]| Tensor::randn(0f32, 0.05, dims, &dev);
    let layer_norm = |t: &mut HashMap<String, Tensor>, p: &str| -> candle_core::Result<()> {
        t.insert(format!("{p}.weight"), Tensor::ones(h, DType::F32, &dev)?);
        t.insert(format!("{p}.bias"), Tensor::zeros(h, DType::F32, &dev)?);
        Ok(())
    };
    t.insert(
        "embeddings.word_embeddings.weight".into(),
        randn(&[shape.vocab, h])?,
    );
    t.insert(
        "embeddings.position_embeddings.weight".into(),
        randn(&[512, h])?,
    );
    t.insert(
        "embeddings.token_type_embeddings.weight".into(),
        randn(&[2, h])?,
    );
    layer_norm(&mut t, "embeddings.LayerNorm")?;
    for i in 0..shape.layers {
        let p = format!("encoder.layer.{i}");
        for (name, out, inp) in [
            ("attention.self.query", h, h),
            ("attention.self.key", h, h),
            ("attention.self.value", h, h),
            ("attention.output.dense", h, h),
            ("intermediate.dense", shape.intermediate, h),
            ("output.dense", h, shape.intermediate),
        ] {
            t.insert(format!("{p}.{name}.weight"), randn(&[out, inp])?);
            t.insert(format!("{p}.{name}.bias"), randn(&[out])?);
        }
        layer_norm(&mut t, &format!("{p}.attention.output.LayerNorm"))?;
        layer_norm(&mut t, &format!("{p}.output.LayerNorm"))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small shape loads, its words are one token each, and it gives unit vectors.
    #[test]
    fn a_written_model_loads_and_encodes() {
        let dir = tempfile::tempdir().unwrap();
        let shape = Shape {
            layers: 1,
            hidden: 16,
            heads: 2,
            intermediate: 32,
            vocab: 50,
            max_seq_length: 12,
        };
        write(dir.path(), shape).unwrap();
        let enc = crate::SentenceEncoder::load(dir.path()).unwrap();
        assert_eq!(enc.dims(), 16);
        assert_eq!(enc.max_seq_length(), 12);
        let text = format!("{} {} W7 unknown", word(5), word(49));
        assert_eq!(enc.token_ids(&text).unwrap(), vec![2, 5, 49, 7, 1, 3]);
        let v = enc.encode(&[text.as_str()]).unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
}
