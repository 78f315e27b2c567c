//! What identifies the state of an index's vectors at one moment (see [`crate::vcache`]):
//! a leaf the store computes and the in-memory copy compares.

/// What a copy of an index's vectors is valid for; see the notes of [`crate::vcache`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheKey {
    pub(crate) file: Option<(u64, u64)>,
    pub(crate) generation: Option<String>,
    pub(crate) chunks: u64,
    pub(crate) with_vectors: u64,
    pub(crate) dims: usize,
}

/// Where a file is, to tell a file from another created at the same path.
pub(crate) fn file_id(file: &std::fs::File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}
