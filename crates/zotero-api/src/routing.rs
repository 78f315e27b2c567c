//! A library of the client and the backend each of its requests goes to: reads that may
//! lag go to Zotero's own database when it is configured, else to the desktop app's local
//! API (each falling back to the next when it cannot answer: the desktop when it is closed,
//! refuses, or fails with a 5xx); reads a version-checked write depends on, and writes, go
//! to the backend that writes (the local copies lag sync, and their versions are their own),
//! and never fall back. The key's rights are checked here before anything is written.

use std::sync::Arc;

use bytes::Bytes;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::HeaderMap;
use tokio_util::sync::CancellationToken;
use zotero_db::{DbAnswer, LibraryScope, ZoteroDb};

use crate::client::ZoteroClient;
use crate::error::ZoteroError;
use crate::http::{ApiRequest, ApiResponse, Consistency, HttpClient};
use crate::keys::Permissions;
use crate::library::{LibraryId, LibraryRef};
use crate::write_route::WriteRoute;

/// Which backend answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Web,
    Local,
    /// Zotero's own database (`zotero.sqlite`), read from a private snapshot.
    Database,
}

/// What the desktop app says when it cannot serve a request the Web API can: switched off
/// (403), not synced or not there (404), an endpoint it lacks (501), another account (400).
fn local_cannot_serve(resp: &ApiResponse) -> bool {
    match resp.status {
        403 | 404 | 501 => true,
        400 => String::from_utf8_lossy(&resp.body).contains("Only data for the logged-in user"),
        _ => false,
    }
}

/// The database's answer as the HTTP answer the API would give.
fn database_response(answer: DbAnswer) -> ApiResponse {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(answer.content_type));
    if let Some(total) = answer.total_results {
        headers.insert("total-results", HeaderValue::from(total));
    }
    if let Some(version) = answer.library_version {
        headers.insert("last-modified-version", HeaderValue::from(version));
    }
    if let Some(next) = answer.next_start {
        if let Ok(link) = HeaderValue::from_str(&format!("<zotero-db:?start={next}>; rel=\"next\""))
        {
            headers.insert("link", link);
        }
    }
    ApiResponse {
        status: answer.status,
        headers,
        body: Bytes::from(answer.body),
        retries: 0,
    }
}

/// One library of the client, named as the caller named it.
#[derive(Clone, Copy)]
pub struct Library<'a> {
    pub(crate) client: &'a ZoteroClient,
    which: LibraryRef,
}

impl<'a> Library<'a> {
    pub(crate) fn new(client: &'a ZoteroClient, which: LibraryRef) -> Self {
        Self { client, which }
    }

    /// The library as the caller named it.
    pub fn name(&self) -> LibraryRef {
        self.which
    }

    /// The library's ID on the Web API, when the credentials are set.
    pub fn web_id(&self) -> Result<LibraryId, ZoteroError> {
        let (_, user) = self.client.web()?;
        Ok(match self.which {
            LibraryRef::User => LibraryId::User(user),
            LibraryRef::Group(g) => LibraryId::Group(g),
        })
    }

    /// The library's URL prefix on the desktop app: the key's own user ID when the Web API
    /// is configured (the desktop refuses it if it is logged in to another account, and the
    /// request then goes to the web), else `/users/0`, the desktop's own user.
    fn local_prefix(&self) -> String {
        match (self.which, self.client.web()) {
            (LibraryRef::User, Ok((_, user))) => LibraryId::User(user).path(),
            (LibraryRef::User, Err(_)) => LibraryId::User(0).path(),
            (LibraryRef::Group(g), _) => LibraryId::Group(g).path(),
        }
    }

    /// Which backend a request goes to first.
    pub(crate) fn route(&self, req: &ApiRequest) -> Result<Backend, ZoteroError> {
        let database_fits = self.client.database().is_some()
            && req.method == hyper::Method::GET
            && (req.consistency == Consistency::MayLag || !self.client.has_web());
        if database_fits {
            return Ok(Backend::Database);
        }
        self.route_http(req)
    }

    /// Which HTTP backend a request goes to first.
    fn route_http(&self, req: &ApiRequest) -> Result<Backend, ZoteroError> {
        let has_web = self.client.web().is_ok();
        let local_fits = self.client.local_http().is_some()
            && req.method == hyper::Method::GET
            && (req.consistency == Consistency::MayLag || !has_web);
        if local_fits {
            return Ok(Backend::Local);
        }
        self.web_id()?;
        Ok(Backend::Web)
    }

    /// Sends a request whose path is relative to the library (`/items/…`).
    pub(crate) async fn send(
        &self,
        req: &ApiRequest,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        if req.consistency == Consistency::Current {
            if let WriteRoute::Local { server_id, key } = self.client.write_route(cancel).await? {
                return self.send_local_write(req, &server_id, &key, cancel).await;
            }
        }
        if let (Backend::Database, Some(db)) = (self.route(req)?, self.client.database()) {
            match self.send_database(db, req).await? {
                Some(resp) => return Ok(resp),
                None => tracing::info!("the Zotero database cannot serve it; asking the API"),
            }
        }
        if let (Backend::Local, Some(local)) = (self.route_http(req)?, self.client.local_http()) {
            let has_web = self.client.web().is_ok();
            // With the web API to turn to, a failing desktop is asked once, not waited for.
            let once = req.clone().repeatable(req.repeatable && !has_web);
            match self
                .send_to(local, &self.local_prefix(), &once, cancel)
                .await
            {
                Ok(resp) if has_web && (local_cannot_serve(&resp) || resp.status >= 500) => {
                    tracing::info!(
                        status = resp.status,
                        "the desktop cannot serve it; asking the web API"
                    );
                }
                Err(
                    ZoteroError::Network { .. }
                    | ZoteroError::Timeout { .. }
                    | ZoteroError::WaitTooLong { .. },
                ) if has_web => {
                    tracing::info!("the desktop did not answer; asking the web API");
                }
                Ok(resp) if resp.status == 403 => return Err(ZoteroError::LocalApiOff),
                other => return other,
            }
        }
        let resp = self
            .send_to(self.client.web_http(), &self.web_id()?.path(), req, cancel)
            .await?;
        if req.method != hyper::Method::GET {
            // A write changes what the desktop will serve too, once synced.
            if let Some(local) = self.client.local_http() {
                local.invalidate_cache();
            }
        }
        if resp.status == 403 && !String::from_utf8_lossy(&resp.body).contains("Invalid key") {
            return Err(ZoteroError::LibraryAccess {
                answer: Some(Box::new(resp.answer())),
                repeated: resp.retries > 0,
                library: self.which.to_string(),
                need: if req.method == hyper::Method::GET {
                    "read"
                } else if req.path.ends_with("/file") {
                    "upload files to"
                } else {
                    "write to"
                },
            });
        }
        Ok(resp)
    }

    /// Answers a request from Zotero's database (off the runtime's threads: SQLite and the
    /// snapshot copy block); `None` when the database does not serve it.
    pub(crate) async fn send_database(
        &self,
        db: &Arc<ZoteroDb>,
        req: &ApiRequest,
    ) -> Result<Option<ApiResponse>, ZoteroError> {
        let scope = match self.which {
            LibraryRef::User => LibraryScope::User,
            LibraryRef::Group(g) => LibraryScope::Group(g),
        };
        let db = Arc::clone(db);
        let path = req.path.clone();
        let answer = tokio::task::spawn_blocking(move || db.answer(scope, &path))
            .await
            .map_err(|e| ZoteroError::Database {
                reason: format!("reading the Zotero database stopped: {e}"),
            })?
            .map_err(|e| ZoteroError::Database {
                reason: e.to_string(),
            })?;
        if answer.is_unsupported() {
            return Ok(None);
        }
        Ok(Some(database_response(answer)))
    }

    /// Sends a request to the desktop app alone (`None` without one), whatever it answers.
    pub(crate) async fn send_local(
        &self,
        req: &ApiRequest,
        cancel: &CancellationToken,
    ) -> Option<Result<ApiResponse, ZoteroError>> {
        let local = self.client.local_http()?;
        Some(self.send_to(local, &self.local_prefix(), req, cancel).await)
    }

    /// Sends a read to the Web API alone, whatever the other backends could answer.
    pub(crate) async fn send_web(
        &self,
        req: &ApiRequest,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        self.send_to(self.client.web_http(), &self.web_id()?.path(), req, cancel)
            .await
    }

    async fn send_to(
        &self,
        http: &HttpClient,
        prefix: &str,
        req: &ApiRequest,
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let mut routed = req.clone();
        routed.path = format!("{prefix}{}", req.path);
        http.send(&routed, cancel).await
    }

    /// Refuses, before anything is written, a write the key may not make here (and any write
    /// without the Web API: the local API is read-only here). `files` for uploads. A refusal
    /// is decided on the key's rights read again, in case they were just changed.
    pub async fn require_write(
        &self,
        files: bool,
        cancel: &CancellationToken,
    ) -> Result<(), ZoteroError> {
        if let WriteRoute::Local { .. } = self.client.write_route(cancel).await? {
            // The desktop checks the library itself (403 `Write access denied`).
            return Ok(());
        }
        let id = self.web_id()?;
        let mut refused = None;
        for refresh in [false, true] {
            let rights = self.rights(id, files, refresh, cancel).await?;
            refused = if !rights.library || !rights.write {
                Some("write to")
            } else if files && !rights.files {
                Some("upload files to")
            } else {
                return Ok(());
            };
        }
        Err(ZoteroError::LibraryAccess {
            library: self.which.to_string(),
            need: refused.unwrap_or("write to"),
            answer: None,
            repeated: false,
        })
    }

    /// What may be done here: the key's rights and, in a group, what the group lets the
    /// user do (its library and file editing settings, by the user's role).
    async fn rights(
        &self,
        id: LibraryId,
        files: bool,
        refresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Permissions, ZoteroError> {
        let access = self.client.access(refresh, cancel).await?;
        let key = access.permissions(id);
        let LibraryId::Group(group) = id else {
            return Ok(key);
        };
        let explicit = access.groups.contains_key(&group);
        // The group's settings matter when the key's write comes from "all groups" (only
        // where the user may edit) and for files (only where the user may edit files).
        if !key.write || (explicit && !files) {
            return Ok(key);
        }
        let settings = self.client.group_settings(group, refresh, cancel).await?;
        Ok(crate::group_rights::in_group(
            key,
            explicit,
            &settings,
            access.user_id,
        ))
    }
}
