//! `zotero_create_note`: a note written as Markdown or HTML, sanitized to what Zotero's note
//! editor keeps, created exactly once as a child of a regular item or standalone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::notes::html::{Removed, MAX_NOTE_CHARS};
use crate::tools::notes::note_content::{cut, sanitize, ContentFormat, ANSWER_HTML_CHARS};
use crate::tools::params::{library, null_is_default, LibraryParam, NonBlank, ObjectKey, Tags};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{field_value, ObjectKind};
use zotero_api::write::NewNote;
use zotero_api::Library;

/// The `zotero_create_note` tool.
pub struct CreateNote;

/// The arguments of `zotero_create_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNoteParams {
    /// The note's text, in format
    pub content: NonBlank<{ MAX_NOTE_CHARS }>,
    /// markdown (the default: CommonMark with tables) or html
    #[serde(default, deserialize_with = "null_is_default")]
    pub format: ContentFormat,
    /// The regular item the note belongs to; leave out for a standalone note
    pub parent_key: Option<ObjectKey>,
    /// Tag names; repeats are dropped
    pub tags: Option<Tags>,
    /// Standalone notes only: the collection to put the note in
    pub collection_key: Option<ObjectKey>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (objects, fields, before → after) without writing
    #[serde(default, deserialize_with = "null_is_default")]
    pub dry_run: bool,
}

/// What `zotero_create_note` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreateNoteData {
    /// Nothing was written
    pub dry_run: bool,
    /// Key of the new note; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_key: Option<String>,
    /// The item the note belongs to; absent for a standalone note
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// The collection the note is in
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection_key: Option<String>,
    /// The note's version; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Characters of the note's HTML as stored (in a dry run: as it would be)
    pub html_chars: u64,
    /// What was taken out of content to keep what Zotero's note editor keeps; absent when
    /// nothing was
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Removed>,
    /// Dry run: the HTML that would be stored (cut at 2,000 characters)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// Opens the note in the Zotero app; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

impl ZoteroTool for CreateNote {
    const NAME: &'static str = "zotero_create_note";
    const TITLE: &'static str = "Create note";
    const DESCRIPTION: &'static str = "Write a note as Markdown (default) or HTML: a child note \
        of the regular item parent_key, or a standalone note (optionally in collection_key). \
        Sanitized to what Zotero's note editor keeps (removed lists what went). Created exactly \
        once, even when an answer is lost. Undo: zotero_trash_items.";
    const HINTS: Hints = Hints::CREATE;
    const SET: ToolSet = ToolSet::Write;
    type Params = CreateNoteParams;
    type Data = CreateNoteData;

    fn validate(p: &CreateNoteParams) -> Result<(), ToolError> {
        if let (Some(parent), Some(_)) = (&p.parent_key, &p.collection_key) {
            return Err(ToolError::invalid(
                "collection_key",
                format!(
                    "'collection_key' cannot be given with parent_key: Zotero puts no child \
                     note in a collection (it shows with its parent {parent}). Leave \
                     collection_key out, or leave parent_key out for a standalone note in \
                     that collection"
                ),
            ));
        }
        Ok(())
    }

    async fn run(p: CreateNoteParams, ctx: &ToolContext) -> Result<CreateNoteData, ToolError> {
        // Refused content sends nothing.
        let note = sanitize(p.content.into_string(), p.format).await?;
        let lib = ctx.svc.library(library(p.library))?;
        lib.require_write(false, &ctx.cancel).await?;
        if let Some(parent) = &p.parent_key {
            check_parent(&lib, parent, ctx).await?;
        }
        if let Some(collection) = &p.collection_key {
            check_collection(&lib, collection, ctx).await?;
        }
        let parent_key = p.parent_key.as_ref().map(|k| k.to_string());
        let collection_key = p.collection_key.as_ref().map(|k| k.to_string());
        if p.dry_run {
            return Ok(CreateNoteData {
                dry_run: true,
                note_key: None,
                parent_key,
                collection_key,
                version: None,
                html_chars: note.html.chars().count() as u64,
                removed: note.removed,
                html: Some(cut(&note.html, ANSWER_HTML_CHARS)),
                zotero_url: None,
            });
        }
        let new = NewNote {
            parent: p.parent_key.as_ref().map(|k| k.key().clone()),
            tags: p.tags.map(Tags::into_strings).unwrap_or_default(),
            collections: p
                .collection_key
                .as_ref()
                .map(|k| vec![k.key().clone()])
                .unwrap_or_default(),
            html: note.html,
        };
        let wire = lib.create_note(&new, &ctx.cancel).await?;
        let stored = wire
            .data
            .get("note")
            .and_then(Value::as_str)
            .unwrap_or(&new.html);
        let key = wire.key();
        let zotero_url = zotero_api::ObjectKey::parse(&key)
            .ok()
            .map(|k| lib.name().zotero_url(&k));
        Ok(CreateNoteData {
            dry_run: false,
            html_chars: stored.chars().count() as u64,
            version: Some(wire.version()),
            note_key: Some(key),
            parent_key,
            collection_key,
            removed: note.removed,
            html: None,
            zotero_url,
        })
    }
}

/// The parent must be a regular item, and not in the trash: a note written there would go
/// when the trash is emptied, and an agent that did not know it was there would not look.
async fn check_parent(
    lib: &Library<'_>,
    key: &ObjectKey,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let found = lib
        .read_objects(ObjectKind::Item, &[key.key().clone()], &ctx.cancel)
        .await?;
    let Some(parent) = found.get(key.as_str()) else {
        return Err(ToolError::not_found(format!(
            "'parent_key': no item with key {key} in this library; find the item with \
                 zotero_search_items, or leave parent_key out for a standalone note"
        ))
        .with_detail("field", "parent_key"));
    };
    let item_type = parent.item_type();
    if matches!(item_type.as_str(), "note" | "attachment" | "annotation") {
        let up = |o: &zotero_api::model::WireObject| {
            o.data
                .get("parentItem")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let mut suggested = up(parent);
        // An annotation's parent is its attachment; the attachment's parent takes notes.
        if item_type == "annotation" {
            suggested = match suggested.as_deref().map(zotero_api::ObjectKey::parse) {
                Some(Ok(attachment)) => lib
                    .read_objects(
                        ObjectKind::Item,
                        std::slice::from_ref(&attachment),
                        &ctx.cancel,
                    )
                    .await?
                    .get(attachment.as_str())
                    .and_then(up),
                _ => None,
            };
        }
        let hint = match &suggested {
            Some(s) => format!("give {s}, the regular item it belongs to, as parent_key"),
            None => "give a regular item, or leave parent_key out for a standalone note".into(),
        };
        let article = if item_type == "note" { "a" } else { "an" };
        let mut e = ToolError::invalid(
            "parent_key",
            format!("'parent_key' {key} is {article} {item_type}, which cannot have notes; {hint}"),
        )
        .with_detail("item_type", item_type);
        if let Some(s) = suggested {
            e = e.with_detail("suggested_parent_key", s);
        }
        return Err(e);
    }
    if field_value(&parent.data, "deleted") == Value::Bool(true) {
        return Err(ToolError::invalid(
            "parent_key",
            format!(
                "'parent_key' {key} is in the trash, and its notes would go when the trash is \
                 emptied: restore it first with zotero_trash_items (restore: true), or leave \
                 parent_key out for a standalone note"
            ),
        )
        .with_detail("reason", "parent_in_trash"));
    }
    Ok(())
}

/// The collection must exist: Zotero would refuse the note (`409`), and a dry run should
/// say so too.
async fn check_collection(
    lib: &Library<'_>,
    key: &ObjectKey,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let found = lib
        .read_objects(ObjectKind::Collection, &[key.key().clone()], &ctx.cancel)
        .await?;
    if found.contains_key(key.as_str()) {
        return Ok(());
    }
    Err(ToolError::not_found(format!(
        "'collection_key': no collection with key {key} in this library; \
             zotero_list_collections lists them"
    ))
    .with_detail("field", "collection_key"))
}
