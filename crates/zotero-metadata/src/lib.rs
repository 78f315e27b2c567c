//! What identifies a paper and what the services that registered it say about it: the
//! identifiers a researcher hands over (DOI, arXiv id, ISBN, PMID, PMCID, and the URLs that
//! carry them), parsed and put in one canonical form each, so that the same work is
//! recognised whatever way it was written.
//!
//! And the mapping of what those services answer to Zotero items (`ZoteroItemDraft`), the
//! way Zotero maps them: CSL-JSON (`csl`, after zotero/utilities `itemFromCSLJSON`, with the
//! `csl` section of zotero-schema shipped in `fixtures/schema/csl.json`), and the Crossref,
//! DataCite, arXiv, Open Library and PubMed answers (`sources`, after zotero/translators).
//!
//! Imports point one way: zotero-mcp → zotero-metadata → zotero-sources (for the arXiv id).

// The tests' recorded-shape answers are large `json!` literals.
#![cfg_attr(test, recursion_limit = "512")]

pub mod csl;
pub mod identifiers;
mod mapping_error;
pub mod schema;
pub mod services;
pub mod sources;
#[cfg(test)]
mod test_support;
mod text;
pub mod work_ids;
mod xml;
pub mod zotero_item;

pub use csl::{from_csl_json, from_doi_csl_json};
pub use mapping_error::{MappingError, SchemaError};
pub use sources::{
    from_arxiv_atom, from_arxiv_entry, from_crossref_work, from_datacite, from_open_library,
    from_pubmed_summary, merge_arxiv_with_published, parse_arxiv_feed, ArxivEntry,
};
pub use zotero_item::{CreatorName, DraftCreator, ZoteroItemDraft};
