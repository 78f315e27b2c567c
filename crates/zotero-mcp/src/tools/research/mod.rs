//! Beyond the library: the citation graph, retractions, checking a manuscript.

pub mod find_related;
