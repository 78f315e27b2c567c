//! zotero-mcp: an MCP server giving AI agents safe, structured access to a Zotero library.

pub mod alloc;
pub mod budget;
pub mod cli;
pub mod config;
pub mod error;
pub mod log;
pub mod mcp;
pub mod notes;
pub mod service;
pub mod text;
pub mod tool_docs;
pub mod tools;
pub mod transport;
