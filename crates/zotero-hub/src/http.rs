//! Requests to the Hub: the guarded client's one request with retries and redirects, the
//! `HEAD` that tells a file's commit, ETag and size, and how URLs are shown and resolved.

use std::time::Duration;

use http_body_util::Empty;
use hyper::header::{
    HeaderMap, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_LENGTH, LOCATION, RANGE, USER_AGENT,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use zotero_net::{find_forbidden, user_agent, Attempt, ErrorChain, Retry, RetryError};

use crate::cache::{Job, ModelCache};
use crate::config::is_commit;
use crate::error::{ModelCacheError, Result, MAX_REDIRECTS};

/// What the Hub says of one file at a revision.
#[derive(Debug, Clone)]
pub(crate) struct FileMeta {
    pub(crate) commit: String,
    /// Normalized (no `W/`, no quotes): the blob's name.
    pub(crate) etag: String,
    pub(crate) size: u64,
    /// Where to GET it (the CDN for an LFS file).
    pub(crate) location: Uri,
}

/// A timeout as a message says it: whole seconds as `30 s`, anything else in milliseconds
/// (`400 ms`, never rounded down to `0 s`).
pub(crate) fn shown_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis().max(1))
    }
}

pub(crate) fn host_of(u: &Uri) -> String {
    u.authority().map(|a| a.to_string()).unwrap_or_default()
}

/// The URL without its query (a CDN URL's query is a signature: never shown).
pub(crate) fn shown(u: &Uri) -> String {
    format!(
        "{}://{}{}",
        u.scheme_str().unwrap_or("http"),
        host_of(u),
        u.path()
    )
}

pub(crate) fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

fn normalize_etag(e: &str) -> String {
    e.trim()
        .strip_prefix("W/")
        .unwrap_or(e.trim())
        .trim_matches('"')
        .to_string()
}

/// Why a request got no answer: an address the guard refused (not retried), or anything else.
enum SendFailure {
    Forbidden(String),
    Other(String),
}

/// A blob name must not leave `blobs/`.
fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `Location` resolved against the URL it answered.
pub(crate) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.parse().ok();
    }
    let scheme = base.scheme_str()?;
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}").parse().ok();
    }
    let authority = base.authority()?;
    if location.starts_with('/') {
        return format!("{scheme}://{authority}{location}").parse().ok();
    }
    let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
    format!("{scheme}://{authority}{dir}/{location}")
        .parse()
        .ok()
}

fn quote(s: &str) -> String {
    // What `huggingface_hub` quotes: the revision entirely (`/` too), a path but its `/`.
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%2D", "-")
        .replace("%2E", ".")
        .replace("%5F", "_")
        .replace("%7E", "~")
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ModelCache {
    fn check_url(&self, u: &Uri) -> Result<()> {
        match u.scheme_str() {
            Some("https") => Ok(()),
            Some("http")
                if self.config.allow_http_loopback && u.host().is_some_and(is_loopback) =>
            {
                Ok(())
            }
            _ => Err(ModelCacheError::Insecure { url: shown(u) }),
        }
    }

    /// One request (retried on 429, 5xx and network failures), with the token only for the
    /// endpoint's own host.
    pub(crate) async fn send(
        &self,
        job: &Job<'_>,
        method: Method,
        url: &Uri,
        from: Option<u64>,
    ) -> Result<Response<hyper::body::Incoming>> {
        self.check_url(url)?;
        let endpoint_host = self
            .config
            .endpoint
            .parse::<Uri>()
            .ok()
            .map(|u| host_of(&u));
        let with_token = endpoint_host.as_deref() == Some(host_of(url).as_str());
        let build = || {
            let mut r = Request::builder()
                .method(method.clone())
                .uri(url.clone())
                .header(USER_AGENT, user_agent())
                // The size of the file, not of a compressed answer.
                .header(ACCEPT_ENCODING, "identity");
            if let (true, Some(t)) = (with_token, &self.config.token) {
                r = r.header(AUTHORIZATION, format!("Bearer {t}"));
            }
            if let Some(n) = from.filter(|n| *n > 0) {
                r = r.header(RANGE, format!("bytes={n}-"));
            }
            r.body(Empty::new())
        };
        let retry = Retry {
            policy: &self.config.retry,
            gate: None,
            repeatable: true,
            cancel: job.cancel,
        };
        let outcome = retry
            .run(|_| async {
                let req = match build() {
                    Ok(r) => r,
                    Err(e) => return Attempt::Fatal(SendFailure::Other(e.to_string())),
                };
                match tokio::time::timeout(self.config.timeout, self.client.request(req)).await {
                    Err(_) => Attempt::Failed(SendFailure::Other(format!(
                        "no answer within {}",
                        shown_duration(self.config.timeout)
                    ))),
                    Ok(Err(e)) => match find_forbidden(&e) {
                        // Not retried: the address will not change its nature.
                        Some(f) => Attempt::Fatal(SendFailure::Forbidden(f.to_string())),
                        None => Attempt::Failed(SendFailure::Other(ErrorChain(&e).to_string())),
                    },
                    Ok(Ok(resp)) => {
                        let wait =
                            zotero_net::retry_after(resp.headers(), std::time::SystemTime::now());
                        Attempt::judge(resp.status().as_u16(), wait, resp)
                    }
                }
            })
            .await;
        match outcome {
            Ok((resp, _)) => Ok(resp),
            Err(RetryError::Cancelled) => Err(ModelCacheError::Cancelled {
                model: job.id.to_string(),
            }),
            Err(RetryError::WaitTooLong {
                answer: Some(resp), ..
            }) => Ok(resp),
            Err(RetryError::WaitTooLong { wait, answer: None }) => Err(ModelCacheError::Network {
                model: job.id.to_string(),
                host: host_of(url),
                reason: format!("asked to wait {} s", wait.as_secs()),
            }),
            Err(RetryError::Failed(SendFailure::Forbidden(address))) => {
                Err(ModelCacheError::Forbidden {
                    model: job.id.to_string(),
                    address,
                })
            }
            Err(RetryError::Failed(SendFailure::Other(reason))) => Err(ModelCacheError::Network {
                model: job.id.to_string(),
                host: host_of(url),
                reason: self.config.scrub(&reason),
            }),
        }
    }

    /// The error an unsuccessful answer of the Hub means.
    pub(crate) fn status_error(
        &self,
        job: &Job<'_>,
        revision: &str,
        file: &str,
        url: &Uri,
        h: &HeaderMap,
        status: StatusCode,
    ) -> ModelCacheError {
        let code = header(h, "x-error-code").unwrap_or("");
        let message = self
            .config
            .scrub(header(h, "x-error-message").unwrap_or(""));
        let endpoint = self.config.endpoint.clone();
        let model = job.id.to_string();
        let s = status.as_u16();
        match (s, code) {
            (_, "GatedRepo") | (403, _) => ModelCacheError::Gated {
                model,
                status: s,
                advice: if self.config.has_token() {
                    format!("the token in HF_TOKEN has no access to it: accept its terms on {endpoint}/{} with that account, or set HF_TOKEN to another token", job.id)
                } else {
                    format!("accept its terms on {endpoint}/{} and set HF_TOKEN to a token of that account", job.id)
                },
                endpoint,
            },
            (_, "RepoNotFound") => ModelCacheError::RepoNotFound { model, endpoint },
            (401, _) => ModelCacheError::Gated {
                model,
                status: s,
                advice: if self.config.has_token() {
                    "the token in HF_TOKEN was refused: set HF_TOKEN to a valid token that may read it".to_string()
                } else {
                    format!("it needs a login: set HF_TOKEN to a token that may read it (and accept its terms on {endpoint}/{} if it is gated)", job.id)
                },
                endpoint,
            },
            (_, "RevisionNotFound") => ModelCacheError::RevisionNotFound {
                model,
                revision: revision.to_string(),
                endpoint,
            },
            (404, _) => ModelCacheError::FileNotFound {
                model,
                revision: revision.to_string(),
                file: file.to_string(),
            },
            _ => ModelCacheError::Status {
                model,
                url: shown(url),
                status: s,
                message: if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                },
            },
        }
    }

    fn resolve_url(&self, id: &str, revision: &str, file: &str) -> String {
        let path = file.split('/').map(quote).collect::<Vec<_>>().join("/");
        format!(
            "{}/{id}/resolve/{}/{path}",
            self.config.endpoint,
            quote(revision)
        )
    }

    /// `HEAD …/resolve/{revision}/{file}`, following the Hub's own redirects (a renamed
    /// repo) but not the one to the CDN, whose headers say what the file is.
    pub(crate) async fn head(&self, job: &Job<'_>, revision: &str, file: &str) -> Result<FileMeta> {
        let first = self.resolve_url(job.id, revision, file);
        let mut url: Uri = first.parse().map_err(|_| ModelCacheError::NotAHub {
            url: first.clone(),
            reason: "HF_ENDPOINT does not make a valid URL".to_string(),
        })?;
        for _ in 0..=MAX_REDIRECTS {
            let resp = self.send(job, Method::HEAD, &url, None).await?;
            let status = resp.status();
            let h = resp.headers();
            let not_hub = |reason: &str| ModelCacheError::NotAHub {
                url: shown(&url),
                reason: reason.to_string(),
            };
            let location = if status.is_redirection() {
                let loc = header(h, LOCATION.as_str())
                    .and_then(|l| resolve(&url, l))
                    .ok_or_else(|| not_hub("a redirect without a usable Location"))?;
                if host_of(&loc) == host_of(&url) && h.get("x-linked-etag").is_none() {
                    url = loc;
                    continue;
                }
                loc
            } else if status.is_success() {
                // GET at the commit, not the branch: every file of one commit even if the
                // branch moves meanwhile.
                match header(h, "x-repo-commit").filter(|c| is_commit(c)) {
                    Some(c) if url.to_string() == first => self
                        .resolve_url(job.id, c, file)
                        .parse()
                        .unwrap_or_else(|_| url.clone()),
                    _ => url.clone(),
                }
            } else {
                return Err(self.status_error(job, revision, file, &url, h, status));
            };
            let commit = header(h, "x-repo-commit")
                .filter(|c| is_commit(c))
                .ok_or_else(|| not_hub("no X-Repo-Commit commit hash"))?
                .to_string();
            let etag = header(h, "x-linked-etag")
                .or_else(|| header(h, "etag"))
                .map(normalize_etag)
                .filter(|e| safe_name(e))
                .ok_or_else(|| not_hub("no usable ETag"))?;
            let size = header(h, "x-linked-size")
                .or_else(|| {
                    (!status.is_redirection())
                        .then(|| header(h, CONTENT_LENGTH.as_str()))
                        .flatten()
                })
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| not_hub("no size (X-Linked-Size or Content-Length)"))?;
            return Ok(FileMeta {
                commit,
                etag,
                size,
                location,
            });
        }
        Err(ModelCacheError::TooManyRedirects { url: first })
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_shown_without_rounding_to_zero() {
        assert_eq!(shown_duration(Duration::from_millis(400)), "400 ms");
        assert_eq!(shown_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(shown_duration(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(shown_duration(Duration::from_micros(10)), "1 ms");
    }

    #[test]
    fn urls_resolve_and_quote() {
        let base: Uri = "https://huggingface.co/a/b/resolve/main/x".parse().unwrap();
        assert_eq!(
            resolve(&base, "/api/x").unwrap().to_string(),
            "https://huggingface.co/api/x"
        );
        assert_eq!(
            resolve(&base, "https://cdn-lfs.hf.co/r?s=1")
                .unwrap()
                .to_string(),
            "https://cdn-lfs.hf.co/r?s=1"
        );
        assert_eq!(quote("refs/pr/1"), "refs%2Fpr%2F1");
        assert_eq!(
            quote("config_sentence-transformers.json"),
            "config_sentence-transformers.json"
        );
        assert_eq!(normalize_etag("W/\"abc\""), "abc");
        assert!(!safe_name("../x") && !safe_name("a/b") && safe_name("abc.def"));
        assert!(is_loopback("127.0.0.1") && is_loopback("localhost") && is_loopback("[::1]"));
        assert!(!is_loopback("example.org"));
    }
}
