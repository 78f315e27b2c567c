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

use std::collections::HashMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_api::{Library, ObjectKey};
use zotero_metadata::services::{ServiceError, WorksQuery, MAX_IDS_PER_FILTER};

use super::in_library::{self, normalize_doi, InLibrary, WorkKeys};
use crate::mcp::envelope::{ErrorCode, ToolError};
use crate::service::ZoteroService;
use crate::tools::budget::json_chars;

/// What a missing field reads as.
static NULL: Value = Value::Null;

/// `v`'s field `key`, null when it has none.
fn at<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

/// The fields of a listed work asked of OpenAlex.
const LIST_FIELDS: &str = "id,doi,display_name,publication_year,cited_by_count,authorships";
/// The fields of the work asked about (and of each co-citing work).
const SEED_FIELDS: &str =
    "id,doi,display_name,publication_year,cited_by_count,authorships,referenced_works";
/// OpenAlex's order for every list: the most cited first.
const SORT: &str = "cited_by_count:desc";
/// The most authors named per work; `more_authors` says how many were left out.
pub const AUTHORS_SHOWN: usize = 3;
/// The most characters of a title or an author's name kept.
const TITLE_CHARS: usize = 300;
const AUTHOR_CHARS: usize = 100;

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

/// Which list a cursor continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    References,
    Citing,
    CoCited,
}

impl ListKind {
    fn tag(self) -> &'static str {
        match self {
            ListKind::References => "r",
            ListKind::Citing => "c",
            ListKind::CoCited => "k",
        }
    }

    /// The `direction` a cursor of this list is passed with.
    pub fn direction_name(self) -> &'static str {
        match self {
            ListKind::References => "references",
            ListKind::Citing => "citing",
            ListKind::CoCited => "co_cited",
        }
    }
}

/// Where a list goes on: in an OpenAlex list (its work's id, the page size, the cursor of
/// the page and how many of that page were shown, how many works came before that page), or
/// at an offset (Crossref's reference list, the co-cited ranking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    OpenAlex {
        list: ListKind,
        work: String,
        per_page: u32,
        skip: u32,
        seen: u64,
        cursor: String,
    },
    Offset {
        list: ListKind,
        crossref: bool,
        offset: u64,
    },
}

impl Cursor {
    pub fn list(&self) -> ListKind {
        match self {
            Cursor::OpenAlex { list, .. } | Cursor::Offset { list, .. } => *list,
        }
    }

    /// The cursor as the answer gives it.
    pub fn encode(&self) -> String {
        match self {
            Cursor::OpenAlex {
                list,
                work,
                per_page,
                skip,
                seen,
                cursor,
            } => format!("{}.oa.{work}.{per_page}.{skip}.{seen}.{cursor}", list.tag()),
            Cursor::Offset {
                list,
                crossref,
                offset,
            } => format!(
                "{}.{}.{offset}",
                list.tag(),
                if *crossref { "cr" } else { "at" }
            ),
        }
    }

    /// A cursor an answer gave; `None` for anything else.
    pub fn decode(s: &str) -> Option<Cursor> {
        let mut parts = s.splitn(7, '.');
        let list = match parts.next()? {
            "r" => ListKind::References,
            "c" => ListKind::Citing,
            "k" => ListKind::CoCited,
            _ => return None,
        };
        match parts.next()? {
            "oa" => {
                let work = parts.next()?.to_string();
                let valid_work = work.len() > 1
                    && work.starts_with('W')
                    && work.bytes().skip(1).all(|b| b.is_ascii_digit());
                let per_page: u32 = parts.next()?.parse().ok()?;
                let skip: u32 = parts.next()?.parse().ok()?;
                let seen: u64 = parts.next()?.parse().ok()?;
                let cursor = parts.next()?.to_string();
                let valid_cursor = !cursor.is_empty()
                    && cursor.len() <= 1_000
                    && cursor
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+/=*-_".contains(&b));
                (valid_work
                    && valid_cursor
                    && (1..=MAX_PER_PAGE).contains(&per_page)
                    && skip < per_page
                    && list != ListKind::CoCited)
                    .then_some(Cursor::OpenAlex {
                        list,
                        work,
                        per_page,
                        skip,
                        seen,
                        cursor,
                    })
            }
            kind @ ("cr" | "at") => {
                let offset: u64 = parts.next()?.parse().ok()?;
                let crossref = kind == "cr";
                let fits = if crossref {
                    list == ListKind::References
                } else {
                    list == ListKind::CoCited
                };
                (fits && parts.next().is_none()).then_some(Cursor::Offset {
                    list,
                    crossref,
                    offset,
                })
            }
            _ => None,
        }
    }
}

/// The most works a page holds (and OpenAlex's `per-page` asked).
pub const MAX_PER_PAGE: u32 = 50;

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
                related.co_cited.ok_or_else(|| {
                    ToolError::new(ErrorCode::Internal, "the co-cited list went missing")
                })
            }
        }
    }

    /// The DOI of a seed: as given, or the library item's.
    async fn doi_of(&self, seed: &Seed) -> Result<String, ToolError> {
        match seed {
            Seed::Doi(d) => Ok(normalize_doi(d)),
            Seed::Item(key) => {
                let item = self.lib.item_object(key, self.cancel).await?.to_item();
                item.doi
                    .filter(|d| !d.trim().is_empty())
                    .map(|d| normalize_doi(&d))
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
            .map_err(|e| self.service_error(e))
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
            return Err(ToolError::new(
                ErrorCode::Internal,
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
            .map_err(|e| self.service_error(e))?;
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

    /// Crossref's `reference` list of `doi` from `offset` (in Crossref's order: it has no
    /// citation counts).
    async fn crossref_references(
        &self,
        doi: &str,
        offset: u64,
        chars: usize,
        why: &str,
    ) -> Result<WorkList, ToolError> {
        let record = self
            .svc
            .metadata
            .crossref_work(doi, self.cancel)
            .await
            .map_err(|e| self.service_error(e))?;
        let refs: Vec<Value> = record
            .as_ref()
            .and_then(|r| at(r, "reference").as_array())
            .cloned()
            .unwrap_or_default();
        let total = refs.len() as u64;
        let mut works: Vec<Work> = refs
            .iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(self.per_page as usize)
            .map(crossref_reference)
            .collect();
        fit(&mut works, chars);
        for w in &mut works {
            w.in_library = self.in_library(w).await?;
        }
        let after = offset + works.len() as u64;
        let next = (after < total).then_some(Cursor::Offset {
            list: ListKind::References,
            crossref: true,
            offset: after,
        });
        let note = match (&record, why.is_empty()) {
            (_, true) => None,
            (None, false) => Some(format!("{why}, nor does Crossref")),
            (Some(_), false) if total == 0 => Some(format!(
                "{why}, and Crossref's record has no reference list (its publisher deposited none)"
            )),
            (Some(_), false) => Some(format!("{why}: these are Crossref's, in its order")),
        };
        Ok(WorkList {
            kind: ListKind::References,
            source: "Crossref",
            total,
            works,
            next,
            note,
        })
    }

    /// The works most often in the seeds' reference lists, from `offset`.
    async fn co_cited(
        &self,
        seeds: &[Seed],
        offset: u64,
        chars: usize,
    ) -> Result<Related, ToolError> {
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut seed_ids: Vec<String> = Vec::new();
        let mut not_found = Vec::new();
        for seed in seeds {
            let doi = self.doi_of(seed).await?;
            let Some(work) = self.openalex_work(&doi).await? else {
                not_found.push(doi);
                continue;
            };
            if let Some(id) = short_id(at(&work, "id")) {
                seed_ids.push(id);
            }
            let mut refs: Vec<String> = at(&work, "referenced_works")
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(short_id)
                .collect();
            refs.sort();
            refs.dedup();
            for r in refs {
                *counts.entry(r).or_default() += 1;
            }
        }
        for id in &seed_ids {
            counts.remove(id);
        }
        let mut ranked: Vec<(String, u32)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| id_number(&a.0).cmp(&id_number(&b.0)))
        });
        let total = ranked.len() as u64;
        let page: Vec<(String, u32)> = ranked
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take((self.per_page as usize).min(MAX_IDS_PER_FILTER))
            .collect();
        let mut by_id: HashMap<String, Value> = HashMap::new();
        if !page.is_empty() {
            let ids: Vec<&str> = page.iter().map(|(id, _)| id.as_str()).collect();
            let filter = format!("openalex:{}", ids.join("|"));
            let query = WorksQuery {
                filter: &filter,
                sort: None,
                per_page: page.len() as u32,
                cursor: "*",
                select: LIST_FIELDS,
            };
            let found = self
                .svc
                .metadata
                .openalex_works(&query, self.cancel)
                .await
                .map_err(|e| self.service_error(e))?;
            for w in found.results {
                if let Some(id) = short_id(at(&w, "id")) {
                    by_id.insert(id, w);
                }
            }
        }
        let mut works: Vec<Work> = page
            .iter()
            .map(|(id, n)| {
                let mut w = by_id.get(id).map(work_of).unwrap_or_else(|| Work {
                    openalex_id: Some(format!("https://openalex.org/{id}")),
                    ..Work::default()
                });
                w.cited_by_given = Some(*n);
                w
            })
            .collect();
        fit(&mut works, chars);
        for w in &mut works {
            w.in_library = self.in_library(w).await?;
        }
        let after = offset + works.len() as u64;
        let next = (after < total).then_some(Cursor::Offset {
            list: ListKind::CoCited,
            crossref: false,
            offset: after,
        });
        let note = (seed_ids.is_empty())
            .then(|| "OpenAlex knows none of the given works: nothing to count".to_string());
        Ok(Related {
            co_cited: Some(WorkList {
                kind: ListKind::CoCited,
                source: "OpenAlex",
                total,
                works,
                next,
                note,
            }),
            not_found,
            ..Related::default()
        })
    }

    async fn in_library(&self, work: &Work) -> Result<Option<InLibrary>, ToolError> {
        let keys = WorkKeys {
            title: work.title.clone(),
            year: work.year,
            doi: work.doi.clone(),
        };
        in_library::find(&self.lib, &keys, self.cancel).await
    }

    fn service_error(&self, e: ServiceError) -> ToolError {
        let code = match &e {
            ServiceError::RateLimited { .. } | ServiceError::DailyBudget { .. } => {
                ErrorCode::RateLimited
            }
            ServiceError::BadIdentifier(_) => ErrorCode::Validation,
            ServiceError::Forbidden { .. } => ErrorCode::Auth,
            _ => ErrorCode::Upstream,
        };
        let mut err = ToolError::new(code, self.svc.metadata.clean_to(&e.to_string(), 600));
        if let ServiceError::RateLimited { secs, .. } = e {
            err = err.with_detail("retry_after", secs.to_string());
        }
        err
    }
}

/// Keeps the works whose JSON fits in `chars` (at least one); whether some were left out.
fn fit(works: &mut Vec<Work>, chars: usize) -> bool {
    let mut used = 0;
    for (n, w) in works.iter().enumerate() {
        used += approx_chars(w) + 1;
        if used > chars && n > 0 {
            works.truncate(n);
            return true;
        }
    }
    false
}

/// About what a work takes in the answer (its texts and the fields around them).
fn approx_chars(w: &Work) -> usize {
    const FIELDS: usize = 260;
    FIELDS
        + w.title.as_deref().map_or(0, json_chars)
        + w.authors.iter().map(|a| json_chars(a) + 1).sum::<usize>()
        + w.doi.as_deref().map_or(0, json_chars) * 2
        + w.openalex_id.as_deref().map_or(0, json_chars)
}

/// `W123` from OpenAlex's `https://openalex.org/W123`.
fn short_id(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    let id = s.rsplit('/').next()?;
    (id.len() > 1 && id.starts_with('W') && id.bytes().skip(1).all(|b| b.is_ascii_digit()))
        .then(|| id.to_string())
}

fn id_number(id: &str) -> u64 {
    id.get(1..).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", s.get(..at).unwrap_or_default()),
        None => s.to_string(),
    }
}

/// A work as OpenAlex answers it.
fn work_of(w: &Value) -> Work {
    let authors: Vec<String> = at(w, "authorships")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            at(at(a, "author"), "display_name")
                .as_str()
                .or(at(a, "raw_author_name").as_str())
        })
        .map(|a| cut(a, AUTHOR_CHARS))
        .collect();
    let more_authors = authors.len().saturating_sub(AUTHORS_SHOWN);
    Work {
        title: at(w, "display_name")
            .as_str()
            .or(at(w, "title").as_str())
            .map(|t| cut(t, TITLE_CHARS)),
        authors: authors.into_iter().take(AUTHORS_SHOWN).collect(),
        more_authors,
        year: at(w, "publication_year")
            .as_u64()
            .and_then(|y| u32::try_from(y).ok()),
        doi: at(w, "doi")
            .as_str()
            .map(normalize_doi)
            .filter(|d| d.starts_with("10.") && d.len() <= 300),
        openalex_id: at(w, "id").as_str().map(|i| cut(i, 100)),
        cited_by_count: at(w, "cited_by_count").as_u64(),
        cited_by_given: None,
        in_library: None,
    }
}

/// One entry of Crossref's `reference` list (`DOI`, `article-title`, `author` — the first
/// author's name —, `year`, or only `unstructured`).
fn crossref_reference(r: &Value) -> Work {
    let title = at(r, "article-title")
        .as_str()
        .or(at(r, "volume-title").as_str())
        .or(at(r, "unstructured").as_str())
        .map(|t| cut(t, TITLE_CHARS));
    Work {
        title,
        authors: at(r, "author")
            .as_str()
            .map(|a| vec![cut(a, AUTHOR_CHARS)])
            .unwrap_or_default(),
        more_authors: 0,
        year: at(r, "year").as_str().and_then(in_library::year_of),
        doi: at(r, "DOI")
            .as_str()
            .map(normalize_doi)
            .filter(|d| d.starts_with("10.") && d.len() <= 300),
        openalex_id: None,
        cited_by_count: None,
        cited_by_given: None,
        in_library: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        for c in [
            Cursor::OpenAlex {
                list: ListKind::Citing,
                work: "W123".into(),
                per_page: 20,
                skip: 3,
                seen: 40,
                cursor: "IlsxNjA5MzcyODAwMDAwLCAn=".into(),
            },
            Cursor::Offset {
                list: ListKind::References,
                crossref: true,
                offset: 25,
            },
            Cursor::Offset {
                list: ListKind::CoCited,
                crossref: false,
                offset: 5,
            },
        ] {
            assert_eq!(Cursor::decode(&c.encode()), Some(c));
        }
        for bad in [
            "",
            "x.oa.W1.20.0.0.*",
            "c.oa.X1.20.0.0.*",
            "c.oa.W1.0.0.0.*",
            "c.oa.W1.20.20.0.*",
            "c.oa.W1.20.0.0.a&b",
            "c.cr.5",
            "r.at.5",
            "k.oa.W1.20.0.0.*",
            "r.cr.x",
        ] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_page_keeps_what_fits_and_at_least_one() {
        let w = Work {
            title: Some("x".repeat(1_000)),
            ..Work::default()
        };
        let mut works = vec![w.clone(), w.clone(), w];
        assert!(fit(&mut works, 2_000));
        assert_eq!(works.len(), 1);
        let mut one = vec![Work::default()];
        assert!(!fit(&mut one, 10));
    }
}
