//! `zotero_update_search_database`: brings the local search index of a library up to date
//! with Zotero (only what changed since the last update), or rebuilds it. It writes the
//! index file only, never Zotero.

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::service::index::{
    self as search_index, Phase, Progress, ProgressCallback, UpdateOptions, UpdateReport,
};
use crate::tools::params::{null_is_default, LibraryParam};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_update_search_database` tool.
pub struct UpdateSearchDatabase;

fn yes() -> bool {
    true
}

/// The arguments of `zotero_update_search_database`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSearchDatabaseParams {
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Rebuild the index from nothing (default false: only what changed)
    #[serde(default, deserialize_with = "null_is_default")]
    pub full: bool,
    /// Index attachments' full texts too (default true)
    #[serde(default = "yes")]
    #[schemars(extend("default" = true))]
    pub include_fulltext: bool,
}

/// MCP progress must only grow: each phase's count is added to those of the phases before,
/// and a notification that would not move forward (a phase starting) is not sent.
pub fn cumulative(report: zotero_api::upload::ProgressFn) -> ProgressCallback {
    // (phase, objects of the phases before, this phase's total, last progress sent)
    let state: Mutex<(Option<Phase>, u64, u64, Option<u64>)> = Mutex::new((None, 0, 0, None));
    Arc::new(move |p: Progress| {
        let Ok(mut s) = state.lock() else {
            return;
        };
        if s.0 != Some(p.phase) {
            if s.0.is_some() {
                s.1 += s.2;
            }
            s.0 = Some(p.phase);
        }
        s.2 = p.total;
        let now = s.1 + p.done;
        if s.3.is_some_and(|last| now <= last) {
            return;
        }
        s.3 = Some(now);
        report(now, s.1 + p.total);
    })
}

impl ZoteroTool for UpdateSearchDatabase {
    const NAME: &'static str = "zotero_update_search_database";
    const TITLE: &'static str = "Update the search index";
    const DESCRIPTION: &'static str = "Bring the local index of zotero_semantic_search up to \
        date with the library: reads only what changed since the last update and writes the \
        index on this machine, never Zotero. full: true rebuilds it. Reports progress and can be \
        cancelled; what was committed stays. A first update of a big library takes minutes (or \
        run zotero-mcp update-db).";
    /// Writes a local file only: not read-only, never destructive of anything of the
    /// user's (the index is derived from the library), and a repeat finds nothing to do.
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: true,
    };
    const SET: ToolSet = ToolSet::Index;
    type Params = UpdateSearchDatabaseParams;
    type Data = UpdateReport;

    async fn run(
        p: UpdateSearchDatabaseParams,
        ctx: &ToolContext,
    ) -> Result<UpdateReport, ToolError> {
        let dir = ctx.svc.search.dir()?.to_path_buf();
        let library = crate::tools::params::library(p.library).unwrap_or(ctx.svc.default_library);
        // Checked before the update starts, so that a library the key cannot read fails now.
        ctx.svc.library(Some(library))?;
        let progress = ctx.progress.clone().map(cumulative);
        Ok(search_index::update_with_model(
            ctx.svc.clone(),
            &ctx.svc.search,
            library,
            dir,
            UpdateOptions {
                full: p.full,
                include_fulltext: p.include_fulltext,
            },
            progress,
            ctx.cancel.clone(),
        )
        .await?)
    }
}
