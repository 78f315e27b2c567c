//! The extractors, one per document kind.

use crate::document::{Document, DocumentKind, Limits, TextError};

/// Reads a file's text, page by page, within `limits`.
pub fn extract(bytes: &[u8], kind: DocumentKind, limits: &Limits) -> Result<Document, TextError> {
    if bytes.len() > limits.max_input_bytes {
        return Err(TextError::TooLarge {
            size: bytes.len(),
            limit: limits.max_input_bytes,
        });
    }
    let _ = kind;
    Err(TextError::Unsupported)
}
