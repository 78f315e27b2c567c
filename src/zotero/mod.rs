//! The Zotero Web API client. Knows nothing about MCP.

pub mod api;
pub mod cache;
pub mod collections;
pub mod error;
pub mod http;
pub mod model;
pub mod upload;
pub mod write;
