//! Tags: listing them and changing them across many items.

pub mod list_tags;
pub mod manage_tags;
