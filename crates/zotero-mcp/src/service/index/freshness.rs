//! How fresh an index is: the library version it is complete up to against the library's
//! version now (one cheap request), as searches and the status tool answer it.

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use zotero_api::{LibraryRef, ZoteroClient};

/// How fresh a library's index is, as a search answers it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Freshness {
    /// user or group:<id>
    pub library: String,
    /// The library version everything is indexed up to
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_version: Option<u64>,
    /// The library's version now; absent when Zotero could not be asked
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// The library changed after the index was updated (run the update)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// How many library versions the index is behind
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions_behind: Option<u64>,
    /// Searchable chunks
    pub chunks: u64,
    /// Chunks with a vector (searchable by meaning)
    pub chunks_with_vectors: u64,
}

impl Freshness {
    /// Stale too when Zotero's database, the index's source, holds what the next update
    /// would read (`ahead`, from [`super::database_ahead`]; `None`: no database, or it
    /// could not say): local edits that no library version shows yet.
    pub fn with_database(mut self, ahead: Option<bool>) -> Self {
        if ahead == Some(true) {
            self.stale = Some(true);
        }
        self
    }
}

/// The freshness of an index: its status and one cheap request (304 when unchanged) for
/// the library's version now; Zotero out of reach leaves the current version out.
pub async fn freshness(
    client: &ZoteroClient,
    library: LibraryRef,
    status: &zotero_index::Status,
    cancel: &CancellationToken,
) -> Freshness {
    let current = current_version(client, library, status.library_version, cancel).await;
    let coverage = zotero_index::Coverage {
        chunks_total: status.chunks,
        chunks_with_vectors: status.chunks_with_vectors,
    };
    freshness_of(library, status.library_version, coverage, current)
}

/// The library's version now (one cheap request; 304 when it is still `known`), `None`
/// when Zotero could not be asked.
pub async fn current_version(
    client: &ZoteroClient,
    library: LibraryRef,
    known: Option<u64>,
    cancel: &CancellationToken,
) -> Option<u64> {
    let lib = client.library(library).ok()?;
    lib.current_version(known, cancel).await.ok()
}

/// The freshness of an index complete up to library version `indexed`, the library being
/// at `current`.
pub fn freshness_of(
    library: LibraryRef,
    indexed: Option<u64>,
    coverage: zotero_index::Coverage,
    current: Option<u64>,
) -> Freshness {
    let behind = match (current, indexed) {
        (Some(c), Some(i)) => Some(c.saturating_sub(i)),
        (Some(c), None) => Some(c),
        _ => None,
    };
    Freshness {
        library: library.to_string(),
        indexed_version: indexed,
        current_version: current,
        stale: behind.map(|b| b > 0),
        versions_behind: behind,
        chunks: coverage.chunks_total,
        chunks_with_vectors: coverage.chunks_with_vectors,
    }
}
