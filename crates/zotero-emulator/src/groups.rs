//! Groups: their settings (`Zotero_Group` of zotero/dataserver), the test API to add and
//! change them, and the web API's `GET /users/{id}/groups` and `GET /groups/{id}`
//! (`GroupsController::groups`, `Zotero_Group::toResponseJSON`).

use serde_json::{json, Map, Value};

use super::access::{Creds, Perm, Role};
use super::library::Library;
use super::libs::{LibInfo, LibraryId};
use super::params::{self, Action};
use super::util::{iso_now, md5_hex};
use super::{Answer, Emulator, Recorded, State, USER_ID};

/// `Private`, `PublicOpen` or `PublicClosed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupType {
    Private,
    PublicOpen,
    PublicClosed,
}

impl GroupType {
    pub fn as_str(&self) -> &'static str {
        match self {
            GroupType::Private => "Private",
            GroupType::PublicOpen => "PublicOpen",
            GroupType::PublicClosed => "PublicClosed",
        }
    }
    pub fn is_public(&self) -> bool {
        *self != GroupType::Private
    }
}

/// Who may edit the library (`libraryEditing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryEditing {
    Members,
    Admins,
}

/// Who may read the library (`libraryReading`); `All` only matters for public groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryReading {
    Members,
    All,
}

/// Who may upload files (`fileEditing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEditing {
    None,
    Members,
    Admins,
}

/// A group as [`Emulator::add_group`] creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    pub id: u64,
    pub name: String,
    /// The owner's user id (the emulator's user, [`USER_ID`], by default).
    pub owner: u64,
    pub group_type: GroupType,
    pub library_editing: LibraryEditing,
    pub library_reading: LibraryReading,
    pub file_editing: FileEditing,
    pub description: String,
    pub url: String,
    /// User ids with the admin role (the owner is not listed).
    pub admins: Vec<u64>,
    /// User ids with the member role.
    pub members: Vec<u64>,
    /// The desktop app has this group (the local API serves it); `true` by default.
    pub on_desktop: bool,
}

impl GroupSpec {
    /// A private group owned by the emulator's user, editable by members, files by members.
    pub fn new(id: u64, name: &str) -> GroupSpec {
        GroupSpec {
            id,
            name: name.to_string(),
            owner: USER_ID,
            group_type: GroupType::Private,
            library_editing: LibraryEditing::Members,
            library_reading: LibraryReading::Members,
            file_editing: FileEditing::Members,
            description: String::new(),
            url: String::new(),
            admins: Vec::new(),
            members: Vec::new(),
            on_desktop: true,
        }
    }

    /// A user's role (`Zotero_Group::getUserRole`).
    pub fn role_of(&self, user: u64) -> Option<Role> {
        if self.owner == user {
            Some(Role::Owner)
        } else if self.admins.contains(&user) {
            Some(Role::Admin)
        } else if self.members.contains(&user) {
            Some(Role::Member)
        } else {
            None
        }
    }

    /// Anyone may read: a public group with `libraryReading` = `all`.
    pub(crate) fn readable_by_all(&self) -> bool {
        self.group_type.is_public() && self.library_reading == LibraryReading::All
    }

    /// `Zotero_Group::userCanEdit`.
    pub(crate) fn can_edit(&self, role: Option<Role>) -> bool {
        match role {
            Some(Role::Owner | Role::Admin) => true,
            Some(Role::Member) => self.library_editing == LibraryEditing::Members,
            None => false,
        }
    }

    /// `Zotero_Group::userCanEditFiles`.
    pub(crate) fn can_edit_files(&self, role: Option<Role>) -> bool {
        match (self.file_editing, role) {
            (FileEditing::None, _) | (_, None) => false,
            (_, Some(Role::Owner | Role::Admin)) => true,
            (f, Some(Role::Member)) => f == FileEditing::Members,
        }
    }

    fn lib_info(&self) -> LibInfo {
        LibInfo::group(self.id, &self.name, self.group_type.is_public())
    }
}

/// A group's settings and metadata versions.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) spec: GroupSpec,
    /// The group's own version (`groups.version`): bumped when its settings change.
    pub(crate) version: u64,
    pub(crate) created: String,
    pub(crate) modified: String,
}

impl Group {
    /// The web API's JSON (`Zotero_Group::toResponseJSON`); `user`: the requesting user, who
    /// gets `meta.isAdmin`.
    pub(crate) fn json(&self, base: &str, num_items: usize, user: Option<u64>) -> Value {
        let s = &self.spec;
        let mut meta = json!({"created": self.created, "lastModified": self.modified,
                              "numItems": num_items});
        if let Some(u) = user {
            meta["isAdmin"] = json!(matches!(s.role_of(u), Some(Role::Owner | Role::Admin)));
        }
        let mut data = json!({
            "id": s.id, "version": self.version, "name": s.name, "owner": s.owner,
            "type": s.group_type.as_str(), "description": s.description, "url": s.url,
            "libraryEditing": lower(s.library_editing), "libraryReading": lower(s.library_reading),
            "fileEditing": lower(s.file_editing),
        });
        for (k, ids) in [("admins", &s.admins), ("members", &s.members)] {
            if !ids.is_empty() {
                data[k] = json!(ids);
            }
        }
        json!({
            "id": s.id, "version": self.version,
            "links": {
                "self": {"href": format!("{base}/groups/{}", s.id), "type": "application/json"},
                "alternate": {"href": s.lib_info().www, "type": "text/html"},
            },
            "meta": meta, "data": data,
        })
    }
}

/// `Members` -> `members`, the wire spelling of the settings.
fn lower(v: impl std::fmt::Debug) -> String {
    format!("{v:?}").to_lowercase()
}

/// Items in a group library, trashed and child items included (`Zotero_Group::numItems`).
fn num_items(st: &State, id: u64) -> usize {
    st.libs
        .get(&LibraryId::Group(id))
        .map_or(0, |l| l.items.len())
}

/// `GET /groups/{id}`: 404 when the key cannot read the library.
pub(crate) fn single(st: &State, creds: Creds, base: &str, id: u64) -> Answer {
    let Some(g) = st.groups.get(&id) else {
        return Answer::text(404, "Group not found");
    };
    if !st.can(creds, LibraryId::Group(id), Perm::Library) {
        return Answer::text(404, "Not found");
    }
    let user = creds.map(|_| USER_ID);
    Answer::json(&g.json(base, num_items(st, id), user)).header("Last-Modified-Version", g.version)
}

/// `GET /users/{id}/groups`: the user's groups the key may see, newest change first.
pub(crate) fn list(st: &State, creds: Creds, base: &str, req: &Recorded) -> Answer {
    let p = match params::parse(&req.query, Action::Groups, false) {
        Ok(p) => p,
        Err(e) => return Answer::text(400, e.body()),
    };
    if p.format == "atom" {
        return Answer::text(501, "The emulator does not render format=atom");
    }
    let mut groups: Vec<&Group> = st
        .groups
        .values()
        .filter(|g| g.spec.role_of(USER_ID).is_some())
        .filter(|g| st.can(creds, LibraryId::Group(g.spec.id), Perm::View))
        .collect();
    // ORDER BY dateModified (name for sort=title); ties by id.
    groups.sort_by(|a, b| {
        let ord = match p.sort.as_str() {
            "title" => a.spec.name.cmp(&b.spec.name),
            "dateAdded" => a.created.cmp(&b.created),
            _ => a.modified.cmp(&b.modified),
        };
        let ord = ord.then(a.spec.id.cmp(&b.spec.id));
        if p.desc {
            ord.reverse()
        } else {
            ord
        }
    });
    let total = groups.len();
    let shown = super::reads::page(&groups, &p);
    let body = match p.format.as_str() {
        "versions" | "etags" => {
            let m: Map<String, Value> = shown
                .iter()
                .map(|g| {
                    let v = if p.format == "versions" {
                        json!(g.version)
                    } else {
                        json!(md5_hex(format!("{}{}", g.modified, g.version).as_bytes()))
                    };
                    (g.spec.id.to_string(), v)
                })
                .collect();
            Value::Object(m)
        }
        _ => {
            let user = creds.map(|_| USER_ID);
            let arr = shown
                .iter()
                .map(|g| g.json(base, num_items(st, g.spec.id), user))
                .collect();
            Value::Array(arr)
        }
    };
    Answer::json(&body)
        .header("Total-Results", total)
        .header("Link", params::link_header(base, &req.path, total, &p))
}

impl State {
    /// Gives every object of a group library its group's current `library` block and links.
    fn rehome_group(&mut self, id: u64) {
        let (Some(g), Some(lib)) = (
            self.groups.get(&id),
            self.libs.get_mut(&LibraryId::Group(id)),
        ) else {
            return;
        };
        lib.info = g.spec.lib_info();
        let info = lib.info.clone();
        for (kind, objs) in [
            ("items", &mut lib.items),
            ("collections", &mut lib.collections),
        ] {
            for o in objs.iter_mut() {
                super::libs::rehome(o, &info, kind);
            }
        }
    }
}

impl Emulator {
    /// Adds a group serving `library` (`Library::empty()`, `Library::from_fixtures()`,
    /// `Library::synthetic(..)`); its objects are re-homed to the group. The key's access to
    /// it is set with [`Emulator::set_key_access`]. Panics if the group exists.
    pub fn add_group(&self, spec: GroupSpec, library: Library) -> LibraryId {
        let id = spec.id;
        let lib_id = LibraryId::Group(id);
        let mut st = self.state.lock().unwrap();
        assert!(!st.groups.contains_key(&id), "group {id} exists");
        let lib = library.into_lib(spec.lib_info());
        st.files.register(&lib);
        st.libs.insert(lib_id, lib);
        let now = iso_now();
        let group = Group {
            spec,
            version: 1,
            created: now.clone(),
            modified: now,
        };
        st.groups.insert(id, group);
        lib_id
    }

    /// Changes a group's settings as its owner would: the group's version goes up and its
    /// `lastModified` is now. Panics if the group does not exist or `f` changes its id.
    pub fn update_group(&self, id: u64, f: impl FnOnce(&mut GroupSpec)) {
        let mut st = self.state.lock().unwrap();
        let g = st.groups.get_mut(&id).expect("no such group");
        f(&mut g.spec);
        assert_eq!(g.spec.id, id, "a group's id cannot change");
        g.version += 1;
        g.modified = iso_now();
        st.rehome_group(id);
    }

    /// A group's settings.
    pub fn group(&self, id: u64) -> Option<GroupSpec> {
        let st = self.state.lock().unwrap();
        st.groups.get(&id).map(|g| g.spec.clone())
    }

    /// A group's own version (not its library's: see [`Emulator::library`]).
    pub fn group_version(&self, id: u64) -> Option<u64> {
        let st = self.state.lock().unwrap();
        st.groups.get(&id).map(|g| g.version)
    }
}
