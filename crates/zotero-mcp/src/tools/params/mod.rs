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

mod creator;
pub use creator::Creator;

#[cfg(test)]
mod tests;
