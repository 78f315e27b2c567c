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
pub fn given<S: Into<String>>(text: Option<S>) -> Option<String> {
    text.map(Into::into).filter(|s| !s.trim().is_empty())
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

impl From<zotero_api::ObjectKey> for ObjectKey {
    fn from(k: zotero_api::ObjectKey) -> Self {
        Self(k)
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
    "maxLength": 8,
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
            de::Error::custom(format!(
                "must be \"user\" or \"group:<groupID>\" (zotero_list_libraries lists them), got '{}'",
                quote(&s)
            ))
        })
    }
}

inline_schema!(LibraryParam, "Library", {
    "type": "string",
    "maxLength": 25,
    "pattern": "^(user|group:[1-9][0-9]{0,18})$"
});

/// The library a call names, if it names one.
pub fn library(p: Option<LibraryParam>) -> Option<zotero_api::LibraryRef> {
    p.map(|l| l.0)
}

// ---------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------

/// The longest value each kind of argument may have: Zotero's own limits where it has one
/// (so a value Zotero would refuse is refused before anything is sent), and otherwise a
/// bound that keeps the work and the answers one call can cause small.
pub mod limits {
    /// A quick-search query (characters). It travels in the URL: 500 characters stay under
    /// the 8 KB request line even when every one is percent-encoded CJK.
    pub const QUERY: usize = 500;
    /// A tag (characters): `Zotero_Tags::$maxLength` in the dataserver.
    pub const TAG: usize = 255;
    /// A collection name (characters): `Zotero_Collections::$maxLength`.
    pub const COLLECTION_NAME: usize = 255;
    /// A creator's name part (characters): the dataserver's creator columns.
    pub const CREATOR_NAME: usize = 255;
    /// An item type or creator type name (the longest Zotero has is 20 characters).
    pub const TYPE_NAME: usize = 64;
    /// A field value (UTF-8 bytes): `Zotero_Items::$maxDataValueLength`, which counts bytes.
    pub const FIELD_BYTES: usize = 65_535;
    /// A file path (bytes): Linux's `PATH_MAX`.
    pub const FILE_PATH: usize = 4_096;
    /// A URL (characters).
    pub const URL: usize = 8_192;
    /// A file name (bytes): what file systems allow.
    pub const FILENAME: usize = 255;
    /// A MIME type (characters; RFC 6838 allows 127 + 1 + 127).
    pub const CONTENT_TYPE: usize = 255;
    /// An arXiv id or URL (characters).
    pub const ARXIV: usize = 300;
    /// Tags given to one item.
    pub const TAGS_PER_ITEM: usize = 200;
    /// Tags one search filters by (each is a URL parameter).
    pub const FILTER_TAGS: usize = 20;
    /// Creators given to one item.
    pub const CREATORS: usize = 500;
    /// Fields one update may set (an item type has fewer than 60).
    pub const FIELDS: usize = 100;
    /// An identifier or the URL that carries it (characters): zotero-metadata's bound.
    pub const IDENTIFIER: usize = 2_000;
    /// Objects one batch write may name: Zotero's limit per request.
    pub const BATCH: usize = 50;
}

/// Checks `s` against `max` (characters, or UTF-8 bytes when `bytes`), with a message that
/// says the limit and the size without quoting the text. Counting stops just past the limit,
/// so the check costs little whatever the size.
fn check_len(s: &str, max: usize, bytes: bool) -> Result<(), String> {
    let over = if bytes {
        s.len() > max
    } else {
        s.chars().nth(max).is_some()
    };
    if !over {
        return Ok(());
    }
    Err(if bytes {
        format!(
            "must be at most {max} bytes of UTF-8 (Zotero's limit), got {} bytes",
            s.len()
        )
    } else {
        format!(
            "must be at most {max} characters, got {}",
            s.chars().count()
        )
    })
}

/// For `#[serde(deserialize_with = "bounded::<MAX, _>")]`: a string of at most `MAX`
/// characters (pair it with `#[schemars(length(max = MAX))]`).
pub fn bounded<'de, const MAX: usize, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    check_len(&s, MAX, false).map_err(de::Error::custom)?;
    Ok(s)
}

/// [`bounded`] for an optional string (with `default`); `null` is not given.
pub fn bounded_opt<'de, const MAX: usize, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    let s = Option::<String>::deserialize(d)?;
    if let Some(s) = &s {
        check_len(s, MAX, false).map_err(de::Error::custom)?;
    }
    Ok(s)
}

/// A string of at most `MAX` characters (UTF-8 bytes when `BYTES`); blank is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Text<const MAX: usize, const BYTES: bool = false>(String);

/// A string with something in it, of at most `MAX` characters (UTF-8 bytes when `BYTES`):
/// empty or only spaces is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct NonBlank<const MAX: usize, const BYTES: bool = false>(String);

/// A Zotero field value, optional: at most 65,535 bytes.
pub type FieldText = Text<{ limits::FIELD_BYTES }, true>;
/// A Zotero field value that must be given: at most 65,535 bytes.
pub type FieldValue = NonBlank<{ limits::FIELD_BYTES }, true>;

impl<const MAX: usize, const BYTES: bool> Text<MAX, BYTES> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<const MAX: usize, const BYTES: bool> From<Text<MAX, BYTES>> for String {
    fn from(t: Text<MAX, BYTES>) -> String {
        t.0
    }
}

impl<const MAX: usize, const BYTES: bool> From<NonBlank<MAX, BYTES>> for String {
    fn from(t: NonBlank<MAX, BYTES>) -> String {
        t.0
    }
}

impl<const MAX: usize, const BYTES: bool> NonBlank<MAX, BYTES> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de, const MAX: usize, const BYTES: bool> Deserialize<'de> for Text<MAX, BYTES> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_len(&s, MAX, BYTES).map_err(de::Error::custom)?;
        Ok(Self(s))
    }
}

impl<'de, const MAX: usize, const BYTES: bool> Deserialize<'de> for NonBlank<MAX, BYTES> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_len(&s, MAX, BYTES).map_err(de::Error::custom)?;
        if s.trim().is_empty() {
            return Err(de::Error::custom(
                "must contain text, not be empty or only spaces",
            ));
        }
        Ok(Self(s))
    }
}

// JSON Schema counts characters; a byte limit is published as the same number of characters,
// which every value within the byte limit meets.
impl<const MAX: usize, const BYTES: bool> JsonSchema for Text<MAX, BYTES> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("Text{MAX}"))
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": MAX })
    }
}

impl<const MAX: usize, const BYTES: bool> JsonSchema for NonBlank<MAX, BYTES> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("NonBlank{MAX}"))
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "minLength": 1, "maxLength": MAX })
    }
}

/// A file's bytes in base64 (`file_bytes_base64`). Its length is checked against
/// `ZOTERO_UPLOAD_MAX_BYTES` by zotero-sources before anything is decoded; the schema
/// publishes the bound for the default limit, and the server publishes the configured one
/// ([`base64_len`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64(String);

impl Base64 {
    pub fn into_string(self) -> String {
        self.0
    }
}

/// The base64 length of `bytes` bytes (padded).
pub const fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

pub use crate::config::DEFAULT_UPLOAD_MAX_BYTES;
pub use crate::text::{quote, QUOTE_CHARS};

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        NonBlank::<{ usize::MAX }>::deserialize(d).map(|s| Self(s.into_string()))
    }
}

inline_schema!(Base64, "Base64", {
    "type": "string",
    "minLength": 1,
    "maxLength": base64_len(DEFAULT_UPLOAD_MAX_BYTES)
});

/// An arXiv paper, by identifier or URL (`1706.03762v1`, `hep-th/9901001`, `arXiv:…`,
/// `https://arxiv.org/abs/…`).
#[derive(Debug, Clone)]
pub struct Arxiv(pub ArxivId);

impl<'de> Deserialize<'de> for Arxiv {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_len(&s, limits::ARXIV, false).map_err(de::Error::custom)?;
        ArxivId::parse(&s)
            .map(Self)
            .map_err(|e| de::Error::custom(format!("must be an arXiv id or URL: {e}")))
    }
}

inline_schema!(Arxiv, "Arxiv", { "type": "string", "minLength": 1, "maxLength": limits::ARXIV });

// ---------------------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------------------

/// A tag name: any non-empty string (the seed's `$defs/tag`) of at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Tag(String);

impl Tag {
    pub fn as_str(&self) -> &str {
        &self.0
    }
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
        check_len(&s, limits::TAG, false).map_err(de::Error::custom)?;
        Ok(Self(s))
    }
}

inline_schema!(Tag, "Tag", { "type": "string", "minLength": 1, "maxLength": limits::TAG });

/// Tags a search keeps (every one must be on an item): listed once each (`tags[2]` repeating
/// `tags[0]` is an error), at most 20. Each is matched literally: a leading `-` is sent
/// escaped (zotero-api's search does it). Zotero reads `||` in a tag filter as OR (the web
/// API when spaced, the desktop app always) and has no escape for it, so such a tag cannot
/// be matched and is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterTags(Vec<Tag>);

/// Tags a search leaves out (no item carrying any of them is answered): like
/// [`FilterTags`], and a tag starting with `-` is refused too: the web API reads `-\-x` as
/// the literal tag `\-x`, so such a tag cannot be excluded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExcludeTags(Vec<Tag>);

/// Tags where a repeat is dropped: the seed's "duplicates are ignored". At most 200.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags(Vec<Tag>);

impl FilterTags {
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

impl ExcludeTags {
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

impl Tags {
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

/// What a tag list is for, which decides what it refuses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TagUse {
    /// Stored on an item: anything Zotero stores, repeats dropped.
    Store,
    /// Matched by a search: no `||`, repeats refused.
    Filter,
    /// Excluded by a search: as `Filter`, and no leading `-`.
    Exclude,
}

/// Reads a tag list of at most `max` entries for `usage`.
struct TagList {
    usage: TagUse,
    max: usize,
}

/// One element, deserialized inside the element's own path (`tags[2]`).
struct TagSeed<'a> {
    seen: &'a mut HashSet<Tag>,
    usage: TagUse,
}

impl<'de> DeserializeSeed<'de> for TagSeed<'_> {
    type Value = Option<Tag>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Tag>, D::Error> {
        let tag = Tag::deserialize(d)?;
        if self.usage != TagUse::Store && tag.0.contains("||") {
            return Err(de::Error::custom(format!(
                "contains '||', which Zotero reads as OR between tags: a tag with '||' \
                 cannot be searched for; got '{}'",
                quote(&tag.0)
            )));
        }
        if self.usage == TagUse::Exclude && tag.0.trim_start().starts_with('-') {
            return Err(de::Error::custom(format!(
                "starts with '-', which Zotero cannot exclude (it reads '--x' as another \
                 tag); got '{}'",
                quote(&tag.0)
            )));
        }
        if self.seen.insert(tag.clone()) {
            Ok(Some(tag))
        } else if self.usage == TagUse::Store {
            Ok(None)
        } else {
            Err(de::Error::custom(format!(
                "repeats the tag '{}'; list each tag once",
                quote(&tag.0)
            )))
        }
    }
}

impl<'de> Visitor<'de> for TagList {
    type Value = Vec<Tag>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an array of at most {} tag names", self.max)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Tag>, A::Error> {
        let mut seen = HashSet::new();
        let mut tags = Vec::new();
        let mut read = 0usize;
        loop {
            // Refused before the element past the limit is read: the work stays bounded.
            if read == self.max {
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom(format!(
                        "must have at most {} tags",
                        self.max
                    )));
                }
                break;
            }
            let Some(tag) = seq.next_element_seed(TagSeed {
                seen: &mut seen,
                usage: self.usage,
            })?
            else {
                break;
            };
            read += 1;
            tags.extend(tag);
        }
        Ok(tags)
    }
}

impl<'de> Deserialize<'de> for FilterTags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(TagList {
            usage: TagUse::Filter,
            max: limits::FILTER_TAGS,
        })
        .map(Self)
    }
}

impl<'de> Deserialize<'de> for ExcludeTags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(TagList {
            usage: TagUse::Exclude,
            max: limits::FILTER_TAGS,
        })
        .map(Self)
    }
}

impl<'de> Deserialize<'de> for Tags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(TagList {
            usage: TagUse::Store,
            max: limits::TAGS_PER_ITEM,
        })
        .map(Self)
    }
}

inline_schema!(FilterTags, "FilterTags", {
    "type": "array",
    "items": { "type": "string", "minLength": 1, "maxLength": limits::TAG, "not": { "pattern": "\\|\\|" } },
    "uniqueItems": true,
    "maxItems": limits::FILTER_TAGS
});
inline_schema!(ExcludeTags, "ExcludeTags", {
    "type": "array",
    "items": { "type": "string", "minLength": 1, "maxLength": limits::TAG, "pattern": "^[^-]", "not": { "pattern": "\\|\\|" } },
    "uniqueItems": true,
    "maxItems": limits::FILTER_TAGS
});
inline_schema!(Tags, "Tags", {
    "type": "array",
    "items": { "type": "string", "minLength": 1, "maxLength": limits::TAG },
    "uniqueItems": true,
    "maxItems": limits::TAGS_PER_ITEM
});

/// A list of at most `MAX` entries, refused before the entry past the limit is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T, const MAX: usize>(Vec<T>);

impl<T, const MAX: usize> Default for List<T, MAX> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T, const MAX: usize> std::ops::Deref for List<T, MAX> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for List<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bounded<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for Bounded<T, MAX> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an array of at most {MAX} entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                    if out.len() == MAX {
                        if seq.next_element::<de::IgnoredAny>()?.is_some() {
                            return Err(de::Error::custom(format!(
                                "must have at most {MAX} entries"
                            )));
                        }
                        break;
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Bounded::<T, MAX>(std::marker::PhantomData))
            .map(Self)
    }
}

impl<T: JsonSchema, const MAX: usize> JsonSchema for List<T, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("List{MAX}_{}", T::schema_name()))
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "array", "items": g.subschema_for::<T>(), "maxItems": MAX })
    }
}

// ---------------------------------------------------------------------------------------
// Paging
// ---------------------------------------------------------------------------------------

/// A whole number within `min..=max`. JSON has one number type: `5.0` is the integer 5, but
/// `2.5`, `-1` and anything beyond `max` (2^64 included) are refused, never rounded or
/// clamped.
pub(crate) struct WholeNumber {
    pub(crate) min: u64,
    pub(crate) max: u64,
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

    /// `N` results, checked against 1 to 100 when compiled.
    pub const fn of<const N: u64>() -> Self {
        const { assert!(N >= 1 && N <= Limit::MAX as u64) };
        Self(N as u32)
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

impl From<u64> for Start {
    fn from(n: u64) -> Self {
        Self(n)
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
                "must be one of {DEFAULT_SORT}, {}; got '{}'",
                SORT_VALUES.join(", "),
                quote(&s)
            )))
        }
    }
}

// The seed publishes a plain string: the keys are listed by zotero_get_sort_values.
inline_schema!(SortKey, "SortKey", { "type": "string", "maxLength": 32 });

mod cite;
mod creator;
pub use cite::{ExportFormatParam, ExportLimit, Locale, StyleId, COMMON_STYLES, STYLES_URL};
pub use creator::Creator;
mod listing;
pub use listing::{ItemSort, ItemTypes, QMode, SortDirection, TagConditions, Version};
mod reading;
pub use reading::{
    AnnotationChars, AnnotationColor, AnnotationType, ChildKind, Count, NoteChars, NoteLimit,
};

#[cfg(test)]
mod tests;

// ---------------------------------------------------------------------------------------
// Field maps
// ---------------------------------------------------------------------------------------

/// Zotero fields by their Zotero names (`publicationTitle`, `volume`, …) and new values: at
/// most [`limits::FIELDS`] of them, each name at most [`limits::TYPE_NAME`] characters and
/// each value at most 65,535 bytes (`""` clears the field). Order is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap(Vec<(String, String)>);

impl FieldMap {
    pub fn entries(&self) -> &[(String, String)] {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for FieldMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "an object of at most {} Zotero field names and string values",
                    limits::FIELDS
                )
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, String)> = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if out.len() == limits::FIELDS {
                        return Err(de::Error::custom(format!(
                            "must have at most {} fields",
                            limits::FIELDS
                        )));
                    }
                    check_len(&name, limits::TYPE_NAME, false)
                        .map_err(|e| de::Error::custom(format!("a field name {e}")))?;
                    let value: FieldText = map.next_value()?;
                    if out.iter().any(|(n, _)| *n == name) {
                        return Err(de::Error::custom(format!(
                            "names the field '{}' twice",
                            quote(&name)
                        )));
                    }
                    out.push((name, value.into_string()));
                }
                Ok(out)
            }
        }
        d.deserialize_map(Fields).map(Self)
    }
}

inline_schema!(FieldMap, "FieldMap", {
    "type": "object",
    "maxProperties": limits::FIELDS,
    "propertyNames": { "maxLength": limits::TYPE_NAME },
    "additionalProperties": { "type": "string", "maxLength": limits::FIELD_BYTES }
});
