//! `resources/list`: the default library's recently changed items, a page at a time.

use rmcp::model::{ListResourcesResult, Resource};

use super::uri::{styles_resource, uri, View, JSON};
use crate::error::ToolError;
use crate::notes::markdown::cut_chars;
use crate::tools::items::list_items::{ListItems, ListItemsParams};
use crate::tools::params::{quote, ItemSort, LibraryParam, Limit, SortDirection, Start};
use crate::tools::support::output::Item;
use crate::tools::{self, ToolContext};

/// Items per page of `resources/list` (the most recently modified first).
pub const LIST_PAGE: u64 = 25;
/// The longest resource name in `resources/list`.
const NAME_CHARS: usize = 200;

/// `zotero_list_items`'s parameters when none is given.
pub(super) fn list_items_params() -> ListItemsParams {
    ListItemsParams {
        collection_key: None,
        tags: None,
        exclude_tags: None,
        item_type: None,
        since: None,
        trashed: None,
        top_only: None,
        sort: ItemSort::default(),
        direction: None,
        limit: Limit::default(),
        start: Start::default(),
        library: None,
    }
}

/// One page of the default library's most recently modified top-level items (the styles
/// first, on the first page); the cursor is where the next page starts.
pub async fn list(
    cursor: Option<&str>,
    ctx: &ToolContext,
) -> Result<ListResourcesResult, ToolError> {
    let start = match cursor {
        None => 0,
        Some(c) => c.parse::<u64>().map_err(|_| {
            ToolError::invalid(
                "cursor",
                format!(
                    "'{}' is not a cursor of this server: pass nextCursor of the previous page",
                    quote(c)
                ),
            )
        })?,
    };
    let library = ctx.svc.default_library;
    let params = ListItemsParams {
        library: Some(LibraryParam(library)),
        limit: Limit::of::<LIST_PAGE>(),
        start: Start::from(start),
        sort: ItemSort::default(),
        direction: Some(SortDirection::Desc),
        ..list_items_params()
    };
    let data = tools::run::<ListItems>(params, ctx).await?;
    let mut resources = Vec::new();
    if start == 0 {
        resources.push(styles_resource());
    }
    for item in &data.items {
        let key = item.item_key.as_str();
        let title = item.title.as_str();
        let (name, _) = cut_chars(if title.is_empty() { key } else { title }, NAME_CHARS);
        resources.push(
            Resource::new(uri(library, View::Item, key), name)
                .with_description(item_description(item))
                .with_mime_type(JSON),
        );
    }
    let mut out = ListResourcesResult::with_all_items(resources);
    out.next_cursor = data.next_start.map(|n| n.to_string());
    Ok(out)
}

/// "journalArticle · Vaswani et al. · 2017": what it is, by whom, when.
fn item_description(item: &Item) -> String {
    let mut parts = vec![item.item_type.clone()];
    if let Some(first) = item.creators.first() {
        let name = [first.last_name.as_deref(), first.name.as_deref()]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let (name, _) = cut_chars(name, 60);
        if !name.is_empty() {
            parts.push(if item.creators.len() > 1 {
                format!("{name} et al.")
            } else {
                name.to_string()
            });
        }
    }
    let (date, _) = cut_chars(item.date.as_deref().unwrap_or_default(), 30);
    if !date.is_empty() {
        parts.push(date.to_string());
    }
    parts.join(" · ")
}
