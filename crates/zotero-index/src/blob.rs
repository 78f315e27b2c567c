//! How a vector is stored: `dims` f32, little-endian, one SQLite blob (a leaf the store
//! writes and the searches and the in-memory copy read).

/// The blob of a vector.
pub(crate) fn vector_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One value of a stored vector: four bytes of a [`vector_blob`] (0 for fewer).
pub(crate) fn blob_value(bytes: &[u8]) -> f32 {
    <[u8; 4]>::try_from(bytes).map_or(0.0, f32::from_le_bytes)
}
