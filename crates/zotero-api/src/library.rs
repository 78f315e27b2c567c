//! Which library a request is about: the key's own user library or a group, named by the
//! caller as `"user"` or `"group:<groupID>"`, and the validated object keys that go into
//! its URLs.

use std::fmt;
use std::str::FromStr;

/// A library as Zotero's URLs name it (`/users/{id}`, `/groups/{id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LibraryId {
    User(u64),
    Group(u64),
}

impl LibraryId {
    /// The URL prefix of this library.
    pub fn path(self) -> String {
        match self {
            LibraryId::User(id) => format!("/users/{id}"),
            LibraryId::Group(id) => format!("/groups/{id}"),
        }
    }
}

/// A library as a caller names it: the key's own user library, or a group by its ID. The
/// user library's numeric ID depends on the backend (the key's user on the web, 0 locally).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum LibraryRef {
    #[default]
    User,
    Group(u64),
}

impl LibraryRef {
    /// The link that selects an object of this library in the Zotero desktop app:
    /// `zotero://select/library/items/KEY` (the user's own library, whatever its ID) or
    /// `zotero://select/groups/ID/items/KEY`.
    pub fn zotero_url(self, key: &ObjectKey) -> String {
        match self {
            LibraryRef::User => format!("zotero://select/library/items/{key}"),
            LibraryRef::Group(id) => format!("zotero://select/groups/{id}/items/{key}"),
        }
    }

    /// The link that selects a collection in the Zotero desktop app:
    /// `zotero://select/library/collections/KEY` or `zotero://select/groups/ID/collections/KEY`.
    pub fn collection_url(self, key: &ObjectKey) -> String {
        match self {
            LibraryRef::User => format!("zotero://select/library/collections/{key}"),
            LibraryRef::Group(id) => format!("zotero://select/groups/{id}/collections/{key}"),
        }
    }
}

impl fmt::Display for LibraryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryRef::User => f.write_str("user"),
            LibraryRef::Group(id) => write!(f, "group:{id}"),
        }
    }
}

/// A library name that is neither `user` nor `group:<digits>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not a library: use \"user\" for your own library or \"group:<groupID>\" (e.g. group:12345) for a group; zotero_list_libraries lists them")]
pub struct InvalidLibrary {
    pub given: String,
}

impl FromStr for LibraryRef {
    type Err = InvalidLibrary;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let err = || InvalidLibrary {
            given: s.chars().take(64).collect(),
        };
        if t.eq_ignore_ascii_case("user") {
            return Ok(LibraryRef::User);
        }
        let (kind, id) = t.split_once(':').ok_or_else(err)?;
        if !kind.eq_ignore_ascii_case("group")
            || id.is_empty()
            || id.len() > 19
            || !id.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(err());
        }
        match id.parse::<u64>() {
            Ok(n) if n > 0 => Ok(LibraryRef::Group(n)),
            _ => Err(err()),
        }
    }
}

/// The characters of Zotero object keys.
pub const KEY_ALPHABET: &str = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

/// A Zotero object key (item, collection, search): 8 characters of [`KEY_ALPHABET`]. Only a
/// checked key goes into a URL, so nothing a caller sends can change a request's path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

/// A string that is not a Zotero key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a Zotero key: 8 characters from {KEY_ALPHABET} (e.g. X42A7DEE), got {given:?}")]
pub struct InvalidKey {
    pub given: String,
}

impl ObjectKey {
    pub fn parse(s: &str) -> Result<ObjectKey, InvalidKey> {
        if s.len() == 8 && s.chars().all(|c| KEY_ALPHABET.contains(c)) {
            Ok(ObjectKey(s.to_string()))
        } else {
            Err(InvalidKey {
                given: s.chars().take(64).collect(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fresh random key, for a create whose key the client chooses.
    pub fn random() -> ObjectKey {
        use rand::Rng;
        let mut rng = rand::rng();
        let alphabet = KEY_ALPHABET.as_bytes();
        ObjectKey(
            (0..8)
                .map(|_| {
                    let i = rng.random_range(0..alphabet.len());
                    alphabet.get(i).map_or('2', |b| *b as char)
                })
                .collect(),
        )
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ObjectKey {
    type Err = InvalidKey;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ObjectKey::parse(s)
    }
}

impl AsRef<str> for ObjectKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zotero_urls_select_the_item_in_its_library() {
        let k = ObjectKey::parse("VASWANI7").unwrap();
        assert_eq!(
            LibraryRef::User.zotero_url(&k),
            "zotero://select/library/items/VASWANI7"
        );
        assert_eq!(
            LibraryRef::Group(4711).zotero_url(&k),
            "zotero://select/groups/4711/items/VASWANI7"
        );
        assert_eq!(
            LibraryRef::User.collection_url(&k),
            "zotero://select/library/collections/VASWANI7"
        );
        assert_eq!(
            LibraryRef::Group(4711).collection_url(&k),
            "zotero://select/groups/4711/collections/VASWANI7"
        );
    }

    #[test]
    fn libraries_are_user_or_group_with_an_id() {
        assert_eq!("user".parse(), Ok(LibraryRef::User));
        assert_eq!(" User ".parse(), Ok(LibraryRef::User));
        assert_eq!("group:12345".parse(), Ok(LibraryRef::Group(12345)));
        assert_eq!("GROUP:7".parse(), Ok(LibraryRef::Group(7)));
        for bad in [
            "",
            "users",
            "group",
            "group:",
            "group:0",
            "group:-1",
            "group:1.5",
            "group:12a",
            "group:99999999999999999999",
            "groups/1",
            "group:1/../2",
        ] {
            assert!(bad.parse::<LibraryRef>().is_err(), "{bad:?}");
        }
        assert_eq!(LibraryRef::Group(9).to_string(), "group:9");
        assert_eq!(LibraryRef::User.to_string(), "user");
        assert_eq!(LibraryId::Group(9).path(), "/groups/9");
        assert_eq!(LibraryId::User(0).path(), "/users/0");
    }

    #[test]
    fn keys_are_checked() {
        assert!(ObjectKey::parse("X42A7DEE").is_ok());
        for bad in [
            "x42a7dee",
            "ABC/../x",
            "ABCDEFG0",
            "ABCDEFGHI",
            "ABCDEFG",
            "ÄBCDEFGH",
        ] {
            assert!(ObjectKey::parse(bad).is_err(), "{bad}");
        }
        let long = "A".repeat(10_000);
        assert!(ObjectKey::parse(&long).unwrap_err().given.len() <= 64);
    }
}
