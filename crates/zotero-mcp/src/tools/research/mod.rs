//! Beyond the library: the citation graph, retractions, checking a manuscript.

pub mod check_manuscript;
pub mod check_retractions;
pub mod find_related;
