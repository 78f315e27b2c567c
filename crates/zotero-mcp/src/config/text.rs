//! Text read from attachments' own files (issue 36): the extractor and the fixed bounds of
//! the file read and of the cache of extracted documents. No variable sets them; the
//! extractor is a plain function so that tests can hand in their own (a configuration
//! change after reading, as for the address guard's test policy).

use zotero_text::{Document, DocumentKind, Limits, TextError};

/// Reads a file's pages: `zotero_text::extract` unless a test replaces it.
pub type ExtractFn = fn(&[u8], DocumentKind, &Limits) -> Result<Document, TextError>;

/// The largest attachment file read for its text: 100 MiB.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// The extracted documents kept on disk (in the index directory), least recently used out.
pub const CACHE_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// How files' text is read.
#[derive(Debug, Clone)]
pub struct TextConfig {
    pub extract: ExtractFn,
    pub max_file_bytes: u64,
    pub cache_max_bytes: u64,
}

impl Default for TextConfig {
    fn default() -> Self {
        Self {
            extract: zotero_text::extract,
            max_file_bytes: MAX_FILE_BYTES,
            cache_max_bytes: CACHE_MAX_BYTES,
        }
    }
}
