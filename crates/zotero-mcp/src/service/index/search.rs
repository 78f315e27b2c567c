//! Searching the local search index (`zotero_semantic_search`'s workflow): which libraries,
//! the sentence model when meaning is asked, each library's index searched on a blocking
//! thread while Zotero is asked for its version, and the hits of all merged best first.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use zotero_api::LibraryRef;
use zotero_index::{Hit, Mode, SearchQuery};

use crate::error::ToolError;
use crate::service::index::{self as search_index, Freshness};
use crate::service::ZoteroService;

/// Which indexes a search reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every library that has an index.
    All,
    One(LibraryRef),
}

/// One item found, in the library whose index found it.
#[derive(Debug)]
pub struct LibraryHit {
    pub library: LibraryRef,
    /// Its score rounded to 4 places, as answered and as the merge sorts by.
    pub hit: Hit,
}

/// What a search of one or more indexes found.
#[derive(Debug)]
pub struct IndexSearch {
    /// Best first, at most the query's limit.
    pub hits: Vec<LibraryHit>,
    /// Whether meaning (vectors) took part in the ranking.
    pub semantic_used: bool,
    /// Why the search was by words only, when it was.
    pub note: Option<String>,
    /// How fresh each library's index is.
    pub index: Vec<Freshness>,
}

impl ZoteroService {
    /// Searches the indexes of `scope` for `query`. The model is loaded (from the cache,
    /// never downloaded) only when meaning is asked; mode semantic without one is refused,
    /// naming `mode`.
    pub async fn index_search(
        self: &Arc<Self>,
        query: SearchQuery,
        scope: Scope,
        cancel: &CancellationToken,
    ) -> Result<IndexSearch, ToolError> {
        let dir = self.search.dir()?.to_path_buf();
        let limit = query.limit;
        let libraries = match scope {
            Scope::All => {
                let found = search_index::indexed_libraries(&dir);
                if found.is_empty() {
                    return Err(search_index::no_index(self.default_library));
                }
                found
            }
            Scope::One(l) => vec![l],
        };
        let (encoder, model_note) = if matches!(query.mode, Mode::Keyword) {
            (None, None)
        } else {
            match self.search.encoder_for_search().await {
                Ok(e) => (e, None),
                Err(why) => (None, Some(why.to_string())),
            }
        };
        if matches!(query.mode, Mode::Semantic) && encoder.is_none() {
            return Err(ToolError::validation(format!(
                "mode semantic needs the sentence model, and there is none: {}; use mode \
                     keyword or hybrid meanwhile",
                model_note.as_deref().unwrap_or(
                    "ZOTERO_EMBEDDING_MODEL is none (set it to a model to search by meaning)"
                )
            ))
            .with_detail("field", "mode"));
        }
        // The libraries' versions now are asked while the index is searched, so that the
        // round trip to Zotero adds nothing to the search's own time.
        let versions: Vec<_> = libraries
            .iter()
            .map(|&lib| {
                let (svc, cancel) = (self.clone(), cancel.clone());
                tokio::spawn(async move {
                    search_index::current_version(&svc.client, lib, None, &cancel).await
                })
            })
            .collect();
        let searched = {
            let dir = dir.clone();
            let libraries = libraries.clone();
            let vectors = self.search.vector_cache().clone();
            let database = self.client.database().cloned();
            tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                for lib in libraries {
                    let Some(index) =
                        search_index::open_existing(&dir, lib).map_err(ToolError::from)?
                    else {
                        return Err(search_index::no_index(lib));
                    };
                    let answer = index
                        .search_cached(encoder.as_deref(), &query, &vectors)
                        .map_err(ToolError::from)?;
                    // Not the whole status: counting its items takes as long as a search.
                    let indexed = index.library_version().map_err(ToolError::from)?;
                    // The database, the index's source when configured, shows local edits
                    // the library version does not.
                    let ahead = match &database {
                        Some(db) => {
                            let marks = search_index::DbMarks::read(&index)
                                .map_err(ToolError::from)?
                                .items_only();
                            search_index::database_ahead(db, lib, &marks)
                        }
                        None => None,
                    };
                    out.push((lib, answer, indexed, ahead));
                }
                Ok(out)
            })
            .await
            .map_err(|e| ToolError::internal(format!("the search stopped: {e}")))??
        };
        let mut hits = Vec::new();
        let mut index = Vec::new();
        let mut semantic_used = false;
        let mut note = None;
        for ((lib, answer, indexed, ahead), version) in searched.into_iter().zip(versions) {
            semantic_used |= answer.semantic_used;
            if note.is_none() {
                note = match (&model_note, answer.semantic_used) {
                    (Some(why), false) => {
                        Some(format!("searched by words only, no sentence model: {why}"))
                    }
                    _ => answer.semantic_note.clone(),
                };
            }
            let current = version.await.ok().flatten();
            index.push(
                search_index::freshness_of(lib, indexed, answer.coverage, current)
                    .with_database(ahead),
            );
            hits.extend(answer.hits.into_iter().map(|mut hit| {
                hit.score = (hit.score * 10_000.0).round() / 10_000.0;
                LibraryHit { library: lib, hit }
            }));
        }
        // Several libraries: their hits merged by score (each index's scores are on the
        // same 0-1 scale), then cut to the limit.
        hits.sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score));
        hits.truncate(limit);
        if semantic_used {
            note = None;
        }
        Ok(IndexSearch {
            hits,
            semantic_used,
            note,
            index,
        })
    }
}
