//! Every DOI of the library, read once per `zotero_find_related` call, so that a work the
//! library holds under another title ("… to a billion devices: lessons learned" where
//! OpenAlex says "… to One Billion Devices") is still found by its DOI: a title search
//! (`in_library::find`) sees only the items sharing the title's words.
//!
//! The library's top-level items are listed (100 a page, oldest first) and each one's DOI
//! taken as the retraction check takes it (the DOI field, else a `DOI:` line of Extra;
//! `retractions::item_doi`), folded by `zotero_metadata::identifiers::fold_doi`. With
//! Zotero's database configured the pages are read from it (no request); on the Web API,
//! which cannot look an item up by DOI (its quick search, even `qmode=everything`, covers
//! titles, creators, years and full text, not the DOI field), they cost one request per 100
//! items, at most [`MAX_ITEMS`] items (50 requests), once per call, whatever the number of
//! works answered. Past that bound the rest of the library is matched by title only.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;
use zotero_api::items::{Direction, ItemFilter, ItemListing};
use zotero_api::Library;
use zotero_metadata::identifiers::fold_doi;

use crate::error::ToolError;
use crate::service::research::retractions::item_doi;

/// The most top-level items read for their DOIs.
pub const MAX_ITEMS: u32 = 5_000;
/// Items a page.
const PAGE: u32 = 100;

/// The library's DOIs (folded), each with the item holding it.
#[derive(Debug, Default)]
pub struct LibraryDois {
    by_doi: HashMap<String, String>,
}

impl LibraryDois {
    /// The item holding `doi` (any case, with or without its link form).
    pub fn find(&self, doi: &str) -> Option<&str> {
        self.by_doi.get(&fold_doi(doi)).map(String::as_str)
    }
}

/// Reads the DOIs of the library's first [`MAX_ITEMS`] top-level items (oldest first: the
/// first item added holding a DOI keeps it).
pub async fn read(lib: &Library<'_>, cancel: &CancellationToken) -> Result<LibraryDois, ToolError> {
    let mut out = LibraryDois::default();
    let mut start = 0u64;
    while start < u64::from(MAX_ITEMS) {
        let listing = ItemListing {
            filter: ItemFilter {
                top_only: true,
                ..ItemFilter::default()
            },
            sort: "dateAdded".into(),
            direction: Some(Direction::Asc),
            limit: PAGE,
            start,
        };
        let page = lib.list_items(&listing, cancel).await?.page;
        let read = page.items.len() as u64;
        for item in &page.items {
            if let Ok(doi) = item_doi(item) {
                out.by_doi
                    .entry(fold_doi(&doi))
                    .or_insert_with(|| item.item_key.clone());
            }
        }
        match page.next_start {
            Some(next) if read > 0 && next > start => start = next,
            _ => break,
        }
    }
    Ok(out)
}
