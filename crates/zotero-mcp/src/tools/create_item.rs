//! `zotero_create_item`: a new regular item from its type's template, created exactly once.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::{schema, ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_api::model::Creator;
use zotero_api::write::NewItem;

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_create_item",
    title: "Create item",
    description: "Create a new bibliographic item (journal article, book, preprint, …) in the \
                  personal Zotero library and answer its key and version. Search with \
                  zotero_search_items first: this always creates a new item. An input the item \
                  type has no field for (e.g. a DOI on a book) is kept in `extra` as a \
                  'DOI: …' line, and `moved_to_extra` says so. An unknown item_type is refused \
                  with the list of valid types.",
    input_schema,
    data_schema,
    read_only: false,
    idempotent: false,
    open_world: true,
};

const FIELDS: [&str; 9] = [
    "item_type",
    "title",
    "creators",
    "date",
    "doi",
    "url",
    "abstract",
    "tags",
    "extra",
];

fn input_schema() -> Value {
    schema::input(json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_type": { "type": "string", "minLength": 1, "description": "Zotero item type, e.g. journalArticle, book, bookSection, conferencePaper, preprint, report, thesis, webpage" },
            "title": { "type": "string", "minLength": 1 },
            "creators": { "type": "array", "items": { "$ref": "#/$defs/creator" }, "description": "Authors, editors, …; default []" },
            "date": { "type": "string", "description": "As written, e.g. 2017-06-12 or June 2017" },
            "doi": { "type": "string", "description": "e.g. 10.48550/arXiv.1706.03762" },
            "url": { "type": "string" },
            "abstract": { "type": "string" },
            "tags": { "type": "array", "items": { "$ref": "#/$defs/tag" }, "uniqueItems": true, "description": "Tag names; duplicates are dropped" },
            "extra": { "type": "string", "description": "Zotero's Extra field; 'Field: value' lines are read by Zotero" }
        },
        "required": ["item_type", "title"]
    }))
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string" },
            "version": { "type": "integer" },
            "item": schema::item(false),
            "moved_to_extra": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Inputs the item type has no field for, written into extra as 'Field: value' lines"
            }
        },
        "required": ["item_key", "version"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &FIELDS)?;
    let item_type = args.required_string("item_type", 1)?;
    if matches!(item_type.as_str(), "attachment" | "note" | "annotation") {
        return Err(ToolError::invalid(
            "item_type",
            format!(
                "'{item_type}' items cannot be created with this tool; create the regular item, then attach files with zotero_upload_attachment or zotero_attach_arxiv_pdf"
            ),
        ));
    }
    let mut tags = args.string_array("tags", false)?;
    let mut seen = std::collections::HashSet::new();
    tags.retain(|t| seen.insert(t.clone()));
    let new = NewItem {
        item_type,
        title: args.required_string("title", 1)?,
        creators: creators(raw)?,
        date: args.optional_text("date")?,
        doi: args.optional_text("doi")?,
        url: args.optional_text("url")?,
        abstract_note: args.optional_text("abstract")?,
        tags,
        extra: args.optional_text("extra")?,
    };
    let created = ctx.library()?.create_item(&new, &ctx.cancel).await?;
    let mut data = Map::new();
    data.insert("item_key".into(), json!(created.item.item_key));
    data.insert("version".into(), json!(created.item.version));
    if !created.moved_to_extra.is_empty() {
        data.insert("moved_to_extra".into(), json!(created.moved_to_extra));
    }
    data.insert("item".into(), json!(created.item));
    Ok(Value::Object(data))
}

/// `creators` as the seed's `$defs/creator`: `creator_type` and either
/// `first_name` + `last_name` or `name`.
fn creators(raw: Option<&Map<String, Value>>) -> Result<Vec<Creator>, ToolError> {
    let Some(value) = raw.and_then(|m| m.get("creators")).filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Value::Array(list) = value else {
        return Err(ToolError::invalid(
            "creators",
            "'creators' must be an array of objects like {\"creator_type\": \"author\", \"first_name\": \"Ada\", \"last_name\": \"Lovelace\"}",
        ));
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| creator(i, v))
        .collect()
}

fn creator(i: usize, v: &Value) -> Result<Creator, ToolError> {
    let at = |msg: String| ToolError::invalid("creators", format!("'creators[{i}]' {msg}"));
    let Value::Object(m) = v else {
        return Err(at(
            "must be an object with creator_type and first_name/last_name or name".into(),
        ));
    };
    if let Some(k) = m
        .keys()
        .find(|k| !["creator_type", "first_name", "last_name", "name"].contains(&k.as_str()))
    {
        return Err(at(format!(
            "has an unknown field '{k}'; allowed: creator_type, first_name, last_name, name"
        )));
    }
    let text = |k: &str| -> Result<Option<String>, ToolError> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(at(format!("'{k}' must be a string"))),
        }
    };
    let creator_type = text("creator_type")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| at("needs a creator_type, e.g. author or editor".into()))?;
    let (first, last, name) = (text("first_name")?, text("last_name")?, text("name")?);
    match (first, last, name) {
        (None, None, Some(name)) if !name.is_empty() => Ok(Creator {
            creator_type,
            first_name: None,
            last_name: None,
            name: Some(name),
        }),
        (Some(first), Some(last), None) if !last.is_empty() => Ok(Creator {
            creator_type,
            first_name: Some(first),
            last_name: Some(last),
            name: None,
        }),
        (_, _, Some(_)) => Err(at(
            "gives both name and first_name/last_name; use name alone for a single-field name (an organisation), or first_name and last_name".into(),
        )),
        _ => Err(at(
            "needs first_name and a non-empty last_name, or a non-empty name for a single-field name".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creators_follow_the_seed_shape() {
        let ok = json!({"creator_type": "author", "first_name": "Ada", "last_name": "Lovelace"});
        assert_eq!(
            creator(0, &ok).unwrap().last_name.as_deref(),
            Some("Lovelace")
        );
        let org = json!({"creator_type": "author", "name": "CERN"});
        assert_eq!(creator(0, &org).unwrap().name.as_deref(), Some("CERN"));
        for bad in [
            json!({"first_name": "Ada", "last_name": "Lovelace"}),
            json!({"creator_type": "author", "first_name": "Ada"}),
            json!({"creator_type": "author", "name": "X", "last_name": "Y"}),
            json!({"creator_type": "author", "name": ""}),
            json!({"creator_type": "author", "nmae": "X"}),
            json!("Ada Lovelace"),
        ] {
            let e = creator(3, &bad).unwrap_err();
            assert_eq!(e.details["field"], "creators");
            assert!(e.message.contains("creators[3]"), "{}", e.message);
        }
    }
}
