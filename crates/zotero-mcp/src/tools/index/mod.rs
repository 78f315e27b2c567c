//! The local search index: search by meaning, building it, its status.

pub mod search_database_status;
pub mod semantic_search;
pub mod update_search_database;
