//! An attachment's file read as a document, for the tools and the search index alike: from
//! the cache of extracted documents ([`super::cache`]), else the file read from wherever the
//! library keeps it (Zotero's file storage only when the caller allows it) and extracted on
//! a blocking thread, then cached, so that an extraction one made serves the other. A
//! cancelled caller stops waiting at once; an extraction it leaves behind is bounded in time
//! (`zotero_text::Limits`) and its result dropped.

use std::path::PathBuf;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::file::{FileLimits, FileSource};
use zotero_api::fulltext::DocumentKind;
use zotero_api::model::WireObject;
use zotero_api::{Library, ZoteroError};
use zotero_text::{Document, TextError};

use super::cache::{CacheKey, DocCache};
use crate::config::ExtractFn;

/// How attachments' files are read for their text.
#[derive(Clone)]
pub struct FileReader {
    pub extract: ExtractFn,
    /// The largest file read, in bytes (and the extractor's input bound).
    pub max_file_bytes: u64,
    /// The only directories a linked file is read from (`ZOTERO_UPLOAD_ROOTS`).
    pub linked_roots: Vec<PathBuf>,
    /// Extracted documents on disk, when there is an index directory.
    pub cache: Option<DocCache>,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("max_file_bytes", &self.max_file_bytes)
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

/// Why a file gave no document.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be had (not on this machine, not allowed, too large, a request
    /// failed, cancelled).
    #[error(transparent)]
    File(#[from] ZoteroError),
    /// The file was read, and the extractor refused it.
    #[error("attachment {key}: {error}")]
    Text { key: String, error: TextError },
    /// The extraction's thread ended abnormally (a defect).
    #[error("reading the file's text stopped: {0}")]
    Stopped(String),
}

/// The name of an extractor's refusal, as the tools and the index's report give it.
pub fn text_error_reason(e: &TextError) -> &'static str {
    match e {
        TextError::TooLarge { .. }
        | TextError::DecodedTooLarge { .. }
        | TextError::ContentTooLarge { .. }
        | TextError::TooMuchText { .. }
        | TextError::TooManyObjects { .. }
        | TextError::TooManyPages { .. } => "too_large",
        TextError::TimedOut { .. } => "timed_out",
        TextError::Encrypted => "encrypted",
        TextError::Damaged { .. } => "damaged",
        TextError::Unsupported => "unsupported",
    }
}

fn field<'a>(o: &'a WireObject, name: &str) -> Option<&'a str> {
    o.data
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The extractor's kind for an attachment: by its content type, else sniffed.
fn extract_kind(content_type: Option<&str>, bytes: &[u8]) -> Option<zotero_text::DocumentKind> {
    use zotero_text::DocumentKind as K;
    match content_type.map_or(DocumentKind::Other, DocumentKind::of) {
        DocumentKind::Pdf => Some(K::Pdf),
        DocumentKind::Epub => Some(K::Epub),
        DocumentKind::Html => Some(K::Html),
        DocumentKind::Text => Some(K::Text),
        DocumentKind::Other => bytes.starts_with(b"%PDF-").then_some(K::Pdf),
    }
}

/// Extractions running at once: each may hold a few hundred MB while it runs (its file,
/// the PDF's objects, the pages read), so an agent asking for many files at once waits.
const EXTRACTIONS: usize = 2;
static RUNNING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(EXTRACTIONS);
/// How long past the extractor's own deadline the call waits for it. The extractor checks
/// its deadline cooperatively and bounds what it cannot interrupt; should it still run
/// over, the call answers and the thread ends on its own (its slot stays taken until then).
const EXTRACT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs `extract` on a blocking thread (never on the async workers), at most
/// [`EXTRACTIONS`] at once, answering by its deadline and `grace` or at cancellation.
async fn run_extract(
    extract: ExtractFn,
    bytes: Vec<u8>,
    kind: zotero_text::DocumentKind,
    limits: zotero_text::Limits,
    grace: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<Result<Document, TextError>, ReadError> {
    let permit = tokio::select! {
        permit = RUNNING.acquire() => permit.map_err(|e| ReadError::Stopped(e.to_string()))?,
        () = cancel.cancelled() => return Err(ReadError::File(ZoteroError::Cancelled)),
    };
    let wait = limits.max_duration.saturating_add(grace);
    let seconds = limits.max_duration.as_secs();
    let job = tokio::task::spawn_blocking(move || {
        let _slot = permit;
        extract(&bytes, kind, &limits)
    });
    tokio::select! {
        joined = tokio::time::timeout(wait, job) => match joined {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(ReadError::Stopped(e.to_string())),
            Err(_) => Ok(Err(TextError::TimedOut { seconds })),
        },
        () = cancel.cancelled() => Err(ReadError::File(ZoteroError::Cancelled)),
    }
}

impl FileReader {
    /// The cache's key of attachment `att` in `lib`: its library, key, md5 and version.
    pub fn cache_key(lib: &Library<'_>, att: &WireObject) -> CacheKey {
        CacheKey {
            library: lib.name().to_string(),
            key: att.key(),
            md5: field(att, "md5").map(str::to_ascii_lowercase),
            version: att.version(),
        }
    }

    /// The document of attachment `att` (its wire JSON): from the cache, else its file read
    /// (downloaded from Zotero's file storage only with `web`) and extracted, then cached.
    pub async fn read(
        &self,
        lib: &Library<'_>,
        att: &WireObject,
        web: bool,
        cancel: &CancellationToken,
    ) -> Result<Document, ReadError> {
        Ok(self.read_from(lib, att, web, cancel).await?.0)
    }

    /// [`FileReader::read`], saying where the file was read (`None`: the cache had it).
    pub async fn read_from(
        &self,
        lib: &Library<'_>,
        att: &WireObject,
        web: bool,
        cancel: &CancellationToken,
    ) -> Result<(Document, Option<FileSource>), ReadError> {
        let key = Self::cache_key(lib, att);
        if let Some(cache) = self.cache.clone() {
            let k = key.clone();
            if let Ok(Some(doc)) = tokio::task::spawn_blocking(move || cache.get(&k)).await {
                return Ok((doc, None));
            }
        }
        let limits = FileLimits {
            max_bytes: self.max_file_bytes,
            linked_roots: self.linked_roots.clone(),
            web,
        };
        let file = lib.attachment_file(att, &limits, cancel).await?;
        let from = file.from;
        let Some(kind) = extract_kind(field(att, "contentType"), &file.bytes) else {
            return Err(ReadError::Text {
                key: key.key,
                error: TextError::Unsupported,
            });
        };
        let extract = self.extract;
        let text_limits = zotero_text::Limits {
            max_input_bytes: usize::try_from(self.max_file_bytes).unwrap_or(usize::MAX),
            ..zotero_text::Limits::default()
        };
        let doc = run_extract(
            extract,
            file.bytes,
            kind,
            text_limits,
            EXTRACT_GRACE,
            cancel,
        )
        .await?
        .map_err(|error| ReadError::Text {
            key: key.key.clone(),
            error,
        })?;
        if let Some(cache) = self.cache.clone() {
            let d = doc.clone();
            let _ = tokio::task::spawn_blocking(move || cache.put(&key, &d)).await;
        }
        Ok((doc, Some(from)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn stuck(
        _: &[u8],
        _: zotero_text::DocumentKind,
        _: &zotero_text::Limits,
    ) -> Result<Document, TextError> {
        std::thread::sleep(std::time::Duration::from_millis(800));
        Err(TextError::Unsupported)
    }

    #[tokio::test]
    async fn an_extraction_past_its_deadline_answers_timed_out_without_waiting_for_it() {
        let limits = zotero_text::Limits {
            max_duration: std::time::Duration::ZERO,
            ..zotero_text::Limits::default()
        };
        let grace = std::time::Duration::from_millis(10);
        let cancel = CancellationToken::new();
        let got = run_extract(
            stuck,
            Vec::new(),
            zotero_text::DocumentKind::Pdf,
            limits,
            grace,
            &cancel,
        )
        .await
        .unwrap();
        assert!(
            matches!(got, Err(TextError::TimedOut { seconds: 0 })),
            "{got:?}"
        );
    }

    #[tokio::test]
    async fn a_cancelled_call_does_not_wait_for_its_extraction() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let got = run_extract(
            stuck,
            Vec::new(),
            zotero_text::DocumentKind::Pdf,
            zotero_text::Limits::default(),
            EXTRACT_GRACE,
            &cancel,
        )
        .await;
        assert!(got.is_err());
    }
}
