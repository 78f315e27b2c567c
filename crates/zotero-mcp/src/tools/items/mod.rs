//! Finding and reading items, and creating, editing and trashing them.

pub mod create_item;
pub mod get_item;
pub mod get_item_children;
pub mod get_item_metadata;
pub mod get_sort_values;
pub(crate) mod item_markdown;
pub mod list_items;
pub mod list_libraries;
pub mod metadata;
pub mod search_items;
pub mod trash_items;
pub mod update_item;
