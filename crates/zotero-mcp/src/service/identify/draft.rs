//! A service's metadata as the Zotero item to create, and the identifiers of the work it
//! describes (to find the same work in the library or earlier in the call).

use serde_json::Value;
use zotero_api::identify::Draft;
use zotero_api::model::Creator;
use zotero_metadata::identifiers::Identifier;
use zotero_metadata::work_ids::WorkIds;
use zotero_metadata::zotero_item::{CreatorName, ZoteroItemDraft};

use crate::service::time::UtcTime;

/// The identifiers of the work: the one given, and those the metadata carries.
pub(super) fn work_ids(id: &Identifier, draft: &ZoteroItemDraft) -> WorkIds {
    let mut ids = WorkIds::default();
    ids.add(id);
    let mut data = serde_json::Map::new();
    for (field, value) in &draft.fields {
        data.insert(field.clone(), Value::from(value.as_str()));
    }
    data.insert("extra".into(), Value::from(draft.extra_lines.join("\n")));
    let carried = WorkIds::of_item(&data);
    ids.doi = ids.doi.or(carried.doi);
    ids.arxiv = ids.arxiv.or(carried.arxiv);
    ids.pmid = ids.pmid.or(carried.pmid);
    for i in carried.isbn13 {
        if !ids.isbn13.contains(&i) {
            ids.isbn13.push(i);
        }
    }
    ids
}

/// The item to create from the metadata, in `collections`.
pub(super) fn to_draft(d: &ZoteroItemDraft, collections: Vec<String>) -> Draft {
    let mut fields = d.fields.clone();
    // As Zotero's translators do for what they fetched from the web: when it was fetched.
    if fields.contains_key("url") && !fields.contains_key("accessDate") {
        fields.insert("accessDate".into(), UtcTime::now().zotero());
    }
    if !d.extra_lines.is_empty() {
        fields.insert("extra".into(), d.extra_lines.join("\n"));
    }
    Draft {
        item_type: d.item_type.clone(),
        fields,
        creators: d
            .creators
            .iter()
            .map(|c| match &c.name {
                CreatorName::Split {
                    first_name,
                    last_name,
                } => Creator {
                    creator_type: c.creator_type.clone(),
                    first_name: Some(first_name.clone()),
                    last_name: Some(last_name.clone()),
                    name: None,
                },
                CreatorName::Single { name } => Creator {
                    creator_type: c.creator_type.clone(),
                    first_name: None,
                    last_name: None,
                    name: Some(name.clone()),
                },
            })
            .collect(),
        tags: d.tags.clone(),
        collections,
    }
}
