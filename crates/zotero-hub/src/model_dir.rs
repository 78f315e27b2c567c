//! A model directory ready for the encoder: a local directory checked and hashed as it is,
//! or a complete snapshot of the cache.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{io_err, ModelCacheError, Result};
use crate::model_files::{OPTIONAL_FILES, REQUIRED_FILES, WEIGHTS_FILE};

/// A model directory ready for the encoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    /// The directory holding the files (a snapshot of the cache, or the local directory).
    pub path: PathBuf,
    /// The Hugging Face id, or the local directory as given.
    pub id: String,
    /// The commit of the files (`local` for a local directory).
    pub revision: String,
    /// (path in the model, sha256 hex) of each file present: the required ones, then the
    /// optional ones, in the order of [`REQUIRED_FILES`] and [`OPTIONAL_FILES`].
    pub files: Vec<(String, String)>,
}

impl ModelDir {
    /// The identity the index records for vectors of this model (`dims`: the encoder's).
    pub fn identity(&self, dims: usize) -> zotero_index::ModelIdentity {
        zotero_index::ModelIdentity {
            id: self.id.clone(),
            revision: self.revision.clone(),
            file_hashes: self.files.clone(),
            dims,
        }
    }
}

/// What a download reports: (file, bytes done, bytes in all).
pub type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Send + Sync);

/// The weights file of the model in `dir`, checked from its size and header before anything
/// hashes or reads it whole (see [`crate::weights`]).
pub(crate) fn check_weights(dir: &Path) -> Result<()> {
    let path = dir.join(WEIGHTS_FILE);
    match crate::weights::check_safetensors(&path) {
        Ok(_) => Ok(()),
        Err(crate::weights::WeightsError::Io(e)) => Err(io_err("cannot read", &path)(e)),
        Err(crate::weights::WeightsError::Bad(reason)) => {
            Err(ModelCacheError::BadWeights { path, reason })
        }
    }
}

/// sha256 of a file, streamed.
pub(crate) fn sha256_file(path: &Path) -> Result<String> {
    let mut f = File::open(path).map_err(io_err("cannot read", path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io_err("cannot read", path))?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex(&h.finalize()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The model directory `dir` as it is: every required file present, each hashed.
pub fn local_model_dir(dir: &Path) -> Result<ModelDir> {
    let meta = fs::metadata(dir).map_err(io_err("cannot open the model directory", dir))?;
    if !meta.is_dir() {
        return Err(ModelCacheError::Io {
            what: "the model is not a directory:",
            path: dir.to_path_buf(),
            source: io::Error::other("a model is a directory of files"),
        });
    }
    if let Some(missing) = REQUIRED_FILES.iter().find(|f| !dir.join(f).is_file()) {
        return Err(ModelCacheError::MissingFile {
            dir: dir.to_path_buf(),
            file: (*missing).to_string(),
        });
    }
    check_weights(dir)?;
    let mut files = Vec::new();
    for f in REQUIRED_FILES
        .iter()
        .chain(OPTIONAL_FILES)
        .filter(|f| dir.join(f).is_file())
    {
        files.push(((*f).to_string(), sha256_file(&dir.join(f))?));
    }
    Ok(ModelDir {
        path: dir.to_path_buf(),
        id: dir.display().to_string(),
        revision: "local".to_string(),
        files,
    })
}
