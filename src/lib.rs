//! zotero-mcp: an MCP server giving AI agents safe, structured access to a Zotero library.

pub mod config;
pub mod envelope;
pub mod log;
pub mod server;
pub mod sources;
pub mod tools;
pub mod zotero;
