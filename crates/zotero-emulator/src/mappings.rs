//! What the server says about its schema: `GET /itemTypes` and `GET /itemFields`
//! (`MappingsController::mappings`, `Zotero_ItemTypes::getAll` in zotero/dataserver), and the
//! per-emulator "older schema" option `Emulator::drop_field`.

use serde_json::{json, Value};

use super::library::ITEM_FIELDS_JSON;
use super::schema::{schema, SchemaView};
use super::{Answer, Emulator, State};

/// The en-US names of the item types: `locales.en-US.itemTypes` of the zotero-schema commit
/// `fixtures/schema/templates.json` comes from (5eedf44, schema version 41), which the real
/// server answers with (`Zotero_ItemTypes::getLocalizedString`).
const LABELS: &[(&str, &str)] = &[
    ("annotation", "Annotation"),
    ("artwork", "Artwork"),
    ("attachment", "Attachment"),
    ("audioRecording", "Audio Recording"),
    ("bill", "Bill"),
    ("blogPost", "Blog Post"),
    ("book", "Book"),
    ("bookSection", "Book Section"),
    ("case", "Case"),
    ("computerProgram", "Software"),
    ("conferencePaper", "Conference Paper"),
    ("dataset", "Dataset"),
    ("dictionaryEntry", "Dictionary Entry"),
    ("document", "Document"),
    ("email", "E-mail"),
    ("encyclopediaArticle", "Encyclopedia Article"),
    ("film", "Film"),
    ("forumPost", "Forum Post"),
    ("hearing", "Hearing"),
    ("instantMessage", "Instant Message"),
    ("interview", "Interview"),
    ("journalArticle", "Journal Article"),
    ("letter", "Letter"),
    ("magazineArticle", "Magazine Article"),
    ("manuscript", "Manuscript"),
    ("map", "Map"),
    ("newspaperArticle", "Newspaper Article"),
    ("note", "Note"),
    ("patent", "Patent"),
    ("podcast", "Podcast"),
    ("preprint", "Preprint"),
    ("presentation", "Presentation"),
    ("radioBroadcast", "Radio Broadcast"),
    ("report", "Report"),
    ("standard", "Standard"),
    ("statute", "Statute"),
    ("thesis", "Thesis"),
    ("tvBroadcast", "TV Broadcast"),
    ("videoRecording", "Video Recording"),
    ("webpage", "Web Page"),
];

/// The en-US name of an item type; for a type the table lacks (a newer schema), the words of
/// its camelCase name ("legalCommentary" -> "Legal Commentary").
pub(crate) fn localized(item_type: &str) -> String {
    if let Some((_, l)) = LABELS.iter().find(|(t, _)| *t == item_type) {
        return (*l).to_string();
    }
    let mut out = String::new();
    for (i, c) in item_type.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else {
            if c.is_uppercase() {
                out.push(' ');
            }
            out.push(c);
        }
    }
    out
}

/// The item types `GET /itemTypes` lists, in its order: every type but `attachment` and
/// `annotation`, sorted by en-US name with `strcmp` ("TV Broadcast" before "Thesis").
pub(crate) fn listed_item_types() -> Vec<(&'static str, String)> {
    let mut rows: Vec<(&str, String)> = schema()
        .types
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !matches!(*t, "attachment" | "annotation"))
        .map(|t| (t, localized(t)))
        .collect();
    rows.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    rows
}

/// `GET /itemTypes`
pub(crate) fn item_types() -> Answer {
    let rows: Vec<Value> = listed_item_types()
        .into_iter()
        .map(|(t, l)| json!({"itemType": t, "localized": l}))
        .collect();
    Answer::json(&Value::Array(rows))
}

/// `GET /itemFields`: the recorded list, minus fields this server's schema no longer has.
pub(crate) fn item_fields(view: SchemaView) -> Answer {
    let mut rows: Vec<Value> = serde_json::from_str(ITEM_FIELDS_JSON).unwrap();
    rows.retain(|r| view.is_field(r["field"].as_str().unwrap_or("")));
    Answer::json(&Value::Array(rows))
}

impl State {
    /// The schema this emulator serves.
    pub(crate) fn schema(&self) -> SchemaView<'_> {
        SchemaView::new(&self.dropped_fields)
    }
}

impl Emulator {
    /// Models a server whose older schema lacks `field` on `item_type` (older Zotero schemas
    /// had no `DOI` on `book`), on this emulator only: templates leave it out, writes that
    /// set it fail with `'DOI' is not a valid field for type 'book'`, stored items of the type
    /// lose it, and a field dropped from every type that had it is no field at all
    /// (`Invalid property`, gone from `/itemFields`). Panics if the type lacks the field.
    pub fn drop_field(&self, item_type: &str, field: &str) {
        let has = schema()
            .item_type(item_type)
            .is_some_and(|t| t.has_field(field));
        assert!(
            has,
            "the schema has no field '{field}' on type '{item_type}'"
        );
        let mut st = self.state.lock().unwrap();
        st.dropped_fields
            .insert((item_type.to_string(), field.to_string()));
        for item in st.libs.values_mut().flat_map(|l| l.items.iter_mut()) {
            if item["data"]["itemType"] == item_type {
                if let Some(d) = item["data"].as_object_mut() {
                    d.remove(field);
                }
            }
        }
    }
}
