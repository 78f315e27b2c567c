//! Note text in both directions: Zotero's note HTML and the Markdown agents read and write.

pub mod html;
pub mod markdown;
