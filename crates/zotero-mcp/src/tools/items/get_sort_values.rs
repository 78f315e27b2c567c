//! `zotero_get_sort_values`: the sort keys the server knows, its default and its fallback.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};
use zotero_api::client::{DEFAULT_SORT, FALLBACK_SORT, SORT_VALUES};

/// The `zotero_get_sort_values` tool.
pub struct GetSortValues;

/// No arguments; any field is refused.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// What `zotero_get_sort_values` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SortValuesData {
    /// Every sort key zotero_search_items accepts
    pub values: Vec<&'static str>,
    /// The sort used when none is given
    pub default: &'static str,
    /// The sort used when Zotero rejects relevance
    pub fallback: &'static str,
}

impl ZoteroTool for GetSortValues {
    const NAME: &'static str = "zotero_get_sort_values";
    const TITLE: &'static str = "List sort values";
    const DESCRIPTION: &'static str = "The sort keys zotero_search_items accepts, its default \
        and its fallback. Sends no request.";
    // Answers from the server's own table: nothing outside is touched.
    const HINTS: Hints = Hints {
        open_world: false,
        ..Hints::READ
    };
    const SET: ToolSet = ToolSet::Read;
    type Params = NoParams;
    type Data = SortValuesData;

    async fn run(_: NoParams, _: &ToolContext) -> Result<SortValuesData, ToolError> {
        let mut values = vec![DEFAULT_SORT];
        values.extend(SORT_VALUES);
        Ok(SortValuesData {
            values,
            default: DEFAULT_SORT,
            fallback: FALLBACK_SORT,
        })
    }
}
