//! What a retraction check reads of the library: items by key (with their DOIs, and Zotero's
//! retraction flag when they come from its database), and the items Zotero's database flags
//! retracted. Only Zotero's own database stores the flags (`retractedItems`, filled from
//! Retraction Watch's data); the Web API and the desktop's local API have no such filter.

use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::{Item, WireObject};
use crate::response::{parse_page, Page};
use crate::sync::KEYS_PER_REQUEST;

impl Library<'_> {
    /// The top-level or child items of these keys that exist (read from Zotero's database
    /// when it is configured, else the API), in no particular order; trashed ones included.
    /// One request per [`KEYS_PER_REQUEST`] keys.
    pub async fn items_of_keys(
        &self,
        keys: &[ObjectKey],
        cancel: &CancellationToken,
    ) -> Result<Vec<Item>, ZoteroError> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(KEYS_PER_REQUEST) {
            let joined: Vec<&str> = chunk.iter().map(ObjectKey::as_str).collect();
            let req = ApiRequest::get(format!(
                "/items?itemKey={}&includeTrashed=1&limit={KEYS_PER_REQUEST}",
                joined.join(",")
            ));
            let resp = self.send(&req, cancel).await?;
            out.extend(parse_page(&resp, "get items by key", WireObject::to_item)?.items);
        }
        Ok(out)
    }

    /// A page of the top-level items Zotero's database flags retracted (of one collection,
    /// or of the whole library), each with its [`crate::model::ZoteroRetraction`]; `None`
    /// when Zotero's database is not configured (no other backend knows the flags). Asked of
    /// the database alone: the API would ignore `retracted=1` and list every item. (`_cancel`
    /// keeps the shape of the other reads; a local read is not stopped midway.)
    pub async fn flagged_items(
        &self,
        collection: Option<&ObjectKey>,
        start: u64,
        limit: u32,
        _cancel: &CancellationToken,
    ) -> Result<Option<Page<Item>>, ZoteroError> {
        let Some(db) = self.client.database() else {
            return Ok(None);
        };
        let path = match collection {
            Some(c) => format!("/collections/{c}/items/top"),
            None => "/items/top".to_string(),
        };
        let req = ApiRequest::get(format!(
            "{path}?retracted=1&sort=dateAdded&direction=asc&start={start}&limit={limit}"
        ));
        let resp = self
            .send_database(db, &req)
            .await?
            .ok_or_else(|| ZoteroError::Database {
                reason: "the Zotero database could not list its retracted items".into(),
            })?;
        let page = parse_page(&resp, "list the retracted items", WireObject::to_item)?;
        // Only flagged items, whatever answered: an item without the flag is not one.
        Ok(Some(Page {
            items: page
                .items
                .into_iter()
                .filter(|i| i.retraction.is_some())
                .collect(),
            ..page
        }))
    }

    /// How many top-level items the library (or one collection) holds, read where
    /// [`Library::flagged_items`] reads; `None` without Zotero's database.
    pub async fn top_item_count(
        &self,
        collection: Option<&ObjectKey>,
        _cancel: &CancellationToken,
    ) -> Result<Option<u64>, ZoteroError> {
        let Some(db) = self.client.database() else {
            return Ok(None);
        };
        let path = match collection {
            Some(c) => format!("/collections/{c}/items/top?limit=1"),
            None => "/items/top?limit=1".to_string(),
        };
        let resp = self
            .send_database(db, &ApiRequest::get(path))
            .await?
            .ok_or_else(|| ZoteroError::Database {
                reason: "the Zotero database could not count its items".into(),
            })?;
        crate::response::expect(&resp, 200, "count the items")?;
        Ok(resp
            .header("total-results")
            .and_then(|v| v.trim().parse().ok()))
    }
}
