//! A Zotero item before it is created: what every mapper produces and what zotero-api turns
//! into a create request. Field names are the item type's own (`bookTitle`, not the base
//! `publicationTitle`), creator types are valid for the type, and only fields the type has
//! are present (as `zotero_item_json` in the Web API expects them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::schema::Schema;

/// An item to create: its type, its fields, its creators in order, automatic tags and the
/// lines of its `extra` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ZoteroItemDraft {
    /// The Zotero item type (`journalArticle`, `preprint`, …).
    pub item_type: String,
    /// Zotero field → value, each valid for `item_type`; never `extra` (see `extra_lines`)
    /// and never empty values.
    pub fields: BTreeMap<String, String>,
    /// Creators in the order Zotero would store them.
    pub creators: Vec<DraftCreator>,
    /// Tags the source assigns (DataCite subjects); the caller decides whether to keep them.
    pub tags: Vec<String>,
    /// The lines of `extra` (`arXiv:1706.03762 [cs.CL]`, `PMID: 123`, a CSL `note`, …).
    pub extra_lines: Vec<String>,
}

/// One creator with its Zotero creator type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftCreator {
    /// The Zotero creator type (`author`, `editor`, `bookAuthor`, …), valid for the item type.
    pub creator_type: String,
    /// The name, in two fields or one.
    #[serde(flatten)]
    pub name: CreatorName,
}

/// A creator's name as Zotero stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CreatorName {
    /// `lastName` and `firstName` (either may be empty).
    #[serde(rename_all = "camelCase")]
    Split {
        /// Given names.
        first_name: String,
        /// Family name.
        last_name: String,
    },
    /// One field (`fieldMode: 1` in Zotero; `name` in the Web API): an organisation.
    Single {
        /// The whole name.
        name: String,
    },
}

impl DraftCreator {
    /// A two-field creator.
    pub fn split(creator_type: &str, first_name: &str, last_name: &str) -> Self {
        DraftCreator {
            creator_type: creator_type.to_owned(),
            name: CreatorName::Split {
                first_name: first_name.to_owned(),
                last_name: last_name.to_owned(),
            },
        }
    }

    /// A single-field creator.
    pub fn single(creator_type: &str, name: &str) -> Self {
        DraftCreator {
            creator_type: creator_type.to_owned(),
            name: CreatorName::Single {
                name: name.to_owned(),
            },
        }
    }
}

impl ZoteroItemDraft {
    /// An empty item of this type.
    pub fn new(item_type: &str) -> Self {
        ZoteroItemDraft {
            item_type: item_type.to_owned(),
            fields: BTreeMap::new(),
            creators: Vec::new(),
            tags: Vec::new(),
            extra_lines: Vec::new(),
        }
    }

    /// A field's value, by the type's own name (`bookTitle`) or by its base name
    /// (`publicationTitle`).
    pub fn field(&self, schema: &Schema, field: &str) -> Option<&str> {
        let own = schema
            .field_for_type(&self.item_type, field)
            .unwrap_or(field);
        self.fields.get(own).map(String::as_str)
    }

    /// The `extra` field: its lines joined with newlines (empty when there are none).
    pub fn extra(&self) -> String {
        self.extra_lines.join("\n")
    }

    /// The item as the Web API's item JSON for a create (`itemType`, the fields, `creators`
    /// with `firstName`/`lastName` or `name`, `tags`, `extra`); no key, version, collections.
    pub fn to_api_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("itemType".into(), Value::String(self.item_type.clone()));
        for (k, v) in &self.fields {
            obj.insert(k.clone(), Value::String(v.clone()));
        }
        let creators: Vec<Value> = self
            .creators
            .iter()
            .map(|c| match &c.name {
                CreatorName::Split {
                    first_name,
                    last_name,
                } => json!({"creatorType": c.creator_type, "firstName": first_name, "lastName": last_name}),
                CreatorName::Single { name } => {
                    json!({"creatorType": c.creator_type, "name": name})
                }
            })
            .collect();
        obj.insert("creators".into(), Value::Array(creators));
        let tags: Vec<Value> = self.tags.iter().map(|t| json!({ "tag": t })).collect();
        obj.insert("tags".into(), Value::Array(tags));
        if !self.extra_lines.is_empty() {
            obj.insert("extra".into(), Value::String(self.extra()));
        }
        Value::Object(obj)
    }

    /// Sets `field` (a base or type-specific name) to `value` (trimmed) if the type has it;
    /// `extra` adds lines instead. Empty values are ignored. Returns whether it was stored.
    pub(crate) fn set(&mut self, schema: &Schema, field: &str, value: &str) -> bool {
        let value = value.trim();
        if value.is_empty() {
            return false;
        }
        let Some(own) = schema.field_for_type(&self.item_type, field) else {
            return false;
        };
        if own == "extra" {
            self.extra_lines
                .extend(value.lines().map(str::trim_end).map(str::to_owned));
            return true;
        }
        self.fields.insert(own.to_owned(), value.to_owned());
        true
    }

    /// Like `set`; a value the type has no field for becomes an `extra` line `field: value`
    /// (how Zotero keeps e.g. a PMID on a type without a `PMID` field).
    pub(crate) fn set_or_extra(&mut self, schema: &Schema, field: &str, value: &str) {
        if !self.set(schema, field, value) && !value.trim().is_empty() {
            self.extra_lines.push(format!("{field}: {}", value.trim()));
        }
    }

    /// Like `set`, only when the field is still empty.
    pub(crate) fn set_if_absent(&mut self, schema: &Schema, field: &str, value: &str) -> bool {
        if self.field(schema, field).is_some() {
            return false;
        }
        self.set(schema, field, value)
    }

    /// Removes a field given by base or own name.
    pub(crate) fn remove(&mut self, schema: &Schema, field: &str) -> Option<String> {
        let own = schema
            .field_for_type(&self.item_type, field)
            .unwrap_or(field);
        self.fields.remove(own)
    }

    /// Adds a creator whose type comes from a translator (not CSL): a type the item type does
    /// not have becomes `contributor`, or the primary type when even that is missing.
    pub(crate) fn push_creator(&mut self, schema: &Schema, mut creator: DraftCreator) {
        if !schema.creator_type_valid(&self.item_type, &creator.creator_type) {
            let fallback = if schema.creator_type_valid(&self.item_type, "contributor") {
                Some("contributor")
            } else {
                schema.primary_creator_type(&self.item_type)
            };
            match fallback {
                Some(t) => creator.creator_type = t.to_owned(),
                None => return,
            }
        }
        self.creators.push(creator);
    }

    /// Changes the item type the way Zotero's `setType` does: fields move to the new type's
    /// field for the same base field, fields the new type lacks are dropped, creators whose
    /// type is invalid become the new type's primary creator type.
    pub(crate) fn change_type(&mut self, schema: &Schema, item_type: &str) {
        if self.item_type == item_type {
            return;
        }
        let old_type = std::mem::replace(&mut self.item_type, item_type.to_owned());
        let old_fields = std::mem::take(&mut self.fields);
        for (field, value) in old_fields {
            let base = schema.base_of(&old_type, &field).to_owned();
            self.set(schema, &base, &value);
        }
        let primary = schema.primary_creator_type(item_type).map(str::to_owned);
        let creators = std::mem::take(&mut self.creators);
        for mut c in creators {
            if !schema.creator_type_valid(item_type, &c.creator_type) {
                match &primary {
                    Some(p) => c.creator_type = p.clone(),
                    None => continue,
                }
            }
            self.creators.push(c);
        }
    }
}

/// Zotero's own limits, as its server (zotero/dataserver) enforces them on every write:
/// `Zotero_Items::$maxDataValueLength` (model/Items.inc.php), 65,535 bytes for any field
/// (checked with PHP's `strlen`, in bytes: "… field value '…' too long"); the `creators`
/// table's `firstName`/`lastName` (`Zotero_Creators::$maxFirstNameLength`,
/// `$maxLastNameLength` in model/Creators.inc.php), 255 characters ("Creator value '…' too
/// long"); `Zotero_Tags::$maxLength` (model/Tags.inc.php), 255 characters (`mb_strlen`).
pub mod limits {
    /// The most bytes of one field's value (`extra` included).
    pub const FIELD_BYTES: usize = 65_535;
    /// The most characters of a creator's first or last name, or single-field name.
    pub const CREATOR_NAME_CHARS: usize = 255;
    /// The most characters of a tag.
    pub const TAG_CHARS: usize = 255;
}

/// The fields that are an item's title (by item type): one over the limit is refused.
const TITLE_FIELDS: [&str; 4] = ["title", "caseName", "nameOfAct", "subject"];

/// Cuts `s` to at most `max` bytes at a character boundary, ending in `…`; whether it cut.
fn cut_bytes(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let mut at = max.saturating_sub('…'.len_utf8());
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    s.truncate(at);
    s.push('…');
    true
}

/// Cuts `s` to at most `max` characters, ending in `…`; whether it cut.
fn cut_chars(s: &mut String, max: usize) -> bool {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if s.chars().count() > max => {
            s.truncate(at);
            s.push('…');
            true
        }
        _ => false,
    }
}

impl ZoteroItemDraft {
    /// Makes the draft fit Zotero's limits ([`limits`]): a field over 65,535 bytes is cut
    /// (its end marked `…`), a creator name or tag over 255 characters too, the lines of
    /// `extra` that do not fit are dropped; a title over the limit is refused (it is no
    /// title, and the item would be found by nothing else). Answers what was cut, by name
    /// (no values), for the caller to say.
    pub fn fit_zotero_limits(&mut self) -> Result<Vec<String>, crate::MappingError> {
        use limits::{CREATOR_NAME_CHARS, FIELD_BYTES, TAG_CHARS};
        let mut cut = Vec::new();
        for (field, value) in &mut self.fields {
            let bytes = value.len();
            if bytes <= FIELD_BYTES {
                continue;
            }
            if TITLE_FIELDS.contains(&field.as_str()) {
                return Err(crate::MappingError::TooLong {
                    field: field.clone(),
                    bytes,
                    max: FIELD_BYTES,
                });
            }
            cut_bytes(value, FIELD_BYTES);
            cut.push(format!(
                "{field} cut from {bytes} to {FIELD_BYTES} bytes (Zotero's limit for a field)"
            ));
        }
        let mut names_cut = 0usize;
        for c in &mut self.creators {
            let cut_any = match &mut c.name {
                CreatorName::Split {
                    first_name,
                    last_name,
                } => {
                    let first = cut_chars(first_name, CREATOR_NAME_CHARS);
                    cut_chars(last_name, CREATOR_NAME_CHARS) || first
                }
                CreatorName::Single { name } => cut_chars(name, CREATOR_NAME_CHARS),
            };
            names_cut += usize::from(cut_any);
        }
        if names_cut > 0 {
            cut.push(format!(
                "{names_cut} creator name(s) cut to {CREATOR_NAME_CHARS} characters (Zotero's limit)"
            ));
        }
        let mut tags_cut = 0usize;
        for t in &mut self.tags {
            tags_cut += usize::from(cut_chars(t, TAG_CHARS));
        }
        if tags_cut > 0 {
            cut.push(format!(
                "{tags_cut} tag(s) cut to {TAG_CHARS} characters (Zotero's limit)"
            ));
        }
        let extra_bytes = self.extra().len();
        if extra_bytes > FIELD_BYTES {
            let mut kept = Vec::new();
            let mut size = 0usize;
            for mut line in std::mem::take(&mut self.extra_lines) {
                let room = FIELD_BYTES.saturating_sub(size + usize::from(!kept.is_empty()));
                if room == 0 {
                    break;
                }
                cut_bytes(&mut line, room);
                size += line.len() + usize::from(!kept.is_empty());
                kept.push(line);
            }
            self.extra_lines = kept;
            cut.push(format!(
                "extra cut from {extra_bytes} to {FIELD_BYTES} bytes (Zotero's limit for a field)"
            ));
        }
        Ok(cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_metadata_is_cut_to_zoteros_limits_and_an_oversized_title_refused() {
        let mut d = ZoteroItemDraft::new("journalArticle");
        d.fields.insert("title".into(), "A fine title".into());
        d.fields
            .insert("abstractNote".into(), "é".repeat(1_000_000));
        d.fields.insert("publicationTitle".into(), "Journal".into());
        d.creators.push(DraftCreator::split(
            "author",
            &"F".repeat(300_000),
            "Lovelace",
        ));
        d.creators
            .push(DraftCreator::single("author", &"ü".repeat(256)));
        d.creators
            .push(DraftCreator::split("author", "Ada", &"ü".repeat(255)));
        d.tags.push("t".repeat(1_000));
        d.extra_lines = vec!["x".repeat(40_000), "y".repeat(40_000), "PMID: 1".into()];
        let cut = d.fit_zotero_limits().unwrap();
        let abs = &d.fields["abstractNote"];
        assert!(
            abs.len() <= limits::FIELD_BYTES && abs.len() > 65_000,
            "{}",
            abs.len()
        );
        assert!(abs.ends_with('…'));
        assert_eq!(d.fields["title"], "A fine title");
        let names: Vec<usize> = d
            .creators
            .iter()
            .map(|c| match &c.name {
                CreatorName::Split {
                    first_name,
                    last_name,
                } => first_name.chars().count().max(last_name.chars().count()),
                CreatorName::Single { name } => name.chars().count(),
            })
            .collect();
        assert_eq!(names, vec![255, 255, 255]);
        assert_eq!(d.tags[0].chars().count(), 255);
        assert!(d.extra().len() <= limits::FIELD_BYTES);
        assert!(d.extra_lines[0].starts_with("xxx"));
        assert_eq!(cut.len(), 4, "{cut:?}");
        assert!(cut[0].starts_with("abstractNote cut from 2000000 to 65535 bytes"));
        assert!(cut[1].starts_with("2 creator name(s)"), "{cut:?}");
        // The whole item is now bounded: about the fields' limits, not the answer's size.
        assert!(d.to_api_json().to_string().len() < 200_000);

        let mut t = ZoteroItemDraft::new("journalArticle");
        t.fields.insert("title".into(), "T".repeat(1_000_000));
        let e = t.fit_zotero_limits().unwrap_err();
        assert_eq!(
            e.to_string(),
            "the title is 1000000 bytes long, over Zotero's limit of 65535 bytes for a field: \
             not added"
        );
        // What fits is left alone.
        let mut ok = ZoteroItemDraft::new("book");
        ok.fields.insert("title".into(), "é".repeat(30_000));
        let before = ok.clone();
        assert!(ok.fit_zotero_limits().unwrap().is_empty());
        assert_eq!(ok, before);
    }
    use crate::schema::schema;

    #[test]
    fn set_resolves_base_fields_and_skips_invalid_ones() {
        let s = schema().unwrap();
        let mut d = ZoteroItemDraft::new("bookSection");
        assert!(d.set(s, "publicationTitle", " Collected Papers "));
        assert!(!d.set(s, "numPages", "300"));
        assert!(!d.set(s, "title", "   "));
        assert!(d.set(s, "extra", "one\ntwo"));
        assert_eq!(
            d.fields.get("bookTitle").map(String::as_str),
            Some("Collected Papers")
        );
        assert_eq!(d.field(s, "publicationTitle"), Some("Collected Papers"));
        assert_eq!(d.extra_lines, vec!["one", "two"]);
        d.set_or_extra(s, "PMID", "123");
        assert_eq!(d.extra(), "one\ntwo\nPMID: 123");
    }

    #[test]
    fn translator_creators_fall_back_to_contributor() {
        let s = schema().unwrap();
        let mut d = ZoteroItemDraft::new("dataset");
        d.push_creator(s, DraftCreator::split("editor", "Ada", "Lovelace"));
        d.push_creator(s, DraftCreator::single("author", "CERN"));
        assert_eq!(d.creators[0].creator_type, "contributor");
        assert_eq!(d.creators[1].creator_type, "author");
    }

    #[test]
    fn change_type_moves_base_fields() {
        let s = schema().unwrap();
        let mut d = ZoteroItemDraft::new("preprint");
        d.set(s, "publisher", "arXiv");
        d.set(s, "title", "T");
        d.set(s, "archiveID", "arXiv:1");
        d.push_creator(s, DraftCreator::split("author", "A", "B"));
        d.change_type(s, "report");
        assert_eq!(
            d.fields.get("institution").map(String::as_str),
            Some("arXiv")
        );
        assert_eq!(
            d.fields.get("reportNumber").map(String::as_str),
            Some("arXiv:1")
        );
        assert_eq!(d.fields.get("title").map(String::as_str), Some("T"));
        assert_eq!(d.creators.len(), 1);
    }

    #[test]
    fn api_json_shape() {
        let s = schema().unwrap();
        let mut d = ZoteroItemDraft::new("journalArticle");
        d.set(s, "title", "T");
        d.push_creator(s, DraftCreator::split("author", "Ada", "Lovelace"));
        d.push_creator(s, DraftCreator::single("author", "WHO"));
        d.extra_lines.push("PMID: 1".into());
        assert_eq!(
            d.to_api_json(),
            json!({
                "itemType": "journalArticle",
                "title": "T",
                "creators": [
                    {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
                    {"creatorType": "author", "name": "WHO"}
                ],
                "tags": [],
                "extra": "PMID: 1"
            })
        );
        let back: ZoteroItemDraft =
            serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }
}
