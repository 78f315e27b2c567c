//! The checked building blocks of the tools' parameters: bounded text (by characters or
//! UTF-8 bytes), whole numbers, base64 and field maps, the limits they check against, and
//! `inline_schema!` for the types that write their schema by hand.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::{Deserialize, Serialize};

use crate::config::DEFAULT_UPLOAD_MAX_BYTES;
use crate::text::quote;

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

pub(crate) use inline_schema;

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
pub(super) fn check_len(s: &str, max: usize, bytes: bool) -> Result<(), TooLong> {
    let over = if bytes {
        s.len() > max
    } else {
        s.chars().nth(max).is_some()
    };
    if !over {
        return Ok(());
    }
    Err(if bytes {
        TooLong::Bytes { max, got: s.len() }
    } else {
        TooLong::Chars {
            max,
            got: s.chars().count(),
        }
    })
}

/// A text over its bound: the bound and the size, never the text itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TooLong {
    #[error("must be at most {max} characters, got {got}")]
    Chars { max: usize, got: usize },
    #[error("must be at most {max} bytes of UTF-8 (Zotero's limit), got {got} bytes")]
    Bytes { max: usize, got: usize },
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
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The text, owned.
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
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The text, owned.
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
    /// The base64 text.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// The base64 length of `bytes` bytes (padded).
pub const fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

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

// ---------------------------------------------------------------------------------------
// Field maps
// ---------------------------------------------------------------------------------------

/// Zotero fields by their Zotero names (`publicationTitle`, `volume`, …) and new values: at
/// most [`limits::FIELDS`] of them, each name at most [`limits::TYPE_NAME`] characters and
/// each value at most 65,535 bytes (`""` clears the field). Order is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap(Vec<(String, String)>);

impl FieldMap {
    /// The fields and values, in the order given.
    pub fn entries(&self) -> &[(String, String)] {
        &self.0
    }
    /// No field given.
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
