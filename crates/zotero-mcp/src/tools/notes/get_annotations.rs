//! `zotero_get_annotations`: the annotations of an item's PDF/EPUB/snapshot attachments (or
//! of one attachment), in reading order, filtered by type, colour and tag, paged.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_api::children::{annotation_url, color_name, Annotation};
use zotero_api::LibraryRef;

use crate::budget;
use crate::error::ToolError;
use crate::notes::markdown::cut_chars;
use crate::tools::params::{
    library, null_is_default, AnnotationChars, AnnotationColor, AnnotationType, FilterTags,
    LibraryParam, Limit, List, ObjectKey, Start,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_annotations` tool.
pub struct GetAnnotations;

/// The arguments of `zotero_get_annotations`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAnnotationsParams {
    /// A regular item (the annotations of all its attachments), an attachment (its own) or
    /// an annotation (that one), e.g. X42A7DEE
    pub item_key: ObjectKey,
    /// Only annotations of these types
    #[serde(default, deserialize_with = "null_is_default")]
    pub types: List<AnnotationType, 6>,
    /// Only annotations of these colours: #rrggbb, or Yellow, Red, Green, Blue, Purple,
    /// Magenta, Orange, Gray
    #[serde(default, deserialize_with = "null_is_default")]
    pub colors: List<AnnotationColor, 16>,
    /// Only annotations with all of these tags (each matched exactly, case-insensitively)
    #[serde(default, deserialize_with = "null_is_default")]
    pub tags: FilterTags,
    /// Most annotations to return; a page holds fewer when more would pass 20,000
    /// characters (next_start says where the rest starts)
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: Limit,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// Most characters of each annotation's text and of its comment (50 to 10,000)
    #[serde(default, deserialize_with = "null_is_default")]
    pub max_chars: AnnotationChars,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_get_annotations` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetAnnotationsData {
    /// This page, in reading order: attachment by attachment (oldest first), then by
    /// position in the document
    pub annotations: Vec<AnnotationOut>,
    /// Annotations that pass the filters, in all
    pub total: u64,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

/// One annotation.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AnnotationOut {
    /// 8-character key
    pub annotation_key: String,
    /// The attachment (PDF, EPUB, snapshot) it is on
    pub attachment_key: String,
    /// highlight, underline, note, text, image or ink
    #[serde(rename = "type")]
    pub annotation_type: String,
    /// The text highlighted or underlined
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The reader's comment (a note's or text box's content)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Present when text or comment was cut at max_chars
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The colour, as #rrggbb
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// The colour's name as Zotero shows it (Yellow, Red, …); absent for a colour outside
    /// Zotero's palette
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color_name: Option<String>,
    /// The page as printed in the document
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_label: Option<String>,
    /// Reading order within the attachment (sorts as text)
    pub sort_index: String,
    /// Who made it, when Zotero records it (group libraries)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
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
    /// Opens the attachment in Zotero's reader at the annotation (Zotero 7 and later):
    /// zotero://open-pdf/…?annotation=KEY
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

/// The filters of one call.
struct Filter {
    types: HashSet<&'static str>,
    colors: HashSet<String>,
    tags: Vec<String>,
}

impl Filter {
    fn keeps(&self, a: &Annotation) -> bool {
        let type_ok = self.types.is_empty() || self.types.contains(a.annotation_type.as_str());
        let color_ok = self.colors.is_empty()
            || a.color
                .as_ref()
                .is_some_and(|c| self.colors.contains(&c.to_ascii_lowercase()));
        let tags_ok = self
            .tags
            .iter()
            .all(|want| a.tags.iter().any(|t| t.trim().to_lowercase() == *want));
        type_ok && color_ok && tags_ok
    }
}

fn bounded(text: Option<String>, max: usize, cut: &mut bool) -> Option<String> {
    text.map(|t| {
        let (shown, was_cut) = cut_chars(&t, max);
        *cut |= was_cut;
        shown.to_string()
    })
}

fn annotation_out(a: Annotation, max_chars: usize, lib: LibraryRef) -> AnnotationOut {
    let mut truncated = false;
    let zotero_url = match (
        zotero_api::ObjectKey::parse(&a.attachment_key),
        zotero_api::ObjectKey::parse(&a.key),
    ) {
        (Ok(att), Ok(key)) => Some(annotation_url(lib, &att, &key)),
        _ => None,
    };
    AnnotationOut {
        text: bounded(a.text, max_chars, &mut truncated),
        comment: bounded(a.comment, max_chars, &mut truncated),
        truncated,
        color_name: a.color.as_deref().and_then(color_name).map(str::to_string),
        color: a.color,
        annotation_key: a.key,
        attachment_key: a.attachment_key,
        annotation_type: a.annotation_type,
        page_label: a.page_label,
        sort_index: a.sort_index,
        author: a.author_name,
        tags: a.tags,
        date_added: a.date_added,
        date_modified: a.date_modified,
        version: a.version,
        zotero_url,
    }
}

impl ZoteroTool for GetAnnotations {
    const NAME: &'static str = "zotero_get_annotations";
    const TITLE: &'static str = "Get annotations";
    const DESCRIPTION: &'static str = "Read the highlights, underlines, notes, text boxes, \
        images and ink made on an item's PDFs and EPUBs (or one attachment), in reading order: \
        type, text, comment, colour and its Zotero name, page label, attachment key, tags and a \
        zotero:// link. Filter by types, colors and tags. Page with start and next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetAnnotationsParams;
    type Data = GetAnnotationsData;

    async fn run(
        p: GetAnnotationsParams,
        ctx: &ToolContext,
    ) -> Result<GetAnnotationsData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.item_key.key();
        let item = lib.item_object(key, &ctx.cancel).await?;
        if item.item_type() == "note" {
            return Err(ToolError::invalid(
                "item_key",
                format!(
                    "{key} is a note, which has no annotations: give its parent item or an \
                     attachment (zotero_get_item_children lists them)"
                ),
            ));
        }
        let filter = Filter {
            types: p.types.iter().map(|t| t.name()).collect(),
            colors: p.colors.iter().map(|c| c.hex().to_string()).collect(),
            tags: p
                .tags
                .into_strings()
                .iter()
                .map(|t| t.trim().to_lowercase())
                .collect(),
        };
        let kept: Vec<Annotation> = lib
            .annotations(&item, &ctx.cancel)
            .await?
            .into_iter()
            .filter(|a| filter.keeps(a))
            .collect();
        let total = kept.len() as u64;
        let start = usize::try_from(p.start.get()).unwrap_or(usize::MAX);
        let limit = p.limit.get() as usize;
        let max_chars = usize::try_from(p.max_chars.get()).unwrap_or(usize::MAX);
        let annotations: Vec<AnnotationOut> = kept
            .into_iter()
            .skip(start)
            .take(limit)
            .map(|a| annotation_out(a, max_chars, lib.name()))
            .collect();
        let (annotations, _) = budget::fit_page(annotations, budget::PAGE_CHARS);
        let end = p.start.get().saturating_add(annotations.len() as u64);
        Ok(GetAnnotationsData {
            annotations,
            total,
            next_start: (end < total).then_some(end),
        })
    }
}
