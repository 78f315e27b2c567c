//! What comes back from Zotero and the helpers every call shares to read it: the answer,
//! the expected-status check with a message that says what to do, JSON, pages (with the
//! `Link` header's next start), and query strings.

use bytes::Bytes;
use hyper::HeaderMap;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::error::{cut_body, UpstreamAnswer, ZoteroError};
use crate::model::WireObject;

#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// How many times the request was sent again before this answer.
    pub retries: u32,
}

impl ApiResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What the error details keep of this answer.
    pub fn answer(&self) -> UpstreamAnswer {
        UpstreamAnswer {
            status: self.status,
            body: cut_body(&self.body),
            retry_after: self.header("retry-after").map(str::to_string),
            request_id: self.header("x-zotero-requestid").map(str::to_string),
        }
    }
}

/// A page of results and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
    pub next_start: Option<u64>,
}

/// Every item of a listing, page after page, following `next_start`.
pub async fn all_pages<T, F, Fut>(mut page_at: F) -> Result<Vec<T>, ZoteroError>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, ZoteroError>>,
{
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let page = page_at(start).await?;
        out.extend(page.items);
        match page.next_start {
            Some(next) if next > start => start = next,
            _ => return Ok(out),
        }
    }
}

pub fn expect(resp: &ApiResponse, status: u16, what: &str) -> Result<(), ZoteroError> {
    if resp.status == status {
        Ok(())
    } else {
        Err(unexpected(resp, what))
    }
}

/// The error for an answer the operation did not expect, with a message that says what to do.
pub fn unexpected(resp: &ApiResponse, what: &str) -> ZoteroError {
    let hint = match resp.status {
        401 | 403 => "Zotero refused the API key: check ZOTERO_API_KEY, and that ZOTERO_USER_ID is the key's own user ID (run `zotero-mcp check`)".to_string(),
        404 => "not found".to_string(),
        429 => "Zotero rate limit exceeded; wait before trying again".to_string(),
        s if s >= 500 => format!("Zotero is failing (HTTP {s}); try again later"),
        s => {
            let body = String::from_utf8_lossy(&resp.body);
            let body = body.trim();
            if body.is_empty() || body.len() > 300 {
                format!("Zotero answered HTTP {s}")
            } else {
                format!("Zotero answered HTTP {s}: {body}")
            }
        }
    };
    ZoteroError::Status {
        message: format!("{what}: {hint}"),
        answer: resp.answer(),
    }
}

pub fn parse_json<T: serde::de::DeserializeOwned>(resp: &ApiResponse) -> Result<T, ZoteroError> {
    serde_json::from_slice(&resp.body).map_err(|e| ZoteroError::BadResponse {
        reason: e.to_string(),
        status: resp.status,
    })
}

pub fn parse_page<T>(
    resp: &ApiResponse,
    what: &str,
    map: impl Fn(&WireObject) -> T,
) -> Result<Page<T>, ZoteroError> {
    parse_page_of(resp, what, |o: WireObject| map(&o))
}

/// A page of any kind of object (`W` as Zotero sends it), mapped to `T`.
pub fn parse_page_of<W: serde::de::DeserializeOwned, T>(
    resp: &ApiResponse,
    what: &str,
    map: impl Fn(W) -> T,
) -> Result<Page<T>, ZoteroError> {
    expect(resp, 200, what)?;
    let objects: Vec<W> = parse_json(resp)?;
    let total = resp
        .header("total-results")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(objects.len() as u64);
    Ok(Page {
        items: objects.into_iter().map(map).collect(),
        total,
        next_start: resp.header("link").and_then(next_start_from_link),
    })
}

/// The `start` of the `rel="next"` URL in a `Link` header, if there is a next page.
pub fn next_start_from_link(link: &str) -> Option<u64> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| matches!(p.trim(), "rel=\"next\"" | "rel=next"));
        if !is_next {
            return None;
        }
        let url = url.trim().trim_start_matches('<').trim_end_matches('>');
        let query = url.split_once('?')?.1;
        Some(
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix("start="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
        )
    })
}

/// Every byte but the RFC 3986 unreserved ones is escaped (so `+`, `&`, `|` and spaces in a
/// quick search or a tag reach Zotero as written).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A query string (`k=v&k=v`) with every key and value percent-encoded (`%20` for spaces).
pub fn encode_query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One value for a query string or a form body.
pub fn percent_encode(s: &str) -> String {
    utf8_percent_encode(s, QUERY_VALUE).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn link_next_is_found_or_absent() {
        let link = r#"<https://api.zotero.org/users/1/items?limit=25&start=25>; rel="next", <https://api.zotero.org/users/1/items?limit=25&start=75>; rel="last", <https://www.zotero.org/users/1/items>; rel="alternate""#;
        assert_eq!(next_start_from_link(link), Some(25));
        let last = r#"<https://api.zotero.org/users/1/items?limit=25>; rel="first", <https://api.zotero.org/users/1/items?limit=25&start=50>; rel="prev""#;
        assert_eq!(next_start_from_link(last), None);
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(
            encode_query(&[("q", "a b&c"), ("tag", "x || -y")]),
            "q=a%20b%26c&tag=x%20%7C%7C%20-y"
        );
    }

    #[test]
    fn answers_keep_status_body_retry_after_and_request_id() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("120"));
        headers.insert("x-zotero-requestid", HeaderValue::from_static("abc123"));
        let resp = ApiResponse {
            status: 429,
            headers,
            body: Bytes::from_static(b"Too many requests"),
            retries: 2,
        };
        let a = resp.answer();
        assert_eq!(a.status, 429);
        assert_eq!(a.body, "Too many requests");
        assert_eq!(a.retry_after.as_deref(), Some("120"));
        assert_eq!(a.request_id.as_deref(), Some("abc123"));
    }
}
