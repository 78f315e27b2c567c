//! `zotero_get_notes`: an item's child notes, or one note, as Markdown (`crate::notes::markdown`
//! says what is removed), each cut at `max_chars` from `offset` with `next_offset` to read on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_api::children::Note as StoredNote;
use zotero_api::response::Page;
use zotero_api::LibraryRef;

use crate::budget;
use crate::error::ToolError;
use crate::notes::markdown::{cut_chars, note_title, note_to_markdown, safe_piece};
use crate::tools::params::{
    library, null_is_default, LibraryParam, NoteChars, NoteLimit, ObjectKey, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_notes` tool.
pub struct GetNotes;

/// The arguments of `zotero_get_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetNotesParams {
    /// An item (its notes) or a note
    pub item_key: ObjectKey,
    /// Notes per page
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: NoteLimit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// Characters per note
    #[serde(default, deserialize_with = "null_is_default")]
    pub max_chars: NoteChars,
    /// A note's next_offset, to read on
    #[serde(default, deserialize_with = "null_is_default")]
    pub offset: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_get_notes` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetNotesData {
    /// This page of notes, oldest first
    pub notes: Vec<NoteOut>,
    /// Notes in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

/// One note.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NoteOut {
    /// 8-character key
    pub note_key: String,
    /// The item it belongs to; absent for a standalone note
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Its first line, as Zotero shows it
    pub title: String,
    /// The note as Markdown, from offset, at most max_chars characters
    pub markdown: String,
    /// Characters of the whole note's Markdown
    pub total_chars: u64,
    /// Present when there is more: the markdown stops before the end of the note
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// offset to read on from; absent at the end
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Tag names
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// When it was added (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_added: Option<String>,
    /// When it was last changed (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_modified: Option<String>,
    /// Version; grows with every change
    pub version: u64,
    /// Opens the note in the Zotero app: zotero://select/…
    pub zotero_url: String,
}

/// The longest title, as Zotero's own (`Zotero_Notes::$MAX_TITLE_LENGTH`).
const TITLE_CHARS: usize = 79;

fn note_out(n: StoredNote, offset: u64, max_chars: u64, lib: LibraryRef) -> NoteOut {
    let markdown = note_to_markdown(&n.html);
    let total = markdown.chars().count() as u64;
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let rest = match markdown.char_indices().nth(skip) {
        Some((at, _)) => markdown.get(at..).unwrap_or_default(),
        None => "",
    };
    let (shown, truncated) = cut_chars(rest, usize::try_from(max_chars).unwrap_or(usize::MAX));
    let shown_chars = shown.chars().count() as u64;
    let zotero_url = zotero_api::ObjectKey::parse(&n.key)
        .map(|k| lib.zotero_url(&k))
        .unwrap_or_default();
    NoteOut {
        title: note_title(&n.html, TITLE_CHARS),
        // Offsets count the whole note's characters; the piece is made safe on its own (a
        // cut can leave a code span open), which may add a backslash or two to it.
        markdown: if truncated || skip > 0 {
            safe_piece(shown)
        } else {
            shown.to_string()
        },
        total_chars: total,
        truncated,
        next_offset: truncated.then_some(offset.saturating_add(shown_chars)),
        note_key: n.key,
        parent_key: n.parent_key,
        tags: n.tags,
        date_added: n.date_added,
        date_modified: n.date_modified,
        version: n.version,
        zotero_url,
    }
}

impl ZoteroTool for GetNotes {
    const NAME: &'static str = "zotero_get_notes";
    const TITLE: &'static str = "Get notes";
    const DESCRIPTION: &'static str = "Read an item's notes (or one note) as Markdown. A note \
        past max_chars is cut: read on with offset = next_offset.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetNotesParams;
    type Data = GetNotesData;

    async fn run(p: GetNotesParams, ctx: &ToolContext) -> Result<GetNotesData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.item_key.key();
        let item = lib.item_object(key, &ctx.cancel).await?;
        let page: Page<StoredNote> = match item.item_type().as_str() {
            "note" => Page {
                items: if p.start.get() == 0 {
                    vec![item.to_note()]
                } else {
                    Vec::new()
                },
                total: 1,
                next_start: None,
            },
            "annotation" => {
                return Err(ToolError::invalid(
                    "item_key",
                    format!(
                        "{key} is an annotation, which has no notes: read it with \
                         zotero_get_annotations"
                    ),
                ));
            }
            _ => {
                let limit = u32::try_from(p.limit.get()).unwrap_or(u32::MAX);
                lib.child_notes(key, limit, p.start.get(), &ctx.cancel)
                    .await?
            }
        };
        let (offset, max_chars, name) = (p.offset.get(), p.max_chars.get(), lib.name());
        // Converting a long note is work for a CPU, not for the runtime's threads.
        let notes = tokio::task::spawn_blocking(move || {
            page.items
                .into_iter()
                .map(|n| note_out(n, offset, max_chars, name))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ToolError::internal(format!("converting the notes failed: {e}")))?;
        let (notes, cut) = budget::fit_page(notes, budget::PAGE_CHARS);
        Ok(GetNotesData {
            next_start: budget::next_start(p.start.get(), notes.len(), cut, page.next_start),
            notes,
            total: page.total,
        })
    }
}
