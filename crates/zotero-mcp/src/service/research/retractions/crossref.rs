//! Crossref's side of the retraction check: the works of a batch of DOIs, and their
//! `updated-by` / `update-to` relations read as notices.

use std::collections::HashMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_metadata::identifiers::fold_doi;
use zotero_metadata::services::ServiceError;

use super::{Notice, RetractionState, RetractionStatus, MAX_NOTICES};
use crate::service::ZoteroService;

/// Crossref's works of one batch, by folded DOI ([`fold_doi`]).
pub(super) async fn fetch_works(
    svc: &ZoteroService,
    batch: &[(String, usize)],
    cancel: &CancellationToken,
) -> Result<HashMap<String, Value>, ServiceError> {
    let works = match batch {
        [(doi, _)] if doi.contains(',') => svc
            .metadata
            .crossref_work(doi, cancel)
            .await?
            .into_iter()
            .collect(),
        _ => {
            let dois: Vec<String> = batch.iter().map(|(d, _)| d.clone()).collect();
            svc.metadata.crossref_updates(&dois, cancel).await?
        }
    };
    Ok(works
        .into_iter()
        .filter_map(|w| {
            let doi = fold_doi(w.get("DOI")?.as_str()?);
            Some((doi, w))
        })
        .collect())
}

/// What Crossref's record of the item says.
pub(super) fn from_crossref(svc: &ZoteroService, s: &mut RetractionStatus, work: &Value) {
    s.notices = notices(svc, work.get("updated-by"));
    s.notice_for = notices(svc, work.get("update-to"));
    s.status = s
        .notices
        .iter()
        .map(|n| RetractionState::of_kind(&n.kind))
        .min()
        .unwrap_or(RetractionState::Clear);
}

/// Crossref's update relations (`updated-by` or `update-to`) as notices, gravest first,
/// each (DOI, kind, source) once.
fn notices(svc: &ZoteroService, relations: Option<&Value>) -> Vec<Notice> {
    let mut out: Vec<Notice> = Vec::new();
    for r in relations.and_then(Value::as_array).into_iter().flatten() {
        let text = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| svc.metadata.clean(s))
        };
        let kind = text("type")
            .unwrap_or_else(|| "update".into())
            .to_lowercase()
            .replace(['-', ' '], "_");
        let doi = text("DOI");
        let notice = Notice {
            url: doi.as_ref().map(|d| format!("https://doi.org/{d}")),
            doi,
            kind,
            source: text("source").unwrap_or_else(|| "publisher".into()),
            date: crossref_date(r.get("updated")),
            reasons: Vec::new(),
        };
        let same = |n: &Notice| {
            n.kind == notice.kind
                && n.source == notice.source
                && n.doi.as_deref().map(fold_doi) == notice.doi.as_deref().map(fold_doi)
        };
        if !out.iter().any(same) {
            out.push(notice);
        }
    }
    out.sort_by_key(|n| RetractionState::of_kind(&n.kind));
    out.truncate(MAX_NOTICES);
    out
}

/// A Crossref date (`{"date-parts": [[2020, 6, 1]], "date-time": "…"}`) as `YYYY-MM-DD`,
/// or as much of it as there is.
fn crossref_date(v: Option<&Value>) -> Option<String> {
    let v = v?;
    if let Some(t) = v.get("date-time").and_then(Value::as_str) {
        return t.get(..10).map(str::to_string);
    }
    let parts: Vec<i64> = v
        .get("date-parts")?
        .as_array()?
        .first()?
        .as_array()?
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    match parts.as_slice() {
        [y, m, d, ..] => Some(format!("{y:04}-{m:02}-{d:02}")),
        [y, m] => Some(format!("{y:04}-{m:02}")),
        [y] => Some(format!("{y:04}")),
        [] => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crossref_dates_read_either_form() {
        assert_eq!(
            crossref_date(Some(&json!({"date-parts": [[2020, 6, 1]]}))).as_deref(),
            Some("2020-06-01")
        );
        assert_eq!(
            crossref_date(Some(
                &json!({"date-parts": [[2020, 6, 1]], "date-time": "2020-06-02T00:00:00Z"})
            ))
            .as_deref(),
            Some("2020-06-02")
        );
        assert_eq!(
            crossref_date(Some(&json!({"date-parts": [[2021]]}))).as_deref(),
            Some("2021")
        );
        assert_eq!(crossref_date(Some(&json!({"date-parts": [[]]}))), None);
    }
}
