//! What can go wrong loading or running a model; each message says what to do about it.

use std::path::PathBuf;

/// Errors of [`crate::SentenceEncoder`]. None of them is a panic: a bad model directory is a
/// user's mistake to report, not a crash.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "the model file `{file}` is missing from {}: a sentence-transformers model directory \
         needs config.json, tokenizer.json and model.safetensors (download all of the model's \
         files into it; a pytorch_model.bin alone is not read)",
        dir.display()
    )]
    MissingFile { file: String, dir: PathBuf },

    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is not valid for a model: {message}", path.display())]
    BadConfig { path: PathBuf, message: String },

    #[error(
        "{} describes a `{found}` model, which this encoder cannot run: supported are \
         BERT-family models (model_type `bert`, e.g. sentence-transformers/all-MiniLM-L6-v2, \
         BAAI/bge-small-en-v1.5)",
        path.display()
    )]
    UnsupportedArchitecture { path: PathBuf, found: String },

    #[error("{} asks for {what}, which is not supported: {supported}", path.display())]
    Unsupported {
        path: PathBuf,
        what: String,
        supported: &'static str,
    },

    #[error("shape mismatch in {}: {what}", path.display())]
    Shape { path: PathBuf, what: String },

    #[error(
        "{} is not a usable safetensors file for this config.json ({message}); \
         download model.safetensors again, or check that it belongs to this config.json",
        path.display()
    )]
    BadSafetensors { path: PathBuf, message: String },

    #[error("{} cannot be read as a tokenizer: {message}", path.display())]
    Tokenizer { path: PathBuf, message: String },

    #[error("tokenizing failed: {0}")]
    Tokenize(String),

    #[error("the model failed while encoding: {0}")]
    Inference(String),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        Self::Inference(candle_message(e))
    }
}

/// candle's message without the backtrace it attaches when RUST_BACKTRACE is set: a user
/// reads the error, not candle's stack.
pub(crate) fn candle_message(mut e: candle_core::Error) -> String {
    while let candle_core::Error::WithBacktrace { inner, .. } = e {
        e = *inner;
    }
    e.to_string()
}
