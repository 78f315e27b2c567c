//! The integration tests: ONE test binary, so the emulator and the harness compile once.
//! Tool tests drive the built server over stdio against the Zotero emulator
//! (`zotero-emulator`); the emulator's own self-tests live in its crate
//! (`cargo test -p zotero-emulator`).
// Test support: failing loudly is the right thing here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod add_by_identifier;
mod annotations;
mod arxiv_and_progress;
mod budget;
mod cite_export;
mod collection_writes;
mod collections;
mod common;
mod concurrency;
mod database_backend;
mod database_files;
mod database_reads;
mod docs;
mod dry_runs;
mod find_related;
mod fulltext;
mod fulltext_pages;
mod http_2026;
mod http_bounds;
mod http_core;
mod http_sessions;
mod http_transport;
mod index_encoder_failure;
mod index_files;
mod index_from_database;
mod input_bounds;
mod item_metadata;
mod item_writes;
mod jsonrpc_framing;
mod layering;
mod libraries;
mod listing;
mod local_authorize;
mod local_unavailable;
mod local_writes;
mod login;
mod manuscript;
mod metadata_hardening;
mod note_writes;
mod paper_e2e;
mod pdf_fixture;
mod prop_arguments;
mod prop_edits;
mod prop_markdown_outputs;
mod prop_notes;
mod prop_paging;
mod prop_support;
mod prop_uploads;
mod prop_write_notes;
mod read_notes;
mod read_tools;
mod registry;
mod resources_prompts;
mod retractions;
mod retries;
mod semantic_search;
mod server;
mod tag_writes;
mod tool_sets;
mod tool_surface;
mod tools_list;
mod upload_failures;
mod upload_paths;
mod upload_support;
mod uploads;
mod write_tools;
