//! Item workflows the tools share with nothing above them: changing an item
//! (`zotero_update_item`): its type checked, each field given mapped onto a field its type
//! has, the collections to add checked, then one version-checked edit.

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::edit::{Edit, EditOutcome, ObjectKind, SetEdit};
use zotero_api::model::Creator;
use zotero_api::{Library, ObjectKey};

use crate::error::ToolError;
use crate::service::edit::edit_one;
use crate::service::ZoteroService;
use crate::text::quote;

/// The named field arguments of `zotero_update_item` and the Zotero fields each may land in
/// (a type-specific field stands in for its base field: `caseName` is a case's title).
const NAMED: [(&str, &[&str]); 6] = [
    ("title", &["title", "caseName", "nameOfAct", "subject"]),
    ("date", &["date", "dateDecided", "dateEnacted", "issueDate"]),
    ("doi", &["DOI"]),
    ("url", &["url"]),
    ("abstract", &["abstractNote"]),
    ("extra", &["extra"]),
];

/// A change of one item, as `zotero_update_item` takes it (checked already).
#[derive(Debug)]
pub struct ItemUpdate<'a> {
    pub key: ObjectKey,
    /// The named field arguments given (`title`, `date`, …), by argument name.
    pub named: Vec<(&'static str, &'a str)>,
    /// Other fields by their Zotero names.
    pub fields: &'a [(String, String)],
    /// The creators that replace the item's.
    pub creators: Option<Vec<Creator>>,
    pub tags: SetEdit,
    /// Collection keys to add and remove.
    pub collections: SetEdit,
    /// The version the caller read.
    pub expect_version: Option<u64>,
    pub dry_run: bool,
}

impl ZoteroService {
    /// Changes one item of `lib` (or, in a dry run, says what would change). Refused
    /// before anything is written, naming the argument: a note or annotation, a field its
    /// type lacks, a field given twice, a collection that is not there.
    pub async fn update_item(
        &self,
        lib: &Library<'_>,
        update: ItemUpdate<'_>,
        cancel: &CancellationToken,
    ) -> Result<EditOutcome, ToolError> {
        let key = update.key;
        let found = lib
            .read_objects(ObjectKind::Item, std::slice::from_ref(&key), cancel)
            .await?;
        let Some(item) = found.get(key.as_str()) else {
            return Err(
                ToolError::not_found(format!("no item with key {key} in this library"))
                    .with_detail("field", "item_key"),
            );
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
        let settable = lib.settable_fields(&item_type, link_mode, cancel).await?;

        let mut edit = Edit::new(key.clone());
        edit.expect_version = update.expect_version;
        for (arg, value) in update.named {
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
        for (name, value) in update.fields {
            let at = format!("fields.{}", quote(name));
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
        if let Some(creators) = &update.creators {
            let wire: Vec<Value> = creators
                .iter()
                .map(zotero_api::write::creator_to_wire)
                .collect();
            edit.set.insert("creators".into(), Value::Array(wire));
        }
        edit.tags = update.tags;
        edit.collections = update.collections;
        if !edit.collections.add.is_empty() {
            // A key that names no collection would be refused by Zotero for the whole item:
            // say which before writing.
            let wanted: Vec<ObjectKey> = edit
                .collections
                .add
                .iter()
                .filter_map(|k| ObjectKey::parse(k).ok())
                .collect();
            let there = lib
                .read_objects(ObjectKind::Collection, &wanted, cancel)
                .await?;
            if let Some(missing) = wanted.iter().find(|k| !there.contains_key(k.as_str())) {
                return Err(ToolError::not_found(format!(
                        "no collection with key {missing} in this library; list them with zotero_list_collections"
                    ),
                )
                .with_detail("field", "add_collections"));
            }
        }

        edit_one(lib, ObjectKind::Item, edit, update.dry_run, cancel).await
    }
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
    let name = quote(name);
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
