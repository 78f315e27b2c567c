//! The cache's files: the lock a blob is downloaded under, refs written atomically, and
//! the snapshot's relative links to blobs.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::{io_err, ModelCacheError, Result};

/// `flock`s `path` (created if needed) without blocking the runtime; waits while another
/// process (ours or `huggingface_hub`, which locks the same file) holds it.
pub(crate) async fn lock(path: &Path, cancel: &CancellationToken, model: &str) -> Result<File> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(path)
        .map_err(io_err("cannot open the lock", path))?;
    let mut told = false;
    loop {
        match zotero_index::flock::try_lock(&f) {
            Ok(true) => return Ok(f),
            Ok(false) => {}
            Err(err) => {
                return Err(ModelCacheError::Io {
                    what: "cannot take the lock",
                    path: path.to_path_buf(),
                    source: err,
                })
            }
        }
        if !told {
            tracing::info!(lock = %path.display(), "another process is downloading this file; waiting");
            told = true;
        }
        zotero_net::sleep(Duration::from_millis(100), cancel)
            .await
            .map_err(|_| ModelCacheError::Cancelled {
                model: model.to_string(),
            })?;
    }
}

/// Writes `content` to `path` atomically (a temp file renamed over it).
pub(crate) fn write_atomic(path: &Path, content: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let tmp = path.with_file_name(format!(
        "{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("ref"),
        std::process::id()
    ));
    fs::write(&tmp, content).map_err(io_err("cannot write", &tmp))?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644))
        .map_err(io_err("cannot set permissions of", &tmp))?;
    fs::rename(&tmp, path).map_err(io_err("cannot write", path))
}

/// `snapshots/{commit}/{file}` → `../../blobs/{etag}` (one more `../` per directory level of
/// `file`), replaced atomically.
pub(crate) fn link_snapshot(repo_dir: &Path, commit: &str, file: &str, etag: &str) -> Result<()> {
    let pointer = repo_dir.join("snapshots").join(commit).join(file);
    let depth = file.matches('/').count();
    let target = format!("{}blobs/{etag}", "../".repeat(2 + depth));
    if fs::read_link(&pointer).is_ok_and(|t| t == Path::new(&target)) {
        return Ok(());
    }
    if let Some(parent) = pointer.parent() {
        fs::create_dir_all(parent).map_err(io_err("cannot create", parent))?;
    }
    let tmp = pointer.with_file_name(format!(
        ".{}.{}.tmp",
        pointer
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("link"),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&target, &tmp).map_err(io_err("cannot create the link", &tmp))?;
    fs::rename(&tmp, &pointer).map_err(io_err("cannot create the link", &pointer))
}

pub(crate) fn sync_dir(dir: &Path) {
    // Makes the rename durable; a failure only loses durability, not correctness.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
