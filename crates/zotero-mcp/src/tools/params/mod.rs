//! Parameter types shared by the tools, each checked while it is deserialized, so a value
//! that reaches a tool's `run` (and from there a URL or a request body) has been checked
//! already, whoever built it.
//!
//! Error messages are predicates ("must be …") that `parse` completes with the field's path:
//! `'limit' must be an integer from 1 to 100, got 101`.

//!
//! Each file holds one kind: `base` (bounded text and numbers, field maps, the limits),
//! `keys`, `tags`, `paging`, and the parameters of one family of tools (`cite`, `creator`,
//! `listing`, `reading`). This file only names them.

mod base;
mod keys;
mod paging;
mod tags;

pub use crate::config::DEFAULT_UPLOAD_MAX_BYTES;
pub use crate::text::{quote, QUOTE_CHARS};
pub(crate) use base::WholeNumber;
pub use base::{
    base64_len, bounded, bounded_opt, given, limits, null_is_default, Base64, FieldMap, FieldText,
    FieldValue, NonBlank, Text,
};
pub use keys::{library, Arxiv, LibraryParam, ObjectKey};
pub use paging::{Limit, SortKey, Start};
pub use tags::{ExcludeTags, FilterTags, List, Tag, Tags};

mod cite;
mod creator;
pub use cite::{ExportFormatParam, ExportLimit, Locale, StyleId, COMMON_STYLES, STYLES_URL};
pub use creator::Creator;
mod listing;
pub use listing::{ItemSort, ItemTypes, QMode, SortDirection, TagConditions, Version};
mod reading;
pub use reading::{
    AnnotationChars, AnnotationColor, AnnotationType, ChildKind, Count, NoteChars, NoteLimit,
};

#[cfg(test)]
mod tests;
