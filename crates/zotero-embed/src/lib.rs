//! An in-process sentence encoder: BERT-family sentence-transformers models run on candle
//! (pure Rust, CPU), tokenized by the `tokenizers` crate without C or C++.
//!
//! [`SentenceEncoder::load`] reads a sentence-transformers model directory (`config.json`,
//! `tokenizer.json`, `model.safetensors`, and `modules.json`, `1_Pooling/config.json`,
//! `sentence_bert_config.json` when present) and reproduces what
//! `SentenceTransformer(dir).encode(texts)` gives: the model's own pooling (mean or CLS), its
//! own normalization, its max_seq_length with truncation. This crate knows nothing of the
//! index; an adapter glues it to the index's encoder trait.

mod bert;
mod error;
mod files;
mod index_encoder;
pub mod random_model;

use std::path::Path;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::{PostProcessor, Tokenizer, TruncationParams};

pub use error::EmbedError;
pub use files::Pooling;
pub use index_encoder::load_model_dir;

/// Texts per forward pass. 32 is sentence-transformers' default, so figures compare.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// Tokens per forward pass at most (a longer text is a batch alone). Texts are packed, so the
/// size of a batch changes only its memory: the encode bench measured the same speed at
/// 16 × 256 tokens as at 32 × 256, with peak memory ~110 MB lower.
pub const DEFAULT_BATCH_TOKENS: usize = 16 * 256;

/// What a vector was made with, for an index to know when its vectors are stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelIdentity {
    /// The caller's name for the model, else one from the directory (see [`LoadOptions::id`]).
    pub id: String,
    /// The model's revision: the caller's, else the commit of a Hugging Face cache snapshot
    /// directory, else `None` (the file hashes still pin the model).
    pub revision: Option<String>,
    /// `(file relative to the model dir, sha256 hex)` for every file read, sorted by name.
    pub file_hashes: Vec<(String, String)>,
    /// Length of the vectors.
    pub dims: usize,
}

/// How to name a model being loaded; both default to what the directory says.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The model id, e.g. `sentence-transformers/all-MiniLM-L6-v2`. Default: `org/name` for a
    /// Hugging Face cache dir (`models--org--name/snapshots/<commit>`), else the dir's name.
    pub id: Option<String>,
    /// The revision (commit). Default: the snapshot commit of a Hugging Face cache dir.
    pub revision: Option<String>,
}

/// A loaded model with its tokenizer and pipeline. `Send + Sync`: share one behind an `Arc`.
pub struct SentenceEncoder {
    model: bert::Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
    lowercase: bool,
    max_seq_length: usize,
    query_prompt: Option<String>,
    batch_size: usize,
    batch_tokens: usize,
    identity: ModelIdentity,
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder")
            .field("identity", &self.identity)
            .field("pooling", &self.pooling)
            .field("normalize", &self.normalize)
            .field("max_seq_length", &self.max_seq_length)
            .field("batch_size", &self.batch_size)
            .field("batch_tokens", &self.batch_tokens)
            .finish_non_exhaustive()
    }
}

impl SentenceEncoder {
    /// Loads the model in `dir`, named after the directory (see [`LoadOptions`]).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, LoadOptions::default())
    }

    /// Loads the model in `dir` under the caller's id and revision.
    pub fn load_with(dir: &Path, options: LoadOptions) -> Result<Self, EmbedError> {
        let mut hashes = files::Hashes::default();
        let config_bytes = files::read_required(dir, "config.json", &mut hashes)?;
        let config = files::bert_config(dir, &config_bytes)?;
        let pipeline = files::pipeline(dir, config.hidden_size, &mut hashes)?;
        let st: files::SentenceBertConfig =
            match files::read_optional(dir, "sentence_bert_config.json", &mut hashes)? {
                Some(bytes) => files::parse_json(dir, "sentence_bert_config.json", &bytes)?,
                None => files::SentenceBertConfig::default(),
            };
        let query_prompt = files::query_prompt(dir, &mut hashes)?;

        let tokenizer_bytes = files::read_required(dir, "tokenizer.json", &mut hashes)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| EmbedError::Tokenizer {
                path: tokenizer_path.clone(),
                message: e.to_string(),
            })?;
        // As sentence-transformers: max_seq_length if given, else the smaller of the position
        // table and the tokenizer's model_max_length. Never past the table: those positions do
        // not exist.
        let default_length = match files::tokenizer_max_length(dir, &mut hashes)? {
            Some(length) => length.min(config.max_position_embeddings),
            None => config.max_position_embeddings,
        };
        let max_seq_length = st
            .max_seq_length
            .unwrap_or(default_length)
            .min(config.max_position_embeddings);
        let added = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false));
        if max_seq_length <= added {
            return Err(EmbedError::BadConfig {
                path: dir.join("sentence_bert_config.json"),
                message: format!(
                    "max_seq_length {max_seq_length} leaves no room for text next to the \
                     {added} special tokens"
                ),
            });
        }
        // A token id past the embedding table would fail in the middle of encoding; say so now.
        let tokens = tokenizer.get_vocab_size(true);
        if tokens > config.vocab_size {
            return Err(EmbedError::Shape {
                path: tokenizer_path,
                what: format!(
                    "the tokenizer has {tokens} tokens, but config.json's vocab_size is {}",
                    config.vocab_size
                ),
            });
        }
        // Padding is done per batch below, to the batch's longest text, never by the tokenizer.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer {
                path: tokenizer_path.clone(),
                message: e.to_string(),
            })?;

        let weights_name = zotero_hub::WEIGHTS_FILE;
        let weights_path = dir.join(weights_name);
        // Its size and header first (a few bytes read), so that a damaged or hostile file is
        // refused before it is hashed or mapped; then hashed by streaming, never read whole.
        files::check_weights(dir, weights_name)?;
        hashes.add_file(weights_name, &weights_path)?;
        let bad_weights = |e: candle_core::Error| EmbedError::BadSafetensors {
            path: weights_path.clone(),
            message: error::candle_message(e),
        };
        // Weights stored as f16/bf16 are widened: the CPU runs f32 fastest and matches the
        // reference implementation's default.
        // SAFETY: the map is read while the tensors are copied out of it, within this call
        // (the VarBuilder is dropped once the model is built). A file changed meanwhile could
        // give wrong weights or SIGBUS if truncated; a model's files are not written while
        // it loads (the cache writes a blob under another name, then links it).
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(&[&weights_path], DType::F32, &Device::Cpu)
        }
        .map_err(bad_weights)?;
        let model = bert::Bert::load(vb, &config).map_err(bad_weights)?;

        let identity = ModelIdentity {
            id: options.id.unwrap_or_else(|| files::id_from_path(dir)),
            revision: options.revision.or_else(|| files::revision_from_path(dir)),
            file_hashes: hashes.into_sorted(),
            dims: config.hidden_size,
        };
        Ok(Self {
            model,
            tokenizer,
            pooling: pipeline.pooling,
            normalize: pipeline.normalize,
            lowercase: st.do_lower_case,
            max_seq_length,
            query_prompt,
            batch_size: DEFAULT_BATCH_SIZE,
            batch_tokens: DEFAULT_BATCH_TOKENS,
            identity,
        })
    }

    /// Texts per forward pass (at least 1).
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Tokens per forward pass at most; a text longer than that is a batch alone.
    #[must_use]
    pub fn with_batch_tokens(mut self, batch_tokens: usize) -> Self {
        self.batch_tokens = batch_tokens.max(1);
        self
    }

    pub fn identity(&self) -> ModelIdentity {
        self.identity.clone()
    }

    pub fn dims(&self) -> usize {
        self.identity.dims
    }

    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// Tokens per text at most, special tokens included; longer texts are truncated.
    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// The token ids a text is encoded from (truncated, with special tokens).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = self.tokenize(&[text])?;
        Ok(ids.pop().unwrap_or_default())
    }

    /// One vector per text, in order, each [`Self::dims`] long.
    ///
    /// Texts are sorted by token count and batched: at most `with_batch_size` texts and
    /// `with_batch_tokens` tokens a forward pass (a longer text alone), packed without padding.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.tokenize(texts)?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids.get(i).map_or(0, Vec::len)));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); ids.len()];
        let mut batch: Vec<usize> = Vec::with_capacity(self.batch_size);
        let mut tokens = 0;
        for &i in &order {
            let len = ids.get(i).map_or(0, Vec::len);
            if !batch.is_empty()
                && (batch.len() >= self.batch_size || tokens + len > self.batch_tokens)
            {
                self.encode_batch(&ids, &batch, &mut out)?;
                batch.clear();
                tokens = 0;
            }
            batch.push(i);
            tokens += len;
        }
        if !batch.is_empty() {
            self.encode_batch(&ids, &batch, &mut out)?;
        }
        Ok(out)
    }

    /// The vectors of the texts `batch` indexes in `ids`, into the same places of `out`.
    fn encode_batch(
        &self,
        ids: &[Vec<u32>],
        batch: &[usize],
        out: &mut [Vec<f32>],
    ) -> Result<(), EmbedError> {
        let batch_ids: Vec<&[u32]> = batch
            .iter()
            .filter_map(|&i| ids.get(i).map(Vec::as_slice))
            .collect();
        let vectors = self.forward(&batch_ids)?;
        for (&i, vector) in batch.iter().zip(vectors) {
            if let Some(slot) = out.get_mut(i) {
                *slot = vector;
            }
        }
        Ok(())
    }

    /// A query's vector, with the model's query prompt if it has one (as
    /// sentence-transformers' `encode_query`).
    pub fn encode_query(&self, q: &str) -> Result<Vec<f32>, EmbedError> {
        let text = match &self.query_prompt {
            Some(prompt) => format!("{prompt}{q}"),
            None => q.to_owned(),
        };
        let mut vectors = self.encode(&[text.as_str()])?;
        Ok(vectors.pop().unwrap_or_default())
    }

    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let inputs: Vec<String> = texts
            .iter()
            .map(|t| {
                if self.lowercase {
                    t.to_lowercase()
                } else {
                    (*t).to_owned()
                }
            })
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch_fast(inputs, true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// One forward pass over texts already tokenized (packed, not padded: see [`bert`]).
    fn forward(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let dims = self.identity.dims;
        // A text without tokens (only with a tokenizer that adds no special tokens) has no
        // hidden state to pool: its vector is zeros, as mean pooling gives over no tokens.
        let texts: Vec<&[u32]> = batch
            .iter()
            .copied()
            .filter(|ids| !ids.is_empty())
            .collect();
        let mut hidden = Vec::new().into_iter();
        if !texts.is_empty() {
            hidden = self.model.forward(&texts)?.to_vec2::<f32>()?.into_iter();
        }
        let mut out = Vec::with_capacity(batch.len());
        for ids in batch {
            let rows: Vec<Vec<f32>> = hidden.by_ref().take(ids.len()).collect();
            let mut pooled = match self.pooling {
                Pooling::Cls => rows.into_iter().next().unwrap_or_else(|| vec![0.0; dims]),
                Pooling::Mean => {
                    // sentence-transformers: sum of the text's tokens / max(count, 1e-9).
                    let mut sum = vec![0f32; dims];
                    for row in &rows {
                        for (s, x) in sum.iter_mut().zip(row) {
                            *s += x;
                        }
                    }
                    let count = (rows.len() as f32).max(1e-9);
                    sum.iter_mut().for_each(|s| *s /= count);
                    sum
                }
            };
            if self.normalize {
                // torch.nn.functional.normalize: x / max(‖x‖₂, 1e-12).
                let norm = pooled.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                pooled.iter_mut().for_each(|x| *x /= norm);
            }
            out.push(pooled);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SentenceEncoder>();
    }

    #[test]
    fn model_id_and_revision_from_a_hugging_face_cache_dir() {
        let commit = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";
        let dir = std::path::PathBuf::from(format!(
            "/cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/{commit}"
        ));
        assert_eq!(
            files::id_from_path(&dir),
            "sentence-transformers/all-MiniLM-L6-v2"
        );
        assert_eq!(files::revision_from_path(&dir).as_deref(), Some(commit));
        let plain = Path::new("/models/bge-small-en-v1.5/");
        assert_eq!(files::id_from_path(plain), "bge-small-en-v1.5");
        assert_eq!(files::revision_from_path(plain), None);
    }
}
