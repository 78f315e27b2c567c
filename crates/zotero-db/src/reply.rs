//! What a request is answered: a body in the shape of an HTTP answer, and the page of a
//! listing the web API's paging rules give (a leaf, so every answering module shares it).

use serde_json::Value;

use crate::query::Params;

/// An answer in the shape of an HTTP one.
#[derive(Debug, Clone)]
pub struct DbAnswer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub total_results: Option<u64>,
    pub library_version: Option<u64>,
    /// Where the next page starts, when there is one (the API's `Link: rel="next"`).
    pub next_start: Option<u64>,
}

impl DbAnswer {
    pub(crate) fn json(value: &Value, total: Option<u64>, version: i64) -> Self {
        Self {
            status: 200,
            content_type: "application/json",
            body: serde_json::to_vec(value).unwrap_or_default(),
            total_results: total,
            library_version: u64::try_from(version).ok(),
            next_start: None,
        }
    }

    /// Says where the next page starts when `end` is short of `total`.
    pub(crate) fn paged(mut self, end: usize, total: usize) -> Self {
        self.next_start = (end < total).then_some(end as u64);
        self
    }

    pub(crate) fn status(status: u16, message: &str) -> Self {
        Self {
            status,
            content_type: "text/plain",
            body: message.as_bytes().to_vec(),
            total_results: None,
            library_version: None,
            next_start: None,
        }
    }

    /// The database cannot serve this request (as the local API says 501): ask another
    /// backend.
    pub fn is_unsupported(&self) -> bool {
        self.status == 501
    }
}

/// The web API's default and largest page.
const DEFAULT_LIMIT: usize = 25;
const MAX_LIMIT: usize = 100;

/// The first and one-past-last index of the page `p` asks for, out of `total`.
pub(crate) fn page_bounds(total: usize, p: &Params) -> (usize, usize) {
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let start = p.start.min(total);
    (start, (start + limit).min(total))
}
