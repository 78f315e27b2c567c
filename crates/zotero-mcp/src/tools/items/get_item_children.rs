//! `zotero_get_item_children`: what lies under an item (its attachments and notes, and the
//! annotations of its attachments; an attachment's annotations), one short summary each.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zotero_api::children::{annotation_url, color_name, object_key, Annotation};
use zotero_api::model::WireObject;
use zotero_api::LibraryRef;

use crate::budget;
use crate::error::ToolError;
use crate::notes::markdown::{cut_chars, note_title};
use crate::tools::params::{
    library, null_is_default, ChildKind, LibraryParam, Limit, List, ObjectKey, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_item_children` tool.
pub struct GetItemChildren;

/// The arguments of `zotero_get_item_children`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetItemChildrenParams {
    /// The item's key, e.g. X42A7DEE (an attachment lists its annotations)
    pub item_key: ObjectKey,
    /// Only children of these kinds (all three unless given)
    #[serde(default, deserialize_with = "null_is_default")]
    pub kinds: List<ChildKind, 3>,
    /// Most children to return; a page holds fewer when more would pass 20,000 characters
    /// (next_start says where the rest starts)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_get_item_children` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetItemChildrenData {
    /// This page: attachments and notes (oldest first), then the annotations of each
    /// attachment in reading order
    pub children: Vec<Child>,
    /// Children in all (of the kinds asked for)
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

/// One child, in short.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Child {
    /// 8-character key
    pub key: String,
    /// attachment, note or annotation
    pub kind: ChildKind,
    /// The item it is under (an annotation's attachment)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// An attachment's title, a note's first line, an annotation's text or comment (cut)
    pub title: String,
    /// An attachment's MIME type
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// An attachment's kind: imported_file, imported_url, linked_file, linked_url
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_mode: Option<String>,
    /// An annotation's type: highlight, underline, note, text, image, ink
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotation_type: Option<String>,
    /// An annotation's colour's name in Zotero, else its #rrggbb
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// An annotation's page label
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_label: Option<String>,
    /// When it was added (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_added: Option<String>,
    /// When it was last changed (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_modified: Option<String>,
    /// Opens it in the Zotero app (an annotation: in the reader, Zotero 7 and later)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

/// The longest title of a summary.
const TITLE_CHARS: usize = 100;

fn field(w: &WireObject, name: &str) -> Option<String> {
    w.data
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

fn short(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (cut, was_cut) = cut_chars(&line, TITLE_CHARS);
    if was_cut {
        format!("{cut}…")
    } else {
        cut.to_string()
    }
}

fn item_child(w: &WireObject, lib: LibraryRef) -> Option<Child> {
    let kind = ChildKind::of(&w.item_type())?;
    let title = match kind {
        ChildKind::Note => note_title(&field(w, "note").unwrap_or_default(), TITLE_CHARS),
        _ => short(
            &field(w, "title")
                .or_else(|| field(w, "filename"))
                .unwrap_or_default(),
        ),
    };
    Some(Child {
        key: w.key(),
        kind,
        parent_key: w.parent_key(),
        title,
        content_type: field(w, "contentType"),
        link_mode: field(w, "linkMode"),
        annotation_type: None,
        color: None,
        page_label: None,
        date_added: field(w, "dateAdded"),
        date_modified: field(w, "dateModified"),
        zotero_url: object_key(w).ok().map(|k| lib.zotero_url(&k)),
    })
}

fn annotation_child(a: Annotation, lib: LibraryRef) -> Child {
    let title = match (&a.text, &a.comment) {
        (Some(t), _) => short(t),
        (None, Some(c)) => short(c),
        (None, None) => format!("[{}]", a.annotation_type),
    };
    let zotero_url = match (
        zotero_api::ObjectKey::parse(&a.attachment_key),
        zotero_api::ObjectKey::parse(&a.key),
    ) {
        (Ok(att), Ok(key)) => Some(annotation_url(lib, &att, &key)),
        _ => None,
    };
    Child {
        color: a.color.as_deref().map(|c| {
            color_name(c)
                .map(str::to_string)
                .unwrap_or_else(|| c.to_string())
        }),
        key: a.key,
        kind: ChildKind::Annotation,
        parent_key: Some(a.attachment_key),
        title,
        content_type: None,
        link_mode: None,
        annotation_type: Some(a.annotation_type),
        page_label: a.page_label,
        date_added: a.date_added,
        date_modified: a.date_modified,
        zotero_url,
    }
}

impl ZoteroTool for GetItemChildren {
    const NAME: &'static str = "zotero_get_item_children";
    const TITLE: &'static str = "Get item children";
    const DESCRIPTION: &'static str = "List what lies under a Zotero item, one short summary \
        each: attachments, notes (first line), then the annotations on its attachments; for an \
        attachment, its annotations. kinds keeps some. Read notes whole with zotero_get_notes, \
        annotations with zotero_get_annotations. Page with start and next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetItemChildrenParams;
    type Data = GetItemChildrenData;

    async fn run(
        p: GetItemChildrenParams,
        ctx: &ToolContext,
    ) -> Result<GetItemChildrenData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.item_key.key();
        let want = |k: ChildKind| p.kinds.is_empty() || p.kinds.contains(&k);
        let item = lib.item_object(key, &ctx.cancel).await?;
        let item_type = item.item_type();
        // Attachments and notes: an attachment's children are its annotations, listed below.
        let direct_type = match (want(ChildKind::Attachment), want(ChildKind::Note)) {
            _ if matches!(item_type.as_str(), "attachment" | "annotation") => None,
            (true, true) => Some(None),
            (true, false) => Some(Some("attachment")),
            (false, true) => Some(Some("note")),
            (false, false) => None,
        };
        let direct = match direct_type {
            Some(t) => lib.children(key, t, &ctx.cancel).await?,
            None => Vec::new(),
        };
        let annotations = if want(ChildKind::Annotation) && item_type != "annotation" {
            lib.annotations(&item, &ctx.cancel).await?
        } else {
            Vec::new()
        };
        let name = lib.name();
        let all: Vec<Child> = tokio::task::spawn_blocking(move || {
            direct
                .iter()
                .filter(|w| w.item_type() != "annotation")
                .filter_map(|w| item_child(w, name))
                .chain(annotations.into_iter().map(|a| annotation_child(a, name)))
                .collect()
        })
        .await
        .map_err(|e| ToolError::internal(format!("summarizing failed: {e}")))?;
        let total = all.len() as u64;
        let start = usize::try_from(p.start.get()).unwrap_or(usize::MAX);
        let children: Vec<Child> = all
            .into_iter()
            .skip(start)
            .take(p.limit.get() as usize)
            .collect();
        let (children, _) = budget::fit_page(children, budget::PAGE_CHARS);
        let end = p.start.get().saturating_add(children.len() as u64);
        Ok(GetItemChildrenData {
            children,
            total,
            next_start: (end < total).then_some(end),
        })
    }
}
