//! A stateful emulator of the Zotero Web API v3 (api.zotero.org) and of the Zotero desktop
//! app's local API, for integration tests.
//!
//! One wiremock `MockServer` with a single catch-all responder that dispatches on method and
//! path over shared state. Behaviour follows the real server (github.com/zotero/dataserver):
//! parameter validation and error bodies, quick search, tag/itemType filters, sorting, paging
//! with `Total-Results` and `Link`, plus injectable faults (429, 503, 500, dropped connections,
//! slow answers, `Backoff`). See `fixtures/README.md` for the default library.
//!
//! Every library has its own state (`libs.rs`): the user library and the groups
//! (`groups.rs`), with the key's access to each (`access.rs`). Writes (`writes.rs`,
//! `apply.rs`, `validate.rs`), item templates (`schema.rs`), the file upload protocol
//! (`files.rs`, with a fake S3 bucket in `s3.rs`), a fake web host and arXiv (`web.rs`) and the
//! fake metadata hosts for adding papers by identifier (`metadata/`: doi.org, Crossref,
//! DataCite, arXiv's API, Open Library, NCBI, Unpaywall) and a fake Hugging Face Hub for
//! model downloads (`hf.rs`) live on the same server. A second server plays the desktop app's local API (`local/`) over the
//! same state.

mod access;
mod annotation;
mod answer;
mod apply;
mod cite;
mod collwrites;
mod dates;
mod export;
mod fail;
mod files;
mod formats;
mod fulltext;
mod groups;
mod hf;
mod keyorder;
pub mod largest;
mod library;
mod libs;
mod local;
mod mappings;
mod metadata;
mod oauth;
mod params;
mod props;
mod reads;
mod respond;
mod routes;
mod s3;
mod schema;
mod search;
mod shape;
mod storage;
mod stored;
pub mod testing;
mod util;
mod validate;
mod view;
mod web;
mod writes;

pub use access::{GroupAccess, GroupsAccess, KeyAccess, Role, UserAccess};
pub use groups::{FileEditing, GroupSpec, GroupType, LibraryEditing, LibraryReading};
pub use hf::{git_blob_sha1, sha256_hex, HfFile, HF_CDN_ROOT, HF_ROOT};
pub use library::{Library, TITLE_WORDS};
pub use libs::LibraryId;
pub use local::{DesktopRelease, DialogAnswer, LOCAL_DATA_DIR};
pub use metadata::{crossref_article, openalex_work, ArxivPaper, MetadataHost};
pub use oauth::{Preset, OAUTH_CLIENT_KEY, OAUTH_CLIENT_SECRET, TIMESTAMP_WINDOW_SECS, USERNAME};
pub use storage::StoredFile;
pub use stored::FullText;
pub use view::LibraryView;
pub use web::HostedFile;

pub(crate) use answer::Answer;

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use wiremock::{Mock, MockServer};

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
    /// When the request arrived (monotonic: for spacing between requests).
    pub at: Instant,
    /// When the request arrived (wall clock).
    pub time: SystemTime,
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

    /// The `User-Agent` header.
    pub fn user_agent(&self) -> Option<&str> {
        self.header("user-agent")
    }

    /// The first value of a query parameter.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
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
    /// The request is processed normally, then only the first N bytes (N ≥ 1) of the
    /// answer's body are sent: a download broken off midway. The part is sent chunked (hyper
    /// will not send a `Content-Length` its body does not fill), so the body ends early
    /// rather than with a reset connection; a client knows the size from elsewhere (a HEAD).
    Truncate(usize),
    /// The request is processed normally, then one byte in the middle of the answer's body
    /// is changed (a body that does not match its `ETag`).
    CorruptBody,
    /// The normal answer, delayed by this much (on top of the latency).
    Slow(Duration),
    /// The normal answer (even a 200) carrying `Backoff: N`.
    BackoffHeader(u64),
    /// Another client edits the item the request is about (`…/items/KEY…`) just before
    /// the request is processed normally: the item's version and the library's go up.
    EditedElsewhere,
    /// Another client ("Zotero") makes this edit just before the request is processed
    /// normally: the fields are set on the object, which gets the library's next version, as
    /// the sync upload of a real edit does. A version-checked write based on an earlier read
    /// then gets `412`.
    EditedElsewhereWith(ZoteroEdit),
}

/// Which object an edit made "in Zotero" changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditedObject {
    Item(String),
    Collection(String),
}

/// An edit made "in Zotero" (another client): fields of `data` set to new values (`null`
/// removes the field), in `library` (default: the library of the request the fault hits,
/// or the user library).
#[derive(Debug, Clone, PartialEq)]
pub struct ZoteroEdit {
    pub library: Option<LibraryId>,
    pub object: EditedObject,
    pub fields: Vec<(String, serde_json::Value)>,
}

// `serde_json::Value` has no NaN, so equality is total.
impl Eq for ZoteroEdit {}

impl ZoteroEdit {
    /// An edit of the item `key`.
    pub fn item(key: &str) -> ZoteroEdit {
        ZoteroEdit {
            library: None,
            object: EditedObject::Item(key.to_string()),
            fields: Vec::new(),
        }
    }
    /// An edit of the collection `key`.
    pub fn collection(key: &str) -> ZoteroEdit {
        ZoteroEdit {
            library: None,
            object: EditedObject::Collection(key.to_string()),
            fields: Vec::new(),
        }
    }
    /// Sets `field` of the object's `data` to `value` (`null` removes it).
    pub fn set(mut self, field: &str, value: serde_json::Value) -> ZoteroEdit {
        self.fields.push((field.to_string(), value));
        self
    }
    /// The library the object is in.
    pub fn in_library(mut self, lib: LibraryId) -> ZoteroEdit {
        self.library = Some(lib);
        self
    }
}

/// Which of the emulator's servers a request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The web API (`Emulator::uri`), with the bucket, the web host and arXiv.
    Web,
    /// The desktop app's local API (`Emulator::local_uri`).
    Local,
}

/// A fault for the next `times` requests that pass its filters (all web API requests by
/// default; [`Fault::local`] aims it at the local API instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    /// The server whose requests it hits.
    pub server: Server,
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
            server: Server::Web,
            path_prefix: None,
            path_suffix: None,
            path_contains: None,
            method: None,
            body_contains: None,
            skip: 0,
            times: n,
        }
    }
    /// Aims the fault at the desktop's local API instead of the web API.
    pub fn local(mut self) -> Fault {
        self.server = Server::Local;
        self
    }
    /// Restricts the fault to paths starting with `prefix`.
    pub fn on(mut self, prefix: &str) -> Fault {
        self.path_prefix = Some(prefix.to_string());
        self
    }
    /// Restricts the fault to one fake metadata host (`/crossref/…`, `/ncbi/…`, …).
    pub fn on_host(self, host: MetadataHost) -> Fault {
        self.on(&format!("{}/", host.root()))
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

/// The first fault queued for this request on `server`, counted down and dropped when spent
/// (a fault with `skip` left lets that many matching requests through first).
pub(crate) fn take_fault(
    faults: &mut VecDeque<Fault>,
    r: &Recorded,
    server: Server,
) -> Option<FaultKind> {
    let idx = faults
        .iter()
        .position(|f| f.server == server && f.matches(r))?;
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

/// The emulator's mutable state, shared by the responders and the test.
pub(crate) struct State {
    /// Every library: the user's and each group's.
    pub(crate) libs: BTreeMap<LibraryId, libs::Lib>,
    /// Group settings and versions.
    pub(crate) groups: BTreeMap<u64, groups::Group>,
    /// What the API key may do.
    pub(crate) access: KeyAccess,
    /// zotero.org's OAuth: sign-ins under way and the keys they made (`oauth/`).
    pub(crate) oauth: oauth::OAuthState,
    /// Known files, the fake S3 bucket, queued uploads, quotas.
    pub(crate) files: storage::FileStore,
    /// The fake web host and arXiv.
    pub(crate) web: web::WebState,
    /// The fake metadata hosts (doi.org, Crossref, DataCite, arXiv's API, Open Library, NCBI,
    /// Unpaywall, open-access copies).
    pub(crate) meta: metadata::MetaState,
    /// `Zotero-Write-Token`s of successful writes (per key).
    pub(crate) write_tokens: HashSet<String>,
    /// Fields this server's older schema lacks (`Emulator::drop_field`); see `State::schema`.
    pub(crate) dropped_fields: schema::DroppedFields,
    /// The fake Hugging Face Hub and its CDN.
    pub(crate) hf: hf::HfState,
    /// The desktop app: on/off, its lagging copy, its requests.
    pub(crate) local: local::LocalState,
    /// Web API requests.
    pub(crate) requests: Vec<Recorded>,
    pub(crate) faults: VecDeque<Fault>,
    pub(crate) latency: Duration,
}

/// A running emulator. Dropping it stops its servers.
pub struct Emulator {
    server: MockServer,
    /// The desktop app's HTTP server; `None` once closed.
    local: Mutex<Option<MockServer>>,
    local_uri: String,
    /// Zotero 10's raw HTTP/1.0 server (`local/z10/wire.rs`); aborted once closed.
    local10: Mutex<Option<tokio::task::JoinHandle<()>>>,
    local10_uri: String,
    state: Arc<Mutex<State>>,
}

impl Emulator {
    /// An emulator serving the default library of `fixtures/library/`.
    pub async fn start() -> Emulator {
        Emulator::with_library(Library::from_fixtures()).await
    }

    /// An emulator serving `lib` as the user library (no groups until
    /// [`Emulator::add_group`]).
    pub async fn with_library(lib: Library) -> Emulator {
        let lib = lib.into_lib(libs::LibInfo::user());
        let mut files = storage::FileStore::new();
        files.register(&lib);
        let state = Arc::new(Mutex::new(State {
            libs: BTreeMap::from([(LibraryId::USER, lib)]),
            groups: BTreeMap::new(),
            access: KeyAccess::default(),
            oauth: oauth::OAuthState::default(),
            files,
            web: web::WebState::default(),
            meta: metadata::MetaState::catalogue(),
            write_tokens: HashSet::new(),
            dropped_fields: schema::DroppedFields::new(),
            hf: hf::HfState::default(),
            local: local::LocalState::default(),
            requests: Vec::new(),
            faults: VecDeque::new(),
            latency: Duration::ZERO,
        }));
        let server = serve(&state, Server::Web).await;
        let local = serve(&state, Server::Local).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local10_uri = format!("http://{}/api", listener.local_addr().unwrap());
        let local10 = tokio::spawn(local::z10::wire::serve(listener, state.clone()));
        Emulator {
            server,
            local_uri: format!("{}/api", local.uri()),
            local: Mutex::new(Some(local)),
            local10: Mutex::new(Some(local10)),
            local10_uri,
            state,
        }
    }

    /// The base URI clients use (as `ZOTERO_API_BASE`), e.g. `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// The desktop app's local API base (as `ZOTERO_LOCAL_API_BASE`), e.g.
    /// `http://127.0.0.1:PORT/api`: Zotero 7–9, read-only, over the same libraries.
    /// With [`DesktopRelease::Zotero10`] it names Zotero 10's own server (HTTP/1.0, writes).
    pub fn local_uri(&self) -> String {
        if self.state.lock().unwrap().local.release == DesktopRelease::Zotero10 {
            return self.local10_uri.clone();
        }
        self.local_uri.clone()
    }

    /// Quits the desktop app: its port refuses connections from now on.
    pub fn close_local(&self) {
        drop(self.local.lock().unwrap().take());
        if let Some(task) = self.local10.lock().unwrap().take() {
            task.abort();
        }
    }

    /// Every web API request received so far, in order (including those that hit a fault).
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Every local API request received so far, in order (dropped ones included).
    pub fn local_requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().local.requests.clone()
    }

    /// How many web API requests with this method had a path starting with `path_prefix`.
    pub fn count(&self, method: &str, path_prefix: &str) -> usize {
        let st = self.state.lock().unwrap();
        st.requests
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && r.path.starts_with(path_prefix))
            .count()
    }

    /// Forgets the recorded requests (web and local).
    pub fn reset_counts(&self) {
        let mut st = self.state.lock().unwrap();
        st.requests.clear();
        st.local.requests.clear();
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

    /// A delay added to every web API answer.
    pub fn set_latency(&self, d: Duration) {
        self.state.lock().unwrap().latency = d;
    }
}

/// One of the emulator's servers: a catch-all responder over the shared state (the desktop's
/// also drops browser requests without an answer).
async fn serve(state: &Arc<Mutex<State>>, server: Server) -> MockServer {
    // No request recording in wiremock: bodies can be huge uploads, and `Recorded` keeps
    // what tests need.
    let mock_server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    if server == Server::Local {
        Mock::given(respond::LocalDrop {
            state: state.clone(),
        })
        .respond_with_err(respond::dropped)
        .with_priority(1)
        .mount(&mock_server)
        .await;
    }
    let responder = respond::Responder {
        base: mock_server.uri(),
        server,
        state: state.clone(),
    };
    Mock::given(wiremock::matchers::any())
        .respond_with(responder)
        .mount(&mock_server)
        .await;
    mock_server
}
