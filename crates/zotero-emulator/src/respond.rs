//! From a wiremock request to an answer: recording, injected faults, dispatch to the web API
//! (`routes.rs`) or the desktop local API (`local/`), and the `ResponseTemplate`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use wiremock::{Match, Respond, ResponseTemplate};

use super::answer::Answer;
use super::{local, metadata, routes, take_fault, writes};
use super::{FaultKind, Recorded, RetryAfter, Server, State, RECORDED_BODY_LIMIT};

/// Answers the requests of one server (the web API's or the desktop's).
pub(crate) struct Responder {
    /// The server's own URI, e.g. `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    pub(crate) server: Server,
    pub(crate) state: Arc<Mutex<State>>,
}

fn retry_after_value(r: RetryAfter) -> String {
    match r {
        RetryAfter::Seconds(s) => s.to_string(),
        RetryAfter::HttpDate(s) => {
            httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(s))
        }
    }
}

pub(crate) fn record(request: &wiremock::Request) -> Recorded {
    Recorded {
        method: request.method.as_str().to_string(),
        path: request.url.path().to_string(),
        query: request.url.query_pairs().into_owned().collect(),
        headers: request
            .headers
            .iter()
            .map(|(k, v)| {
                let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (k.as_str().to_ascii_lowercase(), v)
            })
            .collect(),
        body: request.body[..request.body.len().min(RECORDED_BODY_LIMIT)].to_vec(),
        body_len: request.body.len(),
        at: Instant::now(),
        time: SystemTime::now(),
    }
}

impl Respond for Responder {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let recorded = record(request);
        let mut st = self.state.lock().unwrap();
        let web = self.server == Server::Web;
        if web {
            st.requests.push(recorded.clone());
        } else {
            st.local.requests.push(recorded.clone());
        }
        // The desktop is on this machine: no latency, and only faults aimed at it.
        let latency = if web { st.latency } else { Duration::ZERO };
        let fault = take_fault(&mut st.faults, &recorded, self.server);

        let mut answer = match &fault {
            Some(FaultKind::RateLimited { retry_after }) => Answer::text(429, "Too many requests")
                .header("Retry-After", retry_after_value(*retry_after)),
            Some(FaultKind::Unavailable {
                retry_after,
                backoff,
            }) => {
                let mut a = Answer::text(503, "Service unavailable");
                if let Some(r) = retry_after {
                    a = a.header("Retry-After", retry_after_value(*r));
                }
                if let Some(b) = backoff {
                    a = a.header("Backoff", b);
                }
                a
            }
            Some(FaultKind::ServerError) => Answer::text(500, "An error occurred"),
            Some(FaultKind::Status(code)) => {
                Answer::text(*code, &format!("Emulated status {code}"))
            }
            Some(FaultKind::EditedElsewhere) if web => {
                writes::edited_elsewhere(&mut st, &recorded.path);
                routes::handle(&mut st, &self.base, &recorded, &request.body)
            }
            Some(FaultKind::EditedElsewhereWith(edit)) if web => {
                let lib = writes::library_of_path(&recorded.path);
                writes::edit_in_zotero(&mut st, edit, lib);
                routes::handle(&mut st, &self.base, &recorded, &request.body)
            }
            _ if web => routes::handle(&mut st, &self.base, &recorded, &request.body),
            _ => local::handle(&mut st, &self.base, &recorded),
        };
        drop(st);
        if web {
            answer = metadata::finish(answer, &recorded, fault.as_ref());
        }

        let mut delay = latency;
        match fault {
            Some(FaultKind::Slow(d)) => delay += d,
            Some(FaultKind::BackoffHeader(n)) => answer = answer.header("Backoff", n),
            _ => {}
        }
        let dropped = matches!(fault, Some(FaultKind::Drop));
        match fault {
            Some(FaultKind::Truncate(n)) if n < answer.body.len() => {
                // hyper's server refuses (panics in debug builds) a Content-Length its body
                // does not fill, so the part is sent chunked: the body ends early, short
                // of the size the client was told elsewhere (a HEAD, `X-Linked-Size`).
                answer.body.truncate(n);
                answer
                    .headers
                    .retain(|(k, _)| !k.eq_ignore_ascii_case("content-length"));
                answer = answer.header("Transfer-Encoding", "chunked");
            }
            Some(FaultKind::CorruptBody) if !answer.body.is_empty() => {
                let mid = answer.body.len() / 2;
                answer.body[mid] ^= 0x5a;
            }
            _ => {}
        }
        let api_headers: &[(&str, &str)] = if web {
            &[("Zotero-API-Version", "3")]
        } else {
            local::headers::API_HEADERS
        };
        let mut t = to_template(answer, delay, dropped, api_headers);
        if !web {
            for (k, v) in local::headers::SERVER_HEADERS {
                t = t.insert_header(*k, *v);
            }
        }
        t
    }
}

/// Matches the desktop requests its HTTP server drops without an answer (browser requests):
/// the mock it guards answers with an error, so the connection closes with no response.
pub(crate) struct LocalDrop {
    pub(crate) state: Arc<Mutex<State>>,
}

impl Match for LocalDrop {
    fn matches(&self, request: &wiremock::Request) -> bool {
        let recorded = record(request);
        let mut st = self.state.lock().unwrap();
        let drop = local::is_dropped(st.local.release, &recorded);
        if drop {
            st.local.requests.push(recorded);
        }
        drop
    }
}

/// The error a dropped request answers with (hyper then closes the connection).
pub(crate) fn dropped(_: &wiremock::Request) -> std::io::Error {
    std::io::Error::other("the desktop's HTTP server drops browser requests")
}

fn to_template(
    mut answer: Answer,
    delay: Duration,
    dropped: bool,
    api_headers: &[(&str, &str)],
) -> ResponseTemplate {
    let mut status = answer.status;
    if dropped && matches!(status, 204 | 304) {
        // These statuses carry no body, so there is nothing to cut: send one that does.
        status = 200;
    }
    if dropped && answer.body.is_empty() {
        // hyper sends an empty body as complete whatever Content-Length says.
        answer.body = b" ".to_vec();
    }
    let mut t = ResponseTemplate::new(status);
    if !answer.bare {
        for (k, v) in api_headers {
            t = t.insert_header(*k, *v);
        }
    }
    for (k, v) in &answer.headers {
        t = t.append_header(k.as_str(), v.as_str());
    }
    if dropped {
        // Promise more bytes than are sent: hyper ends the body early and aborts the
        // connection, so the client never receives a complete answer.
        let promised = answer.body.len() + 4096;
        t = t
            .insert_header("Content-Length", promised.to_string().as_str())
            .insert_header("Connection", "close");
    }
    t = match &answer.content_type {
        Some(ct) if status != 304 => t.set_body_raw(answer.body, ct),
        _ if dropped => t.set_body_raw(answer.body, ""),
        _ => t,
    };
    if !delay.is_zero() {
        t = t.set_delay(delay);
    }
    t
}
