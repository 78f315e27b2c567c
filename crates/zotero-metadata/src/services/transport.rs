//! The HTTP side of the services: one paced GET, retried and redirected through the address
//! guard, read to a bounded size, and the errors its statuses and refusals make.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::header::{ACCEPT, LOCATION, USER_AGENT};
use hyper::{Request, StatusCode, Uri};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_net::{
    find_forbidden, retry_after, Attempt, ErrorChain, ForbiddenAddress, Retry, RetryError,
};

use super::{
    Answer, MetadataServices, Service, ServiceError, MAX_ANSWER_BYTES, MAX_REDIRECTS,
    MAX_UPSTREAM_TEXT,
};

impl MetadataServices {
    /// GETs `path_and_query` below the service's base (or a whole `https://` URL), paced, retried on 429/5xx, redirects
    /// followed; any status is answered (the caller decides what 404 means).
    pub async fn get(
        &self,
        s: Service,
        path_and_query: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<Answer, ServiceError> {
        let url = if path_and_query.starts_with("https://") || path_and_query.starts_with("http://")
        {
            path_and_query.to_string()
        } else {
            format!("{}{}", self.config.base(s), path_and_query)
        };
        let retry = Retry {
            policy: &self.config.retry,
            gate: None,
            repeatable: true,
            cancel,
        };
        let outcome = retry
            .run(|_| async {
                // A place first, then the turn: the pacing is kept among those let through.
                let _place = match self.pacers.get(&s) {
                    Some(pacer) => match pacer.in_flight.acquire(cancel).await {
                        Ok(place) => Some(place),
                        Err(_) => return Attempt::Fatal(ServiceError::Cancelled),
                    },
                    None => None,
                };
                if let Err(e) = self.take_turn(s, cancel).await {
                    return Attempt::Fatal(e);
                }
                if let Err(e) = self.spend(s) {
                    return Attempt::Fatal(e);
                }
                match self.fetch(s, &url, accept, cancel).await {
                    Ok((answer, wait)) => Attempt::judge(answer.status, wait, answer),
                    Err(e @ ServiceError::Cancelled) => Attempt::Fatal(e),
                    Err(e @ (ServiceError::Network { .. } | ServiceError::Timeout { .. })) => {
                        Attempt::Failed(e)
                    }
                    Err(e) => Attempt::Fatal(e),
                }
            })
            .await;
        match outcome {
            Ok((answer, _)) if answer.status == 429 => Err(ServiceError::RateLimited {
                service: s.name(),
                secs: 0,
            }),
            Ok((answer, _)) => Ok(answer),
            Err(RetryError::Failed(e)) => Err(e),
            Err(RetryError::Cancelled) => Err(ServiceError::Cancelled),
            Err(RetryError::WaitTooLong { wait, .. }) => Err(ServiceError::RateLimited {
                service: s.name(),
                secs: zotero_net::ceil_secs(wait),
            }),
        }
    }

    /// One attempt: the request and its redirects. Answers the `Retry-After` of a 429/503.
    pub(super) async fn fetch(
        &self,
        s: Service,
        url: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<(Answer, Option<Duration>), ServiceError> {
        let mut target: Uri = url.parse().map_err(|e| ServiceError::Network {
            service: s.name(),
            // Not the URL itself: its query may carry the NCBI API key.
            reason: format!("the request URL could not be built: {e}"),
        })?;
        for hop in 0..=MAX_REDIRECTS {
            let request = Request::get(target.clone())
                .header(USER_AGENT, self.user_agent.clone())
                .header(ACCEPT, accept)
                .body(Empty::<Bytes>::new())
                .map_err(|e| ServiceError::Network {
                    service: s.name(),
                    reason: e.to_string(),
                })?;
            let response = tokio::select! {
                r = tokio::time::timeout(self.config.timeout, self.http.request(request)) => r,
                () = cancel.cancelled() => return Err(ServiceError::Cancelled),
            };
            let response = match response {
                Err(_) => {
                    return Err(ServiceError::Timeout {
                        service: s.name(),
                        secs: self.config.timeout.as_secs_f64(),
                    })
                }
                Ok(Err(e)) => {
                    if let Some(forbidden) = find_forbidden(&e) {
                        return Err(forbidden_error(s, forbidden, hop > 0));
                    }
                    return Err(ServiceError::Network {
                        service: s.name(),
                        reason: self.clean(&ErrorChain(&e).to_string()),
                    });
                }
                Ok(Ok(r)) => r,
            };
            let status = response.status();
            if is_redirect(status) {
                let location = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| ServiceError::BadAnswer {
                        service: s.name(),
                        reason: format!("a {status} without a Location"),
                    })?;
                target = resolve(&target, location).ok_or_else(|| ServiceError::BadAnswer {
                    service: s.name(),
                    reason: "a redirect to something that is not an http(s) URL".into(),
                })?;
                continue;
            }
            let wait = retry_after(response.headers(), std::time::SystemTime::now());
            let body = tokio::select! {
                b = tokio::time::timeout(
                    self.config.timeout,
                    Limited::new(response.into_body(), MAX_ANSWER_BYTES).collect(),
                ) => b,
                () = cancel.cancelled() => return Err(ServiceError::Cancelled),
            };
            let body = match body {
                Err(_) => {
                    return Err(ServiceError::Timeout {
                        service: s.name(),
                        secs: self.config.timeout.as_secs_f64(),
                    })
                }
                Ok(Err(e)) => {
                    return Err(ServiceError::BadAnswer {
                        service: s.name(),
                        reason: self.clean(&format!(
                            "the answer could not be read (the most read is {} MB): {e}",
                            MAX_ANSWER_BYTES / (1024 * 1024)
                        )),
                    })
                }
                Ok(Ok(collected)) => collected.to_bytes(),
            };
            return Ok((
                Answer {
                    status: status.as_u16(),
                    body,
                },
                wait,
            ));
        }
        Err(ServiceError::BadAnswer {
            service: s.name(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The JSON of a 200; `None` for a 404 (or what the service says instead); an error
    /// for anything else.
    pub(super) async fn json(
        &self,
        s: Service,
        path_and_query: &str,
        accept: &'static str,
        cancel: &CancellationToken,
    ) -> Result<Option<Value>, ServiceError> {
        let answer = self.get(s, path_and_query, accept, cancel).await?;
        match answer.status {
            200 => serde_json::from_slice(&answer.body).map(Some).map_err(|e| {
                ServiceError::BadAnswer {
                    service: s.name(),
                    reason: self.clean(&e.to_string()),
                }
            }),
            404 | 410 => Ok(None),
            status => Err(self.status_error(s, status, &answer.body)),
        }
    }
}

impl MetadataServices {
    pub(super) fn status_error(&self, s: Service, status: u16, body: &[u8]) -> ServiceError {
        // Only the head of a long body is decoded: the message keeps a few hundred characters.
        let head = body
            .get(..body.len().min(4 * MAX_UPSTREAM_TEXT))
            .unwrap_or(body);
        let text = String::from_utf8_lossy(head);
        let message = self.clean(text.trim());
        ServiceError::Status {
            service: s.name(),
            status,
            message: if message.is_empty() {
                "no reason given".into()
            } else {
                message
            },
        }
    }
}

/// The refusal of a service's address (`redirected`: of the address it redirected to).
pub(super) fn forbidden_error(s: Service, f: &ForbiddenAddress, redirected: bool) -> ServiceError {
    let detail = if redirected {
        format!(
            "it redirected to {f}; refused, as requests to this machine and private networks \
             are unless ZOTERO_FETCH_ALLOW_PRIVATE=1"
        )
    } else {
        format!(
            "refused to connect: {f}; a service on this machine or a private network \
             ({var} pointing there) needs ZOTERO_FETCH_ALLOW_PRIVATE=1",
            var = s.variable()
        )
    };
    ServiceError::Forbidden {
        service: s.name(),
        detail,
    }
}

pub(super) fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// A `Location` against the URL it answered: absolute http(s), or a path on the same host.
pub(super) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.parse().ok();
    }
    if location.starts_with('/') {
        let scheme = base.scheme_str()?;
        let authority = base.authority()?;
        return format!("{scheme}://{authority}{location}").parse().ok();
    }
    None
}
