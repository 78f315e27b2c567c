//! One item's record as `zotero_get_item_metadata` answers it (JSON, and the input of its
//! Markdown): every field by its Zotero name, creators, typed tags, collections, relations,
//! parent and dates, each list cut to fit the answer's bounds, and what was cut said.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use zotero_api::metadata::ItemRecord;
use zotero_api::model::WireObject;

use crate::tools::params::Creator;

/// The most bytes of one field an answer carries (an abstract is rarely longer; a note's
/// HTML can be 500,000 characters).
pub const MAX_FIELD_BYTES: usize = 10_000;
/// The most bytes of all fields together.
pub const MAX_FIELDS_BYTES: usize = 50_000;
/// The most bytes of the whole item (fields, creators, tags, collections, relations), so
/// that an answer stays well under 100 KB whatever the item holds; lists are cut to fit.
pub const MAX_ITEM_BYTES: usize = 70_000;
/// Creators an answer carries, at most.
pub const MAX_CREATORS: usize = 100;
/// Tags an answer carries, at most.
pub const MAX_TAGS: usize = 200;
/// Collections an answer carries, at most.
pub const MAX_COLLECTIONS: usize = 50;
/// Relations kept per predicate.
pub const MAX_RELATIONS: usize = 50;

/// The properties of an item's `data` that are not fields: they have places of their own.
const STRUCTURAL: &[&str] = &[
    "key",
    "version",
    "itemType",
    "creators",
    "tags",
    "collections",
    "relations",
    "parentItem",
    "dateAdded",
    "dateModified",
    "deleted",
];

/// A tag and its type.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TypedTag {
    /// Tag name
    pub tag: String,
    /// 0: added by a person; 1: added automatically (imported with the item)
    #[serde(rename = "type")]
    pub tag_type: u64,
}

/// A collection the item is in.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemCollection {
    /// 8-character key
    pub collection_key: String,
    /// Absent when it could not be read (beyond the first 10, or deleted)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Everything Zotero keeps about the item.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemMetadata {
    /// 8-character key
    pub item_key: String,
    /// Zotero item type
    pub item_type: String,
    /// Version; grows with every change
    pub version: u64,
    /// Title (or a type's own title field, e.g. caseName)
    pub title: String,
    /// Every field that has a value, by its Zotero name (title, date, publicationTitle, DOI, abstractNote, …)
    pub fields: BTreeMap<String, String>,
    /// Authors, editors, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub creators: Vec<Creator>,
    /// Tags with their types
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TypedTag>,
    /// Collections it is in
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collections: Vec<ItemCollection>,
    /// Related items and other links by predicate (dc:relation, owl:sameAs, …)
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub relations: BTreeMap<String, Vec<String>>,
    /// The parent of a note, attachment or annotation
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_item_key: Option<String>,
    /// When it was added (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_added: Option<String>,
    /// When it was last changed (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_modified: Option<String>,
    /// The date as Zotero reads it (YYYY, YYYY-MM or YYYY-MM-DD)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parsed_date: Option<String>,
    /// Notes and attachments under it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_children: Option<u64>,
    /// Present when the item is in the trash
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_trash: bool,
}

/// A field's value as text: strings as they are, numbers and booleans written out; lists
/// and objects are not fields.
fn field_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// At most `max` bytes of `s`, cut on a character boundary, and whether it was longer.
pub(crate) fn first_bytes(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_string(), false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (s.get(..end).unwrap_or_default().to_string(), true)
}

/// The first entries of `all` (at most `max`) whose sizes fit in `budget`, which they use
/// up; a note in `truncated` when some were left out.
fn fitting<T>(
    all: Vec<T>,
    max: usize,
    budget: &mut usize,
    size: impl Fn(&T) -> usize,
    what: &str,
    truncated: &mut Vec<String>,
) -> Vec<T> {
    let total = all.len();
    let mut kept = Vec::new();
    for entry in all.into_iter().take(max) {
        let n = size(&entry);
        if n > *budget {
            break;
        }
        *budget -= n;
        kept.push(entry);
    }
    if kept.len() < total {
        truncated.push(format!("{what}: the first {} of {total}", kept.len()));
    }
    kept
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The record as the tool answers it, bounded, with what was cut said in `truncated`.
pub fn metadata(
    record: &ItemRecord,
    include_abstract: bool,
    truncated: &mut Vec<String>,
) -> ItemMetadata {
    let d = &record.data;
    let seed = WireObject {
        key: Some(record.key.clone()),
        version: Some(record.version),
        meta: record.meta.clone(),
        links: serde_json::Map::new(),
        data: d.clone(),
    }
    .to_item();
    let mut fields = BTreeMap::new();
    let mut fields_budget = MAX_FIELDS_BYTES;
    for (name, value) in d {
        if STRUCTURAL.contains(&name.as_str()) || (!include_abstract && name == "abstractNote") {
            continue;
        }
        let Some(text) = field_text(value) else {
            continue;
        };
        let (kept, cut) = first_bytes(&text, MAX_FIELD_BYTES.min(fields_budget));
        fields_budget -= kept.len();
        if cut {
            let hint = if name == "note" {
                "; zotero_get_notes reads a note whole"
            } else {
                ""
            };
            truncated.push(format!(
                "fields.{name}: the first {} of {} bytes{hint}",
                kept.len(),
                text.len()
            ));
        }
        if !kept.is_empty() {
            fields.insert(name.clone(), kept);
        }
    }
    // What the lists may use: the item's bound less the fields (JSON adds a little to each
    // entry: its keys and quotes).
    let mut budget = MAX_ITEM_BYTES.saturating_sub(MAX_FIELDS_BYTES - fields_budget);
    let creators: Vec<Creator> = seed.creators.into_iter().map(Creator::from).collect();
    let creators = fitting(
        creators,
        MAX_CREATORS,
        &mut budget,
        |c| {
            80 + [&c.first_name, &c.last_name, &c.name]
                .iter()
                .map(|p| p.as_ref().map_or(0, String::len))
                .sum::<usize>()
                + c.creator_type.len()
        },
        "creators",
        truncated,
    );
    let all_tags: Vec<TypedTag> = d
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(TypedTag {
                tag: t.get("tag")?.as_str()?.to_string(),
                tag_type: t.get("type").and_then(Value::as_u64).unwrap_or(0),
            })
        })
        .collect();
    let tags = fitting(
        all_tags,
        MAX_TAGS,
        &mut budget,
        |t| 24 + t.tag.len(),
        "tags",
        truncated,
    );
    let collections = fitting(
        record
            .collections
            .iter()
            .map(|c| ItemCollection {
                collection_key: c.key.clone(),
                name: c.name.clone(),
            })
            .collect(),
        MAX_COLLECTIONS,
        &mut budget,
        |c| 40 + c.name.as_ref().map_or(0, String::len),
        "collections",
        truncated,
    );
    let mut relations = BTreeMap::new();
    for (predicate, v) in d
        .get("relations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let uris = fitting(
            strings(v),
            MAX_RELATIONS,
            &mut budget,
            |u| 4 + u.len(),
            &format!("relations.{predicate}"),
            truncated,
        );
        if !uris.is_empty() {
            relations.insert(predicate.clone(), uris);
        }
    }
    let text = |name: &str| d.get(name).and_then(field_text);
    ItemMetadata {
        item_key: record.key.clone(),
        item_type: record.item_type.clone(),
        version: record.version,
        title: first_bytes(&seed.title, MAX_FIELD_BYTES).0,
        fields,
        creators,
        tags,
        collections,
        relations,
        parent_item_key: text("parentItem"),
        date_added: text("dateAdded"),
        date_modified: text("dateModified"),
        parsed_date: record
            .meta
            .get("parsedDate")
            .and_then(Value::as_str)
            .map(str::to_string),
        num_children: record.meta.get("numChildren").and_then(Value::as_u64),
        in_trash: matches!(d.get("deleted"), Some(Value::Bool(true)))
            || d.get("deleted")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0),
    }
}
