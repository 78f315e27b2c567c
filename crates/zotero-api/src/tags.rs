//! Tags (`zotero_list_tags`): those of the library's items, of one collection's items, or
//! of the items a filter matches, each with its type and how many items carry it.
//!
//! Every variant is one request to `…/items/tags` (`TagsController` "tags within items":
//! the item filters travel as `itemQ`, `itemQMode`, `itemTag`, `itemType`), which both the
//! web API and the desktop app serve. The desktop's `/tags` ignores `q`, so it is not used.

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::items::{Direction, ItemFilter};
use crate::response::{encode_query, parse_page_of, unexpected, Page};

/// How tags are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSort {
    /// By name, case-insensitively (`sort=title`).
    Name,
    /// By how many of the items carry the tag (`sort=numItems`).
    Count,
}

/// Which tags, in which order, which page.
#[derive(Debug, Clone, PartialEq)]
pub struct TagListing {
    /// The items whose tags are listed: the library's (not in the trash), narrowed by
    /// `collection`, `query`, `qmode`, `tags`, `exclude_tags`, `item_types`. The other
    /// fields of the filter are not used.
    pub items: ItemFilter,
    /// Only tags whose name contains this (`q`, `qmode=contains`).
    pub contains: Option<String>,
    pub sort: TagSort,
    pub direction: Direction,
    pub limit: u32,
    pub start: u64,
}

/// A tag: a name with a type; the same name with the other type is another tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEntry {
    pub name: String,
    /// 0: added by a person, 1: added automatically (imported, feeds).
    pub tag_type: u64,
    /// Items of the whole library carrying it (Zotero counts there whatever the filter).
    pub num_items: Option<u64>,
}

#[derive(Deserialize)]
struct WireTag {
    #[serde(default)]
    tag: String,
    #[serde(default)]
    meta: Map<String, Value>,
}

impl WireTag {
    fn entry(self) -> TagEntry {
        TagEntry {
            name: self.tag,
            tag_type: self.meta.get("type").and_then(Value::as_u64).unwrap_or(0),
            num_items: self.meta.get("numItems").and_then(Value::as_u64),
        }
    }
}

impl TagListing {
    fn request(&self) -> ApiRequest {
        let path = match &self.items.collection {
            Some(key) => format!("/collections/{key}/items/tags"),
            None => "/items/tags".to_string(),
        };
        // The item filters under the names `TagsController` proxies to the item search.
        let mut query: Vec<(&str, String)> = self
            .items
            .params()
            .into_iter()
            .filter_map(|(k, v)| match k {
                "q" => Some(("itemQ", v)),
                "qmode" => Some(("itemQMode", v)),
                "tag" => Some(("itemTag", v)),
                "itemType" => Some(("itemType", v)),
                _ => None,
            })
            .collect();
        if let Some(c) = &self.contains {
            query.push(("q", c.clone()));
            query.push(("qmode", "contains".into()));
        }
        let sort = match self.sort {
            TagSort::Name => "title",
            TagSort::Count => "numItems",
        };
        query.extend([
            ("sort", sort.to_string()),
            ("direction", self.direction.as_str().to_string()),
            ("format", "json".to_string()),
            ("limit", self.limit.to_string()),
            ("start", self.start.to_string()),
        ]);
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ApiRequest::get(format!("{path}?{}", encode_query(&pairs)))
    }
}

impl Library<'_> {
    /// A page of the tags `listing` describes.
    pub async fn list_tags(
        &self,
        listing: &TagListing,
        cancel: &CancellationToken,
    ) -> Result<Page<TagEntry>, ZoteroError> {
        self.check_item_types(&listing.items.item_types, cancel)
            .await?;
        let req = listing.request();
        let resp = self
            .send_in_collection(&req, listing.items.collection.as_ref(), cancel)
            .await?;
        if resp.status != 200 {
            return Err(unexpected(&resp, "list tags"));
        }
        parse_page_of(&resp, "list tags", WireTag::entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::{ItemTypeFilter, QuickSearchMode};
    use crate::library::ObjectKey;

    #[test]
    fn item_filters_travel_under_their_item_names() {
        let listing = TagListing {
            items: ItemFilter {
                query: Some("deep".into()),
                qmode: QuickSearchMode::Everything,
                tags: vec!["nlp".into()],
                item_types: ItemTypeFilter {
                    types: vec!["book".into()],
                    exclude: false,
                },
                collection: Some(ObjectKey::parse("ABCD2345").unwrap()),
                ..ItemFilter::default()
            },
            contains: Some("ne ur".into()),
            sort: TagSort::Count,
            direction: Direction::Desc,
            limit: 10,
            start: 20,
        };
        assert_eq!(
            listing.request().path,
            "/collections/ABCD2345/items/tags?itemQ=deep&itemQMode=everything&itemTag=nlp\
             &itemType=book&q=ne%20ur&qmode=contains&sort=numItems&direction=desc\
             &format=json&limit=10&start=20"
        );
    }

    #[test]
    fn recorded_tags_parse_with_type_and_count() {
        let body = std::fs::read_to_string(format!(
            "{}/../../fixtures/recorded/tags_doc.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let tags: Vec<WireTag> = serde_json::from_str(&body).unwrap();
        let first = tags.into_iter().next().unwrap().entry();
        assert_eq!(
            first,
            TagEntry {
                name: "Community / Economic Development".into(),
                tag_type: 1,
                num_items: Some(1)
            }
        );
    }
}
