//! Adding papers by what identifies them (`zotero_add_by_identifier`, `zotero-mcp add`):
//! parse each identifier, ask the services that registered it (a batch per service where
//! the service takes one: arXiv, NCBI), map their answer to a Zotero item, look for the same
//! work in the library and among the call's own identifiers, create what is missing exactly
//! once, and attach a PDF (arXiv's, or an open-access one from Unpaywall) through the upload
//! path with all its guarantees.

mod draft;
mod lookup;
mod outcome;
mod pdf;

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;
use zotero_api::upload::ProgressFn;
use zotero_api::Library;
use zotero_metadata::identifiers::{self, Identifier, IdentifierError};
use zotero_metadata::work_ids::WorkIds;

use self::draft::{to_draft, work_ids};
use self::lookup::{
    arxiv_draft, clone_found, fetch_arxiv, fetch_doi, fetch_isbn, fetch_pmc, fetch_pubmed, Found,
};
pub use self::outcome::{AddOutcome, AddStatus, PdfOutcome, PdfStatus};
use self::pdf::{attach_pdf, existing_pdf};
use crate::error::ToolError;
use crate::service::ZoteroService;

/// What to add and where.
pub struct AddRequest {
    pub inputs: Vec<String>,
    pub collection: Option<String>,
    pub tags: Vec<String>,
    pub attach_pdf: bool,
    pub dry_run: bool,
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
    let parsed: Vec<Result<Identifier, IdentifierError>> =
        req.inputs.iter().map(|i| identifiers::parse(i)).collect();

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
                outcomes.push(AddOutcome::failed(input, None, why.to_string()));
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
                    Some(Err(why)) => Found::Failed(why.to_string()),
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
                Some(Err(why)) => Found::Unknown(why.to_string()),
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
