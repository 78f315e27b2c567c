//! The encoder as the index uses it ([`zotero_index::Encoder`]), and loading the model the
//! index was told to use: a directory the model cache ([`zotero_hub`]) found
//! or downloaded, loaded with that directory's id and commit so the index records exactly
//! which model made its vectors.

use zotero_hub::ModelDir;
use zotero_index::{EncodeError, Encoder, ModelIdentity};

use crate::{EmbedError, LoadOptions, SentenceEncoder};

impl Encoder for SentenceEncoder {
    fn identity(&self) -> ModelIdentity {
        let own = SentenceEncoder::identity(self);
        ModelIdentity {
            id: own.id,
            // A model without a known revision is still pinned by its file hashes.
            revision: own.revision.unwrap_or_else(|| "unknown".to_string()),
            file_hashes: own.file_hashes,
            dims: own.dims,
        }
    }

    fn dims(&self) -> usize {
        SentenceEncoder::dims(self)
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        SentenceEncoder::encode(self, texts).map_err(|e| EncodeError(e.to_string()))
    }
    fn encode_query(&self, text: &str) -> Result<Vec<f32>, EncodeError> {
        SentenceEncoder::encode_query(self, text).map_err(|e| EncodeError(e.to_string()))
    }
}

/// Texts per forward pass of the index's encoder. Texts are packed, not padded, so only the
/// token cap ([`crate::DEFAULT_BATCH_TOKENS`]) bounds a pass's memory; letting more than
/// sentence-transformers' 32 texts in lets the many short title and metadata chunks fill a
/// pass instead of running passes of a few hundred tokens, whose fixed costs dominate.
pub const INDEX_BATCH_TEXTS: usize = 256;

/// Loads the model in `dir` (CPU and disk work: seconds for a real model; call it off the
/// async runtime's threads).
pub fn load_model_dir(dir: &ModelDir) -> Result<SentenceEncoder, EmbedError> {
    Ok(SentenceEncoder::load_with(
        &dir.path,
        LoadOptions {
            id: Some(dir.id.clone()),
            revision: Some(dir.revision.clone()),
        },
    )?
    .with_batch_size(INDEX_BATCH_TEXTS))
}
