//! Beyond the library: what other services say about its items.

pub mod check_retractions;
