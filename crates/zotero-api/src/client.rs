//! Typed calls to the Zotero Web API. Each has the same shape: build the request, send it,
//! match the statuses it expects, and turn anything else into a `ZoteroError`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::{ApiRequest, HttpClient};
use super::model::{AttachmentSummary, Collection, Item, WireObject};
use crate::config::ClientConfig;
use crate::group_rights::GroupSettings;
use crate::item_filter::{ItemFilter, ItemTypeFilter, QuickSearchMode};
use crate::keyed_lock::KeyedLocks;
use crate::keys::KeyAccess;
use crate::library::{LibraryRef, ObjectKey};
use crate::response::{all_pages, encode_query, expect, parse_page, unexpected, ApiResponse, Page};
pub use crate::routing::Library;
use crate::templates::TemplateCache;

/// Sort keys the Zotero API accepts for items (zotero-api.md): zotero-db's one list, which its
/// answers from the database check too.
pub const SORT_VALUES: [&str; 15] = zotero_db::ITEM_SORTS;
/// The seed's default sort. Zotero has no such sort; see `SortFallback`.
pub const DEFAULT_SORT: &str = "relevance";
pub const FALLBACK_SORT: &str = "dateModified";

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchQuery {
    pub query: String,
    pub qmode: QuickSearchMode,
    /// Tags every item must carry, each matched as written.
    pub tags: Vec<String>,
    /// Tags no item may carry, each matched as written (none may start with `-`: the web
    /// API cannot exclude such a tag).
    pub exclude_tags: Vec<String>,
    /// Tag conditions in Zotero's syntax, sent as written (the peer server's `tag`).
    pub tag_conditions: Vec<String>,
    pub item_types: ItemTypeFilter,
    /// Only the top-level items of this collection.
    pub collection: Option<ObjectKey>,
    pub limit: u32,
    pub start: u64,
    pub sort: String,
}

impl SearchQuery {
    /// The items it searches: top-level ones, in the library or a collection.
    fn filter(&self) -> ItemFilter {
        ItemFilter {
            query: Some(self.query.clone()),
            qmode: self.qmode,
            tags: self.tags.clone(),
            exclude_tags: self.exclude_tags.clone(),
            tag_conditions: self.tag_conditions.clone(),
            item_types: self.item_types.clone(),
            collection: self.collection.clone(),
            top_only: true,
            ..ItemFilter::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub page: Page<Item>,
    /// Set when the asked-for sort was replaced by the fallback.
    pub sort_used: Option<String>,
}

/// Sort values Zotero has rejected in this process, so later searches go straight to the
/// fallback and cost one request instead of two.
#[derive(Default)]
pub struct SortFallback {
    rejected: Mutex<HashSet<String>>,
}

impl SortFallback {
    fn is_rejected(&self, sort: &str) -> bool {
        zotero_net::lock(&self.rejected).contains(sort)
    }
    fn reject(&self, sort: &str) {
        zotero_net::lock(&self.rejected).insert(sort.to_string());
    }
}

/// The Zotero client of the process: the Web API and, when configured, the desktop app's
/// local API, each with its own pooled HTTP client. Library-level calls go through
/// [`ZoteroClient::library`].
pub struct ZoteroClient {
    /// The Web API (`ZOTERO_API_BASE`); used only when the credentials are set.
    web: Arc<HttpClient>,
    /// The desktop app's local API (`ZOTERO_LOCAL=1`): no key, user library `/users/0`.
    local: Option<Arc<HttpClient>>,
    /// Zotero's own database (`ZOTERO_DATA_DIR`), read from a private snapshot.
    database: Option<Arc<zotero_db::ZoteroDb>>,
    user_id: Option<u64>,
    missing: Vec<&'static str>,
    sort_fallback: SortFallback,
    templates: TemplateCache,
    /// `/keys/current` as last read (once per process, again before a refusal).
    access: Mutex<Option<Arc<KeyAccess>>>,
    /// Each group's editing settings as last read (like `access`: once, and again before a
    /// refusal), so a write to a group costs no extra request after the first.
    pub(crate) group_settings: Mutex<HashMap<u64, Arc<GroupSettings>>>,
    /// One upload at a time per library, parent item and file MD5 (see `upload_attachment`).
    pub(crate) upload_turns: KeyedLocks<(LibraryRef, ObjectKey, String)>,
    /// Zotero 10's local keys and `ZOTERO_WRITE_BACKEND` (`local_writes.rs`).
    local_writes: crate::config::LocalWrites,
    local_write_state: crate::write_route::LocalWriteState,
}

impl ZoteroClient {
    pub fn new(config: &ClientConfig) -> Result<Self, ZoteroError> {
        let local = match &config.local_api_base {
            Some(base) => Some(HttpClient::new_local(config, base)?),
            None => None,
        };
        Ok(Self {
            web: HttpClient::new(config)?,
            local,
            database: None,
            user_id: config.user_id,
            missing: config.missing_credentials.clone(),
            sort_fallback: SortFallback::default(),
            templates: TemplateCache::default(),
            access: Mutex::new(None),
            group_settings: Mutex::default(),
            upload_turns: KeyedLocks::default(),
            local_writes: config.local_writes.clone(),
            local_write_state: Default::default(),
        })
    }

    pub(crate) fn local_writes(&self) -> &crate::config::LocalWrites {
        &self.local_writes
    }

    pub(crate) fn local_write_state(&self) -> &crate::write_route::LocalWriteState {
        &self.local_write_state
    }

    /// The Web API's client, when the credentials are set; otherwise the error that says
    /// which variables to set.
    pub(crate) fn web(&self) -> Result<(&Arc<HttpClient>, u64), ZoteroError> {
        match (self.missing.is_empty(), self.user_id) {
            (true, Some(id)) => Ok((&self.web, id)),
            _ => Err(ZoteroError::MissingCredentials {
                missing: self.missing.clone(),
            }),
        }
    }

    /// Whether the Web API can be used (key and user ID set).
    pub fn has_web(&self) -> bool {
        self.web().is_ok()
    }

    /// Whether the desktop app's local API is configured.
    pub fn has_local(&self) -> bool {
        self.local.is_some()
    }

    /// Reads that may lag are answered from Zotero's own database first.
    pub fn with_database(mut self, database: Arc<zotero_db::ZoteroDb>) -> Self {
        self.database = Some(database);
        self
    }

    /// Zotero's own database, when configured.
    pub fn database(&self) -> Option<&Arc<zotero_db::ZoteroDb>> {
        self.database.as_ref()
    }

    pub(crate) fn local_http(&self) -> Option<&Arc<HttpClient>> {
        self.local.as_ref()
    }

    pub(crate) fn web_http(&self) -> &Arc<HttpClient> {
        &self.web
    }

    /// A handle on one library. Nothing is sent: a library the key cannot reach is refused
    /// by the first call that needs it (writes check before sending anything).
    pub fn library(&self, which: LibraryRef) -> Result<Library<'_>, ZoteroError> {
        if self.local.is_none() && self.database.is_none() {
            self.web()?;
        }
        Ok(Library::new(self, which))
    }

    /// What the key may do (`GET /keys/current`): read once per process, or again with
    /// `refresh` (before a refusal: the user may have just changed the key's rights).
    pub async fn access(
        &self,
        refresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Arc<KeyAccess>, ZoteroError> {
        let cached = zotero_net::lock(&self.access).clone();
        if let (Some(access), false) = (cached, refresh) {
            return Ok(access);
        }
        let access = Arc::new(self.key_info(cancel).await?);
        *zotero_net::lock(&self.access) = Some(access.clone());
        Ok(access)
    }

    /// `GET /keys/current`, asked now: who the key belongs to and what it may do.
    pub async fn key_info(&self, cancel: &CancellationToken) -> Result<KeyAccess, ZoteroError> {
        let (web, _) = self.web()?;
        let resp = web
            .send(&ApiRequest::get("/keys/current").fresh(), cancel)
            .await?;
        expect(&resp, 200, "check the API key")?;
        KeyAccess::from_json(&resp.body).map_err(|e| ZoteroError::BadResponse {
            reason: e.to_string(),
            status: resp.status,
        })
    }

    /// Every item type Zotero knows, once per process (from the Web API).
    pub async fn item_types(&self, cancel: &CancellationToken) -> Result<Vec<String>, ZoteroError> {
        self.templates.item_types(self.web()?.0, cancel).await
    }

    /// The item types a listing's `itemType` filter may name, once per process: from the
    /// Web API, or from the desktop app when it is the only backend.
    pub async fn filter_item_types(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, ZoteroError> {
        let http = match (self.web(), &self.local) {
            (Ok((web, _)), _) => web,
            (Err(_), Some(local)) => local,
            (Err(e), None) => return Err(e),
        };
        self.templates.item_types(http, cancel).await
    }

    /// The empty JSON of a new item, once per type and link mode (from the Web API: the
    /// local API does not serve templates).
    pub async fn template(
        &self,
        item_type: &str,
        link_mode: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<serde_json::Map<String, Value>, ZoteroError> {
        match self.web() {
            Ok((web, _)) => {
                self.templates
                    .template(web, item_type, link_mode, cancel)
                    .await
            }
            // Writing through the desktop app without the web API: its schema endpoints.
            Err(_) if self.writes_locally_configured() => {
                self.local_template(item_type, link_mode, cancel).await
            }
            Err(e) => Err(e),
        }
    }
}

impl Library<'_> {
    pub async fn search_items(
        &self,
        q: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<SearchResult, ZoteroError> {
        let (limit, start) = (q.limit.to_string(), q.start.to_string());
        let filter = q.filter();
        self.check_item_types(&filter.item_types, cancel).await?;
        let params = filter.params();
        let path = filter.path();
        let build = |sort: &str| {
            let mut query: Vec<(&str, &str)> =
                params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            query.extend([
                ("sort", sort),
                ("format", "json"),
                ("limit", limit.as_str()),
                ("start", start.as_str()),
            ]);
            ApiRequest::get(format!("{path}?{}", encode_query(&query)))
        };
        let collection = filter.collection.as_ref();

        let mut sort_used = None;
        let mut sort = q.sort.as_str();
        if sort == DEFAULT_SORT && self.client.sort_fallback.is_rejected(sort) {
            sort = FALLBACK_SORT;
            sort_used = Some(FALLBACK_SORT.to_string());
        }
        let mut resp = self
            .send_in_collection(&build(sort), collection, cancel)
            .await?;
        if resp.status == 400 && is_sort_rejection(&resp) && sort == DEFAULT_SORT {
            tracing::info!(
                rejected = sort,
                fallback = FALLBACK_SORT,
                "sort rejected by Zotero; falling back"
            );
            self.client.sort_fallback.reject(sort);
            sort = FALLBACK_SORT;
            sort_used = Some(FALLBACK_SORT.to_string());
            resp = self
                .send_in_collection(&build(sort), collection, cancel)
                .await?;
        }
        if resp.status == 400 && is_sort_rejection(&resp) {
            return Err(unexpected(
                &resp,
                &format!(
                    "Zotero does not accept sort '{sort}'; use one of: {}, {}",
                    DEFAULT_SORT,
                    SORT_VALUES.join(", ")
                ),
            ));
        }
        let page = parse_page(&resp, "search items", WireObject::to_item)?;
        Ok(SearchResult { page, sort_used })
    }

    pub async fn list_collections(
        &self,
        limit: u32,
        start: u64,
        cancel: &CancellationToken,
    ) -> Result<Page<Collection>, ZoteroError> {
        self.collections_page(limit, start, false, cancel).await
    }

    /// A page of collections; `fresh`: as they are now, on the Web API (for a write).
    pub(crate) async fn collections_page(
        &self,
        limit: u32,
        start: u64,
        fresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Page<Collection>, ZoteroError> {
        let mut req = ApiRequest::get(format!(
            "/collections?format=json&limit={limit}&start={start}"
        ));
        if fresh {
            req = req.fresh();
        }
        let resp = self.send(&req, cancel).await?;
        parse_page(&resp, "list collections", WireObject::to_collection)
    }

    /// One item with the summaries of its attachments.
    pub async fn get_item(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Item, ZoteroError> {
        let wire = self.item_object(key, cancel).await?;
        let mut item = wire.to_item();
        let has_children = wire
            .meta
            .get("numChildren")
            .and_then(Value::as_u64)
            .is_none_or(|n| n > 0);
        let attachments = if has_children && item.item_type != "attachment" {
            self.attachments(key, cancel).await?
        } else {
            Vec::new()
        };
        item.attachments = Some(attachments);
        Ok(item)
    }

    /// Every attachment child of an item, all pages.
    async fn attachments(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Vec<AttachmentSummary>, ZoteroError> {
        let children = self.attachment_children(key, false, cancel).await?;
        Ok(children.iter().map(WireObject::to_attachment).collect())
    }

    /// The attachment children of an item as Zotero sends them, all pages; `fresh` skips
    /// the read cache.
    pub(crate) async fn attachment_children(
        &self,
        key: &ObjectKey,
        fresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        all_pages(|start| async move {
            let mut req = ApiRequest::get(format!(
                "/items/{key}/children?itemType=attachment&format=json&limit=100&start={start}"
            ));
            if fresh {
                req = req.fresh();
            }
            let resp = self.send(&req, cancel).await?;
            parse_page(&resp, "list attachments", WireObject::clone)
        })
        .await
    }
}

fn is_sort_rejection(resp: &ApiResponse) -> bool {
    String::from_utf8_lossy(&resp.body).contains("Invalid 'sort' value")
}
