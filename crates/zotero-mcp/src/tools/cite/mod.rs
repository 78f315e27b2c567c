//! Citations, bibliographies and exports.

pub mod citation_text;
// The tool zotero_cite in the cite family: its file is named as every tool file is.
#[allow(clippy::module_inception)]
pub mod cite;
pub mod export;
