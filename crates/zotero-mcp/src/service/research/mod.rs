//! Workflows that reach beyond the library's own records: checking a manuscript against
//! the library (`manuscript`).

pub mod manuscript;
