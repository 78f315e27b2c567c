//! Parameters of the listings (`zotero_list_items`, `zotero_list_tags`) and of the search's
//! optional extensions: quick search mode, item types, tag conditions in Zotero's syntax
//! (the peer server's `tag`), sort keys without `relevance`, direction, library versions.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use zotero_api::client::{FALLBACK_SORT, SORT_VALUES};
use zotero_api::items::{Direction, ItemTypeFilter, QuickSearchMode};

use super::base::{check_len, limits};
use super::paging::Start;
use crate::text::quote;

/// How the quick search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum QMode {
    #[serde(rename = "titleCreatorYear")]
    TitleCreatorYear,
    #[serde(rename = "everything")]
    Everything,
}

impl From<QMode> for QuickSearchMode {
    fn from(m: QMode) -> Self {
        match m {
            QMode::TitleCreatorYear => QuickSearchMode::TitleCreatorYear,
            QMode::Everything => QuickSearchMode::Everything,
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum SortDirection {
    Asc,
    Desc,
}

impl From<SortDirection> for Direction {
    fn from(d: SortDirection) -> Self {
        match d {
            SortDirection::Asc => Direction::Asc,
            SortDirection::Desc => Direction::Desc,
        }
    }
}

/// A sort key Zotero has for items; `dateModified` unless given (there is no query, so no
/// `relevance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemSort(String);

impl ItemSort {
    /// The sort key as text.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Default for ItemSort {
    fn default() -> Self {
        Self(FALLBACK_SORT.to_string())
    }
}

impl<'de> Deserialize<'de> for ItemSort {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if SORT_VALUES.contains(&s.as_str()) {
            Ok(Self(s))
        } else {
            Err(de::Error::custom(format!(
                "must be one of {}; got '{}'",
                SORT_VALUES.join(", "),
                quote(&s)
            )))
        }
    }
}

impl JsonSchema for ItemSort {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("ItemSort")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": SORT_VALUES, "default": FALLBACK_SORT })
    }
}

/// A library version (`since`): a whole number of at least 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version(u64);

impl Version {
    /// The version.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Start::deserialize(d).map(|s| Self(s.get()))
    }
}

impl JsonSchema for Version {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Version")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 0 })
    }
}

/// How many item types one filter may name.
pub const MAX_ITEM_TYPES: usize = 20;
/// An item type filter given as one string: `book || thesis` (a few names and separators).
const ITEM_TYPE_EXPR: usize = 1_400;

/// Item types to keep: one name, several (any of them: a list, or `a || b` as in Zotero),
/// or names each starting with `-` to leave those types out (`-attachment`, the peer
/// server's default). Names are checked here for their form, and against Zotero's list of
/// item types before anything is listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemTypes(ItemTypeFilter);

impl ItemTypes {
    /// The filter for zotero-api.
    pub fn into_filter(self) -> ItemTypeFilter {
        self.0
    }
}

/// Why an `item_type` value cannot be used, and what it must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ItemTypesError {
    #[error(
        "must be Zotero item types such as journalArticle or book (a leading '-' leaves that \
         type out); got '{got}'"
    )]
    NotAType { got: String },
    #[error("must name at most {max} item types", max = MAX_ITEM_TYPES)]
    TooMany,
    #[error(
        "must either keep types (journalArticle) or leave them out (-attachment), not both: \
         Zotero takes one item type condition"
    )]
    Mixed,
}

/// Adds the names of one entry (`a`, `-a`, `a || b`) to `out`.
fn add_item_types(entry: &str, out: &mut Vec<(bool, String)>) -> Result<(), ItemTypesError> {
    for part in entry.split("||") {
        let part = part.trim();
        let (exclude, name) = match part.strip_prefix('-') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, part),
        };
        let well_formed = !name.is_empty()
            && name.len() <= limits::TYPE_NAME
            && name.bytes().all(|b| b.is_ascii_alphabetic());
        if !well_formed {
            return Err(ItemTypesError::NotAType { got: quote(part) });
        }
        if !out.iter().any(|(_, n)| n == name) {
            out.push((exclude, name.to_string()));
        }
        if out.len() > MAX_ITEM_TYPES {
            return Err(ItemTypesError::TooMany);
        }
    }
    Ok(())
}

fn item_type_filter(names: Vec<(bool, String)>) -> Result<ItemTypeFilter, ItemTypesError> {
    let exclude = names.first().is_some_and(|(x, _)| *x);
    if names.iter().any(|(x, _)| *x != exclude) {
        return Err(ItemTypesError::Mixed);
    }
    Ok(ItemTypeFilter {
        types: names.into_iter().map(|(_, n)| n).collect(),
        exclude,
    })
}

impl<'de> Deserialize<'de> for ItemTypes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ItemTypeFilter;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "an item type, or an array of at most {MAX_ITEM_TYPES} item types"
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ItemTypeFilter, E> {
                check_len(s, ITEM_TYPE_EXPR, false).map_err(E::custom)?;
                let mut names = Vec::new();
                add_item_types(s, &mut names).map_err(E::custom)?;
                item_type_filter(names).map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ItemTypeFilter, A::Error> {
                let mut names = Vec::new();
                let mut read = 0;
                // Refused before the entry past the limit is read: the work stays bounded.
                while let Some(s) = seq.next_element::<String>()? {
                    read += 1;
                    if read > MAX_ITEM_TYPES {
                        return Err(de::Error::custom(format!(
                            "must name at most {MAX_ITEM_TYPES} item types"
                        )));
                    }
                    check_len(&s, limits::TYPE_NAME + 1, false).map_err(de::Error::custom)?;
                    add_item_types(&s, &mut names).map_err(de::Error::custom)?;
                }
                if names.is_empty() {
                    return Err(de::Error::custom("must name at least one item type"));
                }
                item_type_filter(names).map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V).map(Self)
    }
}

impl JsonSchema for ItemTypes {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("ItemTypes")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "anyOf": [
            { "type": "string", "minLength": 1, "maxLength": ITEM_TYPE_EXPR },
            { "type": "array", "minItems": 1, "maxItems": MAX_ITEM_TYPES,
              "items": { "type": "string", "minLength": 1, "maxLength": limits::TYPE_NAME + 1 } }
        ]})
    }
}

/// Tag conditions in Zotero's own syntax, as the peer server (54yyyu/zotero-mcp) takes its
/// `tag`: one string or a list, each sent as written, all of them must hold (`a || b`:
/// either, `-a`: without). A blank string is no condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagConditions(Vec<String>);

impl TagConditions {
    /// The conditions as text.
    pub fn into_strings(self) -> Vec<String> {
        self.0
    }
    /// How many conditions.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// No condition given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for TagConditions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<String>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a tag condition, or an array of at most {} of them",
                    limits::FILTER_TAGS
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Vec<String>, E> {
                check_len(s, limits::TAG, false).map_err(E::custom)?;
                Ok(if s.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![s.to_string()]
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
                let mut out: Vec<String> = Vec::new();
                let mut read = 0;
                while let Some(s) = seq.next_element::<String>()? {
                    read += 1;
                    if read > limits::FILTER_TAGS {
                        return Err(de::Error::custom(format!(
                            "must have at most {} tag conditions",
                            limits::FILTER_TAGS
                        )));
                    }
                    check_len(&s, limits::TAG, false).map_err(de::Error::custom)?;
                    if s.trim().is_empty() {
                        return Err(de::Error::custom(
                            "must be tag conditions, not empty strings",
                        ));
                    }
                    if !out.contains(&s) {
                        out.push(s);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V).map(Self)
    }
}

impl JsonSchema for TagConditions {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("TagConditions")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "anyOf": [
            { "type": "string", "maxLength": limits::TAG },
            { "type": "array", "maxItems": limits::FILTER_TAGS,
              "items": { "type": "string", "minLength": 1, "maxLength": limits::TAG } }
        ]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn types(v: serde_json::Value) -> Result<ItemTypeFilter, String> {
        ItemTypes::deserialize(v)
            .map(ItemTypes::into_filter)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn item_types_take_one_a_list_or_zotero_syntax() {
        let keep = |t: &[&str]| ItemTypeFilter {
            types: t.iter().map(|s| s.to_string()).collect(),
            exclude: false,
        };
        assert_eq!(types(json!("book")).unwrap(), keep(&["book"]));
        assert_eq!(
            types(json!(["book", "thesis", "book"])).unwrap(),
            keep(&["book", "thesis"])
        );
        assert_eq!(
            types(json!("book || thesis")).unwrap(),
            keep(&["book", "thesis"])
        );
        let out = types(json!("-attachment")).unwrap();
        assert_eq!((out.types, out.exclude), (vec!["attachment".into()], true));
        let out = types(json!(["-attachment", "-note"])).unwrap();
        assert!(out.exclude && out.types.len() == 2);
        assert!(types(json!(["book", "-note"]))
            .unwrap_err()
            .contains("not both"));
        assert!(types(json!("book; DROP"))
            .unwrap_err()
            .contains("item types"));
        assert!(types(json!([])).unwrap_err().contains("at least one"));
        let many: Vec<String> = (0..21).map(|i| format!("t{}", "a".repeat(i))).collect();
        assert!(types(json!(many)).unwrap_err().contains("at most 20"));
        assert!(types(json!(5)).is_err());
    }

    #[test]
    fn tag_conditions_take_a_string_or_a_list() {
        let tc = |v| TagConditions::deserialize(v).map(TagConditions::into_strings);
        assert_eq!(tc(json!("a || b")).unwrap(), vec!["a || b"]);
        assert!(tc(json!("  ")).unwrap().is_empty());
        assert_eq!(tc(json!(["x", "-y", "x"])).unwrap(), vec!["x", "-y"]);
        assert!(tc(json!(["x", ""])).is_err());
        assert!(tc(json!("t".repeat(256))).is_err());
        let many: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
        assert!(tc(json!(many)).is_err());
    }

    #[test]
    fn item_sorts_have_no_relevance() {
        assert!(ItemSort::deserialize(json!("title")).is_ok());
        let e = ItemSort::deserialize(json!("relevance")).unwrap_err();
        assert!(e.to_string().contains("dateAdded"), "{e}");
        assert_eq!(ItemSort::default().into_string(), "dateModified");
    }
}
