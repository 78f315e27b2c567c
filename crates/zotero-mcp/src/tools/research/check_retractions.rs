//! `zotero_check_retractions`: whether items (given by key, a collection's, or the whole
//! library's) were retracted, corrected or put under an expression of concern, each notice
//! with its DOI, date, kind and source. Zotero's own flags when its database is configured,
//! else Crossref's notices for the items' DOIs (`crate::service::research::retractions`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::budget;
use crate::error::ToolError;
use crate::service::research::retractions::{
    check_scope, CheckedWith, Cuts, RetractionState, RetractionStatus, Scope, MAX_DOI_CHARS,
    MAX_STATUS_CHARS, MAX_TEXT_CHARS,
};
use crate::tools::params::{library, null_is_default, LibraryParam, List, ObjectKey, Start};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_check_retractions` tool.
pub struct CheckRetractions;

/// Items one page checks by default (two requests to Crossref).
pub const DEFAULT_ITEMS: u32 = 100;

/// The arguments of `zotero_check_retractions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRetractionsParams {
    /// Items to check, up to 100; or give collection_key; neither: the whole library
    pub item_keys: Option<List<ObjectKey, 100>>,
    /// Check this collection's top-level items
    pub collection_key: Option<ObjectKey>,
    /// Items per page (1 to 100, default 100)
    pub limit: Option<crate::tools::params::Limit>,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// What `zotero_check_retractions` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckRetractionsData {
    /// zotero: Zotero's own flags (its database, from Retraction Watch), listing flagged items only; crossref: Crossref's notices (publishers' and Retraction Watch's) for each item's DOI
    pub checked_with: CheckedWith,
    /// This page's items and what was found
    pub items: Vec<RetractionStatus>,
    /// This page's items by status
    pub counts: BTreeMap<String, u64>,
    /// Entries in all: items asked for, of the collection or library, or (zotero) flagged there
    pub total: u64,
    /// zotero: the top-level items its flags cover
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items_covered: Option<u64>,
    /// start of the next page; absent on the last
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
    /// What was cut to fit the answer, and how to get it
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<String>,
}

impl ZoteroTool for CheckRetractions {
    const NAME: &'static str = "zotero_check_retractions";
    const TITLE: &'static str = "Check retractions";
    const DESCRIPTION: &'static str = "Whether items (by key, a collection's, or the library's) \
        were retracted, corrected or given an expression of concern: each notice with its DOI, \
        date, kind and source. Zotero's own flags with its database (ZOTERO_DATA_DIR), else \
        Crossref's notices (publishers' and Retraction Watch's) by DOI. Paged: next_start.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Research;
    type Params = CheckRetractionsParams;
    type Data = CheckRetractionsData;

    fn validate(p: &CheckRetractionsParams) -> Result<(), ToolError> {
        if p.item_keys.is_some() && p.collection_key.is_some() {
            return Err(ToolError::invalid(
                "collection_key",
                "give either item_keys or collection_key (or neither, for the whole library), \
                 not both",
            ));
        }
        Ok(())
    }

    async fn run(
        p: CheckRetractionsParams,
        ctx: &ToolContext,
    ) -> Result<CheckRetractionsData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let keys: Vec<zotero_api::ObjectKey> = p
            .item_keys
            .iter()
            .flat_map(|l| l.iter())
            .map(|k| k.key().clone())
            .collect();
        let collection = p.collection_key.map(|k| k.key().clone());
        let scope = match (&p.item_keys, &collection) {
            (Some(_), _) => Scope::Keys(&keys),
            (None, Some(c)) => Scope::Collection(c),
            (None, None) => Scope::Library,
        };
        let limit = p.limit.map_or(DEFAULT_ITEMS, |l| l.get());
        let start = p.start.get();
        let page = check_scope(
            &ctx.svc,
            lib,
            scope,
            (start, limit),
            ctx.progress.as_ref(),
            &ctx.cancel,
        )
        .await?;
        let (items, cut) = budget::fit_page(page.statuses, budget::PAGE_CHARS);
        let mut truncated = what_was_cut(&items);
        if cut {
            truncated.push(format!(
                "items: the first {} of this page fit; start={} reads on",
                items.len(),
                start + items.len() as u64
            ));
        }
        let mut counts = BTreeMap::new();
        for state in RetractionState::ALL {
            let n = items.iter().filter(|i| i.status == state).count() as u64;
            if n > 0 {
                counts.insert(state.as_str().to_string(), n);
            }
        }
        Ok(CheckRetractionsData {
            checked_with: page.checked_with,
            next_start: budget::next_start(start, items.len(), cut, page.next_start),
            items,
            counts,
            total: page.total,
            items_covered: page.scope_items,
            truncated,
        })
    }
}

/// Notes on the texts the page's statuses had cut to their bounds, and how to read more.
fn what_was_cut(items: &[RetractionStatus]) -> Vec<String> {
    let mut cuts = Cuts::default();
    for i in items {
        cuts.add(i.cut);
    }
    let mut notes = Vec::new();
    if cuts.texts > 0 {
        notes.push(format!(
            "{} texts cut, each ending in …: reasons and URLs to {MAX_TEXT_CHARS} characters, \
             DOIs to {MAX_DOI_CHARS}, titles to 120; zotero_get_item_metadata (item_key) shows \
             an item's title and Zotero's flag, the notice's DOI at https://doi.org/ the whole \
             notice",
            cuts.texts
        ));
    }
    if cuts.left_out > 0 {
        notes.push(format!(
            "{} reasons or notices left out to keep each item within {MAX_STATUS_CHARS} \
             characters (the gravest notices and first reasons kept); \
             zotero_get_item_metadata (item_key) shows Zotero's flag of one item",
            cuts.left_out
        ));
    }
    notes
}
