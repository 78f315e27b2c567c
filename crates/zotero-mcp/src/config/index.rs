//! The search index: where it lives and its sentence model (`ZOTERO_INDEX_DIR`,
//! `ZOTERO_EMBEDDING_MODEL`, `HF_*`). The model source is defined here, below the index sync,
//! so that the configuration does not import the service.

use std::path::PathBuf;

use zotero_hub::{HubConfig, ModelSpec};

use super::parse::Vars;
use super::ConfigError;

/// No place for the search indexes: none of the variables that name one is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", zotero_index::IndexError::NoDirectory)]
pub struct NoIndexDir;

/// Where the index lives and which model makes its vectors.
#[derive(Debug, Clone)]
pub struct IndexConfig {
    /// Where the search indexes live (`ZOTERO_INDEX_DIR`, else under `XDG_DATA_HOME`, else
    /// under `HOME`); `Err` says why there is no place.
    pub dir: Result<PathBuf, NoIndexDir>,
    /// `ZOTERO_EMBEDDING_MODEL` as given: the sentence model for search by meaning (a Hugging
    /// Face id, `id@revision`, or a directory; `none` for words only).
    pub embedding_model: Option<String>,
    /// The model that makes the index's vectors (`ZOTERO_EMBEDDING_MODEL`, else the default
    /// all-MiniLM-L6-v2 at a pinned commit) and where it is fetched from and cached (`HF_*`);
    /// `None` with `ZOTERO_EMBEDDING_MODEL=none`.
    pub embedding: Option<ModelSource>,
}

impl IndexConfig {
    /// `allow_http_loopback`: whether the model hub may be plain http on this machine.
    pub(super) fn parse(get: Vars, allow_http_loopback: bool) -> Result<Self, ConfigError> {
        // `default_dir` fails only for want of a variable.
        let dir = zotero_index::default_dir(get).map_err(|_| NoIndexDir);
        let embedding_model = get("ZOTERO_EMBEDDING_MODEL");
        let embedding = match embedding_model.as_deref().map(str::trim) {
            Some(off) if ["none", "off"].contains(&off.to_ascii_lowercase().as_str()) => None,
            _ => Some(ModelSource {
                spec: ModelSpec::from_env(get).map_err(|e| ConfigError {
                    var: "ZOTERO_EMBEDDING_MODEL",
                    value: embedding_model.clone().unwrap_or_default(),
                    expected: format!(
                        "a Hugging Face model id (org/name, optionally @revision), a model \
                             directory, or none ({e})"
                    ),
                })?,
                hub: {
                    let mut hub = HubConfig::from_env(get);
                    // Plain http to this machine only where fetches may reach it (tests,
                    // with the emulator's Hugging Face host).
                    hub.allow_http_loopback = allow_http_loopback;
                    hub
                },
            }),
        };
        Ok(IndexConfig {
            dir,
            embedding_model,
            embedding,
        })
    }
}

/// The configured sentence model and where it comes from.
#[derive(Clone)]
pub struct ModelSource {
    pub spec: ModelSpec,
    pub hub: HubConfig,
}

impl std::fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // HubConfig's own Debug hides the token.
        f.debug_struct("ModelSource")
            .field("spec", &self.spec)
            .field("hub", &self.hub)
            .finish()
    }
}
