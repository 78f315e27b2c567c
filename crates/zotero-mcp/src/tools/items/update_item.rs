//! `zotero_update_item`: change an item's fields, creators, tags and collections, checked
//! against its version and merged with what was changed in Zotero meanwhile (zotero-api's
//! edit engine).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::envelope::{ErrorCode, ToolError};
use crate::tools::changes::{single, Change, ObjectResult, Status};
use crate::tools::params::{
    library, limits, FieldMap, FieldText, LibraryParam, List, ObjectKey, Tags, Version,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::edit::{Edit, ObjectKind, SetEdit};

pub struct UpdateItem;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateItemParams {
    /// The item's key
    pub item_key: ObjectKey,
    /// New title ("" clears a field)
    pub title: Option<FieldText>,
    /// New date, as written
    pub date: Option<FieldText>,
    /// New DOI
    pub doi: Option<FieldText>,
    /// New URL
    pub url: Option<FieldText>,
    /// New abstract
    #[serde(rename = "abstract")]
    pub abstract_note: Option<FieldText>,
    /// New Extra field
    pub extra: Option<FieldText>,
    /// Any other field of the item's type by its Zotero name, e.g. {"volume": "12", "pages": "1-9"}
    pub fields: Option<FieldMap>,
    /// Replace the creators with these
    pub creators: Option<List<crate::tools::params::Creator, { limits::CREATORS }>>,
    /// Tags to add (what the item has is kept)
    pub add_tags: Option<Tags>,
    /// Tags to remove
    pub remove_tags: Option<Tags>,
    /// Replace the tags with these (tags added in Zotero meanwhile are kept); not with add_tags/remove_tags
    pub tags: Option<Tags>,
    /// Keys of collections to put the item in
    pub add_collections: Option<List<ObjectKey, { limits::BATCH }>>,
    /// Keys of collections to take it out of (the item stays in the library)
    pub remove_collections: Option<List<ObjectKey, { limits::BATCH }>>,
    /// The version you read: refuse if the item changed since
    pub version: Option<Version>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Answer exactly what would change (fields, before → after) without writing
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdateItemData {
    /// The item's key
    pub item_key: String,
    /// changed, unchanged (already as asked) or would_change (dry run)
    pub status: Status,
    /// Its version after this call
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Each field before → after
    pub changes: Vec<Change>,
    /// Nothing was written
    pub dry_run: bool,
    /// Opens the item in the Zotero desktop app
    pub zotero_url: String,
}

/// The seed's argument names and the Zotero fields each may land in (a type-specific field
/// stands in for its base field: `caseName` is a case's title).
const NAMED: [(&str, &[&str]); 6] = [
    ("title", &["title", "caseName", "nameOfAct", "subject"]),
    ("date", &["date", "dateDecided", "dateEnacted", "issueDate"]),
    ("doi", &["DOI"]),
    ("url", &["url"]),
    ("abstract", &["abstractNote"]),
    ("extra", &["extra"]),
];

impl ZoteroTool for UpdateItem {
    const NAME: &'static str = "zotero_update_item";
    const TITLE: &'static str = "Update item";
    const DESCRIPTION: &'static str = "Change an item: fields (or any field by its Zotero name \
        in fields), creators (replaced), tags (add_tags/remove_tags, or tags to replace) and \
        collections. Version-checked: a field you set that changed in Zotero meanwhile stops the \
        write and the error names both values. Zotero keeps no old values: changes answers \
        before → after. dry_run previews.";
    const HINTS: Hints = Hints::CHANGE;
    const SET: ToolSet = ToolSet::Write;
    type Params = UpdateItemParams;
    type Data = UpdateItemData;

    fn validate(p: &UpdateItemParams) -> Result<(), ToolError> {
        if p.tags.is_some() && (p.add_tags.is_some() || p.remove_tags.is_some()) {
            return Err(ToolError::invalid(
                "tags",
                "give 'tags' (replace) or 'add_tags'/'remove_tags', not both",
            ));
        }
        if let (Some(add), Some(remove)) = (&p.add_tags, &p.remove_tags) {
            let remove = remove.clone().into_strings();
            if let Some(both) = add
                .clone()
                .into_strings()
                .iter()
                .find(|t| remove.contains(t))
            {
                return Err(ToolError::invalid(
                    "remove_tags",
                    format!(
                        "the tag '{}' is in both add_tags and remove_tags",
                        crate::tools::params::quote(both)
                    ),
                ));
            }
        }
        if let (Some(add), Some(remove)) = (&p.add_collections, &p.remove_collections) {
            if let Some(both) = add.iter().find(|k| remove.iter().any(|r| r == *k)) {
                return Err(ToolError::invalid(
                    "remove_collections",
                    format!(
                        "the collection {both} is in both add_collections and remove_collections"
                    ),
                ));
            }
        }
        if let Some(creators) = &p.creators {
            crate::tools::create_item::creators(creators)?;
        }
        let nothing = named_values(p).is_empty()
            && p.fields.as_ref().is_none_or(FieldMap::is_empty)
            && p.creators.is_none()
            && p.add_tags.is_none()
            && p.remove_tags.is_none()
            && p.tags.is_none()
            && p.add_collections.is_none()
            && p.remove_collections.is_none();
        if nothing {
            return Err(ToolError::invalid(
                "fields",
                "nothing to change: give fields, creators, tags or collections",
            ));
        }
        Ok(())
    }

    async fn run(p: UpdateItemParams, ctx: &ToolContext) -> Result<UpdateItemData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let key = p.item_key.key().clone();
        let found = lib
            .read_objects(ObjectKind::Item, std::slice::from_ref(&key), &ctx.cancel)
            .await?;
        let Some(item) = found.get(key.as_str()) else {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!("no item with key {key} in this library"),
            )
            .with_detail("field", "item_key"));
        };
        let item_type = item
            .data
            .get("itemType")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match item_type.as_str() {
            "note" => {
                return Err(ToolError::invalid(
                    "item_key",
                    format!("{key} is a note: change its text with zotero_update_note"),
                ))
            }
            "annotation" => {
                return Err(ToolError::invalid(
                    "item_key",
                    format!("{key} is an annotation, which this server does not change"),
                ))
            }
            _ => {}
        }
        let link_mode = item.data.get("linkMode").and_then(Value::as_str);
        let settable = lib
            .settable_fields(&item_type, link_mode, &ctx.cancel)
            .await?;

        let mut edit = Edit::new(key.clone());
        edit.expect_version = p.version.map(Version::get);
        for (arg, value) in named_values(&p) {
            let targets = NAMED
                .iter()
                .find(|(name, _)| *name == arg)
                .map(|(_, t)| *t)
                .unwrap_or_default();
            let Some(field) = targets.iter().find(|f| settable.iter().any(|s| s == *f)) else {
                return Err(ToolError::invalid(
                    arg,
                    format!(
                        "an item of type {item_type} has no field for '{arg}'; its fields: {}",
                        settable.join(", ")
                    ),
                ));
            };
            edit.set.insert((*field).to_string(), Value::from(value));
        }
        if let Some(fields) = &p.fields {
            for (name, value) in fields.entries() {
                let at = format!("fields.{}", crate::tools::params::quote(name));
                if !settable.iter().any(|s| s == name) {
                    return Err(ToolError::invalid(
                        &at,
                        not_settable(name, &item_type, &settable),
                    ));
                }
                if edit.set.contains_key(name) {
                    return Err(ToolError::invalid(
                        &at,
                        format!("'{name}' is given twice (also as a named argument)"),
                    ));
                }
                edit.set.insert(name.clone(), Value::from(value.as_str()));
            }
        }
        if let Some(creators) = &p.creators {
            let wire: Vec<Value> = crate::tools::create_item::creators(creators)?
                .iter()
                .map(zotero_api::write::creator_to_wire)
                .collect();
            edit.set.insert("creators".into(), Value::Array(wire));
        }
        edit.tags = SetEdit {
            add: p.add_tags.map(Tags::into_strings).unwrap_or_default(),
            remove: p.remove_tags.map(Tags::into_strings).unwrap_or_default(),
            replace: p.tags.map(Tags::into_strings),
            ..SetEdit::default()
        };
        let keys = |l: Option<List<ObjectKey, { limits::BATCH }>>| -> Vec<String> {
            l.map(|l| l.iter().map(|k| k.to_string()).collect())
                .unwrap_or_default()
        };
        edit.collections = SetEdit {
            add: keys(p.add_collections),
            remove: keys(p.remove_collections),
            ..SetEdit::default()
        };
        if !edit.collections.add.is_empty() {
            // A key that names no collection would be refused by Zotero for the whole item:
            // say which before writing.
            let wanted: Vec<zotero_api::ObjectKey> = edit
                .collections
                .add
                .iter()
                .filter_map(|k| zotero_api::ObjectKey::parse(k).ok())
                .collect();
            let there = lib
                .read_objects(ObjectKind::Collection, &wanted, &ctx.cancel)
                .await?;
            if let Some(missing) = wanted.iter().find(|k| !there.contains_key(k.as_str())) {
                return Err(ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "no collection with key {missing} in this library; list them with zotero_list_collections"
                    ),
                )
                .with_detail("field", "add_collections"));
            }
        }

        let outcomes = lib
            .edit_objects(ObjectKind::Item, vec![edit], p.dry_run, &ctx.cancel, None)
            .await?;
        let Some(outcome) = outcomes.into_iter().next() else {
            return Err(ToolError::new(
                ErrorCode::Internal,
                "the edit answered no outcome",
            ));
        };
        let result = single(
            ObjectResult::from_outcome(ObjectKind::Item, outcome),
            "item",
        )?;
        Ok(UpdateItemData {
            item_key: result.key,
            status: result.status,
            version: result.version,
            changes: result.changes,
            dry_run: p.dry_run,
            zotero_url: lib.name().zotero_url(&key),
        })
    }
}

/// The named field arguments given, by their argument names.
fn named_values(p: &UpdateItemParams) -> Vec<(&'static str, &str)> {
    let given: [(&'static str, &Option<FieldText>); 6] = [
        ("title", &p.title),
        ("date", &p.date),
        ("doi", &p.doi),
        ("url", &p.url),
        ("abstract", &p.abstract_note),
        ("extra", &p.extra),
    ];
    given
        .into_iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| (name, v.as_str())))
        .collect()
}

/// Why `name` cannot be set here, and what to use instead.
fn not_settable(name: &str, item_type: &str, settable: &[String]) -> String {
    let instead = match name {
        "creators" => Some("the creators argument"),
        "tags" => Some("add_tags, remove_tags or tags"),
        "collections" => Some("add_collections or remove_collections"),
        "deleted" => Some("zotero_trash_items"),
        "note" => Some("zotero_update_note"),
        "itemType" => Some("a new item (the type cannot be changed here)"),
        "key" | "version" | "dateAdded" | "dateModified" => Some("nothing: Zotero sets it"),
        _ => None,
    };
    let name = crate::tools::params::quote(name);
    match instead {
        Some(i) => format!("'{name}' cannot be set in fields; use {i}"),
        None => {
            let mut fields: Vec<&str> = settable.iter().map(String::as_str).collect();
            fields.sort_unstable();
            format!(
                "'{name}' is not a field of item type {item_type}; its fields: {}",
                fields.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_that_cannot_be_set_says_what_to_use() {
        let settable = vec!["title".to_string(), "volume".to_string()];
        assert!(not_settable("tags", "book", &settable).contains("add_tags"));
        assert!(not_settable("deleted", "book", &settable).contains("zotero_trash_items"));
        let msg = not_settable("volumen", "book", &settable);
        assert!(msg.contains("not a field of item type book"), "{msg}");
        assert!(msg.contains("title, volume"), "{msg}");
    }
}
