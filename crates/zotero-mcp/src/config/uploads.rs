//! Upload bounds the configuration defaults to. Here, below the tools, so that the
//! configuration does not import the tools' parameters.

/// The default of `ZOTERO_UPLOAD_MAX_BYTES`.
pub const DEFAULT_UPLOAD_MAX_BYTES: u64 = 52_428_800;
