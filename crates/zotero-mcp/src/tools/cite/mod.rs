//! Citations, bibliographies and exports.

pub mod citation_text;
pub mod export;
pub mod format;
