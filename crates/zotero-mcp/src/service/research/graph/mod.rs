//! The citation graph (`zotero_find_related`): for one work (a library item's DOI, or a
//! DOI) the works it cites and the works citing it, from OpenAlex (`filter=cited_by:W…` and
//! `filter=cites:W…`, sorted by `cited_by_count`, paged with OpenAlex's cursors), with
//! Crossref's `reference` list where OpenAlex has no references; or, for 2 to 20 works, the
//! works most often in their reference lists ("co-cited" by them); each work marked
//! `in_library` (`in_library.rs`).
//!
//! A page is bounded twice: at most `limit` works, and at most its share of the answer's
//! characters. A page cut short by the characters keeps its place in OpenAlex's page (the
//! cursor says how many of that page were shown), so no work is skipped or repeated.

mod co_cited;
mod crossref;
mod cursor;
mod library_dois;
mod works;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::{Library, ObjectKey};
use zotero_metadata::services::WorksQuery;

use super::in_library::{self, InLibrary, WorkKeys};
use crate::error::ToolError;
use crate::service::ZoteroService;
use works::{at, fit, short_id, work_of};
use zotero_metadata::identifiers::fold_doi;

pub use cursor::{Cursor, ListKind, MAX_PER_PAGE};
pub use works::AUTHORS_SHOWN;

/// The fields of a listed work asked of OpenAlex.
const LIST_FIELDS: &str = "id,doi,display_name,publication_year,cited_by_count,authorships";
/// The fields of the work asked about (and of each co-citing work).
const SEED_FIELDS: &str =
    "id,doi,display_name,publication_year,cited_by_count,authorships,referenced_works";
/// OpenAlex's order for every list: the most cited first.
const SORT: &str = "cited_by_count:desc";

/// Which works to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    References,
    Citing,
    Both,
    /// The works most often in the given works' reference lists.
    CoCited,
}

/// A work to start from.
#[derive(Debug, Clone)]
pub enum Seed {
    Item(ObjectKey),
    Doi(String),
}

/// What to find.
pub struct RelatedRequest {
    pub seeds: Vec<Seed>,
    pub direction: Direction,
    pub limit: u32,
    pub cursor: Option<Cursor>,
    /// The characters the works of all lists may take.
    pub chars: usize,
}

/// One work of a list.
#[derive(Debug, Clone, Default)]
pub struct Work {
    pub title: Option<String>,
    pub authors: Vec<String>,
    pub more_authors: usize,
    pub year: Option<u32>,
    pub doi: Option<String>,
    pub openalex_id: Option<String>,
    pub cited_by_count: Option<u64>,
    /// How many of the given works cite it (co-cited lists only).
    pub cited_by_given: Option<u32>,
    pub in_library: Option<InLibrary>,
}

/// One list of works.
#[derive(Debug, Clone)]
pub struct WorkList {
    pub kind: ListKind,
    /// `OpenAlex` or `Crossref`.
    pub source: &'static str,
    /// How many works the list holds in all.
    pub total: u64,
    pub works: Vec<Work>,
    pub next: Option<Cursor>,
    /// Why the list is empty or from another source.
    pub note: Option<String>,
}

/// What was found.
#[derive(Debug, Clone, Default)]
pub struct Related {
    /// The work asked about (not for co-cited lists, nor when a cursor continues a list).
    pub work: Option<Work>,
    pub references: Option<WorkList>,
    pub citing: Option<WorkList>,
    pub co_cited: Option<WorkList>,
    /// Given works OpenAlex does not know (co-cited lists go on without them).
    pub not_found: Vec<String>,
}

/// Finds the related works `req` asks for.
pub async fn find_related(
    svc: &ZoteroService,
    lib: Library<'_>,
    req: RelatedRequest,
    cancel: &CancellationToken,
) -> Result<Related, ToolError> {
    let per_page = req.limit.clamp(1, MAX_PER_PAGE);
    let graph = Graph {
        svc,
        lib,
        cancel,
        per_page,
        dois: tokio::sync::OnceCell::new(),
    };
    if let Some(cursor) = req.cursor {
        let list = graph.go_on(&req.seeds, cursor, req.chars).await?;
        let mut related = Related::default();
        match list.kind {
            ListKind::References => related.references = Some(list),
            ListKind::Citing => related.citing = Some(list),
            ListKind::CoCited => related.co_cited = Some(list),
        }
        return Ok(related);
    }
    if req.direction == Direction::CoCited {
        return graph.co_cited(&req.seeds, 0, req.chars).await;
    }
    let Some(seed) = req.seeds.first() else {
        return Err(ToolError::invalid(
            "item_keys",
            "give one work: an item key in item_keys or a DOI in dois",
        ));
    };
    let doi = graph.doi_of(seed).await?;
    let found = graph.openalex_work(&doi).await?;
    let mut related = Related::default();
    let (want_refs, want_citing) = match req.direction {
        Direction::References => (true, false),
        Direction::Citing => (false, true),
        _ => (true, true),
    };
    let chars = if want_refs && want_citing {
        req.chars / 2
    } else {
        req.chars
    };
    let seed_id = found.as_ref().and_then(|w| short_id(at(w, "id")));
    if want_refs {
        let has_refs = found
            .as_ref()
            .and_then(|w| at(w, "referenced_works").as_array())
            .is_some_and(|r| !r.is_empty());
        related.references = Some(match (&seed_id, has_refs) {
            (Some(id), true) => {
                let start = Cursor::OpenAlex {
                    list: ListKind::References,
                    work: id.clone(),
                    per_page,
                    skip: 0,
                    seen: 0,
                    cursor: "*".into(),
                };
                graph.openalex_page(start, chars).await?
            }
            _ => {
                let why = if found.is_some() {
                    "OpenAlex lists no references for this work"
                } else {
                    "OpenAlex does not know this DOI"
                };
                graph.crossref_references(&doi, 0, chars, why).await?
            }
        });
    }
    if want_citing {
        related.citing = Some(match &seed_id {
            Some(id) => {
                let start = Cursor::OpenAlex {
                    list: ListKind::Citing,
                    work: id.clone(),
                    per_page,
                    skip: 0,
                    seen: 0,
                    cursor: "*".into(),
                };
                graph.openalex_page(start, chars).await?
            }
            None => WorkList {
                kind: ListKind::Citing,
                source: "OpenAlex",
                total: 0,
                works: Vec::new(),
                next: None,
                note: Some(format!(
                    "OpenAlex does not know the DOI {doi}, so no citing works are known"
                )),
            },
        });
    }
    related.work = Some(match &found {
        Some(w) => {
            let mut work = work_of(w);
            work.in_library = graph.in_library(&work).await?;
            work
        }
        None => Work {
            doi: Some(doi),
            ..Work::default()
        },
    });
    Ok(related)
}

struct Graph<'a> {
    svc: &'a ZoteroService,
    lib: Library<'a>,
    cancel: &'a CancellationToken,
    per_page: u32,
    /// The library's DOIs, read at the first work with a DOI (`library_dois`).
    dois: tokio::sync::OnceCell<library_dois::LibraryDois>,
}

impl Graph<'_> {
    async fn go_on(
        &self,
        seeds: &[Seed],
        cursor: Cursor,
        chars: usize,
    ) -> Result<WorkList, ToolError> {
        match cursor {
            Cursor::OpenAlex { .. } => self.openalex_page(cursor, chars).await,
            Cursor::Offset {
                crossref: true,
                offset,
                ..
            } => {
                let Some(seed) = seeds.first() else {
                    return Err(ToolError::invalid(
                        "cursor",
                        "this cursor reads on Crossref's reference list of a work: pass the same \
                         item_keys or dois as the call that gave it",
                    ));
                };
                let doi = self.doi_of(seed).await?;
                self.crossref_references(&doi, offset, chars, "").await
            }
            Cursor::Offset { offset, .. } => {
                let related = self.co_cited(seeds, offset, chars).await?;
                related
                    .co_cited
                    .ok_or_else(|| ToolError::internal("the co-cited list went missing"))
            }
        }
    }

    /// The DOI of a seed: as given, or the library item's.
    async fn doi_of(&self, seed: &Seed) -> Result<String, ToolError> {
        match seed {
            Seed::Doi(d) => Ok(fold_doi(d)),
            Seed::Item(key) => {
                let item = self.lib.item_object(key, self.cancel).await?.to_item();
                item.doi
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| fold_doi(&d))
                    .ok_or_else(|| {
                        ToolError::invalid(
                            "item_keys",
                            format!(
                                "item {key} has no DOI, and OpenAlex and Crossref are asked by DOI: \
                                 give the work's DOI in dois instead (zotero_update_item can \
                                 store it on the item)"
                            ),
                        )
                        .with_detail("item_key", key.to_string())
                    })
            }
        }
    }

    async fn openalex_work(&self, doi: &str) -> Result<Option<Value>, ToolError> {
        self.svc
            .metadata
            .openalex_work_by_doi(doi, SEED_FIELDS, self.cancel)
            .await
            .map_err(ToolError::from)
    }

    /// One page of an OpenAlex list from `at`, within `chars`.
    async fn openalex_page(&self, at: Cursor, chars: usize) -> Result<WorkList, ToolError> {
        let Cursor::OpenAlex {
            list,
            work,
            per_page,
            skip,
            seen,
            cursor,
        } = at
        else {
            return Err(ToolError::internal(
                "an OpenAlex page was asked without an OpenAlex cursor",
            ));
        };
        let filter = match list {
            ListKind::Citing => format!("cites:{work}"),
            _ => format!("cited_by:{work}"),
        };
        let query = WorksQuery {
            filter: &filter,
            sort: Some(SORT),
            per_page,
            cursor: &cursor,
            select: LIST_FIELDS,
        };
        let page = self
            .svc
            .metadata
            .openalex_works(&query, self.cancel)
            .await
            .map_err(ToolError::from)?;
        let fetched = page.results.len();
        let mut works: Vec<Work> = page
            .results
            .iter()
            .skip(skip as usize)
            .map(work_of)
            .collect();
        let cut = fit(&mut works, chars);
        for w in &mut works {
            w.in_library = self.in_library(w).await?;
        }
        let shown = skip + works.len() as u32;
        let next = if cut {
            Some(Cursor::OpenAlex {
                list,
                work,
                per_page,
                skip: shown,
                seen,
                cursor,
            })
        } else {
            let seen = seen + fetched as u64;
            page.next_cursor
                .filter(|_| fetched > 0 && seen < page.count)
                .map(|next| Cursor::OpenAlex {
                    list,
                    work,
                    per_page,
                    skip: 0,
                    seen,
                    cursor: next,
                })
        };
        Ok(WorkList {
            kind: list,
            source: "OpenAlex",
            total: page.count,
            works,
            next,
            note: None,
        })
    }

    /// The library item that is `work`: by its DOI among every DOI of the library, else
    /// by a title search (`in_library::find`: DOI among the candidates, then title and year).
    async fn in_library(&self, work: &Work) -> Result<Option<InLibrary>, ToolError> {
        if let Some(doi) = work.doi.as_deref() {
            let dois = self
                .dois
                .get_or_try_init(|| library_dois::read(&self.lib, self.cancel))
                .await?;
            if let Some(key) = dois.find(doi) {
                return Ok(Some(InLibrary {
                    item_key: key.to_string(),
                    matched_by: in_library::MatchedBy::Doi,
                }));
            }
        }
        let keys = WorkKeys {
            title: work.title.clone(),
            year: work.year,
            doi: work.doi.clone(),
        };
        in_library::find(&self.lib, &keys, self.cancel).await
    }
}
