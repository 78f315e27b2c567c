//! OpenAlex's works API, the citation graph: one work by its DOI (a singleton, which
//! OpenAlex does not count against its daily allowance) and lists of works by filter
//! (`cites:W…` the works citing W, `cited_by:W…` the works W cites, `openalex:W1|W2` given
//! works), sorted and paged with cursors (`cursor=*`, then `meta.next_cursor`), with only the
//! fields asked for (`select=`). Every request carries `mailto` when a contact is set (and the
//! user agent names it) and `api_key` when one is configured (`ZOTERO_OPENALEX_API_KEY`, a
//! secret: scrubbed from every message like the others); OpenAlex is paced to 10
//! requests a second (`Service::min_interval`), and this process stops at
//! [`OPENALEX_DAILY_REQUESTS`] a day, before OpenAlex itself starts refusing.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{encode_path, encode_query, MetadataServices, Service, ServiceError};

/// The most requests to OpenAlex one process sends in a UTC day: the list requests a free
/// API key allows a day ($1 of $0.10 per 1,000 calls, developers.openalex.org
/// "Authentication & Pricing"); a graph page is one or two of them.
pub const OPENALEX_DAILY_REQUESTS: u32 = 10_000;

/// The most ids one `openalex:` filter takes (OpenAlex ORs at most 100 values).
pub const MAX_IDS_PER_FILTER: usize = 100;

/// One page of a works list.
#[derive(Debug, Clone, Copy)]
pub struct WorksQuery<'a> {
    /// `cites:W…`, `cited_by:W…`, `openalex:W1|W2`, `doi:…`.
    pub filter: &'a str,
    /// E.g. `cited_by_count:desc`.
    pub sort: Option<&'a str>,
    /// 1 to 200 (OpenAlex's `per-page`).
    pub per_page: u32,
    /// `*` for the first page, then the last page's `next_cursor`.
    pub cursor: &'a str,
    /// The fields of each work (`select=`).
    pub select: &'a str,
}

/// A page of works as OpenAlex answers it.
#[derive(Debug, Clone, Default)]
pub struct WorksPage {
    /// The works (each with the selected fields).
    pub results: Vec<Value>,
    /// `meta.count`: how many works the filter matches.
    pub count: u64,
    /// `meta.next_cursor`: `None` on the last page.
    pub next_cursor: Option<String>,
}

impl MetadataServices {
    /// OpenAlex's work with this DOI (`GET /works/doi:{doi}`), its `select`ed fields; `None`
    /// when OpenAlex has no such work.
    pub async fn openalex_work_by_doi(
        &self,
        doi: &str,
        select: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let path = format!(
            "/works/doi:{}?select={}{}",
            encode_path(doi)?,
            encode_query(select),
            self.openalex_manners()
        );
        self.json(Service::OpenAlex, &path, "application/json", cancel)
            .await
    }

    /// One page of the works `query` describes.
    pub async fn openalex_works(
        &self,
        query: &WorksQuery<'_>,
        cancel: &CancellationToken,
    ) -> Result<WorksPage, ServiceError> {
        let mut path = format!(
            "/works?filter={}&per-page={}&cursor={}&select={}",
            encode_query(query.filter),
            query.per_page,
            encode_query(query.cursor),
            encode_query(query.select)
        );
        if let Some(sort) = query.sort {
            path.push_str(&format!("&sort={}", encode_query(sort)));
        }
        path.push_str(&self.openalex_manners());
        let answer = self
            .json(Service::OpenAlex, &path, "application/json", cancel)
            .await?
            .unwrap_or(Value::Null);
        let results = answer
            .get("results")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| ServiceError::BadAnswer {
                service: Service::OpenAlex.name(),
                reason: "a works list without 'results'".into(),
            })?;
        let meta = answer.get("meta");
        Ok(WorksPage {
            results,
            count: meta
                .and_then(|m| m.get("count"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
            next_cursor: meta
                .and_then(|m| m.get("next_cursor"))
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string),
        })
    }

    /// `&mailto=…` (OpenAlex's polite pool) when a contact is set, `&api_key=…` when a key is.
    fn openalex_manners(&self) -> String {
        let mut q = String::new();
        if let Some(mail) = &self.config.contact_email {
            q.push_str(&format!("&mailto={}", encode_query(mail)));
        }
        if let Some(key) = &self.config.openalex_api_key {
            q.push_str(&format!("&api_key={}", encode_query(key.expose())));
        }
        q
    }

    /// Counts one request to `s` against its daily allowance (OpenAlex's only); refused
    /// once the day's are spent.
    pub(super) fn spend(&self, s: Service) -> Result<(), ServiceError> {
        let day = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400);
        self.spend_on(s, day)
    }

    pub(super) fn spend_on(&self, s: Service, day: u64) -> Result<(), ServiceError> {
        if s != Service::OpenAlex {
            return Ok(());
        }
        let mut spent = zotero_net::lock(&self.openalex_day);
        if spent.0 != day {
            *spent = (day, 0);
        }
        if spent.1 >= OPENALEX_DAILY_REQUESTS {
            return Err(ServiceError::DailyBudget {
                service: s.name(),
                limit: OPENALEX_DAILY_REQUESTS,
            });
        }
        spent.1 += 1;
        Ok(())
    }
}
