//! Zotero's own database (`zotero.sqlite` in the Zotero data directory) as a read-only
//! backend: a private snapshot of the database and its `-wal` is read (never the original),
//! and requests in the Zotero API's path language (`/items/top?q=…`) are answered with the
//! API's wire JSON, so the client above parses them exactly as it parses the web's answers.

mod answer;
mod changes;
mod child_data;
mod collections;
mod data_keys;
mod datafile;
mod error;
pub mod fixture;
mod fulltext;
mod index;
mod listing;
mod locate;
pub mod mirror;
mod query;
mod reader;
mod reply;
pub mod safe_file;
mod schema;
pub mod search_fold;
mod snapshot;
mod sorts;

pub use answer::LibraryScope;
pub use changes::{ItemChange, ItemChanges, TextChange, TextChanges};
pub use data_keys::{is_field, not_field, NotField, NOT_FIELDS};
pub use error::DbError;
pub use locate::{default_data_dirs, find_data_dir, DataDirSource};
pub use reply::DbAnswer;
pub use safe_file::{read_inside, SafeReadError};
pub use schema::{SchemaVersion, KNOWN_USERDATA_VERSIONS, NEWEST_USERDATA_VERSION};
pub use search_fold::fold_for_search;
pub use snapshot::{zotero_has_it_open, DbStatus, ZoteroDb};
pub use sorts::{accepts_item_sort, ITEM_SORTS};
