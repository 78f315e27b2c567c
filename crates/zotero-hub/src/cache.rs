//! The [`ModelCache`]: finds a model's snapshot in the cache, or fetches its files from the
//! Hub (requests in `http`, downloads in `download`), or uses the snapshot offline.

use std::fmt;
use std::fs::{self, File};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio_util::sync::CancellationToken;
use zotero_net::{guarded_https_connector, AddressPolicy, GuardedConnector};

use crate::config::{is_commit, HubConfig, ModelSpec};
use crate::error::{ModelCacheError, Result};
use crate::layout::write_atomic;
use crate::model_dir::{check_weights, local_model_dir, sha256_file, ModelDir, Progress};
use crate::model_files::{OPTIONAL_FILES, REQUIRED_FILES};

type HubClient = Client<HttpsConnector<GuardedConnector>, Empty<Bytes>>;

/// Fetches models into the Hugging Face cache.
pub struct ModelCache {
    pub(crate) config: HubConfig,
    pub(crate) client: HubClient,
}

impl fmt::Debug for ModelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelCache")
            .field("config", &self.config)
            .finish()
    }
}

/// One model being fetched.
pub(crate) struct Job<'a> {
    pub(crate) id: &'a str,
    pub(crate) repo_dir: PathBuf,
    pub(crate) progress: Progress<'a>,
    pub(crate) cancel: &'a CancellationToken,
}

impl ModelCache {
    pub fn new(config: HubConfig) -> Result<ModelCache> {
        let config = config.with_token_file();
        let policy = AddressPolicy::from_config(config.allow_http_loopback);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(guarded_https_connector(policy, config.timeout).map_err(ModelCacheError::Tls)?);
        Ok(ModelCache { config, client })
    }

    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    /// The directory of `org/name` in the cache: `models--org--name`.
    pub fn repo_dir(&self, id: &str) -> PathBuf {
        self.config
            .cache_dir
            .join(format!("models--{}", id.replace('/', "--")))
    }

    /// The model's directory: a local one checked, or a Hub one from the cache, downloading
    /// what is missing (unless offline). `progress` hears of every downloaded piece;
    /// `cancel` stops between pieces, leaving the partial file for the next run to resume.
    pub async fn get(
        &self,
        spec: &ModelSpec,
        progress: Progress<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelDir> {
        let (id, revision) = match spec {
            ModelSpec::Local(dir) => {
                // Hashing a 90 MB file: not on the runtime's threads.
                let path = dir.clone();
                return tokio::task::spawn_blocking(move || local_model_dir(&path))
                    .await
                    .map_err(|e| ModelCacheError::Io {
                        what: "hashing failed in",
                        path: dir.clone(),
                        source: io::Error::other(e.to_string()),
                    })?;
            }
            ModelSpec::Hub { id, revision } => (id.as_str(), revision.as_str()),
        };
        let job = Job {
            id,
            repo_dir: self.repo_dir(id),
            progress,
            cancel,
        };
        if is_commit(revision) {
            if let Some(dir) = self.snapshot(&job, revision, self.config.offline)? {
                return Ok(dir);
            }
        }
        if self.config.offline {
            return self.offline(&job, revision);
        }

        let mut commit: Option<String> = is_commit(revision).then(|| revision.to_string());
        for (i, file) in REQUIRED_FILES.iter().chain(OPTIONAL_FILES).enumerate() {
            if cancel.is_cancelled() {
                return Err(ModelCacheError::Cancelled {
                    model: id.to_string(),
                });
            }
            let optional = i >= REQUIRED_FILES.len();
            let rev = commit.clone().unwrap_or_else(|| revision.to_string());
            if commit.is_some() {
                let snap = job.repo_dir.join("snapshots").join(&rev);
                if snap.join(file).exists()
                    || job
                        .repo_dir
                        .join(".no_exist")
                        .join(&rev)
                        .join(file)
                        .exists()
                {
                    continue;
                }
            }
            let meta = match self.head(&job, &rev, file).await {
                Ok(m) => m,
                Err(ModelCacheError::FileNotFound { .. }) if optional => {
                    let marker = job.repo_dir.join(".no_exist").join(&rev).join(file);
                    if let Some(parent) = marker.parent() {
                        let _ = fs::create_dir_all(parent);
                    }
                    // Python's cache marks it so; a failure only costs a HEAD next time.
                    let _ = File::create(&marker);
                    continue;
                }
                Err(e) if commit.is_none() && Self::may_fall_back(&e) => {
                    // The Hub is unreachable: the last snapshot this revision pointed to
                    // will do, as `huggingface_hub` does.
                    if let Some(c) = self.read_ref(&job, revision) {
                        if let Some(dir) = self.snapshot(&job, &c, true)? {
                            tracing::warn!(model = %id, revision, commit = %c, error = %e, "the Hub cannot be reached; using the cached snapshot");
                            return Ok(dir);
                        }
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
            if commit.is_none() {
                if meta.commit != revision {
                    // Best effort, as Python: a read-only cache with the snapshot still works.
                    let ref_path = job.repo_dir.join("refs").join(revision);
                    if let Err(e) = write_atomic(&ref_path, &meta.commit) {
                        tracing::warn!(error = %e, "cannot record the commit of the revision");
                    }
                }
                commit = Some(meta.commit.clone());
                if let Some(dir) = self.snapshot(&job, &meta.commit, false)? {
                    return Ok(dir);
                }
            }
            self.fetch_file(&job, file, &meta).await?;
        }
        let commit = commit.unwrap_or_else(|| revision.to_string());
        self.snapshot(&job, &commit, true)?
            .ok_or_else(|| ModelCacheError::MissingFile {
                dir: job.repo_dir.join("snapshots").join(&commit),
                file: REQUIRED_FILES
                    .iter()
                    .find(|f| {
                        !job.repo_dir
                            .join("snapshots")
                            .join(&commit)
                            .join(f)
                            .is_file()
                    })
                    .map_or_else(String::new, |f| (*f).to_string()),
            })
    }

    fn may_fall_back(e: &ModelCacheError) -> bool {
        match e {
            ModelCacheError::Network { .. } | ModelCacheError::NotAHub { .. } => true,
            ModelCacheError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    fn read_ref(&self, job: &Job<'_>, revision: &str) -> Option<String> {
        if is_commit(revision) {
            return Some(revision.to_string());
        }
        let c = fs::read_to_string(job.repo_dir.join("refs").join(revision)).ok()?;
        let c = c.trim();
        is_commit(c).then(|| c.to_string())
    }

    pub(crate) fn offline(&self, job: &Job<'_>, revision: &str) -> Result<ModelDir> {
        let err = |missing: String| ModelCacheError::Offline {
            model: format!("{}@{revision}", job.id),
            cache: self.config.cache_dir.clone(),
            missing,
        };
        let Some(commit) = self.read_ref(job, revision) else {
            return Err(err(format!(
                "no refs/{revision} in {}",
                job.repo_dir.display()
            )));
        };
        match self.snapshot(job, &commit, true)? {
            Some(dir) => Ok(dir),
            None => Err(err(format!("snapshot {commit} incomplete"))),
        }
    }

    /// The snapshot of `commit` when it is complete: every required file, and each optional
    /// one present or known absent (`.no_exist`), unless `lenient` (offline) accepts not
    /// knowing.
    pub(crate) fn snapshot(
        &self,
        job: &Job<'_>,
        commit: &str,
        lenient: bool,
    ) -> Result<Option<ModelDir>> {
        let snap = job.repo_dir.join("snapshots").join(commit);
        if REQUIRED_FILES.iter().any(|f| !snap.join(f).is_file()) {
            return Ok(None);
        }
        let unknown = OPTIONAL_FILES.iter().any(|f| {
            !snap.join(f).is_file() && !job.repo_dir.join(".no_exist").join(commit).join(f).exists()
        });
        if unknown && !lenient {
            return Ok(None);
        }
        check_weights(&snap)?;
        let mut files = Vec::new();
        for f in REQUIRED_FILES
            .iter()
            .chain(OPTIONAL_FILES)
            .filter(|f| snap.join(f).is_file())
        {
            let path = snap.join(f);
            // An LFS blob is named by its sha256 (checked when we downloaded it; Python
            // checks its size): trusted rather than reading 90 MB at every start.
            let named = fs::read_link(&path).ok().and_then(|t| {
                let name = t.file_name()?.to_str()?.to_string();
                (name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
            });
            let sha = match named {
                Some(n) => n,
                None => sha256_file(&path)?,
            };
            files.push(((*f).to_string(), sha));
        }
        Ok(Some(ModelDir {
            path: snap,
            id: job.id.to_string(),
            revision: commit.to_string(),
            files,
        }))
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use crate::config::tests::env;

    #[test]
    fn the_cache_reads_the_login_token_file() {
        // The login's token file is read by the cache that may download, not by the
        // configuration (read at every start).
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "hf_from_file\n").unwrap();
        let path = file.display().to_string();
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u"), ("HF_TOKEN_PATH", &path)]));
        assert!(!c.has_token());
        assert!(ModelCache::new(c).unwrap().config().has_token());
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("HF_TOKEN_PATH", &path),
            ("HF_TOKEN", "hf_env"),
        ]));
        assert_eq!(
            ModelCache::new(c).unwrap().config().token.as_deref(),
            Some("hf_env")
        );
    }
}
