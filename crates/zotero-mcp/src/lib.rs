//! zotero-mcp: an MCP server giving AI agents safe, structured access to a Zotero library.

pub mod alloc;
pub mod check;
pub mod cli;
pub mod config;
pub mod envelope;
pub mod errors;
pub mod identify;
pub mod index_cli;
pub mod log;
pub mod markdown;
pub mod note_html;
pub mod prompts;
pub mod resources;
pub mod search_index;
pub mod server;
pub mod service;
pub mod subscriptions;
pub mod tool_docs;
pub mod tools;
pub mod transport;
