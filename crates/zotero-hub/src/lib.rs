//! The Hugging Face client of zotero-mcp. It gets the sentence encoder's model directory:
//! a local directory used as it is, or a Hugging Face model downloaded into (or found in) the cache `huggingface_hub` uses, so that
//! a copy Python tools downloaded is reused and ours is reusable by them.
//!
//! The cache layout (`$HF_HUB_CACHE`, default `$HF_HOME/hub`, default
//! `$XDG_CACHE_HOME/huggingface/hub` or `~/.cache/huggingface/hub`):
//!
//! ```text
//! models--{org}--{name}/
//!   blobs/{etag}                      the content (LFS: etag = sha256; else git blob sha1)
//!   snapshots/{commit}/{path}         relative symlinks: ../../blobs/{etag}
//!   refs/{branch or tag}              the commit it pointed to when last asked
//!   .no_exist/{commit}/{path}         an optional file the commit does not have
//! .locks/models--{org}--{name}/{etag}.lock    flock while a blob is downloaded
//! ```
//!
//! A pinned commit whose snapshot is complete costs no request; a branch costs one `HEAD` (to
//! learn its commit); offline (`HF_HUB_OFFLINE=1`) costs none and uses `refs/`. A download
//! asks `HEAD {endpoint}/{id}/resolve/{revision}/{path}` for the commit, ETag and size,
//! then GETs the file (LFS files from the CDN the Hub redirects to, without the token),
//! streamed to `blobs/{etag}.incomplete`, resumed with `Range` after an interruption,
//! verified (sha256 for LFS files, the git blob sha1 for the others), fsynced and renamed.
//!
//! The modules, from the top: [`cache`] (the [`ModelCache`]: snapshot, offline, the order
//! of files) uses `download` (one file, streamed, resumed and verified) and `http` (the
//! Hub's requests); [`config`] reads the settings, [`model_dir`] makes a [`ModelDir`] of a
//! complete directory, [`weights`] checks a safetensors header before anything reads the
//! file whole.

pub mod cache;
pub mod config;
mod download;
pub mod error;
mod http;
mod layout;
pub mod model_dir;
pub mod model_files;
pub mod weights;

pub use cache::ModelCache;
pub use config::{HubConfig, ModelSpec, BGE_SMALL_MODEL, DEFAULT_ENDPOINT, DEFAULT_MODEL};
pub use error::{ModelCacheError, Result};
pub use model_dir::{local_model_dir, ModelDir, Progress};
pub use model_files::{OPTIONAL_FILES, REQUIRED_FILES, WEIGHTS_FILE};
