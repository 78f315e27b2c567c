//! Adding papers by what identifies them (`zotero_add_by_identifier`, `zotero-mcp add`):
//! parse each identifier, ask the services that registered it (a batch per service where
//! the service takes one: arXiv, NCBI), map their answer to a Zotero item, look for the same
//! work in the library and among the call's own identifiers, create what is missing exactly
//! once, and attach a PDF (arXiv's, or an open-access one from Unpaywall) through the upload
//! path with all its guarantees.

use std::collections::HashMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::identify::Draft;
use zotero_api::model::Creator;
use zotero_api::upload::ProgressFn;
use zotero_api::Library;
use zotero_metadata::identifiers::{self, Identifier};
use zotero_metadata::services::ServiceError;
use zotero_metadata::work_ids::WorkIds;
use zotero_metadata::zotero_item::{CreatorName, ZoteroItemDraft};
use zotero_metadata::ArxivEntry;
use zotero_sources::{PrepareOptions, SourceSpec};

use crate::mcp::envelope::ToolError;
use crate::service::time::UtcTime;
use crate::service::ZoteroService;

/// What to add and where.
pub struct AddRequest {
    pub inputs: Vec<String>,
    pub collection: Option<String>,
    pub tags: Vec<String>,
    pub attach_pdf: bool,
    pub dry_run: bool,
}

/// What happened to one identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddStatus {
    Created,
    /// The library has the work already (`item_key`); nothing created.
    AlreadyInLibrary,
    /// Another identifier of this call is the same work (its item is `item_key`).
    SameAsEarlier,
    /// Dry run: would be created.
    WouldCreate,
    /// No service knows it.
    NotFound,
    Failed,
    /// The call was cancelled before its turn.
    NotAttempted,
}

/// What happened to the PDF of one identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdfStatus {
    Attached,
    AlreadyAttached,
    /// Unpaywall knows no open-access copy (or the work has no DOI to ask about).
    NoneOpenAccess,
    /// Not looked for, and why (`attach_pdf: false`, no contact address for Unpaywall, dry run).
    NotSearched,
    Failed,
}

#[derive(Debug, Clone)]
pub struct PdfOutcome {
    pub status: PdfStatus,
    pub attachment_key: Option<String>,
    pub source: Option<String>,
    /// Why it failed, or why it was not looked for.
    pub reason: Option<String>,
}

#[derive(Debug, Clone)]
pub struct AddOutcome {
    pub input: String,
    pub kind: Option<&'static str>,
    pub status: AddStatus,
    pub item_key: Option<String>,
    pub title: Option<String>,
    pub item_type: Option<String>,
    pub pdf: Option<PdfOutcome>,
    pub error: Option<String>,
    /// What was cut to fit Zotero's limits (field names and sizes, no values).
    pub cut: Vec<String>,
}

impl AddOutcome {
    fn new(input: &str, kind: Option<&'static str>, status: AddStatus) -> Self {
        Self {
            input: input.to_string(),
            kind,
            status,
            item_key: None,
            title: None,
            item_type: None,
            pdf: None,
            error: None,
            cut: Vec::new(),
        }
    }

    fn failed(input: &str, kind: Option<&'static str>, error: String) -> Self {
        let mut o = Self::new(input, kind, AddStatus::Failed);
        o.error = Some(error);
        o
    }
}

/// What a service said about one identifier.
enum Found {
    Draft(Box<ZoteroItemDraft>),
    Unknown(String),
    Failed(String),
}

/// Adds every identifier; one outcome per input, in order. `Err` only when nothing could be
/// done at all (the library cannot be written, the collection does not exist).
pub async fn add_by_identifiers(
    svc: &ZoteroService,
    lib: Library<'_>,
    req: AddRequest,
    progress: Option<ProgressFn>,
    cancel: &CancellationToken,
) -> Result<Vec<AddOutcome>, ToolError> {
    lib.require_write(false, cancel).await?;
    let collection_key = req.collection.clone();
    let total = req.inputs.len() as u64;
    let report = |done: usize| {
        if let Some(p) = &progress {
            p(done as u64, total);
        }
    };
    let parsed: Vec<Result<Identifier, String>> = req
        .inputs
        .iter()
        .map(|i| identifiers::parse(i).map_err(|e| e.to_string()))
        .collect();

    // The batches: every arXiv id in one feed, every PubMed id in one summary.
    let arxiv_ids: Vec<String> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().and_then(Identifier::arxiv_id))
        .map(|a| a.canonical())
        .collect();
    let arxiv = if arxiv_ids.is_empty() || cancel.is_cancelled() {
        HashMap::new()
    } else {
        fetch_arxiv(svc, &arxiv_ids, cancel).await
    };
    let pmcids: Vec<String> = parsed
        .iter()
        .filter_map(|p| match p {
            Ok(Identifier::Pmcid(c)) => Some(c.canonical()),
            _ => None,
        })
        .collect();
    let pmc_to_pmid = if pmcids.is_empty() || cancel.is_cancelled() {
        HashMap::new()
    } else {
        fetch_pmc(svc, &pmcids, cancel).await
    };
    let mut pmids: Vec<String> = parsed
        .iter()
        .filter_map(|p| match p {
            Ok(Identifier::Pmid(m)) => Some(m.canonical()),
            _ => None,
        })
        .collect();
    pmids.extend(
        pmc_to_pmid
            .values()
            .filter_map(|r| r.as_ref().ok().cloned()),
    );
    pmids.sort();
    pmids.dedup();
    let pubmed = if pmids.is_empty() || cancel.is_cancelled() {
        HashMap::new()
    } else {
        fetch_pubmed(svc, &pmids, cancel).await
    };

    let mut outcomes: Vec<AddOutcome> = Vec::new();
    // The works created or found in this call: their identifiers and their item.
    let mut seen: Vec<(WorkIds, String, String)> = Vec::new();
    for (i, (input, parsed)) in req.inputs.iter().zip(parsed).enumerate() {
        if cancel.is_cancelled() {
            outcomes.push(AddOutcome::new(input, None, AddStatus::NotAttempted));
            continue;
        }
        let id = match parsed {
            Ok(id) => id,
            Err(why) => {
                outcomes.push(AddOutcome::failed(input, None, why));
                report(i + 1);
                continue;
            }
        };
        let kind = Some(id.kind().name());
        let cut_to_fit: Vec<String>;
        let found = match &id {
            _ if id.arxiv_id().is_some() => {
                let a = id.arxiv_id();
                let base = a.as_ref().map(|a| a.canonical()).unwrap_or_default();
                match arxiv.get(&base) {
                    Some(Ok(entry)) => {
                        arxiv_draft(svc, entry, a.and_then(|a| a.version), cancel).await
                    }
                    Some(Err(why)) => Found::Failed(why.clone()),
                    None => Found::Unknown("arXiv has no such paper".into()),
                }
            }
            Identifier::Doi(doi) => fetch_doi(svc, doi.as_str(), cancel).await,
            Identifier::Isbn(isbn) => fetch_isbn(svc, isbn.isbn13(), cancel).await,
            Identifier::Pmid(m) => pubmed
                .get(&m.canonical())
                .map(clone_found)
                .unwrap_or_else(|| Found::Unknown("PubMed has no such article".into())),
            Identifier::Pmcid(c) => match pmc_to_pmid.get(&c.canonical()) {
                Some(Ok(pmid)) => pubmed
                    .get(pmid)
                    .map(clone_found)
                    .unwrap_or_else(|| Found::Unknown("PubMed has no such article".into())),
                Some(Err(why)) => Found::Unknown(why.clone()),
                None => Found::Unknown("the PMC ID converter does not know it".into()),
            },
            Identifier::Arxiv(_) => Found::Unknown("arXiv has no such paper".into()),
        };
        let mut draft = match found {
            Found::Draft(mut d) => match d.fit_zotero_limits() {
                Ok(cut) => {
                    if !cut.is_empty() {
                        tracing::info!(kind = ?kind, cut = ?cut, "metadata cut to Zotero's limits");
                    }
                    cut_to_fit = cut;
                    *d
                }
                Err(e) => {
                    outcomes.push(AddOutcome::failed(input, kind, e.to_string()));
                    report(i + 1);
                    continue;
                }
            },
            Found::Unknown(why) => {
                let mut o = AddOutcome::new(input, kind, AddStatus::NotFound);
                o.error = Some(why);
                outcomes.push(o);
                report(i + 1);
                continue;
            }
            Found::Failed(why) => {
                outcomes.push(AddOutcome::failed(input, kind, why));
                report(i + 1);
                continue;
            }
        };
        let ids = work_ids(&id, &draft);
        let title = draft.fields.get("title").cloned().unwrap_or_default();
        let mut outcome = AddOutcome::new(input, kind, AddStatus::Created);
        outcome.cut = cut_to_fit;
        outcome.title = Some(title.clone());
        outcome.item_type = Some(draft.item_type.clone());

        if let Some((_, key, _)) = seen.iter().find(|(w, _, _)| w.overlaps(&ids)) {
            outcome.status = AddStatus::SameAsEarlier;
            outcome.item_key = Some(key.clone());
            outcomes.push(outcome);
            report(i + 1);
            continue;
        }
        let searched: Vec<String> = [&ids.doi, &ids.arxiv, &ids.pmid]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let found = if ids.is_empty() {
            Ok(None)
        } else {
            lib.find_same_work(&title, &searched, |data| ids.found_in(data), cancel)
                .await
        };
        match found {
            Ok(Some((key, _))) => {
                outcome.status = AddStatus::AlreadyInLibrary;
                outcome.item_key = Some(key.clone());
                seen.push((ids.clone(), key.clone(), title.clone()));
                if req.attach_pdf && !req.dry_run {
                    outcome.pdf = Some(match existing_pdf(lib, &key, cancel).await {
                        Some(pdf) => pdf,
                        None => attach_pdf(svc, lib, &key, &id, &ids, cancel).await,
                    });
                }
                outcomes.push(outcome);
                report(i + 1);
                continue;
            }
            Ok(None) => {}
            Err(e) => {
                outcomes.push(AddOutcome::failed(
                    input,
                    kind,
                    format!("could not look for it in the library: {e}"),
                ));
                report(i + 1);
                continue;
            }
        }
        if req.dry_run {
            outcome.status = AddStatus::WouldCreate;
            outcome.pdf = Some(PdfOutcome {
                status: PdfStatus::NotSearched,
                attachment_key: None,
                source: None,
                reason: Some("dry run".into()),
            });
            outcomes.push(outcome);
            report(i + 1);
            continue;
        }
        draft.tags = req.tags.clone();
        let new = to_draft(&draft, collection_key.iter().cloned().collect());
        match lib.create_draft(&new, cancel).await {
            Ok(created) => {
                outcome.item_key = Some(created.key.clone());
                seen.push((ids.clone(), created.key.clone(), title.clone()));
                outcome.pdf = Some(if req.attach_pdf {
                    attach_pdf(svc, lib, &created.key, &id, &ids, cancel).await
                } else {
                    PdfOutcome {
                        status: PdfStatus::NotSearched,
                        attachment_key: None,
                        source: None,
                        reason: Some("attach_pdf is false".into()),
                    }
                });
            }
            Err(e) => {
                outcome.status = AddStatus::Failed;
                outcome.error = Some(format!("could not create the item: {e}"));
            }
        }
        outcomes.push(outcome);
        report(i + 1);
    }
    for o in &mut outcomes {
        scrub_outcome(svc, o);
    }
    Ok(outcomes)
}

/// The most characters of an outcome's error (several services' messages joined).
const OUTCOME_TEXT_MAX: usize = 1_000;

/// The one path of what the services and Zotero said into the answer (and the CLI's lines):
/// configured secrets scrubbed, lengths bounded.
fn scrub_outcome(svc: &ZoteroService, o: &mut AddOutcome) {
    let clean = |t: &mut String| *t = svc.metadata.clean_to(t, OUTCOME_TEXT_MAX);
    if let Some(e) = &mut o.error {
        clean(e);
    }
    if let Some(reason) = o.pdf.as_mut().and_then(|p| p.reason.as_mut()) {
        clean(reason);
    }
}

fn clone_found(f: &Result<ZoteroItemDraft, String>) -> Found {
    // Shared by every identifier of the work (a PMCID and its PMID).
    match f {
        Ok(d) => Found::Draft(Box::new(d.clone())),
        Err(why) => Found::Failed(why.clone()),
    }
}

/// The identifiers of the work: the one given, and those the metadata carries.
fn work_ids(id: &Identifier, draft: &ZoteroItemDraft) -> WorkIds {
    let mut ids = WorkIds::default();
    ids.add(id);
    let mut data = serde_json::Map::new();
    for (field, value) in &draft.fields {
        data.insert(field.clone(), Value::from(value.as_str()));
    }
    data.insert("extra".into(), Value::from(draft.extra_lines.join("\n")));
    let carried = WorkIds::of_item(&data);
    ids.doi = ids.doi.or(carried.doi);
    ids.arxiv = ids.arxiv.or(carried.arxiv);
    ids.pmid = ids.pmid.or(carried.pmid);
    for i in carried.isbn13 {
        if !ids.isbn13.contains(&i) {
            ids.isbn13.push(i);
        }
    }
    ids
}

fn to_draft(d: &ZoteroItemDraft, collections: Vec<String>) -> Draft {
    let mut fields = d.fields.clone();
    // As Zotero's translators do for what they fetched from the web: when it was fetched.
    if fields.contains_key("url") && !fields.contains_key("accessDate") {
        fields.insert("accessDate".into(), UtcTime::now().zotero());
    }
    if !d.extra_lines.is_empty() {
        fields.insert("extra".into(), d.extra_lines.join("\n"));
    }
    Draft {
        item_type: d.item_type.clone(),
        fields,
        creators: d
            .creators
            .iter()
            .map(|c| match &c.name {
                CreatorName::Split {
                    first_name,
                    last_name,
                } => Creator {
                    creator_type: c.creator_type.clone(),
                    first_name: Some(first_name.clone()),
                    last_name: Some(last_name.clone()),
                    name: None,
                },
                CreatorName::Single { name } => Creator {
                    creator_type: c.creator_type.clone(),
                    first_name: None,
                    last_name: None,
                    name: Some(name.clone()),
                },
            })
            .collect(),
        tags: d.tags.clone(),
        collections,
    }
}

fn service_error(e: ServiceError) -> String {
    e.to_string()
}

async fn fetch_doi(svc: &ZoteroService, doi: &str, cancel: &CancellationToken) -> Found {
    let m = &svc.metadata;
    let mut failures: Vec<String> = Vec::new();
    match m.doi_csl(doi, cancel).await {
        Ok(Some(csl)) => match zotero_metadata::csl::from_doi_csl_json(&csl) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("doi.org's CSL-JSON: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(service_error(e)),
    }
    match m.crossref_work(doi, cancel).await {
        Ok(Some(work)) => match zotero_metadata::from_crossref_work(&work) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("Crossref's record: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(service_error(e)),
    }
    match m.datacite(doi, cancel).await {
        Ok(Some(attrs)) => match zotero_metadata::from_datacite(&attrs) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("DataCite's record: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(service_error(e)),
    }
    if failures.is_empty() {
        Found::Unknown("no registration agency knows this DOI (doi.org, Crossref, DataCite)".into())
    } else {
        Found::Failed(failures.join("; "))
    }
}

async fn fetch_isbn(svc: &ZoteroService, isbn13: &str, cancel: &CancellationToken) -> Found {
    match svc.metadata.openlibrary_isbn(isbn13, cancel).await {
        Ok(Some(record)) => match zotero_metadata::from_open_library(&record, isbn13) {
            Ok(d) => Found::Draft(Box::new(d)),
            Err(e) => Found::Failed(format!("Open Library's record: {e}")),
        },
        Ok(None) => Found::Unknown("Open Library has no book with this ISBN".into()),
        Err(e) => Found::Failed(service_error(e)),
    }
}

/// Every arXiv id's entry from one feed (or why there is none), by id without version.
async fn fetch_arxiv(
    svc: &ZoteroService,
    ids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<ArxivEntry, String>> {
    let mut out = HashMap::new();
    let feed = match svc.metadata.arxiv_feed(ids, cancel).await {
        Ok(feed) => feed,
        Err(e) => {
            let why = service_error(e);
            for id in ids {
                out.insert(id.clone(), Err(why.clone()));
            }
            return out;
        }
    };
    match zotero_metadata::parse_arxiv_feed(&feed) {
        Ok(entries) => {
            for entry in entries {
                let id = zotero_sources::ArxivId::parse(&entry.id)
                    .map(|a| a.canonical())
                    .unwrap_or_else(|_| entry.id.clone());
                out.insert(id, Ok(entry));
            }
        }
        Err(zotero_metadata::MappingError::NotFound { .. }) => {}
        Err(e) => {
            for id in ids {
                out.insert(id.clone(), Err(format!("arXiv's feed: {e}")));
            }
        }
    }
    out
}

/// An arXiv paper's item; published in a journal (arXiv lists its DOI), the journal's
/// metadata merged in as Zotero's arXiv translator does.
async fn arxiv_draft(
    svc: &ZoteroService,
    entry: &ArxivEntry,
    version: Option<u32>,
    cancel: &CancellationToken,
) -> Found {
    let draft = match zotero_metadata::from_arxiv_entry(entry, version) {
        Ok(d) => d,
        Err(e) => return Found::Failed(format!("arXiv's record: {e}")),
    };
    if let Some(doi) = &entry.doi {
        if let Found::Draft(published) = fetch_doi(svc, doi, cancel).await {
            if let Ok(merged) = zotero_metadata::merge_arxiv_with_published(&draft, &published) {
                return Found::Draft(Box::new(merged));
            }
        }
    }
    Found::Draft(Box::new(draft))
}

/// PMCID → PMID through the PMC ID converter.
async fn fetch_pmc(
    svc: &ZoteroService,
    pmcids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<String, String>> {
    let mut out = HashMap::new();
    match svc.metadata.pmc_ids(pmcids, cancel).await {
        Ok(records) => {
            for r in records {
                let Some(pmcid) = r.get("pmcid").and_then(Value::as_str) else {
                    continue;
                };
                let pmid = r.get("pmid").and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                });
                out.insert(
                    pmcid.to_uppercase(),
                    pmid.ok_or_else(|| "the PMC ID converter knows no PubMed id for it".into()),
                );
            }
        }
        Err(e) => {
            let why = service_error(e);
            for c in pmcids {
                out.insert(c.clone(), Err(why.clone()));
            }
        }
    }
    out
}

/// Every PMID's draft from one summary request.
async fn fetch_pubmed(
    svc: &ZoteroService,
    pmids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<ZoteroItemDraft, String>> {
    let mut out = HashMap::new();
    match svc.metadata.pubmed_summaries(pmids, cancel).await {
        Ok(result) => {
            for pmid in pmids {
                let Some(record) = result.get(pmid) else {
                    continue;
                };
                if record.get("error").is_some() {
                    continue;
                }
                out.insert(
                    pmid.clone(),
                    zotero_metadata::from_pubmed_summary(record, pmid)
                        .map_err(|e| format!("PubMed's record: {e}")),
                );
            }
        }
        Err(e) => {
            let why = service_error(e);
            for m in pmids {
                out.insert(m.clone(), Err(why.clone()));
            }
        }
    }
    out
}

/// The PDF an item found in the library has already (any PDF attachment): then none is
/// added. `None` when it has none, or its attachments could not be read (then the upload
/// path's own check for the same file still stands).
async fn existing_pdf(
    lib: Library<'_>,
    item_key: &str,
    cancel: &CancellationToken,
) -> Option<PdfOutcome> {
    let key = zotero_api::ObjectKey::parse(item_key).ok()?;
    let item = lib.get_item(&key, cancel).await.ok()?;
    let pdf = item
        .attachments?
        .into_iter()
        .find(|a| a.content_type.as_deref() == Some("application/pdf"))?;
    Some(PdfOutcome {
        status: PdfStatus::AlreadyAttached,
        attachment_key: Some(pdf.attachment_key),
        source: None,
        reason: None,
    })
}

/// The PDF for a new or found item: arXiv's for an arXiv paper, else an open-access copy
/// Unpaywall knows of (only with a contact address). The upload path keeps its promises:
/// no orphan attachment, the size limit, the PDF check, no second copy of the same file.
async fn attach_pdf(
    svc: &ZoteroService,
    lib: Library<'_>,
    item_key: &str,
    id: &Identifier,
    ids: &WorkIds,
    cancel: &CancellationToken,
) -> PdfOutcome {
    let Ok(parent) = zotero_api::ObjectKey::parse(item_key) else {
        return pdf_failed("the item key Zotero answered is not a key".into(), None);
    };
    let (url, filename, source) =
        if let Some(a) = id.arxiv_id() {
            (
                a.pdf_url(&svc.arxiv_base),
                a.filename(),
                "arXiv".to_string(),
            )
        } else {
            let Some(doi) = &ids.doi else {
                return PdfOutcome {
                    status: PdfStatus::NoneOpenAccess,
                    attachment_key: None,
                    source: None,
                    reason: Some("no DOI to look for an open-access copy with".into()),
                };
            };
            match svc.metadata.unpaywall(doi, cancel).await {
                Err(ServiceError::NoContact) => return PdfOutcome {
                    status: PdfStatus::NotSearched,
                    attachment_key: None,
                    source: None,
                    reason: Some(
                        "set ZOTERO_CONTACT_EMAIL to look for open-access PDFs through Unpaywall"
                            .into(),
                    ),
                },
                Err(e) => return pdf_failed(service_error(e), Some("Unpaywall")),
                Ok(record) => {
                    let url = record
                        .as_ref()
                        .and_then(|r| r.pointer("/best_oa_location/url_for_pdf"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    match url {
                        Some(u) => (u, pdf_name(doi), "Unpaywall".to_string()),
                        None => {
                            return PdfOutcome {
                                status: PdfStatus::NoneOpenAccess,
                                attachment_key: None,
                                source: Some("Unpaywall".into()),
                                reason: None,
                            }
                        }
                    }
                }
            }
        };
    let options = PrepareOptions {
        content_type: Some("application/pdf".into()),
        filename: Some(filename),
        require_pdf: true,
        input_field: None,
    };
    match svc
        .attach(
            lib,
            &parent,
            None,
            (SourceSpec::Url(url), options),
            None,
            cancel,
        )
        .await
    {
        Ok(up) => PdfOutcome {
            status: if up.already_attached {
                PdfStatus::AlreadyAttached
            } else {
                PdfStatus::Attached
            },
            attachment_key: Some(up.attachment_key),
            source: Some(source),
            reason: None,
        },
        Err(e) => pdf_failed(e.message, Some(&source)),
    }
}

fn pdf_failed(reason: String, source: Option<&str>) -> PdfOutcome {
    PdfOutcome {
        status: PdfStatus::Failed,
        attachment_key: None,
        source: source.map(str::to_string),
        reason: Some(reason),
    }
}

/// A file name for a DOI's PDF: the DOI with what file systems dislike replaced.
fn pdf_name(doi: &str) -> String {
    let safe: String = doi
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    format!("{safe}.pdf")
}
