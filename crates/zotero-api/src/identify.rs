//! Adding a work found by its identifier: is it in the library already, and creating it
//! from a draft of fields, exactly once.
//!
//! The web API cannot search fields such as `DOI` (its quick search covers titles,
//! creators, years and, in `everything` mode, full text and notes), so candidates are found
//! by the work's title words and by the identifiers themselves; the caller decides which
//! candidate is the work (zotero-metadata's `WorkIds` compares identifiers).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::items::{ItemFilter, ItemListing, QuickSearchMode};
use crate::model::Creator;
use crate::write::creator_to_wire;

/// A new item drafted from a service's metadata.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    pub item_type: String,
    /// Zotero field names and values; a field the type's template lacks is left out and
    /// reported.
    pub fields: BTreeMap<String, String>,
    pub creators: Vec<Creator>,
    pub tags: Vec<String>,
    pub collections: Vec<String>,
}

/// What creating a draft did.
#[derive(Debug, Clone)]
pub struct CreatedDraft {
    pub key: String,
    pub version: u64,
    pub data: Map<String, Value>,
    /// Fields of the draft the item type has no place for.
    pub left_out: Vec<String>,
}

/// How many candidates each search reads.
const CANDIDATES: u32 = 50;
/// How many title words a search uses (Zotero ANDs them).
const TITLE_WORDS: usize = 8;

impl Library<'_> {
    /// An item of this library (not in the trash) that `is_the_work` accepts, among the
    /// candidates a quick search finds by the title's words and by each identifier:
    /// `(key, title)`.
    pub async fn find_same_work(
        &self,
        title: &str,
        identifiers: &[String],
        is_the_work: impl Fn(&Map<String, Value>) -> bool,
        cancel: &CancellationToken,
    ) -> Result<Option<(String, String)>, ZoteroError> {
        let words: Vec<&str> = title
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2)
            .take(TITLE_WORDS)
            .collect();
        let mut queries: Vec<(String, QuickSearchMode)> = Vec::new();
        if !words.is_empty() {
            queries.push((words.join(" "), QuickSearchMode::TitleCreatorYear));
        }
        for id in identifiers {
            queries.push((id.clone(), QuickSearchMode::Everything));
        }
        for (query, qmode) in queries {
            let listing = ItemListing {
                filter: ItemFilter {
                    query: Some(query),
                    qmode,
                    ..ItemFilter::default()
                },
                sort: "dateModified".into(),
                direction: None,
                limit: CANDIDATES,
                start: 0,
            };
            let page = self.list_items_wire(&listing, cancel).await?;
            if let Some(object) = page.into_iter().find(|o| is_the_work(&o.data)) {
                let key = object.key.clone().unwrap_or_default();
                let title = object
                    .data
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                return Ok(Some((key, title)));
            }
        }
        Ok(None)
    }

    /// Creates the draft from its type's template, exactly once (own key and write token).
    pub async fn create_draft(
        &self,
        draft: &Draft,
        cancel: &CancellationToken,
    ) -> Result<CreatedDraft, ZoteroError> {
        self.require_write(false, cancel).await?;
        let mut object = self.client.template(&draft.item_type, None, cancel).await?;
        let mut left_out = Vec::new();
        for (field, value) in &draft.fields {
            let settable = object.contains_key(field)
                && !matches!(
                    field.as_str(),
                    "itemType" | "creators" | "tags" | "collections" | "relations"
                );
            if settable {
                object.insert(field.clone(), Value::from(value.as_str()));
            } else {
                left_out.push(field.clone());
            }
        }
        object.insert(
            "creators".into(),
            Value::Array(draft.creators.iter().map(creator_to_wire).collect()),
        );
        object.insert(
            "tags".into(),
            Value::Array(draft.tags.iter().map(|t| json!({ "tag": t })).collect()),
        );
        object.insert("collections".into(), json!(draft.collections));
        let wire = self.create_object(object, cancel).await?;
        Ok(CreatedDraft {
            key: wire.key.clone().unwrap_or_default(),
            version: wire.version.unwrap_or(0),
            data: wire.data,
            left_out,
        })
    }
}
