//! The search index: where it lives, its sentence model (`ZOTERO_INDEX_DIR`,
//! `ZOTERO_EMBEDDING_MODEL`, `HF_*`) and whether an update downloads attachments' files from
//! zotero.org to read their text (`ZOTERO_INDEX_DOWNLOAD_FILES`). The model source is
//! defined here, below the index sync, so that the configuration does not import the service.

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
    /// Which attachments' files an update downloads from Zotero's file storage to read their
    /// text (`ZOTERO_INDEX_DOWNLOAD_FILES`); files on this machine are read regardless.
    pub download_files: DownloadFiles,
}

/// Which attachments' files an update of the index downloads from zotero.org (files on this
/// machine, in the data directory or through the desktop app, are read in any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DownloadFiles {
    /// None (the default): a web-only library is searched by Zotero's own full texts.
    #[default]
    Never,
    /// Those of attachments Zotero has no full text for: what makes them searchable at all.
    Missing,
    /// Every attachment's with a document file (PDF, EPUB, HTML, text): every full-text hit
    /// names its page.
    All,
}

impl DownloadFiles {
    fn parse(get: Vars) -> Result<Self, ConfigError> {
        const VAR: &str = "ZOTERO_INDEX_DOWNLOAD_FILES";
        let Some(v) = get(VAR) else {
            return Ok(Self::Never);
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "0" | "false" | "no" | "off" | "never" | "none" => Ok(Self::Never),
            "missing" => Ok(Self::Missing),
            "1" | "true" | "yes" | "on" | "all" => Ok(Self::All),
            _ => Err(ConfigError {
                var: VAR,
                value: v,
                expected: "all (or 1) to download every attachment's file, missing for those \
                           Zotero has no full text of, or 0 (the default) for none"
                    .into(),
            }),
        }
    }
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
            download_files: DownloadFiles::parse(get)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: Option<&str>) -> Result<DownloadFiles, ConfigError> {
        let get = |k: &str| {
            (k == "ZOTERO_INDEX_DOWNLOAD_FILES")
                .then(|| value.map(str::to_string))
                .flatten()
        };
        DownloadFiles::parse(&get)
    }

    #[test]
    fn downloads_are_off_unless_asked_for() {
        assert_eq!(parse(None).ok(), Some(DownloadFiles::Never));
        assert_eq!(parse(Some("0")).ok(), Some(DownloadFiles::Never));
        assert_eq!(parse(Some("Missing")).ok(), Some(DownloadFiles::Missing));
        assert_eq!(parse(Some("1")).ok(), Some(DownloadFiles::All));
        assert_eq!(parse(Some("all")).ok(), Some(DownloadFiles::All));
        let e = parse(Some("sometimes")).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("ZOTERO_INDEX_DOWNLOAD_FILES")),
            "{e:?}"
        );
    }
}
