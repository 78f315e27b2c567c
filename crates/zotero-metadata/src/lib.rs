//! What identifies a paper and what the services that registered it say about it: the
//! identifiers a researcher hands over (DOI, arXiv id, ISBN, PMID, PMCID, and the URLs that
//! carry them), parsed and put in one canonical form each, so that the same work is
//! recognised whatever way it was written.
//!
//! Imports point one way: zotero-mcp → zotero-metadata → zotero-sources (for the arXiv id).

pub mod csl;
mod mapping_error;
pub mod schema;
mod text;
pub mod zotero_item;

pub use csl::{from_csl_json, from_doi_csl_json};
pub use mapping_error::MappingError;
pub use zotero_item::{CreatorName, DraftCreator, ZoteroItemDraft};
