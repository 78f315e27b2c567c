//! What a sign-in asks Zotero for — the authorize page's presets `library_access`,
//! `notes_access`, `write_access` and `all_groups` — and what Zotero granted compared with
//! it: the key's `/keys/current` access, rights beyond the ask (reported, and refused by a
//! strict caller) and rights the person took away on the form.

use crate::keys::{KeyAccess, Permissions};

/// Access to all current and future groups (`all_groups`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupLevel {
    None,
    Read,
    Write,
}

impl GroupLevel {
    /// The value of `all_groups`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupLevel::None => "none",
            GroupLevel::Read => "read",
            GroupLevel::Write => "write",
        }
    }
}

impl std::str::FromStr for GroupLevel {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(GroupLevel::None),
            "read" => Ok(GroupLevel::Read),
            "write" => Ok(GroupLevel::Write),
            _ => Err(()),
        }
    }
}

/// The access a sign-in asks for (Zotero fills its new-key form with it; the person may
/// change it there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessRequest {
    /// Read the personal library (`library_access`).
    pub library: bool,
    /// Read its notes (`notes_access`).
    pub notes: bool,
    /// Write to it (`write_access`).
    pub write: bool,
    /// All groups (`all_groups`).
    pub groups: GroupLevel,
}

impl AccessRequest {
    /// Everything a server that reads and writes needs: the library, its notes, writes, and
    /// the same in every group.
    pub const READ_WRITE: AccessRequest = AccessRequest {
        library: true,
        notes: true,
        write: true,
        groups: GroupLevel::Write,
    };

    /// The same without any write.
    pub const READ_ONLY: AccessRequest = AccessRequest {
        write: false,
        groups: GroupLevel::Read,
        ..AccessRequest::READ_WRITE
    };

    /// The authorize URL's permission parameters, in the order the documentation lists them.
    pub fn query_pairs(&self) -> [(&'static str, &'static str); 4] {
        let bit = |b: bool| if b { "1" } else { "0" };
        [
            ("library_access", bit(self.library)),
            ("notes_access", bit(self.notes)),
            ("write_access", bit(self.write)),
            ("all_groups", self.groups.as_str()),
        ]
    }

    /// What `granted` may do beyond this request, in words (empty: nothing more).
    pub fn beyond(&self, granted: &KeyAccess) -> Vec<String> {
        let mut more = Vec::new();
        let u = granted.user;
        let beyond_user = [
            (u.library && !self.library, "read the personal library"),
            (u.notes && !self.notes, "read its notes"),
            (u.write && !self.write, "write to the personal library"),
        ];
        more.extend(
            beyond_user
                .iter()
                .filter(|(b, _)| *b)
                .map(|(_, w)| w.to_string()),
        );
        if let Some(all) = granted.all_groups {
            let level = level_of(all);
            if level > self.groups {
                more.push(format!("{} all groups", verb(level)));
            }
        }
        for (id, p) in &granted.groups {
            let level = level_of(*p);
            if level > self.groups {
                more.push(format!("{} group {id}", verb(level)));
            }
        }
        more
    }

    /// What this request asked for that `granted` may not do, in words (the person unticked
    /// it on Zotero's form).
    pub fn withheld(&self, granted: &KeyAccess) -> Vec<String> {
        let u = granted.user;
        let mut less: Vec<String> = [
            (self.library && !u.library, "read the personal library"),
            (self.notes && !u.notes, "read its notes"),
            (self.write && !u.write, "write to the personal library"),
        ]
        .iter()
        .filter(|(b, _)| *b)
        .map(|(_, w)| w.to_string())
        .collect();
        let all = granted.all_groups.map_or(GroupLevel::None, level_of);
        if all < self.groups {
            less.push(format!("{} all groups", verb(self.groups)));
        }
        less
    }
}

fn level_of(p: Permissions) -> GroupLevel {
    match (p.library, p.write) {
        (_, true) => GroupLevel::Write,
        (true, false) => GroupLevel::Read,
        (false, false) => GroupLevel::None,
    }
}

fn verb(level: GroupLevel) -> &'static str {
    match level {
        GroupLevel::Write => "write to",
        GroupLevel::Read | GroupLevel::None => "read",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(json: &str) -> KeyAccess {
        KeyAccess::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn presets_become_the_documented_parameters() {
        assert_eq!(
            AccessRequest::READ_WRITE.query_pairs(),
            [
                ("library_access", "1"),
                ("notes_access", "1"),
                ("write_access", "1"),
                ("all_groups", "write")
            ]
        );
        let ro = AccessRequest::READ_ONLY.query_pairs();
        assert_eq!(ro[2], ("write_access", "0"));
        assert_eq!(ro[3], ("all_groups", "read"));
        assert_eq!("WRITE".parse(), Ok(GroupLevel::Write));
        assert_eq!("some".parse::<GroupLevel>(), Err(()));
    }

    #[test]
    fn a_key_broader_than_asked_is_told_and_a_narrower_one_too() {
        let exact = key(
            r#"{"userID":1,"access":{"user":{"library":true,"files":true,"notes":true},
                 "groups":{"all":{"library":true,"write":false}}}}"#,
        );
        assert!(AccessRequest::READ_ONLY.beyond(&exact).is_empty());
        assert!(AccessRequest::READ_ONLY.withheld(&exact).is_empty());

        let broad = key(
            r#"{"userID":1,"access":{"user":{"library":true,"notes":true,"write":true},
                 "groups":{"all":{"library":true,"write":true},"9":{"library":true,"write":true}}}}"#,
        );
        assert_eq!(
            AccessRequest::READ_ONLY.beyond(&broad),
            [
                "write to the personal library",
                "write to all groups",
                "write to group 9"
            ]
        );
        assert!(AccessRequest::READ_WRITE.beyond(&broad).is_empty());

        let no_groups = AccessRequest {
            groups: GroupLevel::None,
            ..AccessRequest::READ_ONLY
        };
        // The reported zotero-dev case: `all_groups=none`, yet every group readable.
        assert_eq!(no_groups.beyond(&exact), ["read all groups"]);

        let bare = key(r#"{"userID":1,"access":{"user":{"library":true}}}"#);
        assert_eq!(
            AccessRequest::READ_WRITE.withheld(&bare),
            [
                "read its notes",
                "write to the personal library",
                "write to all groups"
            ]
        );
    }
}
