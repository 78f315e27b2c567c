//! Citations, bibliographies and exports.

pub mod citation_text;
pub mod cite;
pub mod export;
