//! The collection tree: listing, creating, renaming, moving, filing items.

pub mod add_item_to_collection;
pub mod create_collection;
pub mod list_collections;
pub mod remove_item_from_collection;
pub mod update_collection;
