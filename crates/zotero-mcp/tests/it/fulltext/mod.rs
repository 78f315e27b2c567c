//! Full text: the emulator's `…/items/{k}/fulltext` and `…/fulltext` on the web and local
//! APIs (`emulator.rs`), `zotero_get_item_fulltext` on a user library, a group and the local
//! API (`tool.rs`), and paging through any text end to end (`prop.rs`).

mod emulator;
mod prop;
mod tool;
