//! One item whole, as Zotero stores it: every field of its `data` (kept as Zotero sends
//! them, so fields added by a later schema come through untouched), its `meta`, its page on
//! zotero.org (`links.alternate`), the names of its collections, and, when asked for,
//! Zotero's own export of it (`include=<format>`, the translator Zotero itself runs).

use futures_util::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::export::ExportFormat;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::WireObject;
use crate::response::{expect, parse_json, unexpected};

/// Collections whose names are looked up for one item (one request each, at once); an item
/// in more collections gets the keys of the rest without names.
pub const MAX_COLLECTION_NAMES: usize = 10;

/// A collection an item is in.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionName {
    pub key: String,
    /// `None` past [`MAX_COLLECTION_NAMES`], or when the collection no longer exists (Zotero
    /// does not remove an item's membership when its collection is deleted).
    pub name: Option<String>,
}

/// An item with everything Zotero keeps about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRecord {
    pub key: String,
    pub version: u64,
    pub item_type: String,
    /// The item's `data`, every property as Zotero sent it.
    pub data: Map<String, Value>,
    /// The item's `meta` (`creatorSummary`, `parsedDate`, `numChildren`, …).
    pub meta: Map<String, Value>,
    /// The item's page on zotero.org (`links.alternate`); the desktop leaves it out when it
    /// is not logged in to a zotero.org account.
    pub web_url: Option<String>,
    pub collections: Vec<CollectionName>,
    /// Zotero's export of the item in the format asked for.
    pub export: Option<String>,
}

impl Library<'_> {
    /// The item `key` whole, with Zotero's export of it in `export` when given (in the same
    /// request: `include=data,<format>`).
    pub async fn item_record(
        &self,
        key: &ObjectKey,
        export: Option<ExportFormat>,
        cancel: &CancellationToken,
    ) -> Result<ItemRecord, ZoteroError> {
        let mut req = match export {
            Some(f) => ApiRequest::get(format!("/items/{key}?include=data,{}", f.api_name())),
            None => ApiRequest::get(format!("/items/{key}")),
        };
        if export.is_some_and(ExportFormat::web_only) {
            req.consistency = crate::http::Consistency::Current;
        }
        let resp = self.send(&req, cancel).await?;
        if resp.status == 404 {
            return Err(unexpected(
                &resp,
                &format!("no item with key {key} in this library"),
            ));
        }
        expect(&resp, 200, &format!("get item {key}"))?;
        let raw: Map<String, Value> = parse_json(&resp)?;
        let exported = export.and_then(|f| {
            raw.get(f.api_name())
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        let wire: WireObject =
            serde_json::from_value(Value::Object(raw)).map_err(|e| ZoteroError::BadResponse {
                reason: e.to_string(),
                status: resp.status,
            })?;
        let web_url = wire
            .links
            .get("alternate")
            .and_then(|a| a.get("href"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let keys: Vec<String> = wire
            .data
            .get("collections")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let collections = self.collection_names(keys, cancel).await?;
        Ok(ItemRecord {
            key: wire.key(),
            version: wire.version(),
            item_type: wire.item_type(),
            web_url,
            collections,
            export: exported,
            data: wire.data,
            meta: wire.meta,
        })
    }

    /// The names of the first [`MAX_COLLECTION_NAMES`] collections, read at once.
    async fn collection_names(
        &self,
        keys: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<Vec<CollectionName>, ZoteroError> {
        let lookups = keys.iter().take(MAX_COLLECTION_NAMES).map(|k| async move {
            // A key that is not a valid key cannot be in a URL; it has no name.
            let Ok(key) = ObjectKey::parse(k) else {
                return Ok(None);
            };
            let resp = self
                .send(&ApiRequest::get(format!("/collections/{key}")), cancel)
                .await?;
            if resp.status == 404 {
                return Ok(None);
            }
            expect(&resp, 200, &format!("get collection {key}"))?;
            let wire: WireObject = parse_json(&resp)?;
            Ok::<_, ZoteroError>(Some(wire.to_collection().name))
        });
        let names = join_all(lookups).await;
        let mut out = Vec::with_capacity(keys.len());
        let mut names = names.into_iter();
        for key in keys {
            let name = match names.next() {
                Some(found) => found?,
                None => None,
            };
            out.push(CollectionName { key, name });
        }
        Ok(out)
    }
}
