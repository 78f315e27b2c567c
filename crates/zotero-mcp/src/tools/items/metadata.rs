//! How `zotero_get_item_metadata` shapes an item: every field by its Zotero name, creators,
//! typed tags, collections and relations, each bounded so that an answer stays within the
//! budget, with what was cut said in `truncated` and read on part by part with `field`.
//! Pure data shaping, no I/O: the tool file keeps its parameters, its answer and `run`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use zotero_api::metadata::ItemRecord;
use zotero_api::model::{not_field, NotField, WireObject, ZoteroRetraction};

use crate::budget;
use crate::error::ToolError;
use crate::tools::params::Creator;

/// The most characters (of JSON) of one field an answer carries; `field` and `offset` read
/// on (a note's HTML can be 500,000 characters).
pub const MAX_FIELD_CHARS: usize = 4_000;
/// The most characters of all fields together.
pub const MAX_FIELDS_CHARS: usize = 10_000;
/// The most characters of the whole item (fields, creators, tags, collections, relations), so
/// that an answer stays within the 20,000 characters of the budget whatever the item holds;
/// lists are cut to fit.
pub const MAX_ITEM_CHARS: usize = 16_000;
/// Creators an answer lists at most (`field=creators` reads on).
pub const MAX_CREATORS: usize = 100;
/// Tags an answer lists at most (`field=tags` reads on).
pub const MAX_TAGS: usize = 200;
/// Collections an answer lists at most.
pub const MAX_COLLECTIONS: usize = 50;
/// Relations kept per predicate.
pub const MAX_RELATIONS: usize = 50;
/// The most characters (of JSON) of a BibTeX export an answer carries.
pub const MAX_BIBTEX_CHARS: usize = 16_000;
/// The most characters (of JSON) of one part of a field read with `field`.
pub const PART_CHARS: usize = budget::PAGE_CHARS - 2_000;

/// Whether a key of the item's `data` is answered in a place of its own rather than among
/// `fields`: the object's own keys, its lists, and `deleted` (`in_trash`). What else is not a
/// field (a note's text, an attachment's file, an annotation's properties, `inPublications`)
/// is listed with the fields: the answer has no other place for it.
fn answered_apart(name: &str) -> bool {
    match not_field(name) {
        Some(NotField::Object | NotField::List) => true,
        Some(NotField::Flag) => name == "deleted",
        _ => false,
    }
}

/// A tag and its type.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TypedTag {
    /// The tag as written
    pub tag: String,
    /// 0: added by a person; 1: added automatically (imported with the item)
    #[serde(rename = "type")]
    pub tag_type: u64,
}

/// A collection the item is in.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemCollection {
    /// The collection's key
    pub collection_key: String,
    /// Absent when it could not be read (beyond the first 10, or deleted)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Everything Zotero keeps about the item.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemMetadata {
    /// The item's key
    pub item_key: String,
    /// Zotero's item type (journalArticle, book, …)
    pub item_type: String,
    /// The item's version, for a version-checked update
    pub version: u64,
    /// Its title ("" when it has none)
    pub title: String,
    /// Every field that has a value, by its Zotero name (title, date, publicationTitle, DOI, abstractNote, …)
    pub fields: BTreeMap<String, String>,
    /// Authors, editors, … in Zotero's order
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub creators: Vec<Creator>,
    /// Its tags, with their types
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TypedTag>,
    /// The collections it is in
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
    /// Present when Zotero flags the item retracted
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retraction: Option<ItemRetraction>,
}

/// The retraction Zotero stored for the item (from Retraction Watch's data).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemRetraction {
    /// When (YYYY-MM-DD)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Why
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The notice's DOI
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice_doi: Option<String>,
    /// Links to the notice
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
}

impl ItemRetraction {
    /// Zotero's flag, each text bounded.
    fn of(r: ZoteroRetraction) -> Self {
        let short = |s: &String| first_chars(s, 500).0;
        Self {
            date: r.date.as_ref().map(short),
            reasons: r.reasons.iter().take(10).map(short).collect(),
            notice_doi: r.notice_doi.as_ref().map(short),
            urls: r.urls.iter().take(10).map(short).collect(),
        }
    }
}

/// A field's value as text: strings as they are, numbers and booleans written out; lists
/// and objects are not fields.
pub(crate) fn field_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// At most `max` characters (of JSON) of `s`, the characters kept, and whether it was longer.
pub(crate) fn first_chars(s: &str, max: usize) -> (String, usize, bool) {
    match budget::cut_json(s, max) {
        Some((kept, n)) => (kept.to_string(), n, true),
        None => (s.to_string(), s.chars().count(), false),
    }
}

/// The first entries of `all` (at most `max`) whose sizes fit in `budget`, which they use
/// up; a note in `truncated` when some were left out.
pub(crate) fn fitting<T>(
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
        let read_on = match what {
            "creators" | "tags" => format!("; field={what}, offset={} reads on", kept.len()),
            _ => String::new(),
        };
        truncated.push(format!(
            "{what}: the first {} of {total}{read_on}",
            kept.len()
        ));
    }
    kept
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
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
pub(crate) fn metadata(
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
    let mut fields_budget = MAX_FIELDS_CHARS;
    for (name, value) in d {
        if answered_apart(name) || (!include_abstract && name == "abstractNote") {
            continue;
        }
        let Some(text) = field_text(value) else {
            continue;
        };
        let (kept, n, cut) = first_chars(&text, MAX_FIELD_CHARS.min(fields_budget));
        fields_budget -= budget::json_chars(&kept).min(fields_budget);
        if cut {
            let hint = if name == "note" {
                "; zotero_get_notes reads a note whole"
            } else {
                ""
            };
            truncated.push(format!(
                "fields.{name}: the first {n} of {} characters; field={name}, offset={n} reads \
                 on{hint}",
                text.chars().count()
            ));
        }
        if !kept.is_empty() {
            fields.insert(name.clone(), kept);
        }
    }
    // What the lists may use: the item's bound less the fields (JSON adds a little to each
    // entry: its keys and quotes).
    let mut budget = MAX_ITEM_CHARS.saturating_sub(MAX_FIELDS_CHARS - fields_budget);
    let creators: Vec<Creator> = seed.creators.into_iter().map(Creator::from).collect();
    let creators = fitting(
        creators,
        MAX_CREATORS,
        &mut budget,
        |c| budget::json_chars(c) + 1,
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
        |t| budget::json_chars(t) + 1,
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
        |c| budget::json_chars(c) + 1,
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
            |u| budget::json_chars(u) + 1,
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
        title: first_chars(&seed.title, MAX_FIELD_CHARS).0,
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
        retraction: ZoteroRetraction::from_meta(&record.meta).map(ItemRetraction::of),
    }
}

/// One part of one field (or of the creators or tags) from `offset`: the item with only that
/// part in it, and where the next part starts when there is one.
pub(crate) fn field_part(
    record: &ItemRecord,
    field: &str,
    offset: u64,
) -> Result<(ItemMetadata, Option<u64>), ToolError> {
    let mut item = metadata(record, false, &mut Vec::new());
    item.fields.clear();
    item.creators.clear();
    item.tags.clear();
    item.collections.clear();
    item.relations.clear();
    item.title = first_chars(&item.title, 200).0;
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let past_end = |total: usize| {
        ToolError::invalid(
            "offset",
            format!("'offset' must be at most {total}, the length of {field}, got {offset}"),
        )
    };
    let seed = WireObject {
        key: Some(record.key.clone()),
        version: Some(record.version),
        meta: record.meta.clone(),
        links: serde_json::Map::new(),
        data: record.data.clone(),
    }
    .to_item();
    // The entries of a list from offset, as many as fit, and where the rest starts.
    fn part<T: Serialize>(all: Vec<T>, skip: usize) -> (Vec<T>, Option<u64>) {
        let total = all.len();
        let (kept, cut) = budget::fit_page(all.into_iter().skip(skip).collect(), PART_CHARS);
        let end = skip + kept.len();
        (kept, (cut && end < total).then_some(end as u64))
    }
    let next = match field {
        "creators" => {
            let all: Vec<Creator> = seed.creators.into_iter().map(Creator::from).collect();
            if skip > all.len() {
                return Err(past_end(all.len()));
            }
            let (kept, next) = part(all, skip);
            item.creators = kept;
            next
        }
        "tags" => {
            let all: Vec<TypedTag> = record
                .data
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
            if skip > all.len() {
                return Err(past_end(all.len()));
            }
            let (kept, next) = part(all, skip);
            item.tags = kept;
            next
        }
        name => {
            let text = record
                .data
                .get(name)
                .filter(|_| !answered_apart(name))
                .and_then(field_text)
                .ok_or_else(|| {
                    ToolError::invalid(
                        "field",
                        format!(
                            "'field' must be a field of {} that has a value (fields lists them), \
                             creators or tags; got '{}'",
                            record.key,
                            crate::tools::params::quote(name)
                        ),
                    )
                })?;
            let total = text.chars().count();
            let rest = match text.char_indices().nth(skip) {
                Some((at, _)) => text.get(at..).unwrap_or_default(),
                None if skip == total => "",
                None => return Err(past_end(total)),
            };
            let (kept, n, cut) = first_chars(rest, PART_CHARS);
            item.fields.insert(name.to_string(), kept);
            cut.then_some(offset.saturating_add(n as u64))
        }
    };
    Ok((item, next))
}
