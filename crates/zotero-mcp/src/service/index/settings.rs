//! Where indexes live and which encoder makes their vectors: the configured model is
//! loaded once (on the first update or search that needs it) and kept for the process, as
//! are the in-memory copies of the indexes' vectors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use zotero_embed::EmbedError;
use zotero_hub::{ModelCache, ModelCacheError, Progress as ModelProgress};
use zotero_index::{Encoder, VectorCache};

use super::BUILD_COMMAND;
use crate::error::ToolError;

/// The encoder of a search or an update, when there is one: without, the index is
/// keyword-only and every answer says so.
pub type SharedEncoder = Option<Arc<dyn Encoder>>;

pub use crate::config::ModelSource;
use crate::config::{DownloadFiles, NoIndexDir};
use crate::service::fulltext::reader::FileReader;

/// How an update reads attachments' files for their text: the reader the tools use (its
/// cache shared), and which files it may download from zotero.org.
#[derive(Debug, Clone)]
pub struct IndexFiles {
    pub reader: FileReader,
    pub download: DownloadFiles,
}

/// Why a search or an update has no sentence model, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ModelUnavailable {
    /// The model cache cannot be used (its directory, the hub's settings).
    #[error("{0}")]
    Cache(ModelCacheError),
    /// An update could not download the model.
    #[error("the model {spec} could not be fetched: {cause}")]
    Fetch {
        spec: String,
        cause: ModelCacheError,
    },
    /// A search found the model neither loaded nor in the cache (a search never downloads).
    #[error("the model {spec} is not loaded yet ({cause}); `{cmd}` downloads it", cmd = BUILD_COMMAND)]
    NotLoaded {
        spec: String,
        cause: ModelCacheError,
    },
    /// The thread loading the model ended abnormally.
    #[error("loading the model stopped: {0}")]
    Stopped(tokio::task::JoinError),
    /// The model's files are there but do not load.
    #[error("the model {spec} cannot be loaded: {cause}")]
    Load { spec: String, cause: EmbedError },
}

/// Where indexes live and what makes vectors.
#[derive(Clone)]
pub struct SearchSettings {
    /// `Err` says why no directory could be derived (no ZOTERO_INDEX_DIR, XDG_DATA_HOME
    /// or HOME).
    pub dir: Result<PathBuf, NoIndexDir>,
    /// An encoder given when the server was built (tests: `SynonymEncoder`); it wins over
    /// the configured model.
    pub encoder: SharedEncoder,
    /// `ZOTERO_EMBEDDING_MODEL` as given.
    pub embedding_model: Option<String>,
    /// The configured model (`None`: words only).
    pub model: Option<ModelSource>,
    /// How an update reads attachments' files.
    pub files: IndexFiles,
    /// The configured model once loaded: loaded on the first update or search that needs
    /// it, then kept for the process.
    loaded: Arc<tokio::sync::Mutex<SharedEncoder>>,
    /// The int8 copies of the indexes' vectors, kept for the process: each search opens
    /// the index anew (a new connection), so the copy lives here rather than in an
    /// `Index`. Loaded by the first search by meaning of each index, reloaded when an
    /// update changed it (see `zotero_index::vcache`).
    vectors: VectorCache,
}

impl std::fmt::Debug for SearchSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchSettings")
            .field("dir", &self.dir)
            .field("encoder", &self.encoder.as_ref().map(|e| e.identity().id))
            .field("embedding_model", &self.embedding_model)
            .field("model", &self.model)
            .field("files", &self.files)
            .finish()
    }
}

impl SearchSettings {
    pub fn new(
        dir: Result<PathBuf, NoIndexDir>,
        encoder: SharedEncoder,
        embedding_model: Option<String>,
        model: Option<ModelSource>,
        files: IndexFiles,
    ) -> Self {
        SearchSettings {
            dir,
            encoder,
            embedding_model,
            model,
            files,
            loaded: Arc::default(),
            vectors: VectorCache::default(),
        }
    }

    /// The process's copies of the indexes' vectors, for searches by meaning.
    pub fn vector_cache(&self) -> &VectorCache {
        &self.vectors
    }

    /// The encoder of a search: the given one, or the configured model when it is already
    /// loaded or in the model cache (a search never downloads). `Err` says why there is
    /// none, for the answer's note.
    pub async fn encoder_for_search(&self) -> Result<SharedEncoder, ModelUnavailable> {
        self.encoder(false, None, &CancellationToken::new()).await
    }

    /// The encoder of an update: as for a search, but the model is downloaded when it is
    /// not in the cache (`progress`: file, bytes done, bytes in all).
    pub async fn encoder_for_update(
        &self,
        progress: Option<ModelProgress<'_>>,
        cancel: &CancellationToken,
    ) -> Result<SharedEncoder, ModelUnavailable> {
        self.encoder(true, progress, cancel).await
    }

    /// The configured model's encoder if it is loaded already (no loading, no request).
    pub fn encoder_if_loaded(&self) -> SharedEncoder {
        if self.encoder.is_some() {
            return self.encoder.clone();
        }
        self.loaded.try_lock().ok().and_then(|l| l.clone())
    }

    async fn encoder(
        &self,
        download: bool,
        progress: Option<ModelProgress<'_>>,
        cancel: &CancellationToken,
    ) -> Result<SharedEncoder, ModelUnavailable> {
        if self.encoder.is_some() {
            return Ok(self.encoder.clone());
        }
        let Some(source) = &self.model else {
            return Ok(None);
        };
        // One load at a time; the others wait for it and share the result.
        let mut loaded = self.loaded.lock().await;
        if loaded.is_some() {
            return Ok(loaded.clone());
        }
        let mut hub = source.hub.clone();
        if !download {
            hub.offline = true;
        }
        let cache = ModelCache::new(hub).map_err(ModelUnavailable::Cache)?;
        let quiet = |_: &str, _: u64, _: u64| {};
        let spec = source.spec.to_string();
        let dir = cache
            .get(&source.spec, progress.unwrap_or(&quiet), cancel)
            .await
            .map_err(|cause| {
                let spec = spec.clone();
                if download {
                    ModelUnavailable::Fetch { spec, cause }
                } else {
                    ModelUnavailable::NotLoaded { spec, cause }
                }
            })?;
        let encoder = tokio::task::spawn_blocking(move || zotero_embed::load_model_dir(&dir))
            .await
            .map_err(ModelUnavailable::Stopped)?
            .map_err(|cause| ModelUnavailable::Load { spec, cause })?;
        tracing::info!(model = %source.spec, "sentence model loaded");
        let encoder: Arc<dyn Encoder> = Arc::new(encoder);
        *loaded = Some(encoder.clone());
        Ok(Some(encoder))
    }

    pub fn dir(&self) -> Result<&Path, ToolError> {
        self.dir.as_deref().map_err(|why| {
            ToolError::validation(why.to_string()).with_detail("variable", "ZOTERO_INDEX_DIR")
        })
    }
}
