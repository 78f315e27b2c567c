//! What is indexed: the library an index is of, the documents the sync gives, and what
//! the index says of itself ([`Status`]).

use std::path::{Path, PathBuf};

use crate::chunk::{self, Chunk, ItemMeta, Matched, PageText};
use crate::encoder::ModelIdentity;
use crate::error::{IndexError, Result};

/// Which library an index is of: `user` or `group:<id>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LibraryId {
    User,
    Group(u64),
}

impl LibraryId {
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s == "user" {
            return Ok(LibraryId::User);
        }
        s.strip_prefix("group:")
            .and_then(|n| n.parse().ok())
            .map(LibraryId::Group)
            .ok_or_else(|| IndexError::LibraryId(s.to_string()))
    }

    /// The index file's name in the index directory: `user.sqlite`, `group-123.sqlite`.
    pub fn file_name(&self) -> String {
        match self {
            LibraryId::User => "user.sqlite".to_string(),
            LibraryId::Group(id) => format!("group-{id}.sqlite"),
        }
    }
}

impl std::fmt::Display for LibraryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LibraryId::User => write!(f, "user"),
            LibraryId::Group(id) => write!(f, "group:{id}"),
        }
    }
}

/// Where indexes live by default: `$ZOTERO_INDEX_DIR`, else
/// `$XDG_DATA_HOME/zotero-mcp/index`, else `$HOME/.local/share/zotero-mcp/index`. `env`
/// reads a variable (e.g. `|k| std::env::var(k).ok()`); empty values, and a relative
/// `XDG_DATA_HOME` (which the XDG specification says to ignore), are skipped.
pub fn default_dir(env: impl Fn(&str) -> Option<String>) -> Result<PathBuf> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("ZOTERO_INDEX_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(data) = var("XDG_DATA_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(Path::new(&data).join("zotero-mcp").join("index"));
    }
    var("HOME")
        .map(|home| Path::new(&home).join(".local/share/zotero-mcp/index"))
        .ok_or(IndexError::NoDirectory)
}

/// What kind of Zotero object a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocKind {
    Item,
    Note,
    Annotation,
    /// An attachment's full text, keyed by the attachment.
    Fulltext,
}

impl DocKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Item => "item",
            DocKind::Note => "note",
            DocKind::Annotation => "annotation",
            DocKind::Fulltext => "fulltext",
        }
    }
}

/// One Zotero object to index, with its chunks. The constructors chunk the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub key: String,
    pub kind: DocKind,
    /// The top-level item: the object itself for an item or a standalone note.
    pub item_key: String,
    pub parent_key: Option<String>,
    /// The object's Zotero version.
    pub version: u64,
    /// The metadata searches filter on and answer; read from the top-level item's row, so
    /// children may leave it empty.
    pub meta: ItemMeta,
    /// In the trash (a child in the trash, or any object of an item in the trash, is left
    /// out of searches unless asked for).
    pub deleted: bool,
    pub chunks: Vec<Chunk>,
}

impl Document {
    pub fn item(key: &str, version: u64, meta: ItemMeta, deleted: bool) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Item,
            item_key: key.to_string(),
            parent_key: None,
            version,
            chunks: chunk::item_chunks(&meta),
            meta,
            deleted,
        }
    }

    /// A note, child of `parent` or standalone (`None`; give it `meta`, e.g. its title and
    /// item type `note`, for filters and answers).
    pub fn note(
        key: &str,
        parent: Option<&str>,
        version: u64,
        markdown: &str,
        meta: ItemMeta,
        deleted: bool,
    ) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Note,
            item_key: parent.unwrap_or(key).to_string(),
            parent_key: parent.map(str::to_string),
            version,
            meta,
            deleted,
            chunks: chunk::note_chunks(markdown),
        }
    }

    /// An annotation of the attachment `attachment_key`, whose top-level item is `item_key`.
    pub fn annotation(
        key: &str,
        attachment_key: &str,
        item_key: &str,
        version: u64,
        text: &str,
        comment: &str,
        deleted: bool,
    ) -> Self {
        Document {
            key: key.to_string(),
            kind: DocKind::Annotation,
            item_key: item_key.to_string(),
            parent_key: Some(attachment_key.to_string()),
            version,
            meta: ItemMeta::default(),
            deleted,
            chunks: chunk::annotation_chunks(text, comment),
        }
    }

    /// The full text of the attachment `attachment_key` (its offsets are those of
    /// `zotero_get_item_fulltext` called with the attachment's key).
    pub fn fulltext(attachment_key: &str, item_key: &str, version: u64, text: &str) -> Self {
        Document {
            key: attachment_key.to_string(),
            kind: DocKind::Fulltext,
            item_key: item_key.to_string(),
            parent_key: (attachment_key != item_key).then(|| attachment_key.to_string()),
            version,
            meta: ItemMeta::default(),
            deleted: false,
            chunks: chunk::fulltext_chunks(text),
        }
    }

    /// The text of the attachment `attachment_key` as read from its file, page by page: a
    /// full text whose chunks name their page (see [`chunk::page_chunks`]). It takes the
    /// place of any other full text indexed for the attachment.
    pub fn file_text(
        attachment_key: &str,
        item_key: &str,
        version: u64,
        pages: &[PageText<'_>],
        deleted: bool,
    ) -> Self {
        Document {
            chunks: chunk::page_chunks(pages),
            deleted,
            ..Self::fulltext(attachment_key, item_key, version, "")
        }
    }
}

/// A chunk still without a vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChunk {
    pub id: i64,
    pub matched: Matched,
    pub text: String,
}

/// What the index holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub library: LibraryId,
    pub path: PathBuf,
    /// Distinct top-level items with at least one indexed object.
    pub items: u64,
    pub documents: u64,
    pub chunks: u64,
    pub chunks_with_vectors: u64,
    /// The library version everything is indexed up to: the least of the sync versions.
    pub library_version: Option<u64>,
    pub sync_versions: Vec<(String, u64)>,
    /// Unix seconds of the last committed update.
    pub last_update: Option<u64>,
    /// The model of the stored vectors; `None` before the first vector.
    pub model: Option<ModelIdentity>,
    /// Bytes of the file and its write-ahead log.
    pub size_bytes: u64,
    pub fulltext_included: bool,
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn default_dir_follows_xdg_with_an_override() {
        let home = [("HOME", "/home/u")];
        assert_eq!(
            default_dir(env(&home)).unwrap(),
            Path::new("/home/u/.local/share/zotero-mcp/index")
        );
        let xdg = [("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")];
        assert_eq!(
            default_dir(env(&xdg)).unwrap(),
            Path::new("/data/zotero-mcp/index")
        );
        // A relative or empty XDG_DATA_HOME is ignored, as the specification says.
        let rel = [("HOME", "/home/u"), ("XDG_DATA_HOME", "data")];
        assert_eq!(
            default_dir(env(&rel)).unwrap(),
            Path::new("/home/u/.local/share/zotero-mcp/index")
        );
        let over = [("XDG_DATA_HOME", "/data"), ("ZOTERO_INDEX_DIR", "/srv/idx")];
        assert_eq!(default_dir(env(&over)).unwrap(), Path::new("/srv/idx"));
        assert!(matches!(
            default_dir(env(&[])),
            Err(IndexError::NoDirectory)
        ));
    }

    #[test]
    fn library_ids_name_safe_files() {
        assert_eq!(LibraryId::parse("user").unwrap().file_name(), "user.sqlite");
        let g = LibraryId::parse("group:123").unwrap();
        assert_eq!(g.file_name(), "group-123.sqlite");
        assert_eq!(g.to_string(), "group:123");
        for bad in ["group:../x", "group:", "users", "group:-1", "group:1/2"] {
            assert!(LibraryId::parse(bad).is_err(), "{bad}");
        }
    }
}
