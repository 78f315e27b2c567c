//! Asking the services that registered an identifier for its metadata: doi.org, Crossref and
//! DataCite for a DOI, Open Library for an ISBN, arXiv's feed and NCBI (PMC ID converter,
//! PubMed summaries) in one batch per service.

use std::collections::HashMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_metadata::services::ServiceError;
use zotero_metadata::zotero_item::ZoteroItemDraft;
use zotero_metadata::ArxivEntry;

use crate::service::ZoteroService;

/// Why a batch service has no answer for one identifier; the message says what went wrong
/// where, for the outcome's `error`.
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum LookupError {
    /// The service could not be asked, or answered an error (its message, shared by every
    /// identifier of the batch).
    #[error("{0}")]
    Service(String),
    /// arXiv's feed could not be read.
    #[error("arXiv's feed: {0}")]
    ArxivFeed(String),
    /// PubMed's summary of the article could not be mapped to an item.
    #[error("PubMed's record: {0}")]
    PubmedRecord(String),
    /// The PMC ID converter knows the PMCID but no PMID for it.
    #[error("the PMC ID converter knows no PubMed id for it")]
    NoPmid,
}

impl From<ServiceError> for LookupError {
    fn from(e: ServiceError) -> Self {
        Self::Service(e.to_string())
    }
}

/// What a service said about one identifier.
pub(super) enum Found {
    Draft(Box<ZoteroItemDraft>),
    Unknown(String),
    Failed(String),
}

pub(super) fn clone_found(f: &Result<ZoteroItemDraft, LookupError>) -> Found {
    // Shared by every identifier of the work (a PMCID and its PMID).
    match f {
        Ok(d) => Found::Draft(Box::new(d.clone())),
        Err(why) => Found::Failed(why.to_string()),
    }
}

pub(super) async fn fetch_doi(svc: &ZoteroService, doi: &str, cancel: &CancellationToken) -> Found {
    let m = &svc.metadata;
    let mut failures: Vec<String> = Vec::new();
    match m.doi_csl(doi, cancel).await {
        Ok(Some(csl)) => match zotero_metadata::csl::from_doi_csl_json(&csl) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("doi.org's CSL-JSON: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(e.to_string()),
    }
    match m.crossref_work(doi, cancel).await {
        Ok(Some(work)) => match zotero_metadata::from_crossref_work(&work) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("Crossref's record: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(e.to_string()),
    }
    match m.datacite(doi, cancel).await {
        Ok(Some(attrs)) => match zotero_metadata::from_datacite(&attrs) {
            Ok(d) => return Found::Draft(Box::new(d)),
            Err(e) => failures.push(format!("DataCite's record: {e}")),
        },
        Ok(None) => {}
        Err(e) => failures.push(e.to_string()),
    }
    if failures.is_empty() {
        Found::Unknown("no registration agency knows this DOI (doi.org, Crossref, DataCite)".into())
    } else {
        Found::Failed(failures.join("; "))
    }
}

pub(super) async fn fetch_isbn(
    svc: &ZoteroService,
    isbn13: &str,
    cancel: &CancellationToken,
) -> Found {
    match svc.metadata.openlibrary_isbn(isbn13, cancel).await {
        Ok(Some(record)) => match zotero_metadata::from_open_library(&record, isbn13) {
            Ok(d) => Found::Draft(Box::new(d)),
            Err(e) => Found::Failed(format!("Open Library's record: {e}")),
        },
        Ok(None) => Found::Unknown("Open Library has no book with this ISBN".into()),
        Err(e) => Found::Failed(e.to_string()),
    }
}

/// Every arXiv id's entry from one feed (or why there is none), by id without version.
pub(super) async fn fetch_arxiv(
    svc: &ZoteroService,
    ids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<ArxivEntry, LookupError>> {
    let mut out = HashMap::new();
    let feed = match svc.metadata.arxiv_feed(ids, cancel).await {
        Ok(feed) => feed,
        Err(e) => {
            let why = LookupError::from(e);
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
                out.insert(id.clone(), Err(LookupError::ArxivFeed(e.to_string())));
            }
        }
    }
    out
}

/// An arXiv paper's item; published in a journal (arXiv lists its DOI), the journal's
/// metadata merged in as Zotero's arXiv translator does.
pub(super) async fn arxiv_draft(
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
pub(super) async fn fetch_pmc(
    svc: &ZoteroService,
    pmcids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<String, LookupError>> {
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
                out.insert(pmcid.to_uppercase(), pmid.ok_or(LookupError::NoPmid));
            }
        }
        Err(e) => {
            let why = LookupError::from(e);
            for c in pmcids {
                out.insert(c.clone(), Err(why.clone()));
            }
        }
    }
    out
}

/// Every PMID's draft from one summary request.
pub(super) async fn fetch_pubmed(
    svc: &ZoteroService,
    pmids: &[String],
    cancel: &CancellationToken,
) -> HashMap<String, Result<ZoteroItemDraft, LookupError>> {
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
                        .map_err(|e| LookupError::PubmedRecord(e.to_string())),
                );
            }
        }
        Err(e) => {
            let why = LookupError::from(e);
            for m in pmids {
                out.insert(m.clone(), Err(why.clone()));
            }
        }
    }
    out
}
