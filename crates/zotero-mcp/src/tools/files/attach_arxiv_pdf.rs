//! `zotero_attach_arxiv_pdf`: fetch an arXiv PDF and attach it to an item.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::params::{given, library, Arxiv, FieldText, LibraryParam, ObjectKey};
use crate::tools::support::output::Attached;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_sources::{PrepareOptions, SourceSpec};

/// The `zotero_attach_arxiv_pdf` tool.
pub struct AttachArxivPdf;

/// The arguments of `zotero_attach_arxiv_pdf`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachArxivPdfParams {
    /// Parent item
    pub item_key: ObjectKey,
    /// arXiv id or abs/pdf URL, e.g. 1706.03762v5
    pub arxiv_id: Arxiv,
    /// Default: <id>.pdf
    pub title: Option<FieldText>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Preview; write nothing
    #[serde(default)]
    pub dry_run: bool,
}

/// What `zotero_attach_arxiv_pdf` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AttachArxivPdfData {
    /// The attachment made (or found already there)
    #[serde(flatten)]
    pub attached: Attached,
    /// The id as fetched (with its version when one was given)
    pub arxiv_id: String,
    /// Where the PDF came from
    pub pdf_url: String,
}

impl ZoteroTool for AttachArxivPdf {
    const NAME: &'static str = "zotero_attach_arxiv_pdf";
    const TITLE: &'static str = "Attach arXiv PDF";
    const DESCRIPTION: &'static str = "Attach an arXiv paper's PDF to an item. All or nothing; a \
        repeat answers the existing attachment (already_attached).";
    const HINTS: Hints = Hints::CREATE;
    const SET: ToolSet = ToolSet::Files;
    type Params = AttachArxivPdfParams;
    type Data = AttachArxivPdfData;

    async fn run(
        p: AttachArxivPdfParams,
        ctx: &ToolContext,
    ) -> Result<AttachArxivPdfData, ToolError> {
        let id = p.arxiv_id.0;
        let pdf_url = id.pdf_url(&ctx.svc.arxiv_base);
        let options = PrepareOptions {
            content_type: Some("application/pdf".into()),
            filename: Some(id.filename()),
            require_pdf: true,
            input_field: Some("arxiv_id"),
        };
        let title = given(p.title);
        let source = SourceSpec::Url(pdf_url.clone());
        let lib = ctx.svc.library(library(p.library))?;
        let parent = p.item_key.key();
        let source = (source, options);
        let attached = if p.dry_run {
            let plan = ctx
                .svc
                .plan_attach(lib, parent, title.as_deref(), source, &ctx.cancel)
                .await?;
            Attached::planned(p.item_key.as_str(), plan)
        } else {
            let (progress, cancel) = (ctx.progress.clone(), &ctx.cancel);
            let up = ctx
                .svc
                .attach(lib, parent, title.as_deref(), source, progress, cancel)
                .await?;
            Attached::new(p.item_key.as_str(), up)
        };
        Ok(AttachArxivPdfData {
            attached,
            arxiv_id: id.id,
            pdf_url,
        })
    }
}
