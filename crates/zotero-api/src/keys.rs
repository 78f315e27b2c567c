//! What `GET /keys/current` says about the API key: whose it is and what it may do in the
//! user library and in each group.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::library::LibraryId;

/// What the key may do in one library.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Permissions {
    /// Read the library's items and collections.
    #[serde(default)]
    pub library: bool,
    /// Read and upload attachment files.
    #[serde(default)]
    pub files: bool,
    /// Read notes.
    #[serde(default)]
    pub notes: bool,
    /// Create, change and delete items and collections.
    #[serde(default)]
    pub write: bool,
}

/// The key's owner and access, as `/keys/current` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAccess {
    pub user_id: u64,
    pub username: String,
    pub display_name: String,
    pub user: Permissions,
    /// `access.groups.all`: the same rights in every group the user belongs to.
    pub all_groups: Option<Permissions>,
    /// `access.groups.<id>`: rights in one group.
    pub groups: BTreeMap<u64, Permissions>,
}

#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "userID")]
    user_id: u64,
    #[serde(default)]
    username: String,
    #[serde(default, rename = "displayName")]
    display_name: String,
    #[serde(default)]
    access: WireAccess,
}

#[derive(Deserialize, Default)]
struct WireAccess {
    #[serde(default)]
    user: Permissions,
    #[serde(default)]
    groups: BTreeMap<String, Permissions>,
}

impl KeyAccess {
    /// Parses the answer of `/keys/current`; a group entry that is neither `all` nor a
    /// numeric ID is ignored (a newer API may add kinds this client does not know).
    pub fn from_json(body: &[u8]) -> Result<KeyAccess, serde_json::Error> {
        let w: Wire = serde_json::from_slice(body)?;
        let mut all_groups = None;
        let mut groups = BTreeMap::new();
        for (k, p) in w.access.groups {
            if k == "all" {
                all_groups = Some(p);
            } else if let Ok(id) = k.parse::<u64>() {
                groups.insert(id, p);
            }
        }
        Ok(KeyAccess {
            user_id: w.user_id,
            username: w.username,
            display_name: w.display_name,
            user: w.access.user,
            all_groups,
            groups,
        })
    }

    /// What the key may do in `library`. In groups, files go with write access (the
    /// dataserver gives group file access to members who may edit), and notes with reading.
    pub fn permissions(&self, library: LibraryId) -> Permissions {
        match library {
            LibraryId::User(id) if id == self.user_id => self.user,
            LibraryId::User(_) => Permissions::default(),
            LibraryId::Group(id) => {
                let p = self
                    .groups
                    .get(&id)
                    .copied()
                    .or(self.all_groups)
                    .unwrap_or_default();
                Permissions {
                    library: p.library,
                    files: p.files || (p.library && p.write),
                    notes: p.notes || p.library,
                    write: p.write,
                }
            }
        }
    }

    /// The name to show for the key's owner.
    pub fn owner_name(&self) -> String {
        if self.display_name.is_empty() || self.display_name == self.username {
            self.username.clone()
        } else {
            format!("{} ({})", self.username, self.display_name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_group_access_are_read() {
        let k = KeyAccess::from_json(
            br#"{"key":"x","userID":7,"username":"ada","displayName":"Ada L",
                 "access":{"user":{"library":true,"files":true,"notes":true,"write":false},
                           "groups":{"all":{"library":true,"write":false},"42":{"library":true,"write":true},"odd":{"library":true}}}}"#,
        )
        .unwrap();
        assert_eq!(k.user_id, 7);
        assert_eq!(k.owner_name(), "ada (Ada L)");
        let u = k.permissions(LibraryId::User(7));
        assert!(u.library && u.files && u.notes && !u.write);
        assert_eq!(k.permissions(LibraryId::User(8)), Permissions::default());
        let g = k.permissions(LibraryId::Group(42));
        assert!(g.library && g.write && g.files);
        let other = k.permissions(LibraryId::Group(5));
        assert!(other.library && !other.write && !other.files);
    }

    #[test]
    fn no_groups_means_no_group_access() {
        let k =
            KeyAccess::from_json(br#"{"userID":7,"access":{"user":{"library":true}}}"#).unwrap();
        assert!(!k.permissions(LibraryId::Group(1)).library);
        let k = KeyAccess::from_json(br#"{"userID":7}"#).unwrap();
        assert!(!k.permissions(LibraryId::User(7)).library);
    }
}
