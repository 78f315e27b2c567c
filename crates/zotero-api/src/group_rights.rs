//! What a group lets its members do: who may edit its library and its files, and the key's
//! rights narrowed by it. Read by `groups` (listing libraries) and `routing` (before a write).

use serde::Deserialize;

use crate::keys::Permissions;

/// Who may edit a group's library and its files (the dataserver's `userCanEdit` and
/// `userCanEditFiles`): by the user's role and the group's `libraryEditing` and
/// `fileEditing`. A key's write to "all groups" reaches only where the user may edit, and
/// files only where the user may edit files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupSettings {
    #[serde(default)]
    pub owner: u64,
    #[serde(default)]
    pub admins: Vec<u64>,
    #[serde(default)]
    pub members: Vec<u64>,
    /// `members` or `admins`.
    #[serde(default, rename = "libraryEditing")]
    pub library_editing: String,
    /// `none`, `members` or `admins`.
    #[serde(default, rename = "fileEditing")]
    pub file_editing: String,
}

impl GroupSettings {
    fn is_admin(&self, user: u64) -> bool {
        self.owner == user || self.admins.contains(&user)
    }

    fn is_member(&self, user: u64) -> bool {
        self.is_admin(user) || self.members.contains(&user)
    }

    pub fn user_can_edit(&self, user: u64) -> bool {
        match self.library_editing.as_str() {
            "admins" => self.is_admin(user),
            _ => self.is_member(user),
        }
    }

    pub fn user_can_edit_files(&self, user: u64) -> bool {
        match self.file_editing.as_str() {
            "members" => self.is_member(user),
            "admins" => self.is_admin(user),
            _ => false,
        }
    }
}

/// The key's rights in a group narrowed by what the group lets the user do.
pub(crate) fn in_group(
    key: Permissions,
    explicit: bool,
    settings: &GroupSettings,
    user: u64,
) -> Permissions {
    Permissions {
        write: key.write && (explicit || settings.user_can_edit(user)),
        files: key.write && settings.user_can_edit_files(user),
        ..key
    }
}
