//! Finding a quoted passage in a [`crate::Document`] and the rectangles that cover its glyphs,
//! in Zotero's annotation position format.
