//! The libraries a caller can reach: the user library and every group the key (or the
//! desktop app) can see, with what may be done in each.

use std::sync::Arc;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::client::ZoteroClient;
use crate::error::ZoteroError;
use crate::group_rights::in_group;
pub use crate::group_rights::GroupSettings;
use crate::http::{ApiRequest, HttpClient};
use crate::keys::Permissions;
use crate::library::{LibraryId, LibraryRef};
use crate::response::{all_pages, expect, parse_json, parse_page_of};

/// One library the caller can reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryInfo {
    pub library: LibraryRef,
    pub name: String,
    /// `user` or `group`.
    pub kind: &'static str,
    /// For a group, Zotero's type: `Private`, `PublicOpen` or `PublicClosed`.
    pub group_type: Option<String>,
    /// Items in the library, where Zotero says so without another request (groups).
    pub num_items: Option<u64>,
    pub permissions: Permissions,
}

#[derive(Deserialize)]
struct GroupWire {
    id: u64,
    #[serde(default)]
    meta: GroupMeta,
    #[serde(default)]
    data: GroupData,
}

#[derive(Deserialize, Default)]
struct GroupMeta {
    #[serde(default, rename = "numItems")]
    num_items: Option<u64>,
}

#[derive(Deserialize, Default)]
struct GroupData {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "type")]
    group_type: Option<String>,
    #[serde(flatten)]
    settings: GroupSettings,
}

/// What the desktop app's local API (or Zotero's database) lets this server do: read,
/// never write.
const LOCAL_PERMISSIONS: Permissions = Permissions {
    library: true,
    files: false,
    notes: true,
    write: false,
};

impl ZoteroClient {
    /// The user library and every group: through the Web API when the key is set (with
    /// what the key may do in each), else from Zotero's database when it is configured,
    /// else through the desktop app's local API (both read-only).
    pub async fn libraries(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<LibraryInfo>, ZoteroError> {
        if let Ok((web, user_id)) = self.web() {
            let access = self.access(false, cancel).await?;
            let mut out = vec![LibraryInfo {
                library: LibraryRef::User,
                name: format!("My Library ({})", access.owner_name()),
                kind: "user",
                group_type: None,
                num_items: None,
                permissions: access.permissions(LibraryId::User(user_id)),
            }];
            for g in groups(web, &LibraryId::User(user_id).path(), cancel).await? {
                let key = access.permissions(LibraryId::Group(g.id));
                let explicit = access.groups.contains_key(&g.id);
                let permissions = in_group(key, explicit, &g.data.settings, user_id);
                out.push(group_info(g, permissions));
            }
            return Ok(out);
        }
        if let Some(db) = self.database() {
            return database_libraries(db).await;
        }
        if self.local_http().is_none() {
            // Neither backend: the error names the variables to set.
            self.web()?;
        }
        self.local_libraries(cancel).await
    }

    /// The libraries the desktop app's local API serves (read-only here); an error when it
    /// is not configured, not running, or its local API is off.
    pub async fn local_libraries(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<LibraryInfo>, ZoteroError> {
        let Some(local) = self.local_http() else {
            return Err(ZoteroError::LocalApiNotConfigured);
        };
        let mut out = vec![LibraryInfo {
            library: LibraryRef::User,
            name: "My Library".into(),
            kind: "user",
            group_type: None,
            num_items: None,
            permissions: LOCAL_PERMISSIONS,
        }];
        let found = groups(local, &LibraryId::User(0).path(), cancel).await;
        if let Err(ZoteroError::Status { answer, .. }) = &found {
            if answer.status == 403 {
                return Err(ZoteroError::LocalApiOff);
            }
        }
        for g in found? {
            out.push(group_info(g, LOCAL_PERMISSIONS));
        }
        Ok(out)
    }
}

impl ZoteroClient {
    /// A group's editing settings (`GET /groups/{id}`, from the Web API): read once per
    /// process, or again with `refresh`.
    pub async fn group_settings(
        &self,
        group: u64,
        refresh: bool,
        cancel: &CancellationToken,
    ) -> Result<Arc<GroupSettings>, ZoteroError> {
        let lock = || zotero_net::lock(&self.group_settings);
        if let (Some(known), false) = (lock().get(&group).cloned(), refresh) {
            return Ok(known);
        }
        let (web, _) = self.web()?;
        let req = ApiRequest::get(LibraryId::Group(group).path()).fresh();
        let resp = web.send(&req, cancel).await?;
        if resp.status == 404 || resp.status == 403 {
            return Err(ZoteroError::LibraryAccess {
                library: LibraryRef::Group(group).to_string(),
                need: "read",
                answer: Some(Box::new(resp.answer())),
                repeated: false,
            });
        }
        expect(&resp, 200, "read the group")?;
        let settings = Arc::new(parse_json::<GroupWire>(&resp)?.data.settings);
        lock().insert(group, settings.clone());
        Ok(settings)
    }
}

fn group_info(g: GroupWire, permissions: Permissions) -> LibraryInfo {
    LibraryInfo {
        library: LibraryRef::Group(g.id),
        name: g.data.name,
        kind: "group",
        group_type: g.data.group_type,
        num_items: g.meta.num_items,
        permissions,
    }
}

/// `{user}/groups`, every page.
async fn groups(
    http: &HttpClient,
    user_prefix: &str,
    cancel: &CancellationToken,
) -> Result<Vec<GroupWire>, ZoteroError> {
    all_pages(|start| async move {
        let req = ApiRequest::get(format!("{user_prefix}/groups?limit=100&start={start}"));
        let resp = http.send(&req, cancel).await?;
        parse_page_of(&resp, "list the groups", |g: GroupWire| g)
    })
    .await
}

/// The user library and the groups of Zotero's database (read off the runtime's threads:
/// the snapshot blocks).
async fn database_libraries(
    db: &Arc<zotero_db::ZoteroDb>,
) -> Result<Vec<LibraryInfo>, ZoteroError> {
    let db = Arc::clone(db);
    let answer = tokio::task::spawn_blocking(move || db.groups())
        .await
        .map_err(|e| ZoteroError::Database {
            reason: format!("reading the Zotero database stopped: {e}"),
        })?
        .map_err(|e| ZoteroError::Database {
            reason: e.to_string(),
        })?;
    let groups: Vec<GroupWire> =
        serde_json::from_slice(&answer.body).map_err(|e| ZoteroError::Database {
            reason: format!("the database's group list did not parse: {e}"),
        })?;
    let mut out = vec![LibraryInfo {
        library: LibraryRef::User,
        name: "My Library".into(),
        kind: "user",
        group_type: None,
        num_items: None,
        permissions: LOCAL_PERMISSIONS,
    }];
    out.extend(groups.into_iter().map(|g| group_info(g, LOCAL_PERMISSIONS)));
    Ok(out)
}
