//! Typed calls to the Zotero Web API. Each has the same shape: build the request, send it,
//! match the statuses it expects, and turn anything else into a `ZoteroError`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::{ApiRequest, ApiResponse, HttpClient};
use super::model::{AttachmentSummary, Collection, Item, WireObject};
use crate::config::ClientConfig;

/// Sort keys the Zotero API accepts for items (zotero-api.md).
pub const SORT_VALUES: [&str; 15] = [
    "dateAdded",
    "dateModified",
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "addedBy",
];
/// The seed's default sort. Zotero has no such sort; see `SortFallback`.
pub const DEFAULT_SORT: &str = "relevance";
pub const FALLBACK_SORT: &str = "dateModified";

/// A page of results and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
    pub next_start: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    pub query: String,
    pub tags: Vec<String>,
    pub limit: u32,
    pub start: u64,
    pub sort: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub page: Page<Item>,
    /// Set when the asked-for sort was replaced by the fallback.
    pub sort_used: Option<String>,
}

/// What `GET /keys/current` says about the key.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyInfo {
    #[serde(rename = "userID")]
    pub user_id: u64,
    #[serde(default)]
    pub username: String,
    #[serde(default, rename = "displayName")]
    pub display_name: String,
    #[serde(default)]
    pub access: Value,
}

impl KeyInfo {
    fn user_access(&self, what: &str) -> bool {
        self.access
            .get("user")
            .and_then(|u| u.get(what))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
    pub fn can_read(&self) -> bool {
        self.user_access("library")
    }
    pub fn can_write(&self) -> bool {
        self.user_access("write")
    }
    pub fn can_upload(&self) -> bool {
        self.user_access("files")
    }
}

/// Sort values Zotero has rejected in this process, so later searches go straight to the
/// fallback and cost one request instead of two.
#[derive(Default)]
pub struct SortFallback {
    rejected: Mutex<HashSet<String>>,
}

impl SortFallback {
    fn is_rejected(&self, sort: &str) -> bool {
        self.rejected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(sort)
    }
    fn reject(&self, sort: &str) {
        self.rejected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(sort.to_string());
    }
}

pub struct ZoteroClient {
    pub(crate) http: Arc<HttpClient>,
    user_id: Option<u64>,
    missing: Vec<&'static str>,
    sort_fallback: SortFallback,
    pub(crate) templates: super::write::TemplateCache,
}

impl ZoteroClient {
    pub fn new(config: &ClientConfig) -> Result<Self, ZoteroError> {
        Ok(Self {
            http: HttpClient::new(config)?,
            user_id: config.user_id,
            missing: config.missing_credentials.clone(),
            sort_fallback: SortFallback::default(),
            templates: super::write::TemplateCache::default(),
        })
    }

    /// `/users/{id}`, or the error that says which variables to set.
    pub(crate) fn prefix(&self) -> Result<String, ZoteroError> {
        match (self.missing.is_empty(), self.user_id) {
            (true, Some(id)) => Ok(format!("/users/{id}")),
            _ => Err(ZoteroError::MissingCredentials {
                missing: self.missing.clone(),
            }),
        }
    }

    pub async fn search_items(
        &self,
        q: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<SearchResult, ZoteroError> {
        let prefix = self.prefix()?;
        let (limit, start) = (q.limit.to_string(), q.start.to_string());
        let build = |sort: &str| {
            let mut query = vec![("q", q.query.as_str()), ("sort", sort), ("format", "json")];
            query.extend(q.tags.iter().map(|t| ("tag", t.as_str())));
            query.extend([("limit", limit.as_str()), ("start", start.as_str())]);
            ApiRequest::get(format!("{prefix}/items/top?{}", encode_query(&query)))
        };

        let mut sort_used = None;
        let mut sort = q.sort.as_str();
        if sort == DEFAULT_SORT && self.sort_fallback.is_rejected(sort) {
            sort = FALLBACK_SORT;
            sort_used = Some(FALLBACK_SORT.to_string());
        }
        let mut resp = self.http.send(&build(sort), cancel).await?;
        if resp.status == 400 && is_sort_rejection(&resp) && sort == DEFAULT_SORT {
            tracing::info!(
                rejected = sort,
                fallback = FALLBACK_SORT,
                "sort rejected by Zotero; falling back"
            );
            self.sort_fallback.reject(sort);
            sort = FALLBACK_SORT;
            sort_used = Some(FALLBACK_SORT.to_string());
            resp = self.http.send(&build(sort), cancel).await?;
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
        let prefix = self.prefix()?;
        let req = ApiRequest::get(format!(
            "{prefix}/collections?format=json&limit={limit}&start={start}"
        ));
        let resp = self.http.send(&req, cancel).await?;
        parse_page(&resp, "list collections", WireObject::to_collection)
    }

    /// One item with the summaries of its attachments.
    pub async fn get_item(
        &self,
        key: &str,
        cancel: &CancellationToken,
    ) -> Result<Item, ZoteroError> {
        let prefix = self.prefix()?;
        let resp = self
            .http
            .send(&ApiRequest::get(format!("{prefix}/items/{key}")), cancel)
            .await?;
        if resp.status == 404 {
            return Err(unexpected(
                &resp,
                &format!("no item with key {key} in this library"),
            ));
        }
        expect(&resp, 200, &format!("get item {key}"))?;
        let wire: WireObject = parse_json(&resp)?;
        let mut item = wire.to_item();
        let has_children = wire
            .meta
            .get("numChildren")
            .and_then(Value::as_u64)
            .is_none_or(|n| n > 0);
        let attachments = if has_children && item.item_type != "attachment" {
            self.attachments(&prefix, key, cancel).await?
        } else {
            Vec::new()
        };
        item.attachments = Some(attachments);
        Ok(item)
    }

    /// Every attachment child of an item, all pages.
    async fn attachments(
        &self,
        prefix: &str,
        key: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<AttachmentSummary>, ZoteroError> {
        let children = self.attachment_children(prefix, key, false, cancel).await?;
        Ok(children.iter().map(WireObject::to_attachment).collect())
    }

    /// The attachment children of an item as Zotero sends them, all pages; `fresh` skips
    /// the read cache.
    pub(crate) async fn attachment_children(
        &self,
        prefix: &str,
        key: &str,
        fresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<WireObject>, ZoteroError> {
        all_pages(|start| async move {
            let mut req = ApiRequest::get(format!(
                "{prefix}/items/{key}/children?itemType=attachment&format=json&limit=100&start={start}"
            ));
            if fresh {
                req = req.fresh();
            }
            let resp = self.http.send(&req, cancel).await?;
            parse_page(&resp, "list attachments", WireObject::clone)
        })
        .await
    }

    /// `GET /keys/current`: who the key belongs to and what it may do.
    pub async fn key_info(&self, cancel: &CancellationToken) -> Result<KeyInfo, ZoteroError> {
        if self.missing.contains(&"ZOTERO_API_KEY") {
            return Err(ZoteroError::MissingCredentials {
                missing: self.missing.clone(),
            });
        }
        let resp = self
            .http
            .send(&ApiRequest::get("/keys/current"), cancel)
            .await?;
        expect(&resp, 200, "check the API key")?;
        parse_json(&resp)
    }
}

/// Every item of a listing, page after page, following `next_start`.
pub(crate) async fn all_pages<T, F, Fut>(mut page_at: F) -> Result<Vec<T>, ZoteroError>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, ZoteroError>>,
{
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let page = page_at(start).await?;
        out.extend(page.items);
        match page.next_start {
            Some(next) if next > start => start = next,
            _ => return Ok(out),
        }
    }
}

fn is_sort_rejection(resp: &ApiResponse) -> bool {
    String::from_utf8_lossy(&resp.body).contains("Invalid 'sort' value")
}

fn expect(resp: &ApiResponse, status: u16, what: &str) -> Result<(), ZoteroError> {
    if resp.status == status {
        Ok(())
    } else {
        Err(unexpected(resp, what))
    }
}

/// The error for an answer the operation did not expect, with a message that says what to do.
pub fn unexpected(resp: &ApiResponse, what: &str) -> ZoteroError {
    let hint = match resp.status {
        401 | 403 => "Zotero refused the API key: check ZOTERO_API_KEY, and that ZOTERO_USER_ID is the key's own user ID (run `zotero-mcp check`)".to_string(),
        404 => "not found".to_string(),
        429 => "Zotero rate limit exceeded; wait before trying again".to_string(),
        s if s >= 500 => format!("Zotero is failing (HTTP {s}); try again later"),
        s => {
            let body = String::from_utf8_lossy(&resp.body);
            let body = body.trim();
            if body.is_empty() || body.len() > 300 {
                format!("Zotero answered HTTP {s}")
            } else {
                format!("Zotero answered HTTP {s}: {body}")
            }
        }
    };
    ZoteroError::Status {
        message: format!("{what}: {hint}"),
        answer: resp.answer(),
    }
}

pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    resp: &ApiResponse,
) -> Result<T, ZoteroError> {
    serde_json::from_slice(&resp.body).map_err(|e| ZoteroError::BadResponse {
        reason: e.to_string(),
        status: resp.status,
    })
}

fn parse_page<T>(
    resp: &ApiResponse,
    what: &str,
    map: impl Fn(&WireObject) -> T,
) -> Result<Page<T>, ZoteroError> {
    expect(resp, 200, what)?;
    let objects: Vec<WireObject> = parse_json(resp)?;
    let total = resp
        .header("total-results")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(objects.len() as u64);
    Ok(Page {
        items: objects.iter().map(map).collect(),
        total,
        next_start: resp.header("link").and_then(next_start_from_link),
    })
}

/// The `start` of the `rel="next"` URL in a `Link` header, if there is a next page.
pub fn next_start_from_link(link: &str) -> Option<u64> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| matches!(p.trim(), "rel=\"next\"" | "rel=next"));
        if !is_next {
            return None;
        }
        let url = url.trim().trim_start_matches('<').trim_end_matches('>');
        let query = url.split_once('?')?.1;
        Some(
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix("start="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
        )
    })
}

/// `application/x-www-form-urlencoded`-style query string with `%20` for spaces.
pub fn encode_query(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(&percent_encode(k));
        out.push('=');
        out.push_str(&percent_encode(v));
    }
    out
}

pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_next_is_found_or_absent() {
        let link = r#"<https://api.zotero.org/users/1/items?limit=25&start=25>; rel="next", <https://api.zotero.org/users/1/items?limit=25&start=75>; rel="last", <https://www.zotero.org/users/1/items>; rel="alternate""#;
        assert_eq!(next_start_from_link(link), Some(25));
        let last = r#"<https://api.zotero.org/users/1/items?limit=25>; rel="first", <https://api.zotero.org/users/1/items?limit=25&start=50>; rel="prev""#;
        assert_eq!(next_start_from_link(last), None);
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(
            encode_query(&[("q", "a b&c"), ("tag", "x || -y")]),
            "q=a%20b%26c&tag=x%20%7C%7C%20-y"
        );
    }
}
