//! The Zotero schema (item types, their fields in order, creator types) from
//! `fixtures/schema/templates.json`, the view of it one emulator serves (minus the fields
//! `Emulator::drop_field` removed), and `GET /items/new` templates built from it the way the
//! real server does (`MappingsController::newItem` in zotero/dataserver).

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::Answer;

const SCHEMA_JSON: &str = include_str!("../../../fixtures/schema/templates.json");

/// The link modes of attachments, in the server's numeric order.
pub(crate) const LINK_MODES: [&str; 5] = [
    "imported_file",
    "imported_url",
    "linked_file",
    "linked_url",
    "embedded_image",
];

pub(crate) struct TypeDef {
    pub(crate) name: String,
    /// Fields in schema order.
    pub(crate) fields: Vec<String>,
    /// Valid creator types, the primary one first.
    pub(crate) creator_types: Vec<String>,
}

pub(crate) struct Schema {
    pub(crate) types: Vec<TypeDef>,
    fields: HashSet<String>,
    creator_types: HashSet<String>,
}

impl Schema {
    pub(crate) fn item_type(&self, name: &str) -> Option<&TypeDef> {
        self.types.iter().find(|t| t.name == name)
    }
    /// A field name the server knows (any type, base fields included).
    pub(crate) fn is_field(&self, name: &str) -> bool {
        self.fields.contains(name)
    }
    pub(crate) fn is_creator_type(&self, name: &str) -> bool {
        self.creator_types.contains(name)
    }
}

impl TypeDef {
    pub(crate) fn has_field(&self, f: &str) -> bool {
        self.fields.iter().any(|x| x == f)
    }
    /// A regular item (not a note, attachment or annotation).
    pub(crate) fn is_regular(&self) -> bool {
        !matches!(self.name.as_str(), "note" | "attachment" | "annotation")
    }
}

/// `(item type, field)` pairs one emulator's older schema lacks (`Emulator::drop_field`).
pub(crate) type DroppedFields = HashSet<(String, String)>;

/// The schema as one emulator serves it: the global schema minus its dropped fields. Every
/// decision on whether a field belongs to a type goes through this.
#[derive(Clone, Copy)]
pub(crate) struct SchemaView<'a> {
    schema: &'static Schema,
    dropped: &'a DroppedFields,
}

/// One item type as a [`SchemaView`] serves it.
#[derive(Clone, Copy)]
pub(crate) struct ItemType<'a> {
    def: &'static TypeDef,
    dropped: &'a DroppedFields,
}

impl<'a> SchemaView<'a> {
    pub(crate) fn new(dropped: &'a DroppedFields) -> SchemaView<'a> {
        SchemaView {
            schema: schema(),
            dropped,
        }
    }
    pub(crate) fn item_type(&self, name: &str) -> Option<ItemType<'a>> {
        let def = self.schema.item_type(name)?;
        Some(ItemType {
            def,
            dropped: self.dropped,
        })
    }
    /// A field name the server knows: a schema field not dropped from every type that had it.
    pub(crate) fn is_field(&self, name: &str) -> bool {
        if !self.schema.is_field(name) {
            return false;
        }
        let mut holders = self
            .schema
            .types
            .iter()
            .filter(|t| t.has_field(name))
            .peekable();
        // A base field no type lists directly (only its type-specific fields) stays known.
        holders.peek().is_none() || holders.any(|t| !is_dropped(self.dropped, &t.name, name))
    }
}

fn is_dropped(dropped: &DroppedFields, item_type: &str, field: &str) -> bool {
    !dropped.is_empty() && dropped.contains(&(item_type.to_string(), field.to_string()))
}

impl<'a> ItemType<'a> {
    pub(crate) fn name(&self) -> &'static str {
        &self.def.name
    }
    /// Fields in schema order.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &'static str> + 'a {
        let (def, dropped) = (self.def, self.dropped);
        def.fields
            .iter()
            .map(String::as_str)
            .filter(move |f| !is_dropped(dropped, &def.name, f))
    }
    pub(crate) fn has_field(&self, f: &str) -> bool {
        self.def.has_field(f) && !is_dropped(self.dropped, &self.def.name, f)
    }
    /// Valid creator types, the primary one first.
    pub(crate) fn creator_types(&self) -> &'static [String] {
        &self.def.creator_types
    }
    pub(crate) fn primary_creator_type(&self) -> &'static str {
        self.creator_types()
            .first()
            .map(String::as_str)
            .unwrap_or("author")
    }
    pub(crate) fn is_regular(&self) -> bool {
        self.def.is_regular()
    }
}

/// The schema, parsed once.
pub(crate) fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        let v: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        };
        let types = v["itemTypes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| TypeDef {
                name: t["itemType"].as_str().unwrap().to_string(),
                fields: strings(&t["fields"]),
                creator_types: strings(&t["creatorTypes"]),
            })
            .collect();
        Schema {
            types,
            fields: strings(&v["fields"]).into_iter().collect(),
            creator_types: strings(&v["creatorTypes"]).into_iter().collect(),
        }
    })
}

/// JSON text of an object whose keys keep the given order (serde_json's map would sort them).
pub(crate) fn ordered_json(pairs: &[(&str, Value)]) -> String {
    let mut out = String::from("{\n");
    for (i, (k, v)) in pairs.iter().enumerate() {
        out.push_str("    ");
        out.push_str(&serde_json::to_string(k).unwrap());
        out.push_str(": ");
        out.push_str(&serde_json::to_string(v).unwrap());
        if i + 1 < pairs.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push('}');
    out
}

/// `GET /items/new?itemType=...[&linkMode=...|&annotationType=...]`
pub(crate) fn new_item(view: SchemaView, query: &[(String, String)]) -> Answer {
    // PHP `empty()`: a missing, empty or "0" parameter counts as not provided.
    let param = |k: &str| {
        query
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty() && *v != "0")
    };
    let Some(item_type) = param("itemType") else {
        return Answer::text(400, "'itemType' not provided");
    };
    let mut link_mode = "";
    let mut annotation_type = "";
    if item_type == "attachment" {
        let Some(lm) = param("linkMode") else {
            return Answer::text(400, "linkMode required for itemType=attachment");
        };
        if !LINK_MODES.contains(&lm) {
            return Answer::text(400, &format!("Invalid linkMode '{lm}'"));
        }
        link_mode = lm;
    } else if item_type == "annotation" {
        let Some(at) = param("annotationType") else {
            return Answer::text(400, "annotationType required for itemType=annotation");
        };
        if !matches!(
            at,
            "highlight" | "note" | "image" | "ink" | "underline" | "text"
        ) {
            return Answer::text(400, &format!("Invalid annotationType '{at}'"));
        }
        annotation_type = at;
    }
    let Some(t) = view.item_type(item_type) else {
        return Answer::text(400, &format!("Invalid item type '{item_type}'"));
    };
    let body = template(t, link_mode, annotation_type);
    Answer::raw(200, body.into_bytes(), "application/json")
}

/// The template JSON text, keys in the real server's order.
fn template(t: ItemType, link_mode: &str, annotation_type: &str) -> String {
    let name = t.name();
    let attachment = name == "attachment";
    let embedded = attachment && link_mode == "embedded_image";
    let mut p: Vec<(&str, Value)> = vec![("itemType", json!(name))];
    if attachment {
        p.push(("linkMode", json!(link_mode)));
    }
    let mut first = true;
    for f in t.fields() {
        if attachment && f == "url" && !link_mode.ends_with("_url") {
            continue;
        }
        p.push((f, json!("")));
        if first && t.is_regular() {
            let primary = t.primary_creator_type();
            p.push((
                "creators",
                json!([{"creatorType": primary, "firstName": "", "lastName": ""}]),
            ));
            first = false;
        }
    }
    if embedded || name == "annotation" {
        p.push(("parentItem", json!("")));
    }
    if name == "annotation" {
        p.push(("annotationType", json!(annotation_type)));
        if matches!(annotation_type, "highlight" | "underline") {
            p.push(("annotationText", json!("")));
        }
        p.push(("annotationComment", json!("")));
        p.push(("annotationColor", json!("")));
        p.push(("annotationPageLabel", json!("")));
        p.push(("annotationSortIndex", json!("00000|000000|00000")));
        let mut pos = if annotation_type == "ink" {
            json!({"pageIndex": 0, "paths": [], "width": 2})
        } else {
            json!({"pageIndex": 0, "rects": []})
        };
        if annotation_type == "image" {
            pos["width"] = json!(0);
            pos["height"] = json!(0);
        }
        p.push(("annotationPosition", pos));
    }
    if name == "note" || attachment {
        p.push(("note", json!("")));
    }
    p.push(("tags", json!([])));
    p.push(("collections", json!([])));
    p.push(("relations", json!({})));
    if attachment {
        p.push(("contentType", json!("")));
        p.push(("charset", json!("")));
        if link_mode == "linked_file" {
            p.push(("path", json!("")));
        }
        if link_mode.starts_with("imported_") || embedded {
            p.push(("filename", json!("")));
            p.push(("md5", Value::Null));
            p.push(("mtime", Value::Null));
        }
        if embedded {
            let gone = [
                "title",
                "url",
                "accessDate",
                "tags",
                "collections",
                "relations",
                "note",
                "charset",
            ];
            p.retain(|(k, _)| !gone.contains(k));
        }
    } else if name == "annotation" {
        p.retain(|(k, _)| *k != "collections" && *k != "relations");
    }
    ordered_json(&p)
}
