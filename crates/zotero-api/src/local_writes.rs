//! Writes through Zotero 10's local API (`shared/zotero-api-3.md`): which backend writes
//! (`ZOTERO_WRITE_BACKEND`, a local key, Zotero 10 found by `GET /api/` answering a
//! `Zotero-Server-ID`), and how a request goes there: the server ID on every request, the
//! local key (never the web key, never an `Authorization` header) on writes only, no blind
//! resend of a write (a lost answer is settled by reading back), and Zotero's refusals told
//! apart by their bodies (another database, a spent or revoked key, the API off, a library
//! the desktop may not change).

use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::ZoteroClient;
use crate::config::ApiKey;
pub use crate::config::{LocalWrites, WriteBackend};
use crate::error::ZoteroError;
use crate::http::{ApiRequest, ApiResponse, HttpClient};
use crate::library::LibraryRef;
use crate::response::{encode_query, parse_json, unexpected};
use crate::routing::Library;
pub use crate::write_route::WriteRoute;

/// What `GET /api/` says about the desktop app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopProbe {
    /// Zotero 10 or later, its local API on: the server ID of its database.
    Zotero10 { server_id: String },
    /// Zotero 10 or later with the local API turned off.
    Off,
    /// Zotero 7–9: the local API is read-only.
    ReadOnlyRelease,
    /// Nothing answers (Zotero is not running, or its HTTP server is off).
    Unreachable { reason: String },
}

/// `GET /api/` (with the trailing slash: `/api` is `404 No endpoint found`).
pub async fn probe(http: &HttpClient, cancel: &CancellationToken) -> DesktopProbe {
    let req = ApiRequest::get("/").uncached();
    let resp = match http.send(&req, cancel).await {
        Ok(r) => r,
        Err(e) => {
            return DesktopProbe::Unreachable {
                reason: e.to_string(),
            }
        }
    };
    let id = resp
        .header("zotero-server-id")
        .filter(|id| !id.is_empty())
        .map(str::to_string);
    if resp.status >= 500 {
        // Running but failing: not a Zotero that cannot write.
        return DesktopProbe::Unreachable {
            reason: format!("it answers HTTP {}", resp.status),
        };
    }
    let off = resp.status == 403 && body_has(&resp, "Local API is not enabled");
    match (id, off) {
        (Some(_), true) => DesktopProbe::Off,
        (Some(server_id), false) if resp.status == 200 => DesktopProbe::Zotero10 { server_id },
        (None, true) => DesktopProbe::Off,
        _ => DesktopProbe::ReadOnlyRelease,
    }
}

fn body_has(resp: &ApiResponse, text: &str) -> bool {
    String::from_utf8_lossy(&resp.body).contains(text)
}

impl ZoteroClient {
    /// Where writes go now, and why not locally when they cannot (for `check`). Probes the
    /// desktop when a local key is set and no server ID is known yet.
    pub async fn write_route(&self, cancel: &CancellationToken) -> Result<WriteRoute, ZoteroError> {
        let config = self.local_writes();
        let backend = config.backend;
        if backend == WriteBackend::Web || (backend == WriteBackend::Auto && !config.has_key()) {
            return Ok(WriteRoute::Web);
        }
        let fallback = |e: ZoteroError| -> Result<WriteRoute, ZoteroError> {
            if backend == WriteBackend::Auto && self.has_web() {
                tracing::info!(reason = %e, "writes go to the web API");
                Ok(WriteRoute::Web)
            } else {
                Err(e)
            }
        };
        let Some(local) = self.local_http() else {
            return fallback(ZoteroError::LocalWritesUnavailable {
                reason: "the desktop app's local API is not used (set ZOTERO_LOCAL=1)".into(),
            });
        };
        let server_id = match self.local_write_state().get() {
            Some(id) => id,
            None => match probe(local, cancel).await {
                DesktopProbe::Zotero10 { server_id } => {
                    self.local_write_state().set(Some(server_id.clone()));
                    server_id
                }
                DesktopProbe::Off => return fallback(ZoteroError::LocalApiOff),
                DesktopProbe::ReadOnlyRelease => {
                    return fallback(ZoteroError::LocalWritesUnavailable {
                        reason: "this Zotero cannot write through its local API (Zotero 9 or older); upgrade to Zotero 10 (Help → Check for Updates)".into(),
                    })
                }
                DesktopProbe::Unreachable { reason } => {
                    return fallback(ZoteroError::LocalWritesUnavailable {
                        reason: format!("the Zotero desktop app does not answer ({reason}); start Zotero"),
                    })
                }
            },
        };
        match config.key_for(&server_id) {
            Some(key) => Ok(WriteRoute::Local {
                server_id,
                key: key.clone(),
            }),
            None => fallback(ZoteroError::LocalWritesUnavailable {
                reason: "no local API key for this Zotero database; run `zotero-mcp authorize`"
                    .into(),
            }),
        }
    }

    /// What the desktop app answers to `GET /api/` (`None` when it is not configured).
    pub async fn probe_desktop(&self, cancel: &CancellationToken) -> Option<DesktopProbe> {
        Some(probe(self.local_http()?, cancel).await)
    }

    /// Whether a local key is configured for the database with this server ID.
    pub fn has_local_key_for(&self, server_id: &str) -> bool {
        self.local_writes().key_for(server_id).is_some()
    }

    /// Whether writes go to the desktop app (without probing: as last decided).
    pub fn writes_locally_configured(&self) -> bool {
        let c = self.local_writes();
        c.backend != WriteBackend::Web && c.has_key() && self.has_local()
    }

    /// The empty JSON of a new item built from the desktop's schema endpoints (it serves no
    /// `/items/new`): the type's fields, empty, and the fields every item has. An unknown
    /// type is refused here, before anything is sent.
    pub(crate) async fn local_template(
        &self,
        item_type: &str,
        link_mode: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Map<String, Value>, ZoteroError> {
        let local = self
            .local_http()
            .ok_or(ZoteroError::LocalApiNotConfigured)?;
        let path = format!(
            "/itemTypeFields?{}",
            encode_query(&[("itemType", item_type)])
        );
        let resp = local.send(&ApiRequest::get(path), cancel).await?;
        if resp.status == 400 {
            let mut valid = self.filter_item_types(cancel).await?;
            valid.sort();
            return Err(ZoteroError::UnknownItemType {
                item_type: item_type.to_string(),
                valid,
            });
        }
        if resp.status != 200 {
            return Err(unexpected(&resp, "read the item type's fields"));
        }
        let fields: Vec<Value> = parse_json(&resp)?;
        let mut t = Map::new();
        t.insert("itemType".into(), json!(item_type));
        for f in fields
            .iter()
            .filter_map(|f| f.get("field").and_then(Value::as_str))
        {
            t.insert(f.to_string(), json!(""));
        }
        match item_type {
            "note" => {
                t.insert("note".into(), json!(""));
            }
            "attachment" => {
                t.insert(
                    "linkMode".into(),
                    json!(link_mode.unwrap_or("imported_file")),
                );
                t.insert("note".into(), json!(""));
                for k in ["contentType", "charset", "filename"] {
                    t.insert(k.into(), json!(""));
                }
                t.insert("md5".into(), Value::Null);
                t.insert("mtime".into(), Value::Null);
            }
            _ => {
                t.insert("creators".into(), json!([]));
            }
        }
        t.insert("tags".into(), json!([]));
        if item_type != "attachment" {
            t.insert("collections".into(), json!([]));
        }
        t.insert("relations".into(), json!({}));
        Ok(t)
    }
}

impl Library<'_> {
    /// The library's prefix on the desktop: its own user (`/users/0`) or the group.
    fn local_write_prefix(&self) -> String {
        match self.name() {
            LibraryRef::User => "/users/0".to_string(),
            LibraryRef::Group(g) => format!("/groups/{g}"),
        }
    }

    /// Sends a write, or a read a write depends on, to the desktop app.
    pub(crate) async fn send_local_write(
        &self,
        req: &ApiRequest,
        server_id: &str,
        key: &ApiKey,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let local = self
            .client
            .local_http()
            .ok_or(ZoteroError::LocalApiNotConfigured)?;
        let mut routed = req.clone();
        routed.path = format!("{}{}", self.local_write_prefix(), req.path);
        let id = HeaderValue::from_str(server_id).map_err(|_| ZoteroError::BadResponse {
            reason: "Zotero-Server-ID is not a header value".into(),
            status: 200,
        })?;
        routed.headers.push((
            hyper::header::HeaderName::from_static("zotero-server-id"),
            id,
        ));
        let write = req.method != Method::GET;
        if write {
            let mut value =
                HeaderValue::from_str(key.expose()).map_err(|_| ZoteroError::LocalKeyRejected)?;
            value.set_sensitive(true);
            routed.headers.push((
                hyper::header::HeaderName::from_static("zotero-api-key"),
                value,
            ));
            // No blind resend: a write whose answer was lost is settled by reading back
            // (the local API has no write tokens outside POST batches).
            routed.repeatable = false;
            // The web API's copy will change when Zotero syncs.
            self.client.web_http().invalidate_cache();
        }
        let resp = local.send(&routed, cancel).await?;
        if !write && resp.status >= 500 {
            // Not asked of the web API: a version read there does not check a desktop
            // write. The server ID is kept, so an operation never changes backends midway
            // (a lost local create read back on the web, not synced yet, would be sent twice).
            return Err(ZoteroError::DesktopFailing {
                status: resp.status,
            });
        }
        if resp.status == 412 && body_has(&resp, "Zotero-Server-ID does not match") {
            // Another database: nothing read or decided under the old ID holds. Never
            // replay the write; the caller reads again.
            let new_id = resp.header("zotero-server-id").map(str::to_string);
            self.client.local_write_state().set(new_id);
            local.invalidate_cache();
            return Err(ZoteroError::LocalDatabaseChanged);
        }
        if resp.status == 401 {
            return Err(ZoteroError::LocalKeyRejected);
        }
        if resp.status == 403 && body_has(&resp, "Local API is not enabled") {
            return Err(ZoteroError::LocalApiOff);
        }
        if resp.status == 403 && write {
            let need = if body_has(&resp, "File editing denied") {
                "upload files to"
            } else {
                "write to"
            };
            return Err(ZoteroError::LocalWriteDenied {
                library: self.name().to_string(),
                need,
                answer: Box::new(resp.answer()),
            });
        }
        Ok(resp)
    }
}

/// What `POST /api/local/authorize` came to.
#[derive(Debug)]
pub enum KeyRequest {
    /// A key: `remember` for "Always Allow" (or a dismissed dialog), not for "Allow" (one
    /// write, spent when it is checked).
    Granted { key: ApiKey, remember: bool },
    /// "Deny" (`403 {"denied":true}`).
    Denied,
    /// More than 5 prompts a minute: ask again after this many seconds.
    TooManyPrompts { retry_after_secs: u64 },
    /// The local API is turned off.
    Off,
    /// No such endpoint: Zotero 9 or older.
    NotSupported,
    /// Another database answered than the one probed.
    DatabaseChanged,
}

/// Asks Zotero for a key: the person answers a modal dialog in Zotero, and the answer waits
/// for them (the client's timeout bounds the wait). Sent once: a repeat would open a second
/// dialog.
pub async fn request_key(
    http: &HttpClient,
    server_id: &str,
    app_name: &str,
    cancel: &CancellationToken,
) -> Result<KeyRequest, ZoteroError> {
    let body = serde_json::to_vec(&json!({ "appName": app_name })).map_err(|e| {
        ZoteroError::InvalidRequest {
            reason: e.to_string(),
        }
    })?;
    let id = HeaderValue::from_str(server_id).map_err(|_| ZoteroError::BadResponse {
        reason: "Zotero-Server-ID is not a header value".into(),
        status: 200,
    })?;
    let req = ApiRequest::with_body(Method::POST, "/local/authorize", "application/json", body)
        .header("zotero-server-id", id);
    let resp = match http.send(&req, cancel).await {
        Ok(r) => r,
        // The HTTP layer does not sit through a long Retry-After: the limit, reported.
        Err(ZoteroError::WaitTooLong { wait_secs, .. }) => {
            return Ok(KeyRequest::TooManyPrompts {
                retry_after_secs: wait_secs.clamp(1, 60),
            })
        }
        Err(e) => return Err(e),
    };
    let text = String::from_utf8_lossy(&resp.body).into_owned();
    match resp.status {
        200 => {
            let v: Value = parse_json(&resp)?;
            let key = v
                .get("key")
                .and_then(Value::as_str)
                .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric()))
                .ok_or_else(|| ZoteroError::BadResponse {
                    reason: "the authorization answer has no usable key".into(),
                    status: 200,
                })?;
            let remember = v.get("remember").and_then(Value::as_bool).unwrap_or(false);
            Ok(KeyRequest::Granted {
                key: ApiKey::new(key),
                remember,
            })
        }
        403 if text.contains("Local API is not enabled") => Ok(KeyRequest::Off),
        403 => Ok(KeyRequest::Denied),
        429 => {
            let secs = resp
                .header("retry-after")
                .and_then(|r| r.trim().parse::<u64>().ok())
                .unwrap_or(60)
                .clamp(1, 60);
            Ok(KeyRequest::TooManyPrompts {
                retry_after_secs: secs,
            })
        }
        404 | 400
            if text.contains("No endpoint found") || text.contains("does not support method") =>
        {
            Ok(KeyRequest::NotSupported)
        }
        412 if text.contains("Zotero-Server-ID") => Ok(KeyRequest::DatabaseChanged),
        _ => Err(unexpected(&resp, "ask Zotero for a local API key")),
    }
}

impl Library<'_> {
    /// Zotero 10 silently turns a creator type the item type lacks into the type's primary
    /// one (the web API refuses it): when writes go to the desktop, refuse it here, before
    /// anything is sent, as the web API would (400).
    pub(crate) async fn check_creator_types_locally(
        &self,
        item_type: &str,
        creators: &Value,
        cancel: &CancellationToken,
    ) -> Result<(), ZoteroError> {
        let Some(list) = creators.as_array().filter(|l| !l.is_empty()) else {
            return Ok(());
        };
        if !matches!(
            self.client.write_route(cancel).await?,
            WriteRoute::Local { .. }
        ) {
            return Ok(());
        }
        let local = self
            .client
            .local_http()
            .ok_or(ZoteroError::LocalApiNotConfigured)?;
        let path = format!(
            "/itemTypeCreatorTypes?{}",
            encode_query(&[("itemType", item_type)])
        );
        let resp = local.send(&ApiRequest::get(path), cancel).await?;
        if resp.status != 200 {
            return Err(unexpected(&resp, "read the item type's creator types"));
        }
        let valid: Vec<String> = parse_json::<Vec<Value>>(&resp)?
            .iter()
            .filter_map(|c| c.get("creatorType").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        for c in list {
            let t = c.get("creatorType").and_then(Value::as_str).unwrap_or("");
            if !valid.iter().any(|v| v == t) {
                return Err(ZoteroError::Rejected {
                    code: 400,
                    message: format!(
                        "'{t}' is not a creator type of item type {item_type}; use one of: {}",
                        valid.join(", ")
                    ),
                    answer: crate::error::UpstreamAnswer::default(),
                });
            }
        }
        Ok(())
    }
}
