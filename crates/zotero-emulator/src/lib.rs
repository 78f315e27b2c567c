//! A stateful emulator of the Zotero Web API v3 (api.zotero.org) for integration tests.
//!
//! One wiremock `MockServer` with a single catch-all responder that dispatches on method and
//! path over shared state. Behaviour follows the real server (github.com/zotero/dataserver):
//! parameter validation and error bodies, quick search, tag/itemType filters, sorting, paging
//! with `Total-Results` and `Link`, plus injectable faults (429, 503, 500, dropped connections,
//! slow answers, `Backoff`). See `fixtures/README.md` for the default library.
//!
//! Writes (`writes.rs`, `apply.rs`, `validate.rs`), item templates (`schema.rs`), the file
//! upload protocol (`files.rs`, with a fake S3 bucket in `s3.rs`) and a fake web host and arXiv
//! (`web.rs`) live on the same server.

mod apply;
mod dates;
mod files;
mod keyorder;
mod library;
mod mappings;
mod params;
mod props;
mod routes;
mod s3;
mod schema;
mod search;
mod shape;
mod storage;
mod util;
mod validate;
mod web;
mod writes;

pub use library::{Library, TITLE_WORDS};
pub use storage::StoredFile;
pub use web::HostedFile;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

/// The library owner's user id (the recordings' user, "Z public library").
pub const USER_ID: u64 = 475425;
/// The only API key the emulator accepts (24 characters, like real keys).
pub const API_KEY: &str = "EmuKey0123456789abcdefAB";

/// How much of a request body is kept in [`Recorded::body`].
pub const RECORDED_BODY_LIMIT: usize = 64 * 1024;

/// One request as the emulator received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Header names are lower case.
    pub headers: Vec<(String, String)>,
    /// The first [`RECORDED_BODY_LIMIT`] bytes of the body (uploads can be huge).
    pub body: Vec<u8>,
    /// The full length of the body.
    pub body_len: usize,
}

impl Recorded {
    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How a `Retry-After` header is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: N`
    Seconds(u64),
    /// `Retry-After: <HTTP-date N seconds from now>`
    HttpDate(u64),
}

/// What an injected fault does to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// `429 Too Many Requests` with `Retry-After`; the request is not processed.
    RateLimited { retry_after: RetryAfter },
    /// `503 Service unavailable`, optionally with `Retry-After` and `Backoff`; not processed.
    Unavailable {
        retry_after: Option<RetryAfter>,
        backoff: Option<u64>,
    },
    /// `500 An error occurred`; not processed.
    ServerError,
    /// Any status with a plain-text body; not processed.
    Status(u16),
    /// The request is processed normally, then the connection is cut mid-answer.
    Drop,
    /// The normal answer, delayed by this much (on top of the latency).
    Slow(Duration),
    /// The normal answer (even a 200) carrying `Backoff: N`.
    BackoffHeader(u64),
    /// Another client edits the item the request is about (`…/items/KEY…`) just before
    /// the request is processed normally: the item's version and the library's go up.
    EditedElsewhere,
}

/// A fault for the next `times` requests that pass its filters (all requests by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    /// Only paths starting with this.
    pub path_prefix: Option<String>,
    /// Only paths ending with this.
    pub path_suffix: Option<String>,
    /// Only paths containing this.
    pub path_contains: Option<String>,
    /// Only this method (compared case-insensitively).
    pub method: Option<String>,
    /// Only bodies containing this (searched in the recorded first 64 KiB).
    pub body_contains: Option<String>,
    /// Let this many matching requests pass before the fault applies.
    pub skip: usize,
    pub times: usize,
}

impl Fault {
    /// A fault for the next request (any path).
    pub fn once(kind: FaultKind) -> Fault {
        Fault::times(kind, 1)
    }
    /// A fault for the next `n` requests (any path).
    pub fn times(kind: FaultKind, n: usize) -> Fault {
        Fault {
            kind,
            path_prefix: None,
            path_suffix: None,
            path_contains: None,
            method: None,
            body_contains: None,
            skip: 0,
            times: n,
        }
    }
    /// Restricts the fault to paths starting with `prefix`.
    pub fn on(mut self, prefix: &str) -> Fault {
        self.path_prefix = Some(prefix.to_string());
        self
    }
    /// Restricts the fault to paths ending with `suffix` (e.g. `/file`).
    pub fn path_suffix(mut self, suffix: &str) -> Fault {
        self.path_suffix = Some(suffix.to_string());
        self
    }
    /// Restricts the fault to paths containing `part` (e.g. `/s3/`).
    pub fn path_contains(mut self, part: &str) -> Fault {
        self.path_contains = Some(part.to_string());
        self
    }
    /// Restricts the fault to one method (`POST`, `PATCH`, ...).
    pub fn method(mut self, method: &str) -> Fault {
        self.method = Some(method.to_string());
        self
    }
    /// Restricts the fault to requests whose body contains `text` (e.g. `upload=`).
    pub fn body_contains(mut self, text: &str) -> Fault {
        self.body_contains = Some(text.to_string());
        self
    }
    /// Lets the first `n` matching requests through untouched.
    pub fn skip(mut self, n: usize) -> Fault {
        self.skip = n;
        self
    }

    fn matches(&self, r: &Recorded) -> bool {
        let body_has = |t: &str| {
            let t = t.as_bytes();
            !t.is_empty() && r.body.windows(t.len()).any(|w| w == t)
        };
        self.path_prefix
            .as_ref()
            .is_none_or(|p| r.path.starts_with(p.as_str()))
            && self
                .path_suffix
                .as_ref()
                .is_none_or(|p| r.path.ends_with(p.as_str()))
            && self
                .path_contains
                .as_ref()
                .is_none_or(|p| r.path.contains(p.as_str()))
            && self
                .method
                .as_ref()
                .is_none_or(|m| r.method.eq_ignore_ascii_case(m))
            && self.body_contains.as_ref().is_none_or(|t| body_has(t))
    }
}

/// The emulator's mutable state, shared by the responder and the test.
pub(crate) struct State {
    /// Items in creation order (the order is the tie-breaker `itemID` of the real server).
    pub(crate) items: Vec<serde_json::Value>,
    pub(crate) collections: Vec<serde_json::Value>,
    /// The library version: the highest version of any object; bumped by every write.
    pub(crate) version: u64,
    /// Full-text content per item key (only `qmode=everything` searches it).
    pub(crate) fulltext: HashMap<String, String>,
    /// Stored files, the fake S3 bucket, queued uploads, the quota.
    pub(crate) files: storage::FileStore,
    /// The fake web host and arXiv.
    pub(crate) web: web::WebState,
    /// `Zotero-Write-Token`s of successful writes (per key).
    pub(crate) write_tokens: HashSet<String>,
    /// Fields this server's older schema lacks (`Emulator::drop_field`); see `State::schema`.
    pub(crate) dropped_fields: schema::DroppedFields,
    requests: Vec<Recorded>,
    faults: VecDeque<Fault>,
    latency: Duration,
}

/// A running emulator. Dropping it stops the server.
pub struct Emulator {
    server: MockServer,
    state: Arc<Mutex<State>>,
}

impl Emulator {
    /// An emulator serving the default library of `fixtures/library/`.
    pub async fn start() -> Emulator {
        Emulator::with_library(Library::from_fixtures()).await
    }

    /// An emulator serving `lib`.
    pub async fn with_library(lib: Library) -> Emulator {
        let version = lib.effective_version();
        let files = storage::FileStore::new(&lib.items);
        let state = Arc::new(Mutex::new(State {
            items: lib.items,
            collections: lib.collections,
            version,
            fulltext: HashMap::new(),
            files,
            web: web::WebState::default(),
            write_tokens: HashSet::new(),
            dropped_fields: schema::DroppedFields::new(),
            requests: Vec::new(),
            faults: VecDeque::new(),
            latency: Duration::ZERO,
        }));
        // No request recording in wiremock: bodies can be huge uploads, and `Recorded` keeps
        // what tests need.
        let server = MockServer::builder()
            .disable_request_recording()
            .start()
            .await;
        let responder = Responder {
            base: server.uri(),
            state: state.clone(),
        };
        Mock::given(wiremock::matchers::any())
            .respond_with(responder)
            .mount(&server)
            .await;
        Emulator { server, state }
    }

    /// The base URI clients use (as `ZOTERO_API_BASE`), e.g. `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// Every request received so far, in order (including those that hit a fault).
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// How many requests with this method had a path starting with `path_prefix`.
    pub fn count(&self, method: &str, path_prefix: &str) -> usize {
        let st = self.state.lock().unwrap();
        st.requests
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && r.path.starts_with(path_prefix))
            .count()
    }

    /// Forgets the recorded requests.
    pub fn reset_counts(&self) {
        self.state.lock().unwrap().requests.clear();
    }

    /// Queues a fault (faults are matched first-in, first-out).
    pub fn inject(&self, fault: Fault) {
        if fault.times > 0 {
            self.state.lock().unwrap().faults.push_back(fault);
        }
    }

    /// How many injected fault hits have not happened yet (0: every fault fired).
    pub fn faults_pending(&self) -> usize {
        self.state
            .lock()
            .unwrap()
            .faults
            .iter()
            .map(|f| f.times)
            .sum()
    }

    /// A delay added to every answer.
    pub fn set_latency(&self, d: Duration) {
        self.state.lock().unwrap().latency = d;
    }

    /// Sets the full-text content of an item (searched by `qmode=everything`).
    pub fn set_fulltext(&self, item_key: &str, text: &str) {
        let mut st = self.state.lock().unwrap();
        st.fulltext.insert(item_key.to_string(), text.to_string());
    }

    /// The current library version.
    pub fn library_version(&self) -> u64 {
        self.state.lock().unwrap().version
    }

    /// The stored JSON of an item (as kept, before derived `meta`/`links` are filled in).
    pub fn item(&self, key: &str) -> Option<serde_json::Value> {
        let st = self.state.lock().unwrap();
        st.items.iter().find(|i| i["key"] == key).cloned()
    }
}

/// An answer before it becomes a wiremock `ResponseTemplate`.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// `None`: no body at all.
    pub(crate) content_type: Option<String>,
}

impl Answer {
    /// A plain-text error answer, as the real server writes them.
    pub(crate) fn text(status: u16, body: &str) -> Answer {
        Answer::raw(
            status,
            body.as_bytes().to_vec(),
            "text/plain; charset=utf-8",
        )
    }

    pub(crate) fn json(value: &serde_json::Value) -> Answer {
        Answer::raw(
            200,
            serde_json::to_vec_pretty(value).unwrap(),
            "application/json",
        )
    }

    /// Any body with this content type (`""` sends no `Content-Type`).
    pub(crate) fn raw(status: u16, body: Vec<u8>, content_type: &str) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body,
            content_type: Some(content_type.to_string()),
        }
    }

    /// No body (204, 302, ...).
    pub(crate) fn empty(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            content_type: None,
        }
    }

    pub(crate) fn header(mut self, name: &str, value: impl ToString) -> Answer {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

struct Responder {
    base: String,
    state: Arc<Mutex<State>>,
}

fn retry_after_value(r: RetryAfter) -> String {
    match r {
        RetryAfter::Seconds(s) => s.to_string(),
        RetryAfter::HttpDate(s) => {
            httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(s))
        }
    }
}

impl Respond for Responder {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let recorded = Recorded {
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
        };
        let mut st = self.state.lock().unwrap();
        st.requests.push(recorded.clone());
        let latency = st.latency;
        let fault = take_fault(&mut st.faults, &recorded);

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
            Some(FaultKind::EditedElsewhere) => {
                writes::edited_elsewhere(&mut st, &recorded.path);
                routes::handle(&mut st, &self.base, &recorded, &request.body)
            }
            _ => routes::handle(&mut st, &self.base, &recorded, &request.body),
        };
        drop(st);

        let mut delay = latency;
        match fault {
            Some(FaultKind::Slow(d)) => delay += d,
            Some(FaultKind::BackoffHeader(n)) => answer = answer.header("Backoff", n),
            _ => {}
        }
        let dropped = matches!(fault, Some(FaultKind::Drop));
        to_template(answer, delay, dropped)
    }
}

fn take_fault(faults: &mut VecDeque<Fault>, r: &Recorded) -> Option<FaultKind> {
    let idx = faults.iter().position(|f| f.matches(r))?;
    let f = &mut faults[idx];
    if f.skip > 0 {
        f.skip -= 1;
        return None;
    }
    let kind = f.kind.clone();
    f.times -= 1;
    if f.times == 0 {
        faults.remove(idx);
    }
    Some(kind)
}

fn to_template(mut answer: Answer, delay: Duration, dropped: bool) -> ResponseTemplate {
    let mut status = answer.status;
    if dropped && matches!(status, 204 | 304) {
        // These statuses carry no body, so there is nothing to cut: send one that does.
        status = 200;
    }
    if dropped && answer.body.is_empty() {
        // hyper sends an empty body as complete whatever Content-Length says.
        answer.body = b" ".to_vec();
    }
    let mut t = ResponseTemplate::new(status).insert_header("Zotero-API-Version", "3");
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
