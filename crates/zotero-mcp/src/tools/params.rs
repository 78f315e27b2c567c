//! Parameter types shared by the tools, each checked while it is deserialized, so a value
//! that reaches a tool's `run` (and from there a URL or a request body) has been checked
//! already, whoever built it.
//!
//! Error messages are predicates ("must be …") that `parse` completes with the field's path:
//! `'limit' must be an integer from 1 to 100, got 101`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize};
use zotero_api::client::{DEFAULT_SORT, SORT_VALUES};
use zotero_sources::ArxivId;

/// For `#[serde(default, deserialize_with = "null_is_default")]`: an explicit `null` counts
/// as not given (some clients send every optional field), so it takes the default too.
pub fn null_is_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An optional text where blank means "not given" (the schemas allow `""`).
pub fn given(text: Option<String>) -> Option<String> {
    text.filter(|s| !s.trim().is_empty())
}

/// Implements `JsonSchema` as an inline schema written out by hand.
macro_rules! inline_schema {
    ($ty:ty, $name:literal, $schema:tt) => {
        impl JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

/// A Zotero object key (item, collection) as a tool argument: zotero-api's [`Key`], which
/// only a checked string can become, so nothing that could change a request's path ever
/// reaches a URL.
///
/// [`Key`]: zotero_api::ObjectKey
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ObjectKey(#[serde(serialize_with = "key_text")] zotero_api::ObjectKey);

fn key_text<S: serde::Serializer>(k: &zotero_api::ObjectKey, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.as_str())
}

impl ObjectKey {
    pub fn parse(key: &str) -> Result<Self, String> {
        zotero_api::ObjectKey::parse(key)
            .map(Self)
            .map_err(|e| format!("must be {e}"))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The checked key, for the client.
    pub fn key(&self) -> &zotero_api::ObjectKey {
        &self.0
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ObjectKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ObjectKey::parse(&s).map_err(de::Error::custom)
    }
}

// The seed's `minLength: 1`, and the exact form, so a client can check a key before sending.
inline_schema!(ObjectKey, "ObjectKey", {
    "type": "string",
    "minLength": 1,
    "pattern": "^[23456789A-HJ-NP-Z]{8}$"
});

// ---------------------------------------------------------------------------------------
// Libraries
// ---------------------------------------------------------------------------------------

/// Which library a call is about: `user` (the key's own) or `group:<groupID>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryParam(pub zotero_api::LibraryRef);

impl<'de> Deserialize<'de> for LibraryParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map(LibraryParam).map_err(|_| {
            let shown: String = s.chars().take(64).collect();
            de::Error::custom(format!(
                "must be \"user\" or \"group:<groupID>\" (zotero_list_libraries lists them), got '{shown}'"
            ))
        })
    }
}

inline_schema!(LibraryParam, "Library", {
    "type": "string",
    "pattern": "^(user|group:[1-9][0-9]{0,18})$"
});

/// The library a call names, if it names one.
pub fn library(p: Option<LibraryParam>) -> Option<zotero_api::LibraryRef> {
    p.map(|l| l.0)
}

// ---------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------

/// A string with something in it: empty or only spaces is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct NonBlank(String);

impl NonBlank {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for NonBlank {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().is_empty() {
            return Err(de::Error::custom(
                "must contain text, not be empty or only spaces",
            ));
        }
        Ok(Self(s))
    }
}

inline_schema!(NonBlank, "NonBlank", { "type": "string", "minLength": 1 });

/// An arXiv paper, by identifier or URL (`1706.03762v1`, `hep-th/9901001`, `arXiv:…`,
/// `https://arxiv.org/abs/…`).
#[derive(Debug, Clone)]
pub struct Arxiv(pub ArxivId);

impl<'de> Deserialize<'de> for Arxiv {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ArxivId::parse(&s)
            .map(Self)
            .map_err(|e| de::Error::custom(format!("must be an arXiv id or URL: {e}")))
    }
}

inline_schema!(Arxiv, "Arxiv", { "type": "string", "minLength": 1 });

// ---------------------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------------------

/// A tag name: any non-empty string (the seed's `$defs/tag`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Tag(String);

impl Tag {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl From<String> for Tag {
    /// Tags Zotero answers with: it never stores an empty one.
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Err(de::Error::custom("must be a tag name, not an empty string"));
        }
        Ok(Self(s))
    }
}

inline_schema!(Tag, "Tag", { "type": "string", "minLength": 1 });

/// Tags where a repeat is an error (`tags[2]` repeats `tags[0]`), as a search filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UniqueTags(Vec<Tag>);

/// Tags where a repeat is dropped: the seed's "duplicates are ignored".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags(Vec<Tag>);

impl UniqueTags {
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

impl Tags {
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

/// Reads a tag list; `unique` makes a repeat an error at the repeating element's path.
struct TagList {
    unique: bool,
}

/// One element, deserialized inside the element's own path (`tags[2]`).
struct TagSeed<'a> {
    seen: &'a mut HashSet<Tag>,
    unique: bool,
}

impl<'de> DeserializeSeed<'de> for TagSeed<'_> {
    type Value = Option<Tag>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Tag>, D::Error> {
        let tag = Tag::deserialize(d)?;
        if self.seen.insert(tag.clone()) {
            Ok(Some(tag))
        } else if self.unique {
            Err(de::Error::custom(format!(
                "repeats the tag '{}'; list each tag once",
                tag.0
            )))
        } else {
            Ok(None)
        }
    }
}

impl<'de> Visitor<'de> for TagList {
    type Value = Vec<Tag>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of tag names")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Tag>, A::Error> {
        let mut seen = HashSet::new();
        let mut tags = Vec::new();
        while let Some(tag) = seq.next_element_seed(TagSeed {
            seen: &mut seen,
            unique: self.unique,
        })? {
            tags.extend(tag);
        }
        Ok(tags)
    }
}

impl<'de> Deserialize<'de> for UniqueTags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(TagList { unique: true }).map(Self)
    }
}

impl<'de> Deserialize<'de> for Tags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(TagList { unique: false }).map(Self)
    }
}

inline_schema!(UniqueTags, "UniqueTags", {
    "type": "array", "items": { "type": "string", "minLength": 1 }, "uniqueItems": true
});
inline_schema!(Tags, "Tags", {
    "type": "array", "items": { "type": "string", "minLength": 1 }, "uniqueItems": true
});

// ---------------------------------------------------------------------------------------
// Paging
// ---------------------------------------------------------------------------------------

/// A whole number within `min..=max`. JSON has one number type: `5.0` is the integer 5, but
/// `2.5`, `-1` and anything beyond `max` (2^64 included) are refused, never rounded or
/// clamped.
struct WholeNumber {
    min: u64,
    max: u64,
}

impl WholeNumber {
    fn check<E: de::Error>(&self, n: u64, unexp: Unexpected) -> Result<u64, E> {
        if (self.min..=self.max).contains(&n) {
            Ok(n)
        } else {
            Err(E::invalid_value(unexp, self))
        }
    }
}

impl Visitor<'_> for WholeNumber {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.max == u64::MAX {
            write!(f, "an integer of at least {}", self.min)
        } else {
            write!(f, "an integer from {} to {}", self.min, self.max)
        }
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<u64, E> {
        self.check(n, Unexpected::Unsigned(n))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<u64, E> {
        match u64::try_from(n) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(n), &self)),
        }
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<u64, E> {
        // 2^64 is the first float beyond u64; `as` would saturate it to u64::MAX.
        const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
        if f.fract() == 0.0 && (0.0..TWO_POW_64).contains(&f) {
            self.check(f as u64, Unexpected::Float(f))
        } else {
            Err(E::invalid_value(Unexpected::Float(f), &self))
        }
    }
}

/// How many results one page holds: 1 to 100, 25 unless given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Limit(u32);

impl Limit {
    pub const MAX: u32 = 100;
    pub fn get(self) -> u32 {
        self.0
    }
}

impl Default for Limit {
    fn default() -> Self {
        Self(25)
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = d.deserialize_any(WholeNumber {
            min: 1,
            max: u64::from(Limit::MAX),
        })?;
        u32::try_from(n).map(Self).map_err(de::Error::custom)
    }
}

inline_schema!(Limit, "Limit", { "type": "integer", "minimum": 1, "maximum": 100 });

/// Where a page starts in the result set: 0, or `next_start` from the previous answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Start(u64);

impl Start {
    pub fn get(self) -> u64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Start {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeNumber {
            min: 0,
            max: u64::MAX,
        })
        .map(Self)
    }
}

inline_schema!(Start, "Start", { "type": "integer", "minimum": 0 });

// ---------------------------------------------------------------------------------------
// Sort
// ---------------------------------------------------------------------------------------

/// A sort key Zotero documents for items, or the seed's `relevance` (which falls back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SortKey(String);

impl SortKey {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Default for SortKey {
    fn default() -> Self {
        Self(DEFAULT_SORT.to_string())
    }
}

impl<'de> Deserialize<'de> for SortKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == DEFAULT_SORT || SORT_VALUES.contains(&s.as_str()) {
            Ok(Self(s))
        } else {
            Err(de::Error::custom(format!(
                "must be one of {DEFAULT_SORT}, {}; got '{s}'",
                SORT_VALUES.join(", ")
            )))
        }
    }
}

// The seed publishes a plain string: the keys are listed by zotero_get_sort_values.
inline_schema!(SortKey, "SortKey", { "type": "string" });

// ---------------------------------------------------------------------------------------
// Creators
// ---------------------------------------------------------------------------------------

/// A creator in the seed's shape (`$defs/creator`): `creator_type` with `first_name` and
/// `last_name`, or `name` alone. Which of the two forms is checked by [`Creator::check`], so a
/// mistake names the exact field (`creators[2].last_name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["first_name", "last_name"] }, { "required": ["name"] }]))]
pub struct Creator {
    /// author, editor, contributor, …
    pub creator_type: String,
    /// Given name(s); may be empty
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    /// Family name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    /// Single-field name, for organisations
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Creator {
    /// The oneOf of the seed, with trimmed parts. On failure: the field (relative to the
    /// creator) and what to send instead.
    pub fn check(&self) -> Result<zotero_api::model::Creator, (&'static str, String)> {
        let trim = |s: &Option<String>| s.as_deref().map(|s| s.trim().to_string());
        let creator_type = self.creator_type.trim().to_string();
        if creator_type.is_empty() {
            return Err((
                "creator_type",
                "must name the creator's role, e.g. author or editor".into(),
            ));
        }
        match (trim(&self.first_name), trim(&self.last_name), trim(&self.name)) {
            (None, None, Some(name)) if !name.is_empty() => Ok(zotero_api::model::Creator {
                creator_type,
                first_name: None,
                last_name: None,
                name: Some(name),
            }),
            (None, None, Some(_)) => Err((
                "name",
                "must not be empty; give a single-field name such as CERN, or first_name and last_name instead".into(),
            )),
            (first, _, Some(_)) => Err((
                if first.is_some() { "first_name" } else { "last_name" },
                "cannot go with name: give name alone for a single-field name (an organisation), or first_name and last_name".into(),
            )),
            (Some(first), Some(last), None) if !last.is_empty() => {
                Ok(zotero_api::model::Creator {
                    creator_type,
                    first_name: Some(first),
                    last_name: Some(last),
                    name: None,
                })
            }
            (None, None, None) => Err((
                "last_name",
                "is required: give first_name and last_name, or name alone for a single-field name".into(),
            )),
            (None, Some(_), None) => Err((
                "first_name",
                "is required with last_name (it may be \"\"); or give name alone for a single-field name".into(),
            )),
            (Some(_), _, None) => Err((
                "last_name",
                "is required (not empty) with first_name; or give name alone for a single-field name".into(),
            )),
        }
    }
}

impl From<zotero_api::model::Creator> for Creator {
    fn from(c: zotero_api::model::Creator) -> Self {
        Self {
            creator_type: c.creator_type,
            first_name: c.first_name,
            last_name: c.last_name,
            name: c.name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn de<T: for<'de> Deserialize<'de>>(v: serde_json::Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn keys_are_checked() {
        assert!(de::<ObjectKey>(json!("X42A7DEE")).is_ok());
        for bad in [
            "x42a7dee", "ABC/../x", "ABCDEFG0", "ABCDEFGO", "X42A7DE", "",
        ] {
            let e = de::<ObjectKey>(json!(bad)).unwrap_err();
            assert!(e.contains("Zotero key"), "{bad}: {e}");
        }
        assert!(de::<ObjectKey>(json!(12345678)).is_err());
    }

    #[test]
    fn whole_numbers_are_bounded_never_clamped() {
        assert_eq!(de::<Limit>(json!(5.0)).unwrap().get(), 5);
        assert_eq!(de::<Limit>(json!(100)).unwrap().get(), 100);
        for bad in [
            json!(0),
            json!(101),
            json!(2.5),
            json!(-1),
            json!("5"),
            json!(1e300),
        ] {
            assert!(de::<Limit>(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(de::<Start>(json!(u64::MAX)).unwrap().get(), u64::MAX);
        // 2^64 arrives as a float: refused, not saturated to u64::MAX.
        let e = de::<Start>(json!(18_446_744_073_709_551_616.0_f64)).unwrap_err();
        assert!(e.contains("an integer of at least 0"), "{e}");
        assert!(de::<Start>(json!(-0.0)).is_ok());
        assert!(de::<Start>(json!(-1)).is_err());
    }

    #[test]
    fn tags_repeat_or_not() {
        let e = de::<UniqueTags>(json!(["a", "b", "a"])).unwrap_err();
        assert!(e.contains("repeats the tag 'a'"), "{e}");
        let t = de::<Tags>(json!(["a", "b", "a"])).unwrap();
        assert_eq!(t.into_strings(), vec!["a", "b"]);
        assert!(de::<Tags>(json!(["a", ""])).is_err());
        assert!(de::<Tags>(json!("a")).is_err());
    }

    #[test]
    fn sort_keys_are_the_documented_ones() {
        assert!(de::<SortKey>(json!("relevance")).is_ok());
        assert!(de::<SortKey>(json!("dateAdded")).is_ok());
        let e = de::<SortKey>(json!("relevancy")).unwrap_err();
        assert!(e.contains("dateAdded"), "{e}");
    }

    #[test]
    fn creators_follow_the_seed_shape() {
        let c = |v| de::<Creator>(v).unwrap().check();
        let ok =
            c(json!({"creator_type": "author", "first_name": " Ada ", "last_name": "Lovelace"}));
        assert_eq!(ok.unwrap().first_name.as_deref(), Some("Ada"));
        let org = c(json!({"creator_type": "author", "name": "CERN"})).unwrap();
        assert_eq!(org.name.as_deref(), Some("CERN"));
        for (bad, field) in [
            (json!({"creator_type": " ", "name": "X"}), "creator_type"),
            (
                json!({"creator_type": "author", "first_name": "Ada"}),
                "last_name",
            ),
            (
                json!({"creator_type": "author", "first_name": "Ada", "last_name": ""}),
                "last_name",
            ),
            (
                json!({"creator_type": "author", "last_name": "Lovelace"}),
                "first_name",
            ),
            (
                json!({"creator_type": "author", "name": "X", "last_name": "Y"}),
                "last_name",
            ),
            (
                json!({"creator_type": "author", "name": "X", "first_name": "Y"}),
                "first_name",
            ),
            (json!({"creator_type": "author", "name": " "}), "name"),
            (json!({"creator_type": "author"}), "last_name"),
        ] {
            assert_eq!(c(bad.clone()).unwrap_err().0, field, "{bad}");
        }
        assert!(de::<Creator>(json!({"creator_type": "author", "nmae": "X"})).is_err());
        assert!(de::<Creator>(json!({"first_name": "A", "last_name": "B"})).is_err());
    }
}
