//! Reads for keeping a local copy (the search index) in step with a library: what changed
//! after a library version, objects by key, full texts changed, and what was deleted.
//!
//! Every request here is `fresh`: it goes to the Web API when one is configured, else to the
//! desktop app. A copy kept by library version must always read the same backend, because
//! the desktop's versions are its own and lag the Web API's.

use std::collections::BTreeMap;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::items::LibraryVersion;
use crate::model::WireObject;
use crate::response::{expect, parse_json};

/// How many keys one `itemKey=` request may name (the Web API's limit).
pub const KEYS_PER_REQUEST: usize = 50;

/// Object keys and their versions, and the library's version when they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions {
    pub versions: BTreeMap<String, u64>,
    /// `Last-Modified-Version`: everything up to it is in `versions`.
    pub library_version: Option<u64>,
}

/// What `/deleted?since=` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Deleted {
    #[serde(default)]
    pub items: Vec<String>,
    #[serde(skip)]
    pub library_version: Option<u64>,
}

fn library_version(resp: &crate::http::ApiResponse) -> Option<u64> {
    resp.header("last-modified-version")
        .and_then(|v| v.trim().parse().ok())
}

impl Library<'_> {
    /// Every item (notes, attachments and annotations included, trashed ones too) changed
    /// after library version `since` (0: all), as key → version: one request whatever the
    /// size of the library.
    pub async fn item_versions_since(
        &self,
        since: u64,
        cancel: &CancellationToken,
    ) -> Result<Versions, ZoteroError> {
        let req = ApiRequest::get(format!(
            "/items?since={since}&format=versions&includeTrashed=1"
        ))
        .fresh();
        let resp = self.send(&req, cancel).await?;
        expect(&resp, 200, "list the versions of changed items")?;
        Ok(Versions {
            versions: parse_json(&resp)?,
            library_version: library_version(&resp),
        })
    }

    /// The items of these keys (at most [`KEYS_PER_REQUEST`]), trashed ones included; keys
    /// gone since are simply absent.
    pub async fn items_by_key(
        &self,
        keys: &[&str],
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let req = ApiRequest::get(format!(
            "/items?itemKey={}&includeTrashed=1&format=json&limit={}",
            keys.join(","),
            KEYS_PER_REQUEST
        ))
        .fresh();
        let resp = self.send(&req, cancel).await?;
        expect(&resp, 200, "get changed items")?;
        parse_json(&resp)
    }

    /// The attachments whose full text changed after `since`, as key → version.
    pub async fn fulltext_versions_since(
        &self,
        since: u64,
        cancel: &CancellationToken,
    ) -> Result<Versions, ZoteroError> {
        let req = ApiRequest::get(format!("/fulltext?since={since}")).fresh();
        let resp = self.send(&req, cancel).await?;
        expect(&resp, 200, "list the changed full texts")?;
        Ok(Versions {
            versions: parse_json(&resp)?,
            library_version: library_version(&resp),
        })
    }

    /// The text of one attachment's full text, `None` when it has none (404).
    pub async fn fulltext_content(
        &self,
        key: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, ZoteroError> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            content: String,
        }
        let req = ApiRequest::get(format!("/items/{key}/fulltext")).fresh();
        let resp = self.send(&req, cancel).await?;
        if resp.status == 404 {
            return Ok(None);
        }
        expect(&resp, 200, &format!("get the full text of {key}"))?;
        let wire: Wire = parse_json(&resp)?;
        Ok(Some(wire.content))
    }

    /// What was deleted after `since`; `None` when the backend has no `/deleted` (the
    /// desktop app's local API), so that the caller reconciles another way.
    pub async fn deleted_since(
        &self,
        since: u64,
        cancel: &CancellationToken,
    ) -> Result<Option<Deleted>, ZoteroError> {
        let req = ApiRequest::get(format!("/deleted?since={since}")).fresh();
        let resp = self.send(&req, cancel).await?;
        if matches!(resp.status, 404 | 501) {
            return Ok(None);
        }
        expect(&resp, 200, "list deleted objects")?;
        let mut deleted: Deleted = parse_json(&resp)?;
        deleted.library_version = library_version(&resp);
        Ok(Some(deleted))
    }
}

impl Library<'_> {
    /// The library's version now, from the backend [`Library::item_versions_since`] reads:
    /// `known` when nothing changed after it (Zotero answers 304 without a body).
    pub async fn current_version(
        &self,
        known: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<u64, ZoteroError> {
        let req = ApiRequest::get("/items?format=versions&limit=1").fresh();
        Ok(match self.version_request(req, known, cancel).await? {
            LibraryVersion::Now(v) => v,
            // Only answered to a known version.
            LibraryVersion::Unchanged => known.unwrap_or_default(),
        })
    }
}
