//! `zotero_check_manuscript`: a draft checked against the library: its citations resolved,
//! its quotations looked for in the cited full texts, its retracted sources and a
//! collection's uncited items, a page of findings at a time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget;
use crate::error::ToolError;
use crate::service::research::manuscript::cites::Format;
use crate::service::research::manuscript::{
    self as check, CitationLine, Draft, QuotationLine, Report, RetractedLine, Summary, UncitedLine,
    MAX_DRAFT_BYTES,
};
use crate::tools::params::{library, null_is_default, LibraryParam, NonBlank, ObjectKey, Start};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_check_manuscript` tool.
pub struct CheckManuscript;

/// How a draft is written.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum FormatParam {
    Markdown,
    Latex,
    Text,
}

/// The arguments of `zotero_check_manuscript`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckManuscriptParams {
    /// The draft (at most 5 MB); or file_path
    #[serde(default)]
    #[schemars(length(max = 5_000_000))]
    pub text: Option<String>,
    /// The draft as a file where the server runs, within ZOTERO_UPLOAD_ROOTS if set
    #[serde(default)]
    pub file_path: Option<NonBlank<4_096, true>>,
    /// markdown (Pandoc), latex or text (DOIs); detected if not given
    #[serde(default)]
    pub format: Option<FormatParam>,
    /// A .bib file the LaTeX keys must be in (its DOIs resolve keys the library lacks)
    #[serde(default)]
    pub bib_path: Option<NonBlank<4_096, true>>,
    /// Report this collection's items the draft never cites
    #[serde(default)]
    pub collection_key: Option<ObjectKey>,
    /// Only findings to act on: citations not resolved or written wrongly, quotations not exact
    #[serde(default, deserialize_with = "null_is_default")]
    pub problems_only: bool,
    /// next_start of the previous page
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// One finding, by its kind.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Finding {
    /// A cited key or DOI and the item it resolves to
    Citation(CitationLine),
    /// A quotation and where it is in the cited full text
    Quotation(QuotationLine),
    /// A cited item that was retracted (Zotero's flag with its database, else a Crossref notice)
    Retracted(RetractedLine),
    /// An item of the collection the draft does not cite
    Uncited(UncitedLine),
}

impl Finding {
    fn is_problem(&self) -> bool {
        match self {
            Finding::Citation(c) => c.status != "resolved" || c.problem.is_some(),
            Finding::Quotation(q) => q.status != "exact",
            Finding::Retracted(_) | Finding::Uncited(_) => true,
        }
    }
}

/// What `zotero_check_manuscript` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckManuscriptData {
    /// How the draft was read: markdown, latex or text
    pub format: &'static str,
    /// Counts over the whole draft
    pub summary: Summary,
    /// Findings (all, or problems_only's) in all pages
    pub total: u64,
    /// This page's findings: citations in the order of the draft, then quotations, retracted
    /// sources and uncited items
    pub findings: Vec<Finding>,
    /// Where the next page starts (pass it as start); absent on the last page
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

fn too_large(field: &str, size: u64) -> ToolError {
    ToolError::invalid(
        field,
        format!(
            "{field} holds {size} bytes, more than the {MAX_DRAFT_BYTES} bytes (5 MB) one check \
             reads; check the draft a part at a time (a chapter per call)"
        ),
    )
    .with_detail("max_bytes", MAX_DRAFT_BYTES)
}

/// Reads a file argument as UTF-8 text, within the upload path policy and the 5 MB bound.
async fn read_text(
    ctx: &ToolContext,
    path: String,
    field: &'static str,
) -> Result<String, ToolError> {
    let read = ctx
        .svc
        .fetcher
        .read_local(path.into(), MAX_DRAFT_BYTES, field, &ctx.cancel)
        .await?;
    match read {
        zotero_sources::LocalRead::TooLarge { size } => Err(too_large(field, size)),
        zotero_sources::LocalRead::Bytes(bytes) => String::from_utf8(bytes).map_err(|e| {
            ToolError::invalid(
                field,
                format!(
                    "{field} is not UTF-8 text (a bad byte at {}); save the file as UTF-8 or pass \
                     it as text",
                    e.utf8_error().valid_up_to()
                ),
            )
        }),
    }
}

impl CheckManuscriptData {
    /// A page of `findings` from `start`, within the answer budget.
    fn page(report: Report, problems_only: bool, start: u64) -> Result<Self, ToolError> {
        let format = report.format.unwrap_or(Format::Text).name();
        let findings: Vec<Finding> = report
            .citations
            .into_iter()
            .map(Finding::Citation)
            .chain(report.quotations.into_iter().map(Finding::Quotation))
            .chain(report.retracted.into_iter().map(Finding::Retracted))
            .chain(report.uncited.into_iter().map(Finding::Uncited))
            .filter(|f| !problems_only || f.is_problem())
            .collect();
        let total = findings.len() as u64;
        if start > total {
            return Err(ToolError::invalid(
                "start",
                format!("'start' must be at most {total}, the findings of this draft, got {start}"),
            )
            .with_detail("total", total));
        }
        let mut data = CheckManuscriptData {
            format,
            summary: report.summary,
            total,
            findings: Vec::new(),
            next_start: Some(total),
        };
        let room = budget::ANSWER_CHARS.saturating_sub(budget::json_chars(&data) + 200);
        let rest: Vec<Finding> = findings.into_iter().skip(start as usize).collect();
        let (kept, cut) = budget::fit_page(rest, room);
        data.next_start = budget::next_start(start, kept.len(), cut, None);
        data.findings = kept;
        Ok(data)
    }
}

impl ZoteroTool for CheckManuscript {
    const NAME: &'static str = "zotero_check_manuscript";
    const TITLE: &'static str = "Check a manuscript";
    const DESCRIPTION: &'static str = "Check a draft (text or file_path; Pandoc [@key], LaTeX \
        \\cite{key}, or DOIs) against the library: each citation resolved by citation key or DOI \
        (else the closest items), each quotation found in the cited full text (exact or fuzzy, \
        page and zotero://open-pdf link), retracted sources, and collection_key's uncited items.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Research;
    type Params = CheckManuscriptParams;
    type Data = CheckManuscriptData;

    fn validate(p: &CheckManuscriptParams) -> Result<(), ToolError> {
        match (&p.text, &p.file_path) {
            (None, None) => Err(ToolError::invalid(
                "text",
                "give the draft as text, or as file_path",
            )),
            (Some(_), Some(_)) => Err(ToolError::invalid(
                "file_path",
                "give the draft as text or as file_path, not both",
            )),
            (Some(t), None) if t.len() as u64 > MAX_DRAFT_BYTES => {
                Err(too_large("text", t.len() as u64))
            }
            _ => Ok(()),
        }
    }

    async fn run(
        p: CheckManuscriptParams,
        ctx: &ToolContext,
    ) -> Result<CheckManuscriptData, ToolError> {
        let named = p
            .file_path
            .as_ref()
            .and_then(|f| Format::of_file_name(f.as_str()));
        let text = match (p.text, p.file_path) {
            (Some(t), _) => t,
            (None, Some(path)) => read_text(ctx, path.into(), "file_path").await?,
            (None, None) => String::new(),
        };
        let bib = match p.bib_path {
            Some(path) => Some(read_text(ctx, path.into(), "bib_path").await?),
            None => None,
        };
        let format = p.format.map(|f| match f {
            FormatParam::Markdown => Format::Markdown,
            FormatParam::Latex => Format::Latex,
            FormatParam::Text => Format::Text,
        });
        let draft = Draft {
            text,
            format: format.or(named),
            bib,
            collection: p.collection_key.map(|k| k.key().clone()),
        };
        let report = check::check(&ctx.svc, library(p.library), draft, &ctx.cancel).await?;
        CheckManuscriptData::page(report, p.problems_only, p.start.get())
    }
}
