//! A typed client of the Zotero Web API v3 and of the desktop app's local API. Knows
//! nothing about MCP: its errors are
//! `ZoteroError`s, and the server maps them to public codes at its edge.

pub mod cache;
pub mod children;
pub mod client;
pub mod collection_tree;
pub mod collection_writes;
pub mod collections;
pub mod config;
pub mod edit;
pub mod error;
pub mod export;
pub mod file;
pub mod fulltext;
pub mod group_rights;
pub mod groups;
pub mod http;
pub mod identify;
pub mod item_filter;
pub mod items;
mod keyed_lock;
pub mod keys;
pub mod library;
pub mod local_writes;
pub mod metadata;
pub mod model;
pub mod oauth;
pub mod progress;
pub mod response;
pub mod retractions;
pub mod routing;
pub mod sync;
pub mod tag_changes;
pub mod tags;
pub mod templates;
pub mod upload;
pub mod write;
pub mod write_route;

#[cfg(test)]
mod backends_tests;
#[cfg(test)]
mod file_tests;

pub use client::ZoteroClient;
pub use config::{ApiKey, ClientConfig};
pub use config::{LocalWrites, WriteBackend};
pub use error::ZoteroError;
pub use groups::LibraryInfo;
pub use keys::{KeyAccess, Permissions};
pub use library::{InvalidKey, InvalidLibrary, LibraryId, LibraryRef, ObjectKey};
pub use local_writes::DesktopProbe;
pub use routing::{Backend, Library};
pub use write_route::WriteRoute;
