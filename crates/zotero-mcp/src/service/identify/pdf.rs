//! The PDF of an added work: the one the item has already, or arXiv's, or an open-access copy
//! Unpaywall knows of, attached through the upload path.

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::Library;
use zotero_metadata::identifiers::Identifier;
use zotero_metadata::services::ServiceError;
use zotero_metadata::work_ids::WorkIds;
use zotero_sources::{PrepareOptions, SourceSpec};

use super::outcome::{PdfOutcome, PdfStatus};
use crate::service::ZoteroService;

/// The PDF an item found in the library has already (any PDF attachment): then none is
/// added. `None` when it has none, or its attachments could not be read (then the upload
/// path's own check for the same file still stands).
pub(super) async fn existing_pdf(
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
pub(super) async fn attach_pdf(
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
                Err(e) => return pdf_failed(e.to_string(), Some("Unpaywall")),
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
