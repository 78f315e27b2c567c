//! `zotero_get_search_database_status`: what the local search index of each library holds,
//! how far behind the library it is, and which model made its vectors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_api::LibraryRef;

use crate::error::ToolError;
use crate::service::index::{self as search_index, BUILD_COMMAND};
use crate::service::time::UtcTime;
use crate::tools::index::semantic_search::SearchLibrary;
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_search_database_status` tool.
pub struct SearchDatabaseStatus;

/// The arguments of `zotero_get_search_database_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDatabaseStatusParams {
    /// user, group:<id> or all (default)
    #[serde(default)]
    pub library: Option<SearchLibrary>,
}

/// What `zotero_get_search_database_status` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchDatabaseStatusData {
    /// Whether any library asked about has an index
    pub initialized: bool,
    /// The directory of the index files (ZOTERO_INDEX_DIR)
    pub index_dir: String,
    /// The sentence model this server has loaded; absent: not loaded yet (the first update
    /// or search by meaning loads it) or none configured
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoder: Option<ModelOut>,
    /// The configured model (ZOTERO_EMBEDDING_MODEL, else the default): a Hugging Face
    /// id@revision or a directory; "none": search by words only
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_model_setting: Option<String>,
    /// Each indexed library
    pub libraries: Vec<LibraryStatus>,
    /// The command that builds or updates an index
    pub command: String,
}

/// A model's identity.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ModelOut {
    /// The model's id
    pub id: String,
    /// The model's revision
    pub revision: String,
    /// "file=hash" for each file the model was loaded from
    pub file_hashes: Vec<String>,
    /// Dimensions of its vectors
    pub dims: usize,
}

impl From<zotero_index::ModelIdentity> for ModelOut {
    fn from(m: zotero_index::ModelIdentity) -> Self {
        Self {
            id: m.id,
            revision: m.revision,
            file_hashes: m
                .file_hashes
                .into_iter()
                .map(|(f, h)| format!("{f}={h}"))
                .collect(),
            dims: m.dims,
        }
    }
}

/// One library's index.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LibraryStatus {
    /// user or group:<id>
    pub library: String,
    /// Whether it has an index
    pub initialized: bool,
    /// Top-level items with something indexed
    pub items: u64,
    /// Objects indexed (items, notes, annotations, full texts)
    pub documents: u64,
    /// Passages indexed
    pub chunks: u64,
    /// Passages that have a vector
    pub chunks_with_vectors: u64,
    /// The library version everything is indexed up to
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_version: Option<u64>,
    /// The library's version now; absent when Zotero could not be asked
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// Whether the library changed since the index was updated
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Library versions the index is behind
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions_behind: Option<u64>,
    /// When it was last updated (ISO 8601)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_update: Option<String>,
    /// The model of its vectors; absent: none yet
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelOut>,
    /// Size of the index file
    pub size_bytes: u64,
    /// Whether attachments' full text is indexed
    pub fulltext_included: bool,
    /// What to do: the command to build or update it, or why it cannot be read
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// The status of each library in `libraries`, for the tool and `zotero-mcp db-status`.
pub async fn statuses(
    svc: &crate::service::ZoteroService,
    which: Option<SearchLibrary>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<SearchDatabaseStatusData, ToolError> {
    let dir = svc.search.dir()?.to_path_buf();
    // A directory that cannot hold indexes is the answer, not "no index yet" for each library.
    zotero_index::check_dir(&dir).map_err(ToolError::from)?;
    let libraries: Vec<LibraryRef> = match which {
        Some(SearchLibrary::One(l)) => vec![l],
        Some(SearchLibrary::All) | None => {
            let mut found = search_index::indexed_libraries(&dir);
            if !found.contains(&svc.default_library) {
                found.insert(0, svc.default_library);
            }
            found
        }
    };
    let read = {
        let dir = dir.clone();
        let libraries = libraries.clone();
        let database = svc.client.database().cloned();
        tokio::task::spawn_blocking(move || {
            libraries
                .into_iter()
                .map(|l| {
                    let index = search_index::open_existing(&dir, l);
                    // The database, the index's source when configured, shows local edits
                    // the library version does not.
                    let ahead = match (&database, &index) {
                        (Some(db), Ok(Some(i))) => search_index::DbMarks::read(i)
                            .ok()
                            .and_then(|marks| search_index::database_ahead(db, l, &marks)),
                        _ => None,
                    };
                    let status = index.and_then(|i| i.map(|i| i.status()).transpose());
                    (l, status, ahead)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ToolError::internal(format!("the status stopped: {e}")))?
    };
    let mut out = Vec::new();
    for (lib, status, ahead) in read {
        let command = if lib == LibraryRef::User {
            BUILD_COMMAND.to_string()
        } else {
            format!("{BUILD_COMMAND} --library {lib}")
        };
        let mut row = LibraryStatus {
            library: lib.to_string(),
            initialized: false,
            items: 0,
            documents: 0,
            chunks: 0,
            chunks_with_vectors: 0,
            indexed_version: None,
            current_version: None,
            stale: None,
            versions_behind: None,
            last_update: None,
            model: None,
            size_bytes: 0,
            fulltext_included: false,
            action: None,
        };
        match status {
            Ok(None) => row.action = Some(format!("no index yet: run `{command}`")),
            Err(e) => row.action = Some(e.to_string()),
            Ok(Some(s)) => {
                let f = search_index::freshness(&svc.client, lib, &s, cancel)
                    .await
                    .with_database(ahead);
                row.initialized = true;
                row.items = s.items;
                row.documents = s.documents;
                row.chunks = s.chunks;
                row.chunks_with_vectors = s.chunks_with_vectors;
                row.indexed_version = s.library_version;
                row.current_version = f.current_version;
                row.stale = f.stale;
                row.versions_behind = f.versions_behind;
                row.last_update = s.last_update.map(|secs| UtcTime::from_unix(secs).iso8601());
                row.model = s.model.map(Into::into);
                row.size_bytes = s.size_bytes;
                row.fulltext_included = s.fulltext_included;
                if f.stale == Some(true) {
                    row.action = Some(format!("behind the library: run `{command}`"));
                }
            }
        }
        out.push(row);
    }
    Ok(SearchDatabaseStatusData {
        initialized: out.iter().any(|r| r.initialized),
        index_dir: dir.display().to_string(),
        encoder: svc.search.encoder_if_loaded().map(|e| e.identity().into()),
        embedding_model_setting: Some(match (&svc.search.encoder, &svc.search.model) {
            (Some(e), _) => e.identity().id,
            (None, Some(m)) => m.spec.to_string(),
            (None, None) => "none".to_string(),
        }),
        libraries: out,
        command: BUILD_COMMAND.to_string(),
    })
}

impl ZoteroTool for SearchDatabaseStatus {
    const NAME: &'static str = "zotero_get_search_database_status";
    const TITLE: &'static str = "Search index status";
    const DESCRIPTION: &'static str = "Per library: what the local index of \
        zotero_semantic_search holds, how stale it is, its model and size; initialized false: no \
        index yet (zotero-mcp update-db).";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Index;
    type Params = SearchDatabaseStatusParams;
    type Data = SearchDatabaseStatusData;

    async fn run(
        p: SearchDatabaseStatusParams,
        ctx: &ToolContext,
    ) -> Result<SearchDatabaseStatusData, ToolError> {
        statuses(&ctx.svc, p.library, &ctx.cancel).await
    }
}
