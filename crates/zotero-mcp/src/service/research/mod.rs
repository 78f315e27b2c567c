//! Beyond the library: workflows that ask outside services about the library's works (the
//! citation graph from OpenAlex and Crossref, retraction notices), what they share (matching
//! the works they name to the library's items), and a manuscript checked against the library.

pub mod graph;
pub mod in_library;
pub mod manuscript;
pub mod retractions;
