//! Notes and annotations: reading them as Markdown, writing notes and annotations.

pub mod create_annotation;
pub mod create_note;
pub mod get_annotations;
pub mod get_notes;
pub(crate) mod note_content;
pub mod update_note;
