//! A typed client of the Zotero Web API v3. Knows nothing about MCP: its errors are
//! `ZoteroError`s, and the server maps them to public codes at its edge.

pub mod cache;
pub mod client;
pub mod collections;
pub mod config;
pub mod error;
pub mod http;
pub mod model;
pub mod upload;
pub mod write;

pub use client::ZoteroClient;
pub use config::{ApiKey, ClientConfig};
pub use error::ZoteroError;
