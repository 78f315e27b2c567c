//! Whether items were retracted, corrected or put under an expression of concern, and who
//! says so. With Zotero's own database configured, Zotero's flags (its `retractedItems`,
//! which Zotero fills from Retraction Watch's data): nothing leaves the machine. Otherwise
//! Crossref's notices for the items' DOIs: a work's `updated-by` names each notice that
//! updates it (its DOI, date, `type` and `source`: the publisher's own deposit, or
//! `retraction-watch`), and a notice's own record carries `update-to`. Fifty DOIs go in one
//! request (`filter=doi:…`), paced and retried by the shared metadata client.
//!
//! A correction or an expression of concern is reported as such, never as a retraction:
//! each notice keeps Crossref's type, and an item's status is the gravest of its notices.

mod bounds;
mod crossref;
mod doi;

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use zotero_api::items::{Direction, ItemFilter, ItemListing};
use zotero_api::model::{Item, ZoteroRetraction};
use zotero_api::upload::ProgressFn;
use zotero_api::{Library, ObjectKey};
use zotero_metadata::identifiers::fold_doi;
use zotero_metadata::services::{ServiceError, CROSSREF_DOIS_PER_REQUEST};

use crate::error::ToolError;
use crate::service::ZoteroService;
pub use bounds::{Cuts, MAX_DOI_CHARS, MAX_LABEL_CHARS, MAX_STATUS_CHARS, MAX_TEXT_CHARS};
use crossref::{fetch_works, from_crossref};
pub(crate) use doi::item_doi;

/// The most notices kept per item (a work corrected many times lists each).
pub const MAX_NOTICES: usize = 10;
/// The most reasons kept of Zotero's flag.
const MAX_REASONS: usize = 10;
/// The most characters of a title in a status.
const MAX_TITLE_CHARS: usize = 120;

/// What is known of an item, gravest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A doc on a variant would publish the schema's enum as a oneOf: the field's doc says them.
#[allow(missing_docs)]
pub enum RetractionState {
    Retracted,
    ExpressionOfConcern,
    Corrected,
    Updated,
    Clear,
    NotCheckable,
    Failed,
}

impl RetractionState {
    /// The status a notice of this kind gives: retractions (whole or partial), withdrawals
    /// and removals retract; an expression of concern and corrections do not.
    pub fn of_kind(kind: &str) -> Self {
        match kind {
            "retraction" | "partial_retraction" | "withdrawal" | "removal" => Self::Retracted,
            "expression_of_concern" => Self::ExpressionOfConcern,
            "correction" | "corrigendum" | "erratum" | "partial_correction" => Self::Corrected,
            _ => Self::Updated,
        }
    }

    /// Its name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Retracted => "retracted",
            Self::ExpressionOfConcern => "expression_of_concern",
            Self::Corrected => "corrected",
            Self::Updated => "updated",
            Self::Clear => "clear",
            Self::NotCheckable => "not_checkable",
            Self::Failed => "failed",
        }
    }

    /// Every state, gravest first.
    pub const ALL: [RetractionState; 7] = [
        Self::Retracted,
        Self::ExpressionOfConcern,
        Self::Corrected,
        Self::Updated,
        Self::Clear,
        Self::NotCheckable,
        Self::Failed,
    ];
}

/// One notice about an item: a retraction, a correction, an expression of concern, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Notice {
    /// retraction, partial_retraction, withdrawal, expression_of_concern, correction, erratum, addendum, new_version, … (Crossref's update type)
    pub kind: String,
    /// publisher or retraction-watch (via Crossref), or zotero (Zotero's flag, from Retraction Watch)
    pub source: String,
    /// The notice's DOI
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    /// Where to read the notice
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its date (YYYY-MM-DD, or as much as is known)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The reasons given (Zotero's flag)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// What was found about one item.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RetractionStatus {
    /// The item's key
    pub item_key: String,
    /// Its title (shortened)
    pub title: String,
    /// The DOI checked
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    /// retracted, expression_of_concern, corrected, updated (another notice), clear (none found), not_checkable (reason says why), failed (reason says why)
    pub status: RetractionState,
    /// The notices about it, gravest first
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Notice>,
    /// The item is itself a notice: what it updates
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notice_for: Vec<Notice>,
    /// Why it could not be checked
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What bounding its texts cut (`RetractionStatus::bound`), for the answer to say.
    #[serde(skip)]
    pub cut: Cuts,
}

/// Who answered a check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum CheckedWith {
    #[default]
    Zotero,
    Crossref,
}

impl CheckedWith {
    /// Zotero's flags when its database is configured, else Crossref.
    pub fn of(svc: &ZoteroService) -> Self {
        if svc.client.database().is_some() {
            Self::Zotero
        } else {
            Self::Crossref
        }
    }
}

/// The status of each of `keys` in `library`, in the order given: Zotero's flags when its
/// database is configured, else Crossref's notices for the items' DOIs. A key the library
/// does not hold is `not_checkable`, saying so.
pub async fn retraction_status(
    svc: &ZoteroService,
    library: Library<'_>,
    keys: &[ObjectKey],
    cancel: &CancellationToken,
) -> Result<Vec<RetractionStatus>, ToolError> {
    status_of_keys(svc, library, keys, None, cancel).await
}

/// Which items a check is about.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// These items.
    Keys(&'a [ObjectKey]),
    /// The top-level items of a collection.
    Collection(&'a ObjectKey),
    /// The top-level items of the library.
    Library,
}

/// One page of a check.
#[derive(Debug)]
pub struct CheckedPage {
    pub checked_with: CheckedWith,
    /// With Crossref (or for keys): every item of the page. With Zotero's flags, of a
    /// collection or the library: the flagged items only.
    pub statuses: Vec<RetractionStatus>,
    /// The entries the whole check pages through (items, or flagged items).
    pub total: u64,
    /// With Zotero's flags, of a collection or the library: its top-level items.
    pub scope_items: Option<u64>,
    /// Where the next page starts.
    pub next_start: Option<u64>,
}

/// The page of `scope` from `start` (at most `limit` items; with Zotero's flags of a
/// collection or the library, `limit` flagged items), checked. `progress` hears (items
/// checked, items of the page) after each request to Crossref.
pub async fn check_scope(
    svc: &ZoteroService,
    library: Library<'_>,
    scope: Scope<'_>,
    (start, limit): (u64, u32),
    progress: Option<&ProgressFn>,
    cancel: &CancellationToken,
) -> Result<CheckedPage, ToolError> {
    let checked_with = CheckedWith::of(svc);
    let collection = match scope {
        Scope::Keys(keys) => {
            let from = usize::try_from(start).unwrap_or(usize::MAX).min(keys.len());
            let to = from.saturating_add(limit as usize).min(keys.len());
            let page = keys.get(from..to).unwrap_or_default();
            let statuses = status_of_keys(svc, library, page, progress, cancel).await?;
            return Ok(CheckedPage {
                checked_with,
                statuses,
                total: keys.len() as u64,
                scope_items: None,
                next_start: (to < keys.len()).then_some(to as u64),
            });
        }
        Scope::Collection(c) => Some(c),
        Scope::Library => None,
    };
    if checked_with == CheckedWith::Zotero {
        if let Some(page) = library
            .flagged_items(collection, start, limit, cancel)
            .await?
        {
            let scope_items = library.top_item_count(collection, cancel).await?;
            return Ok(CheckedPage {
                checked_with,
                statuses: page.items.into_iter().map(flagged_by_zotero).collect(),
                total: page.total,
                scope_items,
                next_start: page.next_start,
            });
        }
    }
    let listing = ItemListing {
        filter: ItemFilter {
            collection: collection.cloned(),
            top_only: true,
            ..ItemFilter::default()
        },
        sort: "dateAdded".into(),
        direction: Some(Direction::Asc),
        limit,
        start,
    };
    let page = library.list_items(&listing, cancel).await?.page;
    let statuses = check_items(svc, page.items, progress, cancel).await?;
    Ok(CheckedPage {
        checked_with,
        statuses,
        total: page.total,
        scope_items: None,
        next_start: page.next_start,
    })
}

/// [`retraction_status`], telling `progress`.
async fn status_of_keys(
    svc: &ZoteroService,
    library: Library<'_>,
    keys: &[ObjectKey],
    progress: Option<&ProgressFn>,
    cancel: &CancellationToken,
) -> Result<Vec<RetractionStatus>, ToolError> {
    let items = library.items_of_keys(keys, cancel).await?;
    let mut by_key: HashMap<String, Item> =
        items.into_iter().map(|i| (i.item_key.clone(), i)).collect();
    let mut found = Vec::new();
    let mut order = Vec::new();
    for key in keys {
        match by_key.remove(key.as_str()) {
            Some(item) => {
                order.push(None);
                found.push(item);
            }
            None => order.push(Some(key.as_str().to_string())),
        }
    }
    let mut checked = check_items(svc, found, progress, cancel).await?.into_iter();
    let mut out = Vec::with_capacity(keys.len());
    for missing in order {
        match missing {
            Some(key) => out.push(RetractionStatus {
                item_key: key.clone(),
                title: String::new(),
                doi: None,
                status: RetractionState::NotCheckable,
                notices: Vec::new(),
                notice_for: Vec::new(),
                reason: Some(format!("no item with key {key} in this library")),
                cut: Cuts::default(),
            }),
            None => out.extend(checked.next()),
        }
    }
    Ok(out)
}

/// The status of each item, in the order given. `progress` hears (items checked, items)
/// after each request to Crossref.
pub async fn check_items(
    svc: &ZoteroService,
    items: Vec<Item>,
    progress: Option<&ProgressFn>,
    cancel: &CancellationToken,
) -> Result<Vec<RetractionStatus>, ToolError> {
    Ok(check_items_counted(svc, items, progress, cancel).await?.0)
}

/// [`check_items`], with the number of requests it sent to Crossref.
pub async fn check_items_counted(
    svc: &ZoteroService,
    items: Vec<Item>,
    progress: Option<&ProgressFn>,
    cancel: &CancellationToken,
) -> Result<(Vec<RetractionStatus>, u64), ToolError> {
    if CheckedWith::of(svc) == CheckedWith::Zotero {
        return Ok((items.into_iter().map(flagged_by_zotero).collect(), 0));
    }
    let mut sent = 0u64;
    let mut out: Vec<RetractionStatus> = items.iter().map(unchecked).collect();
    // Each checkable item's index in `out`, by its DOI (lower case: DOIs ignore case).
    let mut wanted: Vec<(String, usize)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item_doi(item) {
            Ok(doi) => {
                if let Some(s) = out.get_mut(i) {
                    s.doi = Some(doi.clone());
                }
                wanted.push((fold_doi(&doi), i));
            }
            Err(reason) => {
                if let Some(s) = out.get_mut(i) {
                    s.status = RetractionState::NotCheckable;
                    s.reason = Some(reason.to_string());
                }
            }
        }
    }
    let total = items.len() as u64;
    let mut done = total - wanted.len() as u64;
    let mut failure: Option<String> = None;
    let (alone, batched): (Vec<_>, Vec<_>) = wanted.into_iter().partition(|(d, _)| d.contains(','));
    let mut requests: Vec<Vec<(String, usize)>> = batched
        .chunks(CROSSREF_DOIS_PER_REQUEST)
        .map(<[_]>::to_vec)
        .collect();
    requests.extend(alone.into_iter().map(|w| vec![w]));
    for batch in requests {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        let works = match &failure {
            // After a failure nothing more is asked: the rest is reported failed with it.
            Some(_) => None,
            None => {
                sent += 1;
                match fetch_works(svc, &batch, cancel).await {
                    Ok(works) => Some(works),
                    Err(ServiceError::Cancelled) => return Err(cancelled()),
                    Err(e) => {
                        failure = Some(svc.metadata.clean(&e.to_string()));
                        None
                    }
                }
            }
        };
        for (doi, i) in &batch {
            let Some(s) = out.get_mut(*i) else { continue };
            match &works {
                None => {
                    s.status = RetractionState::Failed;
                    s.reason = failure
                        .as_ref()
                        .map(|f| format!("Crossref could not be asked: {f}; call again later"));
                }
                Some(works) => match works.get(doi) {
                    Some(work) => from_crossref(svc, s, work),
                    None => {
                        s.status = RetractionState::NotCheckable;
                        s.reason = Some(
                            "Crossref has no record of this DOI (another agency, such as \
                             DataCite, may have registered it): no notices to read"
                                .into(),
                        );
                    }
                },
            }
        }
        done += batch.len() as u64;
        if let Some(report) = progress {
            report(done, total);
        }
    }
    for s in &mut out {
        s.bound();
    }
    Ok((out, sent))
}

fn cancelled() -> ToolError {
    zotero_api::ZoteroError::Cancelled.into()
}

/// An item's status before it is checked.
fn unchecked(item: &Item) -> RetractionStatus {
    RetractionStatus {
        item_key: item.item_key.clone(),
        title: short_title(&item.title),
        doi: None,
        status: RetractionState::Clear,
        notices: Vec::new(),
        notice_for: Vec::new(),
        reason: None,
        cut: Cuts::default(),
    }
}

fn short_title(title: &str) -> String {
    match title.char_indices().nth(MAX_TITLE_CHARS) {
        Some((at, _)) => format!("{}…", title.get(..at).unwrap_or_default()),
        None => title.to_string(),
    }
}

/// Zotero's flag as a status (its database checked every item it could: by DOI and PMID).
fn flagged_by_zotero(item: Item) -> RetractionStatus {
    let mut s = unchecked(&item);
    s.doi = item_doi(&item).ok();
    if let Some(r) = &item.retraction {
        s.status = RetractionState::Retracted;
        s.notices.push(zotero_notice(r));
    }
    // Zotero stores Retraction Watch's texts unbounded.
    s.bound();
    s
}

/// Zotero's flag as a notice.
pub fn zotero_notice(r: &ZoteroRetraction) -> Notice {
    let url = r
        .notice_doi
        .as_ref()
        .map(|d| format!("https://doi.org/{d}"))
        .or_else(|| r.urls.first().cloned());
    Notice {
        kind: "retraction".into(),
        source: "zotero".into(),
        doi: r.notice_doi.clone(),
        url,
        date: r.date.clone(),
        reasons: r.reasons.iter().take(MAX_REASONS).cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_retraction_kinds_retract() {
        use RetractionState as S;
        assert_eq!(S::of_kind("retraction"), S::Retracted);
        assert_eq!(S::of_kind("withdrawal"), S::Retracted);
        assert_eq!(S::of_kind("expression_of_concern"), S::ExpressionOfConcern);
        assert_eq!(S::of_kind("correction"), S::Corrected);
        assert_eq!(S::of_kind("erratum"), S::Corrected);
        assert_eq!(S::of_kind("addendum"), S::Updated);
        assert!(S::Retracted < S::ExpressionOfConcern && S::Corrected < S::Clear);
    }
}
