//! Full text: `zotero_get_item_fulltext` on a user library, a group and the local API
//! (`tool.rs`), and paging through any text end to end (`prop.rs`). The emulator's own
//! full-text endpoints are checked in its crate (`zotero-emulator/tests/it/fulltext.rs`).

mod prop;
mod tool;
