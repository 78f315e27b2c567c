//! Item listings (`zotero_list_items`) and the filters they share with the quick search:
//! a collection, tags, item types, `since`, the trash, top-level items only, sort and
//! direction, each sent the way Zotero reads it (zotero-api.md "Reading").

use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
pub(crate) use crate::item_filter::literal_tag;
pub use crate::item_filter::{Direction, ItemFilter, ItemTypeFilter, QuickSearchMode};
use crate::library::ObjectKey;
use crate::model::{Item, WireObject};
use crate::response::{encode_query, parse_json, parse_page, unexpected, ApiResponse, Page};
use crate::routing::Backend;

/// A listing: which items, in which order, which page.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemListing {
    pub filter: ItemFilter,
    /// A sort key of [`crate::client::SORT_VALUES`].
    pub sort: String,
    /// Zotero's default when `None`: descending for dates, ascending otherwise.
    pub direction: Option<Direction>,
    pub limit: u32,
    pub start: u64,
}

/// What [`Library::version_after`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryVersion {
    /// Nothing changed after the version asked about.
    Unchanged,
    /// The library's version now (it changed, or none was known).
    Now(u64),
}

/// A page of items and the library's version when it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemPage {
    pub page: Page<Item>,
    /// `Last-Modified-Version`: pass it as `since` later to see what changed.
    pub library_version: Option<u64>,
}

/// Item types an `itemType` filter accepts besides those `/itemTypes` lists.
const UNLISTED_ITEM_TYPES: [&str; 2] = ["attachment", "annotation"];

impl Library<'_> {
    /// A page of the items `listing` describes.
    pub async fn list_items(
        &self,
        listing: &ItemListing,
        cancel: &CancellationToken,
    ) -> Result<ItemPage, ZoteroError> {
        let resp = self.send_listing(listing, cancel).await?;
        let page = parse_page(&resp, "list items", WireObject::to_item)?;
        let library_version = resp
            .header("last-modified-version")
            .and_then(|v| v.trim().parse().ok());
        Ok(ItemPage {
            page,
            library_version,
        })
    }

    /// Whether the library changed after version `known`, as cheaply as Zotero allows: one
    /// item's version (`format=versions&limit=1`) asked with `If-Modified-Since-Version`,
    /// which Zotero answers `304 Not Modified` with no body while nothing changed. Without
    /// a known version, the library's version now.
    pub async fn version_after(
        &self,
        known: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<LibraryVersion, ZoteroError> {
        let req = ApiRequest::get("/items?format=versions&limit=1").uncached();
        self.version_request(req, known, cancel).await
    }

    /// [`Library::version_after`] asked with `req` (which backend, which cache).
    pub(crate) async fn version_request(
        &self,
        mut req: ApiRequest,
        known: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<LibraryVersion, ZoteroError> {
        if let Some(v) = known {
            req = req.header(
                "if-modified-since-version",
                hyper::header::HeaderValue::from(v),
            );
        }
        let resp = self.send(&req, cancel).await?;
        match resp.status {
            304 => Ok(LibraryVersion::Unchanged),
            200 => resp
                .header("last-modified-version")
                .and_then(|v| v.trim().parse().ok())
                .map(LibraryVersion::Now)
                .ok_or_else(|| {
                    crate::response::unexpected(
                        &resp,
                        "read the library version (no Last-Modified-Version)",
                    )
                }),
            _ => Err(crate::response::unexpected(
                &resp,
                "read the library version",
            )),
        }
    }

    /// How long Zotero's `Backoff` still holds requests back (zero when it does not).
    pub fn backoff_remaining(&self) -> std::time::Duration {
        self.client.web_http().backoff_remaining()
    }

    /// The items of one page of `listing` as Zotero sends them (every field).
    pub(crate) async fn list_items_wire(
        &self,
        listing: &ItemListing,
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        let resp = self.send_listing(listing, cancel).await?;
        if resp.status != 200 {
            return Err(crate::response::unexpected(&resp, "list items"));
        }
        crate::response::parse_json(&resp)
    }

    /// Every item `filter` selects as Zotero sends it (every field, and `meta`, where the
    /// database backend puts a retraction), oldest first, 100 a request: one request per
    /// hundred items.
    pub async fn all_items_wire(
        &self,
        filter: &ItemFilter,
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        crate::response::all_pages(|start| async move {
            let listing = ItemListing {
                filter: filter.clone(),
                sort: "dateAdded".into(),
                direction: Some(Direction::Asc),
                limit: 100,
                start,
            };
            let resp = self.send_listing(&listing, cancel).await?;
            parse_page(&resp, "list items", WireObject::clone)
        })
        .await
    }

    async fn send_listing(
        &self,
        listing: &ItemListing,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        self.check_item_types(&listing.filter.item_types, cancel)
            .await?;
        let mut query: Vec<(&str, String)> = listing.filter.params();
        query.push(("sort", listing.sort.clone()));
        if let Some(d) = listing.direction {
            query.push(("direction", d.as_str().to_string()));
        }
        query.extend([
            ("format", "json".to_string()),
            ("limit", listing.limit.to_string()),
            ("start", listing.start.to_string()),
        ]);
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let req = ApiRequest::get(format!(
            "{}?{}",
            listing.filter.path(),
            encode_query(&pairs)
        ));
        self.send_in_collection(&req, listing.filter.collection.as_ref(), cancel)
            .await
    }

    /// Sends a listing of (or within) a collection, making sure the collection exists: the
    /// web API answers 404 for an unknown one, but the desktop app drops the unknown
    /// collection from its search and answers the whole library (`Zotero.Search`'s
    /// `collectionID` condition returns without adding anything). So when the listing goes
    /// to the desktop, the desktop is asked for the collection alongside; one it does not
    /// have (not synced yet) is left to the web API when there is one.
    pub(crate) async fn send_in_collection(
        &self,
        req: &ApiRequest,
        collection: Option<&ObjectKey>,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let Some(key) = collection else {
            return self.send(req, cancel).await;
        };
        let resp = if self.route(req)? == Backend::Local {
            let check = ApiRequest::get(format!("/collections/{key}"));
            let (resp, found) =
                tokio::join!(self.send(req, cancel), self.send_local(&check, cancel));
            match found {
                Some(Ok(found)) if found.status == 404 => {
                    if !self.client.has_web() {
                        return Err(no_collection(key));
                    }
                    self.send(&req.clone().fresh(), cancel).await?
                }
                // Anything else (the desktop off or unreachable): the listing fell back to
                // the web API, or failed, on its own.
                _ => resp?,
            }
        } else {
            self.send(req, cancel).await?
        };
        if resp.status == 404 {
            return Err(no_collection(key));
        }
        Ok(resp)
    }

    /// Refuses item types Zotero does not know, with the list of those it does, before the
    /// listing is sent (the desktop app does not say so itself).
    pub async fn check_item_types(
        &self,
        filter: &ItemTypeFilter,
        cancel: &CancellationToken,
    ) -> Result<(), ZoteroError> {
        if filter.types.is_empty() {
            return Ok(());
        }
        let mut known = self.client.filter_item_types(cancel).await?;
        known.extend(UNLISTED_ITEM_TYPES.iter().map(|t| t.to_string()));
        let Some(bad) = filter.types.iter().find(|t| !known.contains(t)) else {
            return Ok(());
        };
        known.sort();
        known.dedup();
        Err(ZoteroError::UnknownItemType {
            item_type: bad.clone(),
            valid: known,
        })
    }

    /// Whether the collection exists (for listings whose backend does not say).
    pub(crate) async fn collection_exists(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<bool, ZoteroError> {
        let resp = self
            .send(&ApiRequest::get(format!("/collections/{key}")), cancel)
            .await?;
        match resp.status {
            200 => {
                parse_json::<WireObject>(&resp)?;
                Ok(true)
            }
            404 => Ok(false),
            _ => Err(unexpected(&resp, &format!("read collection {key}"))),
        }
    }
}

pub(crate) fn no_collection(key: &ObjectKey) -> ZoteroError {
    ZoteroError::NotFound {
        message: format!(
            "no collection with key {key} in this library; list them with zotero_list_collections"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> ObjectKey {
        ObjectKey::parse(k).unwrap()
    }

    #[test]
    fn paths_follow_the_scope() {
        let mut f = ItemFilter {
            top_only: true,
            ..ItemFilter::default()
        };
        assert_eq!(f.path(), "/items/top");
        f.collection = Some(key("ABCD2345"));
        assert_eq!(f.path(), "/collections/ABCD2345/items/top");
        f.top_only = false;
        assert_eq!(f.path(), "/collections/ABCD2345/items");
        f.collection = None;
        f.trashed = true;
        f.top_only = true;
        assert_eq!(f.path(), "/items/trash");
    }

    #[test]
    fn filters_become_zotero_syntax() {
        let f = ItemFilter {
            query: Some("deep".into()),
            qmode: QuickSearchMode::Everything,
            tags: vec!["-draft".into(), "nlp".into()],
            exclude_tags: vec!["old".into()],
            tag_conditions: vec!["a || b".into(), "-c".into()],
            item_types: ItemTypeFilter {
                types: vec!["book".into(), "thesis".into()],
                exclude: true,
            },
            since: Some(42),
            ..ItemFilter::default()
        };
        let params = f.params();
        let p: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            p,
            vec![
                ("q", "deep"),
                ("qmode", "everything"),
                ("tag", "\\-draft"),
                ("tag", "nlp"),
                ("tag", "-old"),
                ("tag", "a || b"),
                ("tag", "-c"),
                ("itemType", "-book || thesis"),
                ("since", "42"),
            ]
        );
        let plain = ItemFilter {
            query: Some("x".into()),
            ..ItemFilter::default()
        };
        assert_eq!(plain.params(), vec![("q", "x".to_string())]);
    }
}
