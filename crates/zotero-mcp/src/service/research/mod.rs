//! Workflows that reach beyond the library: what other services say about its items.

pub mod retractions;
