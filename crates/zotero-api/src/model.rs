//! Wire JSON of the Zotero API ⇄ the normalized items, creators and collections the tools
//! answer with. Parsing is tolerant: real items miss fields, and new fields appear with every
//! schema update.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Which keys of an item's `data` are not fields: zotero-db's one list
/// ([`zotero_db::NOT_FIELDS`]), which the database's fixture reads too.
pub use zotero_db::{is_field, not_field, NotField, NOT_FIELDS};

/// A creator in the seed's shape: `creator_type` with `first_name`/`last_name`, or `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Creator {
    pub creator_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttachmentSummary {
    pub attachment_key: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// An item as the tools answer it. Fields the item lacks are left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub item_key: String,
    pub version: u64,
    pub item_type: String,
    pub title: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub creators: Vec<Creator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(rename = "abstract", skip_serializing_if = "Option::is_none")]
    pub abstract_note: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<AttachmentSummary>>,
    /// Zotero's retraction flag (`meta.retraction`): only its database has one.
    #[serde(skip)]
    pub retraction: Option<ZoteroRetraction>,
}

/// The retraction Zotero stored for an item (its database's `retractedItems`, which Zotero
/// fills from Retraction Watch's data), as the database backend puts it in `meta.retraction`.
/// The Web API and the desktop's local API carry none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ZoteroRetraction {
    /// The retraction's date as Zotero stored it (`YYYY-MM-DD`).
    pub date: Option<String>,
    /// Retraction Watch's reasons.
    pub reasons: Vec<String>,
    /// Links to the notice or to Retraction Watch's entry.
    pub urls: Vec<String>,
    /// The DOI of the retraction notice.
    pub notice_doi: Option<String>,
    /// The user chose to hide Zotero's banner for it (it is retracted all the same).
    pub hidden: bool,
}

impl ZoteroRetraction {
    /// The flag in an item's `meta`, if it has one.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let r = meta.get("retraction")?.as_object()?;
        let strings = |k: &str| -> Vec<String> {
            match r.get(k) {
                Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            }
        };
        Some(Self {
            date: text(r, "date"),
            reasons: strings("reasons"),
            urls: strings("urls"),
            notice_doi: text(r, "doi"),
            hidden: r.get("hidden").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collection {
    pub collection_key: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    pub version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_items: Option<u64>,
    /// In Zotero's trash (`deleted` in its data; the Web API lists such collections too).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_trash: bool,
}

/// The wire object: `{key, version, meta, links, data}`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WireObject {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub version: Option<u64>,
    #[serde(default)]
    pub meta: Map<String, Value>,
    #[serde(default)]
    pub links: Map<String, Value>,
    #[serde(default)]
    pub data: Map<String, Value>,
}

/// A text property of wire JSON (`data`, `meta`), trimmed; `None` when it is missing, not
/// text or blank.
pub fn text(data: &Map<String, Value>, field: &str) -> Option<String> {
    data.get(field)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl WireObject {
    pub fn key(&self) -> String {
        self.key
            .clone()
            .or_else(|| text(&self.data, "key"))
            .unwrap_or_default()
    }

    pub fn version(&self) -> u64 {
        self.version
            .or_else(|| self.data.get("version").and_then(Value::as_u64))
            .unwrap_or(0)
    }

    pub fn item_type(&self) -> String {
        text(&self.data, "itemType").unwrap_or_default()
    }

    pub fn to_item(&self) -> Item {
        let d = &self.data;
        let creators = d
            .get("creators")
            .and_then(Value::as_array)
            .map(|cs| cs.iter().filter_map(creator_from_wire).collect())
            .unwrap_or_default();
        let mut tags: Vec<String> = Vec::new();
        for t in d
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(tag) = t.get("tag").and_then(Value::as_str) {
                if !tag.is_empty() && !tags.iter().any(|x| x == tag) {
                    tags.push(tag.to_string());
                }
            }
        }
        Item {
            item_key: self.key(),
            version: self.version(),
            item_type: self.item_type(),
            title: text(d, "title").unwrap_or_default(),
            creators,
            date: text(d, "date"),
            doi: text(d, "DOI"),
            url: text(d, "url"),
            abstract_note: text(d, "abstractNote"),
            tags,
            extra: text(d, "extra"),
            attachments: None,
            retraction: ZoteroRetraction::from_meta(&self.meta),
        }
    }

    pub fn to_attachment(&self) -> AttachmentSummary {
        let d = &self.data;
        let size = self
            .links
            .get("enclosure")
            .and_then(|e| e.get("length"))
            .and_then(Value::as_u64);
        AttachmentSummary {
            attachment_key: self.key(),
            title: text(d, "title")
                .or_else(|| text(d, "filename"))
                .unwrap_or_default(),
            content_type: text(d, "contentType"),
            size,
        }
    }

    pub fn to_collection(&self) -> Collection {
        Collection {
            collection_key: self.key(),
            name: self
                .data
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            // `parentCollection` is `false` at the top level, a key otherwise.
            parent_key: text(&self.data, "parentCollection"),
            version: self.version(),
            num_items: self.meta.get("numItems").and_then(Value::as_u64),
            in_trash: field_value(&self.data, "deleted") == Value::Bool(true),
        }
    }
}

/// What kind of object a read, an edit or a create is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Item,
    Collection,
}

impl ObjectKind {
    pub(crate) fn path(self) -> &'static str {
        match self {
            ObjectKind::Item => "/items",
            ObjectKind::Collection => "/collections",
        }
    }

    pub(crate) fn key_param(self) -> &'static str {
        match self {
            ObjectKind::Item => "itemKey",
            ObjectKind::Collection => "collectionKey",
        }
    }

    pub fn noun(self) -> &'static str {
        match self {
            ObjectKind::Item => "item",
            ObjectKind::Collection => "collection",
        }
    }
}

/// The value a field has in `data`, as compared and reported: `deleted` as a boolean (Zotero
/// writes `1` or `true`, or leaves it out), a collection's missing parent as `false`, any
/// other missing field as `""` (what clearing it writes).
pub fn field_value(data: &Map<String, Value>, field: &str) -> Value {
    let v = data.get(field);
    match field {
        "deleted" => Value::Bool(v.is_some_and(truthy)),
        "parentCollection" => match v {
            Some(Value::String(s)) if !s.is_empty() => Value::from(s.as_str()),
            _ => Value::Bool(false),
        },
        _ => v.cloned().unwrap_or_else(|| Value::from("")),
    }
}

pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty() && s != "0",
        _ => false,
    }
}

fn creator_from_wire(v: &Value) -> Option<Creator> {
    let creator_type = v
        .get("creatorType")
        .and_then(Value::as_str)
        .unwrap_or("author")
        .to_string();
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(name) = field("name") {
        return Some(Creator {
            creator_type,
            first_name: None,
            last_name: None,
            name: Some(name),
        });
    }
    let (first, last) = (field("firstName"), field("lastName"));
    if first.is_none() && last.is_none() {
        return None;
    }
    Some(Creator {
        creator_type,
        first_name: Some(first.unwrap_or_default()),
        last_name: Some(last.unwrap_or_default()),
        name: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../../fixtures/recorded/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn every_recorded_item_parses() {
        let items: Vec<WireObject> = serde_json::from_str(&recorded("items_doc.json")).unwrap();
        assert!(items.len() > 5);
        for w in &items {
            let item = w.to_item();
            assert_eq!(item.item_key.len(), 8);
            assert!(!item.item_type.is_empty());
            assert!(item.version > 0);
        }
    }

    #[test]
    fn single_item_maps_creators_and_omits_empty_fields() {
        let w: WireObject = serde_json::from_str(&recorded("item_doc.json")).unwrap();
        let item = w.to_item();
        assert_eq!(item.item_key, "X42A7DEE");
        assert_eq!(item.item_type, "book");
        assert_eq!(
            item.creators[0],
            Creator {
                creator_type: "author".into(),
                first_name: None,
                last_name: None,
                name: Some("Institute of Physics (Great Britain)".into())
            }
        );
        assert_eq!(item.creators[1].last_name.as_deref(), Some("Craven"));
        let json = serde_json::to_value(&item).unwrap();
        // The recording has `abstractNote`, `url` and `extra` as empty strings: left out.
        for absent in ["abstract", "url", "extra", "doi"] {
            assert!(json.get(absent).is_none(), "{absent} in {json}");
        }
        assert_eq!(json["date"], "1993");
        assert!(json.get("attachments").is_none());
    }

    #[test]
    fn collections_and_attachments_parse() {
        let cs: Vec<WireObject> = serde_json::from_str(&recorded("collections_doc.json")).unwrap();
        let c = cs[0].to_collection();
        assert_eq!(c.collection_key, "N7W92H48");
        assert_eq!(c.name, "LoC");
        assert_eq!(c.parent_key, None);
        assert_eq!(c.num_items, Some(16));
        let one: WireObject = serde_json::from_str(&recorded("collection_doc.json")).unwrap();
        assert_eq!(one.to_collection().parent_key.as_deref(), Some("T3DAUPWW"));
        let a: WireObject = serde_json::from_str(&recorded("attachments_doc.json")).unwrap();
        let a = a.to_attachment();
        assert_eq!(a.attachment_key, "TM8QRS36");
        assert_eq!(a.content_type.as_deref(), Some("text/html"));
    }
}
