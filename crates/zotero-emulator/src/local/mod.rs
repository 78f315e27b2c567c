//! The Zotero desktop app's local API (`http://localhost:23119/api/`), as Zotero 9.0.6's
//! `server.js` and `server_localAPI.js` (zotero/zotero) answer: the same libraries as the web
//! API (or a frozen copy of them, [`Emulator::set_local_lag`]), no key, read-only, user
//! `0`, no default limit, no rate limits; browser requests are dropped unanswered. Releases
//! before 9.0.2 check no `Host` and refuse browser requests with a 403 instead
//! ([`DesktopRelease`]).

mod data;
pub(crate) mod headers;
mod render;
mod routes;
pub(crate) mod z10;

pub use z10::DialogAnswer;

use std::collections::BTreeMap;

use super::groups::Group;
use super::libs::{Lib, LibraryId};
use super::{Answer, Emulator, Recorded, State, USER_ID};
use routes::{route, Endpoint, Route};

/// Where the emulated desktop keeps its data: stored files are at
/// `{LOCAL_DATA_DIR}/storage/{KEY}/{filename}` (the local API redirects to `file://` URLs).
pub const LOCAL_DATA_DIR: &str = "/home/user/Zotero";

/// Which desktop HTTP server the local API runs on: the rules for browser requests and the
/// `Host` header changed in Zotero 9.0.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DesktopRelease {
    /// Zotero 9.0.2 to 9.x: `Host` must be local (400 otherwise); browser requests are
    /// dropped without an answer.
    #[default]
    Zotero9,
    /// Zotero 7.0 to 9.0.1: no `Host` check; browser requests get
    /// `403 Request not allowed` (unless their content type would need a CORS preflight).
    Zotero7,
    /// Zotero 10: writes with a key granted in a dialog, `Zotero-Server-ID`, local versions
    /// (`z10/`), served by a raw HTTP/1.0 server that [`Emulator::local_uri`] then names.
    Zotero10,
}

/// What the desktop app holds.
pub(crate) struct LocalState {
    pub(crate) release: DesktopRelease,
    /// Settings → Advanced → "Allow other applications on this computer to communicate
    /// with Zotero" (`httpServer.localAPI.enabled`).
    pub(crate) enabled: bool,
    /// The libraries as they were when the lag began (not synced since); `None`: current.
    pub(crate) snapshot: Option<Snapshot>,
    pub(crate) requests: Vec<Recorded>,
    /// Zotero 10's keys, dialog, server ID, tokens and uploads.
    pub(crate) z10: z10::Z10State,
}

impl Default for LocalState {
    fn default() -> LocalState {
        LocalState {
            release: DesktopRelease::default(),
            enabled: true,
            snapshot: None,
            requests: Vec::new(),
            z10: z10::Z10State::default(),
        }
    }
}

/// A frozen copy of the libraries and groups, versions and all.
pub(crate) struct Snapshot {
    libs: BTreeMap<LibraryId, Lib>,
    groups: BTreeMap<u64, Group>,
}

/// What the local API serves: the current state or the frozen copy.
pub(crate) struct Desktop<'a> {
    pub(crate) libs: &'a BTreeMap<LibraryId, Lib>,
    pub(crate) groups: &'a BTreeMap<u64, Group>,
}

impl Desktop<'_> {
    /// A group the desktop has (synced, and not left out with `on_desktop: false`).
    pub(crate) fn group(&self, id: u64) -> Option<&Group> {
        self.groups.get(&id).filter(|g| g.spec.on_desktop)
    }
}

fn desktop(st: &State) -> Desktop<'_> {
    match &st.local.snapshot {
        Some(s) => Desktop {
            libs: &s.libs,
            groups: &s.groups,
        },
        None => Desktop {
            libs: &st.libs,
            groups: &st.groups,
        },
    }
}

/// An answer of the HTTP server itself (no API headers), `text/plain` as it writes them.
fn bare(status: u16, body: &str) -> Answer {
    let mut a = Answer::raw(status, body.as_bytes().to_vec(), "text/plain");
    a.bare = true;
    a
}

/// A `text/plain` answer of an endpoint.
pub(crate) fn text(status: u16, body: &str) -> Answer {
    Answer::raw(status, body.as_bytes().to_vec(), "text/plain")
}

/// `Host` must be localhost or 127.0.0.1 (or `[::1]`), with an optional port: DNS rebinding
/// protection.
fn host_ok(req: &Recorded) -> bool {
    let Some(host) = req.header("host") else {
        return false;
    };
    let lower = host.to_ascii_lowercase();
    let Some(name) = ["[::1]", "127.0.0.1", "localhost"]
        .into_iter()
        .find(|n| lower.starts_with(n))
    else {
        return false;
    };
    match &lower[name.len()..] {
        "" => true,
        port => port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
    }
}

/// A browser's request (a `Mozilla/` user agent or any `Origin`) without
/// `Zotero-Allowed-Request` (or the connector's header): dropped.
fn from_browser(req: &Recorded) -> bool {
    let browser = req
        .header("user-agent")
        .is_some_and(|ua| ua.starts_with("Mozilla/"))
        || req.header("origin").is_some();
    let allowed = |h: &str| req.header(h).is_some_and(|v| !v.is_empty());
    browser && !allowed("zotero-allowed-request") && !allowed("x-zotero-connector-api-version")
}

/// The desktop drops this request without an answer: it reaches an endpoint (valid host, a
/// known path, GET: other methods are refused first) and comes from a browser.
pub(crate) fn is_dropped(release: DesktopRelease, req: &Recorded) -> bool {
    release == DesktopRelease::Zotero9
        && host_ok(req)
        && req.method == "GET"
        && route(&req.path).is_some()
        && from_browser(req)
}

/// Before 9.0.2, browser requests were refused unless their content type is one a browser
/// sends only after a CORS preflight.
fn refused_before_9_0_2(req: &Recorded) -> bool {
    let simple = [
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "text/plain",
    ];
    let ct = req.header("content-type").map(|c| {
        let base = c.split(';').next().unwrap_or("");
        base.trim().to_string()
    });
    from_browser(req) && !ct.is_some_and(|c| !c.is_empty() && !simple.contains(&c.as_str()))
}

/// JavaScript's `parseInt(s)` (`None` for `NaN`).
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, t) = match t.get(..2) {
        Some("0x" | "0X") => (16, &t[2..]),
        _ => (10, t),
    };
    let digits: String = t
        .chars()
        .take_while(|c| c.is_digit(radix))
        .take(15)
        .collect();
    let n = i64::from_str_radix(&digits, radix).ok()?;
    Some(if neg { -n } else { n })
}

/// Answers one request to the desktop (faults are handled by the caller). `server` is the
/// server's own URI, `http://127.0.0.1:PORT`.
pub(crate) fn handle(st: &mut State, server: &str, req: &Recorded) -> Answer {
    let release = st.local.release;
    if release == DesktopRelease::Zotero10 {
        // Zotero 10 is served by its own HTTP/1.0 server (`z10::wire`).
        return bare(
            503,
            "The emulated Zotero 10 answers at Emulator::local_uri()\n",
        );
    }
    if release == DesktopRelease::Zotero9 && !host_ok(req) {
        return bare(400, "Invalid Host header\n");
    }
    let Some(route) = route(&req.path) else {
        return bare(404, "No endpoint found\n");
    };
    match req.method.as_str() {
        "HEAD" | "OPTIONS" => {
            let mut a = Answer::empty(200);
            a.bare = true;
            return a;
        }
        "GET" => {}
        "POST" => {
            let length = req.header("content-length").unwrap_or("");
            if length.is_empty() || !length.bytes().all(|b| b.is_ascii_digit()) {
                return bare(400, "Content-length not provided\n");
            }
            // Zotero 7-9: every local API endpoint is GET-only.
            return bare(400, "Endpoint does not support method\n");
        }
        _ => return bare(501, "Method not implemented\n"),
    }
    // (From 9.0.2 on, browser requests never get here: they are dropped.)
    if release == DesktopRelease::Zotero7 && refused_before_9_0_2(req) {
        return bare(403, "Request not allowed\n");
    }
    if !st.local.enabled {
        return text(403, "Local API is not enabled");
    }
    let version = req
        .header("zotero-api-version")
        .filter(|v| !v.is_empty())
        .or_else(|| query(req, "v").filter(|v| !v.is_empty()));
    if let Some(v) = version {
        let n = parse_int(v);
        if n != Some(3) && route.endpoint != Endpoint::Root {
            let shown = n.map_or("NaN".to_string(), |n| n.to_string());
            return text(501, &format!("API version not implemented: {shown}"));
        }
    }
    let d = desktop(st);
    let lib = match library_of(&d, &route) {
        Ok(l) => l,
        Err(a) => return a,
    };
    let port = server.rsplit(':').next().unwrap_or("23119");
    let ctx = data::Ctx {
        desktop: d,
        lib,
        api: format!("http://localhost:{port}/api"),
        req,
    };
    render::endpoint(&ctx, &route.endpoint)
}

/// The library a route is about: the user's (`users/0` or the real id) or a group's.
fn library_of(d: &Desktop, route: &Route) -> Result<LibraryId, Answer> {
    if let Some(u) = &route.user {
        let id = parse_int(u);
        if id != Some(0) && id != Some(USER_ID as i64) {
            return Err(text(
                400,
                &format!(
                    "Only data for the logged-in user is available locally -- use userID 0 or {USER_ID}"
                ),
            ));
        }
    }
    if let Some(g) = &route.group {
        let found = parse_int(g)
            .and_then(|g| u64::try_from(g).ok())
            .filter(|g| d.group(*g).is_some() && d.libs.contains_key(&LibraryId::Group(*g)));
        return match found {
            Some(g) => Ok(LibraryId::Group(g)),
            None => Err(text(404, "Not found")),
        };
    }
    Ok(LibraryId::USER)
}

/// The first value of a query parameter (`URLSearchParams.get`).
pub(crate) fn query<'a>(req: &'a Recorded, name: &str) -> Option<&'a str> {
    req.query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

impl Emulator {
    /// `true`: the desktop stops syncing, and its local API keeps serving the libraries as
    /// they are now (versions and all) while the web API goes on changing; `false`: it is
    /// current again.
    pub fn set_local_lag(&self, lag: bool) {
        let mut st = self.state.lock().unwrap();
        if !lag {
            st.local.snapshot = None;
        } else if st.local.snapshot.is_none() {
            // Already lagging: the copy stays as old as it is.
            let copy = Snapshot {
                libs: st.libs.clone(),
                groups: st.groups.clone(),
            };
            st.local.snapshot = Some(copy);
        }
    }

    /// Which desktop release's HTTP server rules apply (default [`DesktopRelease::Zotero9`]).
    pub fn set_desktop_release(&self, release: DesktopRelease) {
        self.state.lock().unwrap().local.release = release;
    }

    /// `false`: the local API is turned off in the desktop's settings (403 `Local API is not
    /// enabled`). On by default.
    pub fn set_local_enabled(&self, enabled: bool) {
        self.state.lock().unwrap().local.enabled = enabled;
    }
}
