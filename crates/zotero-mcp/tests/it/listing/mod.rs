//! Conformance of the listings: `zotero_list_items`, `zotero_list_tags`, and the extensions
//! of `zotero_search_items` (`qmode`, `item_type`, `collection_key`, the peer's `tag`) and
//! of `zotero_list_collections` (`top_only`, `parent_key`, `tree`). Every promise is checked
//! on the user library, a group library and the desktop's local API alone, against what the
//! emulator holds.

mod collections;
mod items;
mod tags;

use serde_json::{json, Value};
use zotero_emulator::{
    Emulator, GroupSpec, KeyAccess, Library, LibraryId, Recorded, API_KEY, USER_ID,
};

use crate::common::{env_for, in_process, Answer, Server};
use zotero_emulator::testing::api;

/// The group of the group setup: the fixtures again, writable by the key.
pub(super) const GROUP: u64 = 5101;

/// Which library and backend a setup reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Where {
    User,
    Group,
    /// The user library through the desktop's local API alone (no key).
    Local,
}

pub(super) const EVERYWHERE: [Where; 3] = [Where::User, Where::Group, Where::Local];

pub(super) struct Setup {
    pub emu: Emulator,
    pub server: Server,
    pub at: Where,
}

impl Setup {
    pub async fn new(at: Where) -> Setup {
        Self::with_library(at, Library::from_fixtures()).await
    }

    /// `library` as the user library and as the group's.
    pub async fn with_library(at: Where, library: Library) -> Setup {
        let emu = Emulator::with_library(library.clone()).await;
        emu.add_group(GroupSpec::new(GROUP, "Listing lab"), library);
        emu.set_key_access(KeyAccess::groups(&[(GROUP, true)]));
        let env = match at {
            Where::User | Where::Group => env_for(&emu.uri(), USER_ID, API_KEY),
            Where::Local => vec![
                ("ZOTERO_LOCAL".to_string(), "1".to_string()),
                ("ZOTERO_LOCAL_API_BASE".to_string(), emu.local_uri()),
                ("ZOTERO_RETRY_MAX_ATTEMPTS".to_string(), "1".to_string()),
            ],
        };
        let server = in_process(&env).await;
        Setup { emu, server, at }
    }

    pub fn id(&self) -> LibraryId {
        match self.at {
            Where::Group => LibraryId::Group(GROUP),
            Where::User | Where::Local => LibraryId::USER,
        }
    }

    /// Calls `tool` on this setup's library.
    pub async fn call(&self, tool: &str, mut args: Value) -> Answer {
        if self.at == Where::Group {
            args["library"] = json!(format!("group:{GROUP}"));
        }
        self.server.call(tool, args).await
    }

    /// Calls `tool` and answers its `data`, failing with the envelope otherwise.
    pub async fn data(&self, tool: &str, args: Value) -> Value {
        let a = self.call(tool, args.clone()).await;
        assert!(a.ok(), "{:?} {tool} {args}: {}", self.at, a.envelope);
        a.data().clone()
    }

    /// The items as stored.
    pub fn items(&self) -> Vec<Value> {
        self.emu.library(self.id()).items()
    }

    /// What the backend of this setup was asked.
    pub fn requests(&self) -> Vec<Recorded> {
        match self.at {
            Where::Local => self.emu.local_requests(),
            Where::User | Where::Group => self.emu.requests(),
        }
    }

    /// How items are linked in this library.
    pub fn zotero_url(&self, key: &str) -> String {
        match self.at {
            Where::Group => format!("zotero://select/groups/{GROUP}/items/{key}"),
            Where::User | Where::Local => format!("zotero://select/library/items/{key}"),
        }
    }

    /// Changes an item's title through the web API, as another client would.
    pub async fn retitle(&self, key: &str, title: &str) {
        let path = format!("/{}/items/{key}", self.id().path());
        let version = self.emu.library(self.id()).item(key).unwrap()["version"].to_string();
        let r = api(
            &self.emu,
            "PATCH",
            &path,
            &[("If-Unmodified-Since-Version", version.as_str())],
            json!({ "title": title }).to_string(),
        )
        .await;
        assert_eq!(r.status, 204, "{}", String::from_utf8_lossy(&r.body));
    }
}

/// The `item_key`s of an answer's `items`.
pub(super) fn keys(data: &Value) -> Vec<String> {
    data["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item_key"].as_str().unwrap().to_string())
        .collect()
}

/// `keys`, sorted.
pub(super) fn key_set(data: &Value) -> Vec<String> {
    let mut k = keys(data);
    k.sort();
    k
}

/// Sorted strings.
pub(super) fn sorted<S: AsRef<str>>(v: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut out: Vec<String> = v.into_iter().map(|s| s.as_ref().to_string()).collect();
    out.sort();
    out
}

pub(super) fn is_top(i: &Value) -> bool {
    i["data"]["parentItem"].as_str().is_none()
}

pub(super) fn is_trashed(i: &Value) -> bool {
    i["data"]["deleted"] == 1 || i["data"]["deleted"] == true
}

pub(super) fn has_tag(i: &Value, tag: &str) -> bool {
    i["data"]["tags"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["tag"] == tag))
}
