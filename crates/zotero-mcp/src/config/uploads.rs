//! What may be attached and from where: the size bound, the directories `file_path` may read,
//! the arXiv host and the spool directory. Here, below the tools, so that the configuration
//! does not import the tools' parameters.

use std::path::{Path, PathBuf};

use super::parse::{parse_base_or, parse_num, Vars};
use super::ConfigError;

/// The default of `ZOTERO_UPLOAD_MAX_BYTES`.
pub const DEFAULT_UPLOAD_MAX_BYTES: u64 = 52_428_800;

pub const DEFAULT_ARXIV_BASE: &str = "https://arxiv.org";

/// Bounds and places of uploads.
#[derive(Debug, Clone)]
pub struct UploadsConfig {
    pub max_bytes: u64,
    /// The only directories `file_path` may read from (`ZOTERO_UPLOAD_ROOTS`), each resolved
    /// here, once; empty: the default policy (no hidden names, no system trees).
    pub roots: Vec<PathBuf>,
    /// Where arXiv PDFs are fetched from: `{arxiv_base}/pdf/<id>` (`ZOTERO_ARXIV_BASE`).
    pub arxiv_base: String,
    /// Where downloads are spooled before they are hashed and uploaded (`TMPDIR`, read once
    /// here; a scratch image may have none, and then downloads are held in memory).
    pub temp_dir: PathBuf,
}

impl UploadsConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let arxiv_base = parse_base_or(get, "ZOTERO_ARXIV_BASE", DEFAULT_ARXIV_BASE)?;
        let temp_dir = get("TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let max_bytes = parse_num::<u64>(get, "ZOTERO_UPLOAD_MAX_BYTES", DEFAULT_UPLOAD_MAX_BYTES)?;
        let roots = match get("ZOTERO_UPLOAD_ROOTS") {
            None => Vec::new(),
            Some(v) => parse_upload_roots(&v)?,
        };
        Ok(UploadsConfig {
            max_bytes,
            roots,
            arxiv_base,
            temp_dir,
        })
    }
}

/// `ZOTERO_UPLOAD_ROOTS`: absolute directories separated by `:` as in `PATH` (empty entries
/// skipped), each resolved now (symlinks followed) so that file paths, resolved the same way,
/// can be compared with them; duplicates dropped.
fn parse_upload_roots(v: &str) -> Result<Vec<PathBuf>, ConfigError> {
    const FORM: &str =
        "give absolute directories separated by ':', e.g. ZOTERO_UPLOAD_ROOTS=/path/to/papers";
    let bad = |why: String| ConfigError {
        var: "ZOTERO_UPLOAD_ROOTS",
        value: v.to_string(),
        expected: format!("{why}; {FORM}"),
    };
    let mut roots = Vec::new();
    for entry in v.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        if entry.starts_with('~') {
            return Err(bad(format!("{entry}: '~' is not expanded")));
        }
        let path = Path::new(entry);
        if !path.is_absolute() {
            return Err(bad(format!("{entry} is not an absolute path")));
        }
        let resolved = std::fs::canonicalize(path).map_err(|e| {
            bad(match e.kind() {
                std::io::ErrorKind::NotFound => format!("{entry} does not exist"),
                _ => format!("{entry} cannot be resolved ({e})"),
            })
        })?;
        if !resolved.is_dir() {
            return Err(bad(format!("{entry} is not a directory")));
        }
        if !roots.contains(&resolved) {
            roots.push(resolved);
        }
    }
    if roots.is_empty() {
        return Err(bad("no directory is given".into()));
    }
    Ok(roots)
}
