//! What the API key may do, as `Zotero_Key::load`/`toJSON` and `Zotero_Permissions` of
//! zotero/dataserver decide it: the key's access to the user library and to groups (all of
//! them or some), the group's own rules (type, `libraryReading`, `libraryEditing`,
//! `fileEditing`) and the user's role in it; and `GET /keys/current`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::library::{Visible, KEYS_CURRENT_JSON};
use super::libs::LibraryId;
use super::{Emulator, State, USER_ID};

/// The emulator user's role in a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Owner,
    Admin,
    Member,
}

/// The key's access to the user library (`access.user` of `/keys/current`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserAccess {
    /// Read the library; without it the other flags grant nothing (the server stores them
    /// only with library access).
    pub library: bool,
    /// See stored files (`links.enclosure`, `links.attachment`). The real server grants it
    /// with `library`; `false` models an older key.
    pub files: bool,
    /// See notes.
    pub notes: bool,
    pub write: bool,
}

impl UserAccess {
    /// Read, files, notes and write (the emulator's default key).
    pub const FULL: UserAccess = UserAccess {
        library: true,
        files: true,
        notes: true,
        write: true,
    };
    /// Read, files and notes, no write.
    pub const READ_ONLY: UserAccess = UserAccess {
        write: false,
        ..UserAccess::FULL
    };
    /// No access to the user library.
    pub const NONE: UserAccess = UserAccess {
        library: false,
        files: false,
        notes: false,
        write: false,
    };
}

/// The key's access to one group (`access.groups.<id>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupAccess {
    /// Read the group library (with its files and notes); without it, no entry is stored.
    pub library: bool,
    pub write: bool,
}

/// The key's access to groups (`access.groups`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GroupsAccess {
    /// No group access (`groups` left out).
    #[default]
    None,
    /// `{"all": {"library": true, "write": …}}`: every group the user can read; writes where
    /// the user can edit; files only where the user is a member.
    All { write: bool },
    /// `{"<groupID>": {"library": true, "write": …}}` for these groups.
    PerGroup(BTreeMap<u64, GroupAccess>),
}

/// Everything the emulator's API key may do ([`Emulator::set_key_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAccess {
    pub user: UserAccess,
    pub groups: GroupsAccess,
}

impl Default for KeyAccess {
    /// Full access to the user library, none to groups (`fixtures/library/keys_current.json`).
    fn default() -> KeyAccess {
        KeyAccess {
            user: UserAccess::FULL,
            groups: GroupsAccess::None,
        }
    }
}

impl KeyAccess {
    /// Full user access and access to all groups, with or without write.
    pub fn all_groups(write: bool) -> KeyAccess {
        KeyAccess {
            groups: GroupsAccess::All { write },
            ..KeyAccess::default()
        }
    }

    /// Full user access and read access to these groups, with write where `true`.
    pub fn groups(groups: &[(u64, bool)]) -> KeyAccess {
        let map = groups
            .iter()
            .map(|(id, write)| {
                let access = GroupAccess {
                    library: true,
                    write: *write,
                };
                (*id, access)
            })
            .collect();
        KeyAccess {
            groups: GroupsAccess::PerGroup(map),
            ..KeyAccess::default()
        }
    }

    /// The `access` object of `/keys/current` (`Zotero_Key::toJSON`); `None` when empty.
    fn json(&self) -> Option<Value> {
        let mut access = Map::new();
        let u = self.user;
        if u.library {
            // Only granted permissions are stored, so only they are listed.
            let mut user = Map::new();
            for (name, granted) in [
                ("library", true),
                ("files", u.files),
                ("notes", u.notes),
                ("write", u.write),
            ] {
                if granted {
                    user.insert(name.into(), json!(true));
                }
            }
            access.insert("user".into(), Value::Object(user));
        }
        let mut groups = Map::new();
        match &self.groups {
            GroupsAccess::None => {}
            GroupsAccess::All { write } => {
                groups.insert("all".into(), json!({"library": true, "write": write}));
            }
            GroupsAccess::PerGroup(map) => {
                for (id, g) in map.iter().filter(|(_, g)| g.library) {
                    groups.insert(id.to_string(), json!({"library": true, "write": g.write}));
                }
            }
        }
        if !groups.is_empty() {
            access.insert("groups".into(), Value::Object(groups));
        }
        (!access.is_empty()).then_some(Value::Object(access))
    }
}

/// A permission `Zotero_Permissions::canAccess` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Perm {
    /// See that a group exists (listing `/users/{id}/groups`).
    View,
    Library,
    Notes,
    Files,
}

/// The credentials of a request: the key's access, or anonymous.
pub(crate) type Creds<'a> = Option<&'a KeyAccess>;

impl State {
    /// The user's role in a group (`Zotero_Group::getUserRole`).
    pub(crate) fn role(&self, group: u64) -> Option<Role> {
        self.groups
            .get(&group)
            .and_then(|g| g.spec.role_of(USER_ID))
    }

    /// `Zotero_Permissions::canAccess`.
    pub(crate) fn can(&self, creds: Creds, lib: LibraryId, perm: Perm) -> bool {
        if let Some(key) = creds {
            if explicit(key, lib, perm) {
                return true;
            }
        }
        let LibraryId::Group(gid) = lib else {
            // The user library is not published: no access without the key.
            return false;
        };
        let Some(group) = self.groups.get(&gid) else {
            return false;
        };
        if let Some(KeyAccess {
            groups: GroupsAccess::All { .. },
            ..
        }) = creds
        {
            // Only members have file access under "all".
            if perm == Perm::Files {
                return self.role(gid).is_some();
            }
            if self.role(gid).is_some() || group.spec.readable_by_all() {
                return true;
            }
        }
        // The group's privacy: public groups can be seen, and read when reading is for all.
        match perm {
            Perm::View => group.spec.group_type.is_public(),
            Perm::Library | Perm::Notes => group.spec.readable_by_all(),
            Perm::Files => false,
        }
    }

    /// `Zotero_Permissions::canWrite`.
    pub(crate) fn can_write(&self, creds: Creds, lib: LibraryId) -> bool {
        let Some(key) = creds else {
            return false;
        };
        match lib {
            LibraryId::User(id) => id == USER_ID && key.user.library && key.user.write,
            LibraryId::Group(gid) => match &key.groups {
                GroupsAccess::None => false,
                GroupsAccess::PerGroup(m) => m.get(&gid).is_some_and(|g| g.library && g.write),
                // Write to all groups: where the user can edit (`userCanEdit`).
                GroupsAccess::All { write } => {
                    *write
                        && self
                            .groups
                            .get(&gid)
                            .is_some_and(|g| g.spec.can_edit(self.role(gid)))
                }
            },
        }
    }

    /// What the key sees of a library's objects.
    pub(crate) fn visible(&self, creds: Creds, lib: LibraryId) -> Visible {
        Visible {
            notes: self.can(creds, lib, Perm::Notes),
            files: self.can(creds, lib, Perm::Files),
        }
    }
}

/// Permissions the key itself grants (`Zotero_Key::load`: library access to a group also
/// grants its files, notes and view).
fn explicit(key: &KeyAccess, lib: LibraryId, perm: Perm) -> bool {
    match lib {
        LibraryId::User(id) => {
            let u = key.user;
            id == USER_ID
                && u.library
                && match perm {
                    Perm::View | Perm::Library => true,
                    Perm::Notes => u.notes,
                    Perm::Files => u.files,
                }
        }
        LibraryId::Group(gid) => match &key.groups {
            GroupsAccess::PerGroup(m) => m.get(&gid).is_some_and(|g| g.library),
            _ => false,
        },
    }
}

/// `GET /keys/current` (or `/keys/{key}`) for `key`, which may do what `access` says.
pub(crate) fn keys_current(key: &str, access: &KeyAccess) -> Value {
    let mut v: Value = serde_json::from_str(KEYS_CURRENT_JSON).unwrap();
    v["key"] = json!(key);
    v["userID"] = json!(USER_ID);
    match access.json() {
        Some(a) => v["access"] = a,
        None => {
            if let Some(m) = v.as_object_mut() {
                m.remove("access");
            }
        }
    }
    v
}

impl Emulator {
    /// Sets what the API key may do (default: full access to the user library, no groups).
    pub fn set_key_access(&self, access: KeyAccess) {
        self.state.lock().unwrap().access = access;
    }

    /// What the API key may do.
    pub fn key_access(&self) -> KeyAccess {
        self.state.lock().unwrap().access.clone()
    }
}
