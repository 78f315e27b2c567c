//! `completion/complete`: item and collection keys for what the user typed so far.

use zotero_api::LibraryRef;

use super::list::list_items_params;
use crate::error::ToolError;
use crate::tools::collections::list_collections::{ListCollections, ListCollectionsParams};
use crate::tools::items::list_items::{ListItems, ListItemsParams};
use crate::tools::params::{LibraryParam, Limit, Start};
use crate::tools::{self, ToolContext};

/// What `completion/complete` completes: an item key or a collection key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completable {
    Item,
    Collection,
}

/// How many objects completion looks through: the most recently modified.
pub const COMPLETION_POOL: u64 = 100;
/// The most values a completion answers.
pub const COMPLETION_VALUES: usize = 20;

/// Keys of `library` for a value typed so far: of the 100 most recently modified top-level
/// items (or the first 100 collections), those whose key starts with `typed` or whose title
/// (name) contains it, ignoring case. One request.
pub async fn complete(
    what: Completable,
    typed: &str,
    library: LibraryRef,
    ctx: &ToolContext,
) -> Result<Vec<String>, ToolError> {
    let in_library = Some(LibraryParam(library));
    let pool = Limit::of::<COMPLETION_POOL>();
    // Each candidate as (key, title or name).
    let candidates: Vec<(String, String)> = match what {
        Completable::Item => {
            let params = ListItemsParams {
                library: in_library,
                limit: pool,
                ..list_items_params()
            };
            let data = tools::run::<ListItems>(params, ctx).await?;
            data.items
                .into_iter()
                .map(|i| (i.item_key, i.title))
                .collect()
        }
        Completable::Collection => {
            let params = ListCollectionsParams {
                limit: pool,
                start: Start::default(),
                parent_key: None,
                top_only: None,
                tree: None,
                library: in_library,
            };
            let data = tools::run::<ListCollections>(params, ctx).await?;
            data.collections
                .into_iter()
                .map(|c| (c.collection.collection_key, c.collection.name))
                .collect()
        }
    };
    let typed = typed.trim().to_lowercase();
    Ok(candidates
        .into_iter()
        .filter(|(key, text)| {
            key.to_lowercase().starts_with(&typed) || text.to_lowercase().contains(&typed)
        })
        .map(|(key, _)| key)
        .take(COMPLETION_VALUES)
        .collect())
}
