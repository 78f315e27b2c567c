//! `zotero_upload_attachment`: attach a file (local path, URL or base64 bytes) to an item.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::tools::params::{
    given, library, limits, Base64, FieldText, LibraryParam, NonBlank, ObjectKey, Text,
};
use crate::tools::support::output::Attached;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_sources::{PrepareOptions, SourceSpec};

/// The `zotero_upload_attachment` tool.
pub struct UploadAttachment;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
// The seed's "exactly one source" as far as a schema says it; `validate` says the rest.
#[schemars(extend("anyOf" = [
    { "required": ["item_key", "file_path"] },
    { "required": ["item_key", "file_url"] },
    { "required": ["item_key", "file_bytes_base64", "filename"] }
]))]
/// The arguments of `zotero_upload_attachment`.
pub struct UploadAttachmentParams {
    /// Parent item
    pub item_key: ObjectKey,
    /// A file where the server runs, within ZOTERO_UPLOAD_ROOTS if set
    pub file_path: Option<NonBlank<{ limits::FILE_PATH }, true>>,
    /// Public http(s) URL
    pub file_url: Option<NonBlank<{ limits::URL }>>,
    /// File bytes, base64; needs filename
    pub file_bytes_base64: Option<Base64>,
    /// File name (default: the source's)
    pub filename: Option<NonBlank<{ limits::FILENAME }, true>>,
    /// Default: the filename
    pub title: Option<FieldText>,
    /// MIME type (default: guessed)
    pub content_type: Option<Text<{ limits::CONTENT_TYPE }>>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Preview; write nothing
    #[serde(default)]
    pub dry_run: bool,
}

const ONE_SOURCE: &str = "file_path, file_url, or file_bytes_base64 with filename";

impl ZoteroTool for UploadAttachment {
    const NAME: &'static str = "zotero_upload_attachment";
    const TITLE: &'static str = "Upload attachment";
    const DESCRIPTION: &'static str = "Attach a file to an item, from one of file_path, file_url \
        or file_bytes_base64. All or nothing; a repeat answers the existing attachment \
        (already_attached).";
    const HINTS: Hints = Hints::CREATE;
    const SET: ToolSet = ToolSet::Files;
    type Params = UploadAttachmentParams;
    type Data = Attached;

    fn validate(p: &UploadAttachmentParams) -> Result<(), ToolError> {
        let given: Vec<&str> = [
            ("file_path", p.file_path.is_some()),
            ("file_url", p.file_url.is_some()),
            ("file_bytes_base64", p.file_bytes_base64.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, is_given)| is_given.then_some(name))
        .collect();
        match given.as_slice() {
            [] => Err(ToolError::invalid(
                "file_path",
                format!("give exactly one source: {ONE_SOURCE}; none was given"),
            )),
            [_, second, ..] => Err(ToolError::invalid(
                second,
                format!(
                    "give exactly one source, not {}: {ONE_SOURCE}",
                    given.join(" and ")
                ),
            )),
            ["file_bytes_base64"] if p.filename.is_none() => Err(ToolError::invalid(
                "filename",
                "'filename' is required with file_bytes_base64, e.g. \"paper.pdf\"",
            )),
            [_] => Ok(()),
        }
    }

    async fn run(p: UploadAttachmentParams, ctx: &ToolContext) -> Result<Attached, ToolError> {
        // With file_bytes_base64 the name goes into the source; otherwise it overrides the
        // path's or URL's name.
        let filename = p.filename.map(NonBlank::into_string);
        let (spec, filename) = match (p.file_path, p.file_url, p.file_bytes_base64, filename) {
            (Some(path), None, None, name) => (SourceSpec::Path(path.into_string().into()), name),
            (None, Some(url), None, name) => (SourceSpec::Url(url.into_string()), name),
            (None, None, Some(data), Some(filename)) => {
                let data = data.into_string();
                (SourceSpec::Base64 { data, filename }, None)
            }
            // `validate` refused every other combination.
            _ => return Err(ToolError::invalid("file_path", ONE_SOURCE)),
        };
        let options = PrepareOptions {
            content_type: given(p.content_type),
            filename,
            require_pdf: false,
            input_field: None,
        };
        let title = given(p.title);
        let lib = ctx.svc.library(library(p.library))?;
        let parent = p.item_key.key();
        let source = (spec, options);
        if p.dry_run {
            let plan = ctx
                .svc
                .plan_attach(lib, parent, title.as_deref(), source, &ctx.cancel)
                .await?;
            return Ok(Attached::planned(p.item_key.as_str(), plan));
        }
        let (progress, cancel) = (ctx.progress.clone(), &ctx.cancel);
        let up = ctx
            .svc
            .attach(lib, parent, title.as_deref(), source, progress, cancel)
            .await?;
        Ok(Attached::new(p.item_key.as_str(), up))
    }
}
