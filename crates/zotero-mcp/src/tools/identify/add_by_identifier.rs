//! `zotero_add_by_identifier`: add papers by DOI, arXiv id, ISBN, PMID or PMCID (or a URL
//! carrying one), with their metadata from the services that registered them and, when
//! there is one, their PDF, never twice (see `crate::service::identify`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::service::identify::{add_by_identifiers, AddOutcome, AddRequest, AddStatus, PdfStatus};
use crate::tools::collections::add_item_to_collection::collection_target;
use crate::tools::params::{library, limits, LibraryParam, List, NonBlank, ObjectKey, Tags, Text};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_add_by_identifier` tool.
pub struct AddByIdentifier;

/// The most identifiers one call takes.
pub const MAX_IDENTIFIERS: usize = 20;

/// The arguments of `zotero_add_by_identifier`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddByIdentifierParams {
    /// 1 to 20 of: DOI (10.1038/…, doi:…, https://doi.org/…), arXiv id or URL, ISBN-10/13, PMID, PMCID, PubMed URL
    pub identifiers: List<Text<{ limits::IDENTIFIER }>, MAX_IDENTIFIERS>,
    /// Put every created item into this collection
    pub collection_key: Option<ObjectKey>,
    /// Or into the collection of this name (any case)
    pub collection_name: Option<NonBlank<{ limits::COLLECTION_NAME }>>,
    /// Tags for every created item
    pub tags: Option<Tags>,
    /// Attach the PDF: arXiv's, or an open-access one from Unpaywall (needs ZOTERO_CONTACT_EMAIL)
    #[serde(default = "yes")]
    pub attach_pdf: bool,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Look everything up and answer what would be created, without writing
    #[serde(default)]
    pub dry_run: bool,
}

fn yes() -> bool {
    true
}

/// What happened to one identifier.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A new item was created
    Created,
    /// The library has this work already (item_key); nothing created
    AlreadyInLibrary,
    /// An earlier identifier of this call is the same work (its item_key)
    SameAsEarlier,
    /// dry_run: would be created
    WouldCreate,
    /// No service knows this identifier
    NotFound,
    /// See error
    Failed,
    /// The call was cancelled first
    NotAttempted,
}

/// What happened to the PDF.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum Pdf {
    Attached,
    AlreadyAttached,
    /// No open-access copy is known
    NoneOpenAccess,
    /// Not looked for (see pdf_reason)
    NotSearched,
    /// See pdf_reason; the item itself was added
    Failed,
}

/// What became of one identifier.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IdentifierResult {
    /// The identifier as given
    pub identifier: String,
    /// doi, arxiv, isbn, pmid or pmcid, when recognised
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// What happened to it
    pub status: Status,
    /// The item created, found or shared
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    /// The work's title
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The Zotero item type
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_type: Option<String>,
    /// The PDF's fate, when one was looked for
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf: Option<Pdf>,
    /// The PDF attachment's key
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf_attachment_key: Option<String>,
    /// Where the PDF came from (arXiv, Unpaywall)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf_source: Option<String>,
    /// Why the PDF failed or was not looked for
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf_reason: Option<String>,
    /// Why the identifier failed or was not found, and what was expected
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the services answered that was cut to fit Zotero's limits (a field over 65,535
    /// bytes, a creator name over 255 characters)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<String>,
    /// Opens the item in the Zotero desktop app
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

/// What `zotero_add_by_identifier` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AddByIdentifierData {
    /// One per identifier, in the order given
    pub results: Vec<IdentifierResult>,
    /// Items created
    pub created: usize,
    /// Identifiers whose work the library had already
    pub already_in_library: usize,
    /// Identifiers not added (not found, failed, not attempted)
    pub not_added: usize,
    /// Nothing was written
    pub dry_run: bool,
}

impl ZoteroTool for AddByIdentifier {
    const NAME: &'static str = "zotero_add_by_identifier";
    const TITLE: &'static str = "Add papers by identifier";
    const DESCRIPTION: &'static str = "Add 1-20 papers or books by DOI, arXiv id, ISBN, PMID or \
        PMCID (or a doi.org, arxiv.org or PubMed URL), with metadata from the registration \
        agencies and, with attach_pdf (default), the arXiv or an open-access PDF. Never twice: a \
        work already in the library is answered (already_in_library). Undo: zotero_trash_items.";
    const HINTS: Hints = Hints::ADD_IDEMPOTENT;
    const SET: ToolSet = ToolSet::Identify;
    type Params = AddByIdentifierParams;
    type Data = AddByIdentifierData;

    fn validate(p: &AddByIdentifierParams) -> Result<(), ToolError> {
        if p.identifiers.is_empty() {
            return Err(ToolError::invalid(
                "identifiers",
                "give 1 to 20 identifiers (DOI, arXiv id, ISBN, PMID, PMCID)",
            ));
        }
        if p.collection_key.is_some() || p.collection_name.is_some() {
            collection_target(&p.collection_key, &p.collection_name)?;
        }
        Ok(())
    }

    async fn run(
        p: AddByIdentifierParams,
        ctx: &ToolContext,
    ) -> Result<AddByIdentifierData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let collection = if p.collection_key.is_some() || p.collection_name.is_some() {
            let target = collection_target(&p.collection_key, &p.collection_name)?;
            Some(lib.resolve_collection(&target, &ctx.cancel).await?)
        } else {
            None
        };
        let req = AddRequest {
            inputs: p
                .identifiers
                .iter()
                .map(|t| t.as_str().to_string())
                .collect(),
            collection,
            tags: p.tags.map(Tags::into_strings).unwrap_or_default(),
            attach_pdf: p.attach_pdf,
            dry_run: p.dry_run,
        };
        let outcomes =
            add_by_identifiers(&ctx.svc, lib, req, ctx.progress.clone(), &ctx.cancel).await?;
        let results: Vec<IdentifierResult> = outcomes
            .into_iter()
            .map(|o| to_result(o, lib.name()))
            .collect();
        let count = |f: fn(&Status) -> bool| results.iter().filter(|r| f(&r.status)).count();
        Ok(AddByIdentifierData {
            created: count(|s| matches!(s, Status::Created)),
            already_in_library: count(|s| matches!(s, Status::AlreadyInLibrary)),
            not_added: count(|s| {
                matches!(s, Status::NotFound | Status::Failed | Status::NotAttempted)
            }),
            results,
            dry_run: p.dry_run,
        })
    }
}

fn to_result(o: AddOutcome, lib: zotero_api::LibraryRef) -> IdentifierResult {
    let zotero_url = o
        .item_key
        .as_deref()
        .and_then(|k| zotero_api::ObjectKey::parse(k).ok())
        .map(|k| lib.zotero_url(&k));
    let (pdf, pdf_attachment_key, pdf_source, pdf_reason) = match o.pdf {
        Some(p) => (
            Some(match p.status {
                PdfStatus::Attached => Pdf::Attached,
                PdfStatus::AlreadyAttached => Pdf::AlreadyAttached,
                PdfStatus::NoneOpenAccess => Pdf::NoneOpenAccess,
                PdfStatus::NotSearched => Pdf::NotSearched,
                PdfStatus::Failed => Pdf::Failed,
            }),
            p.attachment_key,
            p.source,
            p.reason,
        ),
        None => (None, None, None, None),
    };
    IdentifierResult {
        identifier: crate::tools::params::quote(&o.input),
        kind: o.kind,
        status: match o.status {
            AddStatus::Created => Status::Created,
            AddStatus::AlreadyInLibrary => Status::AlreadyInLibrary,
            AddStatus::SameAsEarlier => Status::SameAsEarlier,
            AddStatus::WouldCreate => Status::WouldCreate,
            AddStatus::NotFound => Status::NotFound,
            AddStatus::Failed => Status::Failed,
            AddStatus::NotAttempted => Status::NotAttempted,
        },
        item_key: o.item_key,
        title: o.title,
        item_type: o.item_type,
        pdf,
        pdf_attachment_key,
        pdf_source,
        pdf_reason,
        error: o.error,
        cut: o.cut,
        zotero_url,
    }
}
