//! Tags and bounded lists as tool arguments: one tag, the tag lists of a filter, an
//! exclusion and a write, and a list of at most `MAX` of anything.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::base::{check_len, inline_schema, limits};
use crate::text::quote;

// ---------------------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------------------

/// A tag name: any non-empty string (the seed's `$defs/tag`) of at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Tag(String);

impl Tag {
    /// The tag.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The tag, owned.
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
    /// The tags as text.
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

impl ExcludeTags {
    /// The tags as text.
    pub fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(Tag::into_string).collect()
    }
}

impl Tags {
    /// The tags as text.
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
