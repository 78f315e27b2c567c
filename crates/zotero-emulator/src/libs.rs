//! Per-library state: every library (the user's and each group's) has its own items,
//! collections, library version, full text and stored files, as the dataserver keeps them per
//! `libraryID`. Objects carry their library's `library` block and links.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::stored::{FullText, ItemFile};
use super::USER_ID;

pub(crate) const REAL_API: &str = "https://api.zotero.org";
const WWW_BASE: &str = "https://www.zotero.org";

/// A library: the user's (`/users/{id}`) or a group's (`/groups/{id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LibraryId {
    User(u64),
    Group(u64),
}

impl LibraryId {
    /// The emulator's user library.
    pub const USER: LibraryId = LibraryId::User(USER_ID);

    /// `users/475425` or `groups/12345`: the path after the API base.
    pub fn path(&self) -> String {
        match self {
            LibraryId::User(id) => format!("users/{id}"),
            LibraryId::Group(id) => format!("groups/{id}"),
        }
    }

    /// `user` or `group`, as the `library.type` of objects.
    pub fn kind(&self) -> &'static str {
        match self {
            LibraryId::User(_) => "user",
            LibraryId::Group(_) => "group",
        }
    }

    /// The user or group id.
    pub fn number(&self) -> u64 {
        match self {
            LibraryId::User(id) | LibraryId::Group(id) => *id,
        }
    }
}

/// What objects say about their library (`Zotero_Libraries::toJSON`).
#[derive(Debug, Clone)]
pub(crate) struct LibInfo {
    pub(crate) id: LibraryId,
    pub(crate) name: String,
    /// The library's web page (`links.alternate` base), e.g. `https://www.zotero.org/groups/x`.
    pub(crate) www: String,
}

impl LibInfo {
    /// The user library of the recordings ("Z public library").
    pub(crate) fn user() -> LibInfo {
        LibInfo {
            id: LibraryId::USER,
            name: "Z public library".into(),
            www: format!("{WWW_BASE}/z_public_library"),
        }
    }

    /// A group library: the web page uses the slug of public groups, the id otherwise
    /// (`Zotero_URI::getGroupURI` with `Zotero_Group::slug`).
    pub(crate) fn group(id: u64, name: &str, public: bool) -> LibInfo {
        let slug = if public { slugify(name) } else { String::new() };
        let page = if slug.is_empty() {
            id.to_string()
        } else {
            slug
        };
        LibInfo {
            id: LibraryId::Group(id),
            name: name.to_string(),
            www: format!("{WWW_BASE}/groups/{page}"),
        }
    }

    /// The `library` block of objects.
    pub(crate) fn json(&self) -> Value {
        json!({"type": self.id.kind(), "id": self.id.number(), "name": self.name,
               "links": {"alternate": {"href": self.www, "type": "text/html"}}})
    }
}

/// `Zotero_Utilities::slugify`: trimmed, lower case, only `[a-z0-9 ._-]`, spaces to `_`.
pub(crate) fn slugify(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .filter(|c| matches!(c, 'a'..='z' | '0'..='9' | ' ' | '.' | '_' | '-'))
        .map(|c| if c == ' ' { '_' } else { c })
        .collect()
}

/// One library's objects and versions.
#[derive(Clone)]
pub(crate) struct Lib {
    pub(crate) info: LibInfo,
    /// Items in creation order (the order is the tie-breaker `itemID` of the real server).
    pub(crate) items: Vec<Value>,
    pub(crate) collections: Vec<Value>,
    /// The library version: the highest version of any object; bumped by every write.
    pub(crate) version: u64,
    /// Full text per attachment key (`fulltext.rs`; `qmode=everything` searches it too).
    pub(crate) fulltext: BTreeMap<String, FullText>,
    /// Files attached to items (`storageFileItems`), by item key.
    pub(crate) files: HashMap<String, ItemFile>,
    /// `syncDeleteLogKeys`: what was deleted (`items`, `collections`, `tags` by name), its key
    /// and the library version of the deletion; a key deleted again keeps only its newest
    /// entry (`ON DUPLICATE KEY UPDATE`).
    pub(crate) delete_log: Vec<(&'static str, String, u64)>,
}

impl Lib {
    pub(crate) fn id(&self) -> LibraryId {
        self.info.id
    }

    /// Wraps stored `data` as an object of this library (`key`, `version`, `library`, links).
    pub(crate) fn wrap(
        &self,
        kind: &str,
        key: &str,
        version: u64,
        meta: Value,
        data: Value,
    ) -> Value {
        let path = self.id().path();
        json!({
            "key": key, "version": version,
            "library": self.info.json(),
            "links": {
                "self": {"href": format!("{REAL_API}/{path}/{kind}/{key}"), "type": "application/json"},
                "alternate": {"href": format!("{}/{kind}/{key}", self.info.www), "type": "text/html"},
            },
            "meta": meta, "data": data,
        })
    }

    /// The index of the item with this key.
    pub(crate) fn item_index(&self, key: &str) -> Option<usize> {
        self.items.iter().position(|i| i["key"] == key)
    }

    /// Records a deletion at the current library version (`Zotero_DataObjects::delete`).
    pub(crate) fn log_delete(&mut self, kind: &'static str, key: &str) {
        self.delete_log
            .retain(|(k, x, _)| !(*k == kind && x == key));
        self.delete_log.push((kind, key.to_string(), self.version));
    }

    /// Bytes used by the library's files (each attachment counts, as the server's triggers do).
    pub(crate) fn usage(&self) -> u64 {
        self.files.values().map(|f| f.size).sum()
    }
}

/// Gives a stored object its library's `library` block and `self`/`alternate` links; objects
/// built for one library (the fixtures, synthetic ones) can be served from another.
pub(crate) fn rehome(obj: &mut Value, info: &LibInfo, kind: &str) {
    if info.id == LibraryId::USER {
        // The fixtures were recorded in this library: keep them exactly as recorded.
        return;
    }
    let key = obj["key"].as_str().unwrap_or("").to_string();
    let path = info.id.path();
    obj["library"] = info.json();
    if !obj["links"].is_object() {
        obj["links"] = json!({});
    }
    let links = &mut obj["links"];
    links["self"] =
        json!({"href": format!("{REAL_API}/{path}/{kind}/{key}"), "type": "application/json"});
    links["alternate"] = json!({"href": format!("{}/{kind}/{key}", info.www), "type": "text/html"});
    if links["enclosure"].is_object() {
        links["enclosure"]["href"] = json!(format!("{REAL_API}/{path}/items/{key}/file/view"));
    }
}
