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

#[cfg(test)]
mod tests {
    use super::*;
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
