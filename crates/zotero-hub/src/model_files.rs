//! The files of a sentence-transformers model directory: what the encoder needs and what it
//! reads when present (a leaf: the settings, the errors and the cache all name them).

/// The weights, among [`REQUIRED_FILES`].
pub const WEIGHTS_FILE: &str = "model.safetensors";

/// The files a sentence-transformers model directory must have for the encoder.
pub const REQUIRED_FILES: &[&str] = &[
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "modules.json",
    "1_Pooling/config.json",
];

/// Files the encoder reads when the model has them.
pub const OPTIONAL_FILES: &[&str] = &[
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];
