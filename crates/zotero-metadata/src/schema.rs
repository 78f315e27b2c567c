//! The parts of Zotero's schema the mapping needs, embedded and parsed once:
//!
//! - `fixtures/schema/templates.json`: each item type's fields and creator types (primary
//!   first), as the emulator also uses them;
//! - `fixtures/schema/csl.json`: the `csl` section of the same zotero-schema commit (CSL type →
//!   Zotero types, CSL variable → Zotero fields, CSL date variables, Zotero creator type → CSL
//!   name variable) and each item type's base-field mapping (`publicationTitle` → `bookTitle`
//!   for `bookSection`, …).
//!
//! Both are JSON objects whose key order matters (Zotero walks the CSL mappings in order: the
//! first of two CSL variables for the same Zotero field loses, the first creator type mapped
//! to a CSL name variable wins), so the mappings are read into ordered lists, whatever
//! `serde_json`'s map type is.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::mapping_error::{MappingError, SchemaError};

const TEMPLATES_JSON: &str = include_str!("../../../fixtures/schema/templates.json");
const CSL_JSON: &str = include_str!("../../../fixtures/schema/csl.json");

/// A JSON object read as a list of its entries, in document order.
#[derive(Debug, Clone)]
struct Ordered<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TemplatesFile {
    item_types: Vec<ItemTypeEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemTypeEntry {
    item_type: String,
    fields: Vec<String>,
    creator_types: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CslFile {
    csl: CslSection,
    base_fields: Ordered<Ordered<String>>,
}

#[derive(Deserialize)]
struct CslSection {
    types: Ordered<Vec<String>>,
    fields: CslFields,
    names: Ordered<String>,
}

#[derive(Deserialize)]
struct CslFields {
    text: Ordered<Vec<String>>,
    date: Ordered<String>,
}

/// One item type: its fields (type-specific names) and creator types, primary first.
#[derive(Debug, Clone)]
pub struct ItemTypeInfo {
    fields: HashSet<String>,
    creator_types: Vec<String>,
    /// base field → this type's own field
    base_to_own: HashMap<String, String>,
}

/// The embedded schema: item types and the CSL mappings of one zotero-schema commit.
#[derive(Debug)]
pub struct Schema {
    item_types: HashMap<String, ItemTypeInfo>,
    csl_types: Vec<(String, Vec<String>)>,
    csl_text: Vec<(String, Vec<String>)>,
    csl_dates: Vec<(String, String)>,
    /// Zotero creator type → CSL name variable, in the schema's order.
    csl_names: Vec<(String, String)>,
}

static SCHEMA: OnceLock<Result<Schema, SchemaError>> = OnceLock::new();

/// The embedded schema, parsed on first use.
pub fn schema() -> Result<&'static Schema, MappingError> {
    SCHEMA
        .get_or_init(Schema::parse_embedded)
        .as_ref()
        .map_err(|e| MappingError::Schema(e.clone()))
}

impl Schema {
    fn parse_embedded() -> Result<Schema, SchemaError> {
        Schema::parse(TEMPLATES_JSON, CSL_JSON)
    }

    fn parse(templates: &str, csl: &str) -> Result<Schema, SchemaError> {
        let unreadable = |file: &'static str| {
            move |e: serde_json::Error| SchemaError {
                file,
                reason: e.to_string(),
            }
        };
        let templates: TemplatesFile = serde_json::from_str(templates)
            .map_err(unreadable("fixtures/schema/templates.json"))?;
        let csl: CslFile =
            serde_json::from_str(csl).map_err(unreadable("fixtures/schema/csl.json"))?;
        let mut base_fields: HashMap<String, HashMap<String, String>> = csl
            .base_fields
            .0
            .into_iter()
            .map(|(t, m)| (t, m.0.into_iter().collect()))
            .collect();
        let item_types = templates
            .item_types
            .into_iter()
            .map(|t| {
                let base_to_own = base_fields.remove(&t.item_type).unwrap_or_default();
                (
                    t.item_type,
                    ItemTypeInfo {
                        fields: t.fields.into_iter().collect(),
                        creator_types: t.creator_types,
                        base_to_own,
                    },
                )
            })
            .collect();
        Ok(Schema {
            item_types,
            csl_types: csl.csl.types.0,
            csl_text: csl.csl.fields.text.0,
            csl_dates: csl.csl.fields.date.0,
            csl_names: csl.csl.names.0,
        })
    }

    /// The item type, when the schema has it.
    pub fn item_type(&self, item_type: &str) -> Option<&ItemTypeInfo> {
        self.item_types.get(item_type)
    }

    /// The field `field` is stored under for `item_type`: the type's own field when `field`
    /// is a base field the type maps (`publicationTitle` → `bookTitle` for `bookSection`),
    /// `field` itself when the type has it, else `None` (`getFieldIDFromTypeAndBase` then
    /// `isValidForType` in Zotero).
    pub fn field_for_type<'a>(&'a self, item_type: &str, field: &'a str) -> Option<&'a str> {
        let info = self.item_types.get(item_type)?;
        if let Some(own) = info.base_to_own.get(field) {
            return Some(own.as_str());
        }
        info.fields.contains(field).then_some(field)
    }

    /// The base field a type-specific field maps to for `item_type` (`bookTitle` →
    /// `publicationTitle` for `bookSection`), or the field itself.
    pub fn base_of<'a>(&'a self, item_type: &str, field: &'a str) -> &'a str {
        self.item_types
            .get(item_type)
            .and_then(|info| {
                info.base_to_own
                    .iter()
                    .find(|(_, own)| own.as_str() == field)
                    .map(|(base, _)| base.as_str())
            })
            .unwrap_or(field)
    }

    /// Whether `creator_type` is valid for `item_type`.
    pub fn creator_type_valid(&self, item_type: &str, creator_type: &str) -> bool {
        self.item_types
            .get(item_type)
            .is_some_and(|i| i.creator_types.iter().any(|c| c == creator_type))
    }

    /// The primary creator type of `item_type` (`author` for most, `artist` for `artwork`).
    pub fn primary_creator_type(&self, item_type: &str) -> Option<&str> {
        self.item_types
            .get(item_type)
            .and_then(|i| i.creator_types.first())
            .map(String::as_str)
    }

    /// The Zotero item type Zotero imports a CSL type as: the first one `csl.types` lists.
    pub fn item_type_for_csl(&self, csl_type: &str) -> Option<&str> {
        self.csl_types
            .iter()
            .find(|(t, _)| t == csl_type)
            .and_then(|(_, z)| z.first())
            .map(String::as_str)
    }

    /// `csl.types`, in the schema's order.
    pub fn csl_types(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.csl_types
            .iter()
            .map(|(t, z)| (t.as_str(), z.as_slice()))
    }

    /// `csl.fields.text`: CSL variable → Zotero fields to try in order.
    pub(crate) fn csl_text(&self) -> &[(String, Vec<String>)] {
        &self.csl_text
    }

    /// `csl.fields.date`: CSL date variable → Zotero field.
    pub(crate) fn csl_dates(&self) -> &[(String, String)] {
        &self.csl_dates
    }

    /// `csl.names`: Zotero creator type → CSL name variable.
    pub(crate) fn csl_names(&self) -> &[(String, String)] {
        &self.csl_names
    }
}

impl ItemTypeInfo {
    /// Whether the type has this (type-specific) field.
    pub fn has_field(&self, field: &str) -> bool {
        self.fields.contains(field)
    }

    /// The type's creator types, primary first.
    pub fn creator_types(&self) -> &[String] {
        &self.creator_types
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schema_parses() {
        let s = schema().unwrap();
        assert_eq!(
            s.field_for_type("bookSection", "publicationTitle"),
            Some("bookTitle")
        );
        assert_eq!(
            s.field_for_type("conferencePaper", "publicationTitle"),
            Some("proceedingsTitle")
        );
        assert_eq!(
            s.field_for_type("journalArticle", "publicationTitle"),
            Some("publicationTitle")
        );
        assert_eq!(
            s.field_for_type("preprint", "publisher"),
            Some("repository")
        );
        assert_eq!(s.field_for_type("preprint", "number"), Some("archiveID"));
        assert_eq!(s.field_for_type("journalArticle", "numPages"), None);
        assert_eq!(
            s.field_for_type("bookSection", "bookTitle"),
            Some("bookTitle")
        );
        assert_eq!(s.field_for_type("noSuchType", "title"), None);
        assert_eq!(s.base_of("bookSection", "bookTitle"), "publicationTitle");
        assert_eq!(s.base_of("book", "title"), "title");
        assert_eq!(s.primary_creator_type("artwork"), Some("artist"));
        assert!(s.creator_type_valid("bookSection", "bookAuthor"));
        assert!(!s.creator_type_valid("journalArticle", "bookAuthor"));
        assert_eq!(s.item_type_for_csl("article"), Some("preprint"));
        assert_eq!(s.item_type_for_csl("broadcast"), Some("podcast"));
        assert_eq!(s.item_type_for_csl("no-such-type"), None);
    }

    #[test]
    fn mappings_keep_the_schema_order() {
        let s = schema().unwrap();
        // `author` comes before `creator` (both are CSL `author`), `host` before `podcaster`.
        let names: Vec<&str> = s.csl_names().iter().map(|(z, _)| z.as_str()).collect();
        assert_eq!(names.first(), Some(&"author"));
        let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(pos("author") < pos("creator"));
        assert!(pos("host") < pos("podcaster"));
        let text: Vec<&str> = s.csl_text().iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(text.first(), Some(&"abstract"));
        assert!(
            text.iter().position(|v| *v == "shortTitle")
                < text.iter().position(|v| *v == "title-short")
        );
    }

    #[test]
    fn broken_fixtures_are_errors_not_panics() {
        assert!(Schema::parse("{", CSL_JSON).is_err());
        let e = Schema::parse(TEMPLATES_JSON, "[]").unwrap_err();
        assert_eq!(e.file, "fixtures/schema/csl.json", "{e}");
        assert!(
            e.to_string().starts_with("fixtures/schema/csl.json: "),
            "{e}"
        );
        assert!(Schema::parse(TEMPLATES_JSON, r#"{"csl": {}, "baseFields": {}}"#).is_err());
    }
}
