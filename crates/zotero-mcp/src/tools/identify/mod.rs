//! Adding papers by identifier (DOI, arXiv, ISBN, PMID).

pub mod add_by_identifier;
