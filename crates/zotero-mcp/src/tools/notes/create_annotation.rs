//! `zotero_create_annotation`: a highlight or underline on a quoted passage of a PDF, or a
//! note on a page, placed on the PDF's own glyphs in Zotero's position format and created
//! exactly once.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::annotations::{AnnotationRequest, NewKind};
use crate::tools::params::{
    library, null_is_default, AnnotationColor, FieldText, LibraryParam, NonBlank, ObjectKey, Tags,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_create_annotation` tool.
pub struct CreateAnnotation;

/// Zotero's yellow, the reader's default.
const DEFAULT_COLOR: &str = "#ffd400";

/// The annotation types this tool writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum CreateType {
    Highlight,
    Underline,
    Note,
}

/// The arguments of `zotero_create_annotation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAnnotationParams {
    /// A PDF attachment, or a regular item with exactly one PDF
    pub attachment_key: ObjectKey,
    /// highlight, underline or note
    #[serde(rename = "type")]
    pub annotation_type: CreateType,
    /// The passage to mark, as the PDF reads (required for highlight and underline; for a
    /// note, the passage to pin it beside)
    pub text: Option<NonBlank<7500>>,
    /// Page label (as printed) or 1-based page number: where to look; required for a note
    pub page: Option<NonBlank<50>>,
    /// The annotation's comment
    pub comment: Option<FieldText>,
    /// A colour as #rrggbb or a Zotero colour name; default yellow #ffd400
    pub color: Option<AnnotationColor>,
    /// Tag names; repeats are dropped
    pub tags: Option<Tags>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer where the annotation would go without writing it
    #[serde(default, deserialize_with = "null_is_default")]
    pub dry_run: bool,
}

/// What `zotero_create_annotation` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreateAnnotationData {
    /// Nothing was written
    pub dry_run: bool,
    /// Key of the new annotation; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotation_key: Option<String>,
    /// The PDF attachment it is on
    pub attachment_key: String,
    /// highlight, underline or note
    #[serde(rename = "type")]
    pub annotation_type: String,
    /// The page's label, as printed
    pub page_label: String,
    /// 0-based page index
    pub page_index: u32,
    /// [x1, y1, x2, y2] per line, PDF points from the page's bottom left
    // Published as plain numbers: the schema shapes every tool shares carry no `format`.
    #[schemars(with = "Vec<[serde_json::Number; 4]>")]
    pub rects: Vec<[f64; 4]>,
    /// Zotero's sort index (page|offset|top)
    pub sort_index: String,
    /// The marked text as stored
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The colour, #rrggbb
    pub color: String,
    /// The annotation's version; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Opens the PDF at the annotation in the Zotero app; absent in a dry run
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

impl ZoteroTool for CreateAnnotation {
    const NAME: &'static str = "zotero_create_annotation";
    const TITLE: &'static str = "Create annotation";
    const DESCRIPTION: &'static str = "Highlight or note a PDF passage. type highlight or \
        underline marks text, quoted as the PDF reads (line breaks, hyphenation and ligatures \
        do not matter; page narrows the search); note pins a note on page. Not found, or found \
        twice: refused with the closest passages, nothing written. Placed as Zotero's reader \
        places it, created exactly once. Undo: zotero_trash_items.";
    const HINTS: Hints = Hints::CREATE;
    const SET: ToolSet = ToolSet::Write;
    type Params = CreateAnnotationParams;
    type Data = CreateAnnotationData;

    fn validate(p: &CreateAnnotationParams) -> Result<(), ToolError> {
        match p.annotation_type {
            CreateType::Note if p.page.is_none() => Err(ToolError::invalid(
                "page",
                "'page' is required for a note: the page label or number to pin it on",
            )),
            CreateType::Highlight | CreateType::Underline if p.text.is_none() => {
                Err(ToolError::invalid(
                    "text",
                    "'text' is required for a highlight or an underline: the passage to mark, \
                     as the PDF reads",
                ))
            }
            _ => Ok(()),
        }
    }

    async fn run(
        p: CreateAnnotationParams,
        ctx: &ToolContext,
    ) -> Result<CreateAnnotationData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let kind = match p.annotation_type {
            CreateType::Highlight => NewKind::Highlight,
            CreateType::Underline => NewKind::Underline,
            CreateType::Note => NewKind::Note,
        };
        let color = p
            .color
            .as_ref()
            .map_or(DEFAULT_COLOR, AnnotationColor::hex)
            .to_string();
        let req = AnnotationRequest {
            target: p.attachment_key.key().clone(),
            kind,
            text: p.text.map(|t| t.into_string()),
            page: p.page.map(|t| t.into_string()),
            comment: p.comment.map(|c| c.into_string()).unwrap_or_default(),
            color: color.clone(),
            tags: p.tags.map(Tags::into_strings).unwrap_or_default(),
            dry_run: p.dry_run,
        };
        let placed = ctx.svc.create_annotation(&lib, req, &ctx.cancel).await?;
        let key = placed.written.as_ref().map(|w| w.key());
        let zotero_url = key
            .as_deref()
            .and_then(|k| zotero_api::ObjectKey::parse(k).ok())
            .map(|k| open_pdf_url(lib.name(), &placed.attachment_key, placed.page_index, &k));
        Ok(CreateAnnotationData {
            dry_run: p.dry_run,
            version: placed.written.as_ref().map(|w| w.version()),
            annotation_key: key,
            attachment_key: placed.attachment_key.to_string(),
            annotation_type: kind.name().to_string(),
            page_label: placed.page_label,
            page_index: placed.page_index,
            rects: placed.rects,
            sort_index: placed.sort_index,
            text: placed.text,
            color,
            zotero_url,
        })
    }
}

/// `zotero://open-pdf/library/items/ATT?page=N&annotation=KEY` (`groups/ID` for a group).
/// `page` is the 1-based page NUMBER, not the printed label: Zotero's protocol handler takes
/// it as `parseInt(page) - 1` (ZoteroProtocolHandler.mjs), so a label would open the wrong
/// page when the annotation is not yet on that desktop and Zotero falls back to `page`.
fn open_pdf_url(
    lib: zotero_api::LibraryRef,
    attachment: &zotero_api::ObjectKey,
    page_index: u32,
    annotation: &zotero_api::ObjectKey,
) -> String {
    let base = zotero_api::children::annotation_url(lib, attachment, annotation);
    let page = u64::from(page_index) + 1;
    base.replacen("?annotation=", &format!("?page={page}&annotation="), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_opens_the_pdf_at_the_page_and_the_annotation() {
        let att = zotero_api::ObjectKey::parse("RESPDF42").expect("key");
        let key = zotero_api::ObjectKey::parse("ABCD2345").expect("key");
        assert_eq!(
            open_pdf_url(zotero_api::LibraryRef::User, &att, 3, &key),
            "zotero://open-pdf/library/items/RESPDF42?page=4&annotation=ABCD2345"
        );
        assert_eq!(
            open_pdf_url(zotero_api::LibraryRef::Group(7), &att, 0, &key),
            "zotero://open-pdf/groups/7/items/RESPDF42?page=1&annotation=ABCD2345"
        );
    }
}
