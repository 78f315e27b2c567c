//! Zotero 10's local API (`server.js` and `server_localAPI.js` at tag 10.0.0, as
//! `shared/zotero-api-3.md` reads them): writes with a key the user grants in a dialog
//! (scriptable: [`DialogAnswer`]), at most 5 prompts a minute, `Zotero-Server-ID` on answers
//! and required on every write, local versions, the exact-version rule, 50-object batches,
//! the three-step upload, over a raw HTTP/1.0 server ([`wire`]).

mod files;
mod objects;
pub(crate) mod wire;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::super::libs::LibraryId;
use super::super::{Answer, Emulator, Recorded, State, USER_ID};
use super::routes::{route, Endpoint, ItemsFrom, Route};
use super::{bare, desktop, from_browser, host_ok, parse_int, query, text};

/// How the person answers the authorization dialog ("Local API Authorization").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogAnswer {
    /// "Allow": a key for one write (`remember: false`).
    Allow,
    /// "Always Allow": a key kept until "Clear Write Authorizations" (`remember: true`).
    AlwaysAllow,
    /// "Deny": `403 {"denied":true}`.
    Deny,
    /// Esc or the window's close button: Gecko reports button 1, which is "Always Allow".
    Dismiss,
}

/// What the server does with one request.
pub(crate) enum Step {
    Answer(Answer),
    /// The modal dialog opens; the answer waits for the person.
    Dialog {
        app: String,
    },
    /// A browser's request: the connection closes without an answer.
    Drop,
}

/// A key in `localAPIKeys.json`.
#[derive(Debug, Clone)]
pub(crate) struct LocalKey {
    pub(crate) key: String,
    pub(crate) app: String,
    pub(crate) remember: bool,
}

/// What Zotero 10 keeps beyond the libraries.
pub(crate) struct Z10State {
    /// `settings.localAPI.serverID` of the open database.
    pub(crate) server_id: String,
    pub(crate) keys: Vec<LocalKey>,
    script: VecDeque<(DialogAnswer, Duration)>,
    /// When each of the last prompts opened (the sliding 60 s window).
    prompts: VecDeque<tokio::time::Instant>,
    /// The app names of every dialog shown.
    pub(crate) dialogs: Vec<String>,
    /// `Zotero-Write-Token`s, one map for the whole app (not per key).
    tokens: HashSet<String>,
    pub(crate) uploads: HashMap<String, files::LocalUpload>,
    /// `attachmentSyncedHash` per attachment (what `If-Match` compares with).
    pub(crate) synced: HashMap<(LibraryId, String), String>,
    tx: UnboundedSender<DialogAnswer>,
    rx: Arc<tokio::sync::Mutex<UnboundedReceiver<DialogAnswer>>>,
}

impl Default for Z10State {
    fn default() -> Z10State {
        let (tx, rx) = unbounded_channel();
        Z10State {
            server_id: random_string(12),
            keys: Vec::new(),
            script: VecDeque::new(),
            prompts: VecDeque::new(),
            dialogs: Vec::new(),
            tokens: HashSet::new(),
            uploads: HashMap::new(),
            synced: HashMap::new(),
            tx,
            rx: Arc::new(tokio::sync::Mutex::new(rx)),
        }
    }
}

impl Z10State {
    /// What the next dialog waits on: the next scripted answer, else a call to
    /// [`Emulator::answer_dialog`].
    pub(crate) fn dialog_wait(&mut self) -> wire::DialogWait {
        wire::DialogWait {
            scripted: self.script.pop_front(),
            answers: self.rx.clone(),
        }
    }
}

/// `Zotero.Utilities.randomString(n)`: `[0-9A-Za-z]{n}`.
pub(crate) fn random_string(n: usize) -> String {
    const CHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// A compact JSON answer (`JSON.stringify(x)`).
pub(crate) fn compact(status: u16, v: &Value) -> Answer {
    Answer::raw(status, serde_json::to_vec(v).unwrap(), "application/json")
}

/// A 4-space JSON answer (`JSON.stringify(x, null, 4)`).
pub(crate) fn pretty(status: u16, v: &Value) -> Answer {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(v, &mut ser).unwrap();
    Answer::raw(status, out, "application/json")
}

/// The paths only Zotero 10 has.
enum Special {
    Authorize,
    Upload(String),
}

/// A request body as `server.js` hands it on.
pub(crate) enum Data {
    /// No `Content-Type`: the body is `null`.
    None,
    Json(Value),
    /// `text/plain`: the endpoint parses it.
    Text(String),
    /// A form, decoded with `decodeURIComponent` only (`+` stays `+`).
    Form(Map<String, Value>),
    /// Any other type.
    Bytes,
}

/// Which methods the endpoint object supports (`supportedMethods`); others get SV's 400.
fn supports(ep: &Endpoint, method: &str) -> bool {
    let allowed: &[&str] = match ep {
        Endpoint::Items { tags: false, .. } | Endpoint::Collections { .. } | Endpoint::Searches => {
            &["GET", "POST", "DELETE"]
        }
        Endpoint::Item(_) | Endpoint::Collection(_) | Endpoint::Search(_) => {
            &["GET", "PUT", "PATCH", "DELETE"]
        }
        Endpoint::ItemFile { .. } => &["GET", "POST", "PATCH"],
        Endpoint::ItemFullText(_) => &["GET", "PUT"],
        Endpoint::FullText => &["GET", "POST"],
        Endpoint::Tags => &["GET", "DELETE"],
        _ => &["GET"],
    };
    allowed.contains(&method)
}

fn content_type(req: &Recorded) -> Option<String> {
    req.header("content-type").map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    })
}

/// `decodeURIComponent` of each form pair; a malformed escape throws (500).
fn form(body: &[u8]) -> Option<Map<String, Value>> {
    let s = std::str::from_utf8(body).ok()?;
    let mut m = Map::new();
    for pair in s.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        m.insert(decode_uri_component(k)?, json!(decode_uri_component(v)?));
    }
    Some(m)
}

fn decode_uri_component(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Answers one request to Zotero 10, in the order of `server.js` then `server_localAPI.js`.
pub(crate) fn handle(
    st: &mut State,
    server: &str,
    req: &Recorded,
    body: &[u8],
    has_length: bool,
) -> Step {
    let answer = |a| Step::Answer(a);
    if !host_ok(req) {
        return answer(bare(400, "Invalid Host header\n"));
    }
    let special = if req.path == "/api/local/authorize" {
        Some(Special::Authorize)
    } else {
        req.path
            .strip_prefix("/api/local/uploads/")
            .filter(|u| !u.is_empty() && !u.contains('/'))
            .map(|u| Special::Upload(u.to_string()))
    };
    let route = route(&req.path);
    if special.is_none() && route.is_none() {
        return answer(bare(404, "No endpoint found\n"));
    }
    let method = req.method.as_str();
    match method {
        "HEAD" | "OPTIONS" => {
            let mut a = Answer::empty(200);
            a.bare = true;
            return answer(a);
        }
        "GET" | "POST" | "PUT" | "PATCH" | "DELETE" => {}
        _ => return answer(bare(501, "Method not implemented\n")),
    }
    if matches!(method, "POST" | "PUT" | "PATCH") && !has_length {
        return answer(bare(400, "Content-length not provided\n"));
    }
    let supported = match (&special, &route) {
        (Some(_), _) => method == "POST",
        (None, Some(r)) => supports(&r.endpoint, method),
        (None, None) => false,
    };
    if !supported {
        return answer(bare(400, "Endpoint does not support method\n"));
    }
    if from_browser(req) {
        return Step::Drop;
    }
    let ct = content_type(req);
    let json_only = matches!(special, Some(Special::Authorize))
        || route.as_ref().is_some_and(|r| {
            method != "GET" && matches!(r.endpoint, Endpoint::ItemFullText(_) | Endpoint::FullText)
        });
    if json_only && ct.as_deref().is_some_and(|c| c != "application/json") {
        return answer(bare(400, "Endpoint does not support content-type\n"));
    }
    let data = match ct.as_deref() {
        None => Data::None,
        Some("application/json") => match serde_json::from_slice(body) {
            Ok(v) => Data::Json(v),
            Err(_) => return answer(bare(400, "Invalid JSON provided\n")),
        },
        Some("application/x-www-form-urlencoded") => match form(body) {
            Some(m) => Data::Form(m),
            None => return answer(bare(500, "")),
        },
        Some("text/plain") => Data::Text(String::from_utf8_lossy(body).into_owned()),
        Some(_) => Data::Bytes,
    };
    // server_localAPI.js from here.
    if !st.local.enabled {
        return answer(text(403, "Local API is not enabled"));
    }
    match req.header("zotero-server-id") {
        Some(id) if id != st.local.z10.server_id => {
            return answer(text(412, "Zotero-Server-ID does not match this server"));
        }
        None if method != "GET" && !matches!(special, Some(Special::Upload(_))) => {
            return answer(text(428, "Zotero-Server-ID not provided"));
        }
        _ => {}
    }
    match special {
        Some(Special::Authorize) => return authorize(st, &data),
        Some(Special::Upload(u)) => return answer(files::receive(st, &u, &data, body)),
        None => {}
    }
    let Some(route) = route else {
        return answer(bare(404, "No endpoint found\n"));
    };
    let version = req
        .header("zotero-api-version")
        .filter(|v| !v.is_empty())
        .or_else(|| query(req, "v").filter(|v| !v.is_empty()));
    if let Some(v) = version {
        let n = parse_int(v);
        if n != Some(3) && route.endpoint != Endpoint::Root {
            let shown = n.map_or("NaN".to_string(), |n| n.to_string());
            return answer(text(501, &format!("API version not implemented: {shown}")));
        }
    }
    let lib = {
        let d = desktop(st);
        match super::library_of(&d, &route) {
            Ok(l) => l,
            Err(a) => return answer(a),
        }
    };
    if method == "GET" {
        let d = desktop(st);
        let port = server.rsplit(':').next().unwrap_or("23119");
        let ctx = super::data::Ctx {
            desktop: d,
            lib,
            api: format!("http://localhost:{port}/api"),
            req,
        };
        return answer(super::render::endpoint(&ctx, &route.endpoint));
    }
    if let Err(a) = check_key(st, req) {
        return answer(a);
    }
    if let LibraryId::Group(g) = lib {
        let editable = st
            .groups
            .get(&g)
            .is_some_and(|g| g.spec.can_edit(g.spec.role_of(USER_ID)));
        if !editable {
            return answer(text(403, "Write access denied"));
        }
    }
    answer(write(st, server, req, &route, lib, &data))
}

/// The key of a write (`Zotero-API-Key`, else `?key=`, else `Authorization: Bearer`),
/// looked up; a single-use key is deleted right here, whatever happens next.
fn check_key(st: &mut State, req: &Recorded) -> Result<(), Answer> {
    let bearer = req.header("authorization").and_then(|a| {
        let (scheme, token) = a.split_once(' ')?;
        let ok = scheme.eq_ignore_ascii_case("bearer")
            && !token.is_empty()
            && token.bytes().all(|b| b.is_ascii_alphanumeric());
        ok.then_some(token)
    });
    let key = req
        .header("zotero-api-key")
        .filter(|k| !k.is_empty())
        .or_else(|| query(req, "key").filter(|k| !k.is_empty()))
        .or(bearer);
    let Some(key) = key else {
        let mut a = text(
            401,
            "API key required -- POST /api/local/authorize to obtain one",
        );
        a.bare = true;
        return Err(a.header(
            "WWW-Authenticate",
            "Zotero-API-Key realm=\"Zotero Local API\"",
        ));
    };
    let keys = &mut st.local.z10.keys;
    let Some(i) = keys.iter().position(|k| k.key == key) else {
        let mut a = text(401, "Invalid or expired API key");
        a.bare = true;
        return Err(a);
    };
    if !keys[i].remember {
        keys.remove(i);
    }
    Ok(())
}

/// `POST /api/local/authorize` after the Server-ID check: `appName`, the rate limit, then
/// the dialog.
fn authorize(st: &mut State, data: &Data) -> Step {
    let app = match data {
        Data::Json(Value::Object(o)) => o
            .get("appName")
            .and_then(Value::as_str)
            .filter(|a| !a.trim().is_empty()),
        _ => None,
    };
    let Some(app) = app else {
        return Step::Answer(text(400, "appName is required"));
    };
    let z = &mut st.local.z10;
    let now = tokio::time::Instant::now();
    while z
        .prompts
        .front()
        .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
    {
        z.prompts.pop_front();
    }
    if z.prompts.len() >= 5 {
        let age = z
            .prompts
            .front()
            .map_or(0, |t| now.duration_since(*t).as_millis());
        let wait = (60_000u128.saturating_sub(age)).div_ceil(1000).max(1);
        return Step::Answer(
            text(429, "Too many authorization requests").header("Retry-After", wait),
        );
    }
    z.prompts.push_back(now);
    z.dialogs.push(app.to_string());
    Step::Dialog {
        app: app.to_string(),
    }
}

/// The dialog's answer: a new key (stored even when the client has gone), or a denial.
pub(crate) fn dialog_answered(st: &mut State, app: &str, answer: DialogAnswer) -> Answer {
    let remember = match answer {
        DialogAnswer::Deny => return compact(403, &json!({"denied": true})),
        DialogAnswer::Allow => false,
        DialogAnswer::AlwaysAllow | DialogAnswer::Dismiss => true,
    };
    let key = random_string(32);
    st.local.z10.keys.push(LocalKey {
        key: key.clone(),
        app: app.to_string(),
        remember,
    });
    compact(200, &json!({"key": key, "remember": remember}))
}

/// A write to a library endpoint (the key and the library's rights checked).
fn write(
    st: &mut State,
    server: &str,
    req: &Recorded,
    route: &Route,
    lib: LibraryId,
    data: &Data,
) -> Answer {
    let not_here = || text(405, "Method not allowed for this path");
    match (&route.endpoint, req.method.as_str()) {
        (Endpoint::Items { from, top, .. }, m) => {
            if *from != ItemsFrom::Library || *top {
                return not_here();
            }
            match m {
                "POST" => objects::post(st, req, lib, objects::Kind::Item, data),
                _ => objects::delete_many(st, req, lib, objects::Kind::Item),
            }
        }
        (Endpoint::Collections { top, parent }, m) => {
            if *top || parent.is_some() {
                return not_here();
            }
            match m {
                "POST" => objects::post(st, req, lib, objects::Kind::Collection, data),
                _ => objects::delete_many(st, req, lib, objects::Kind::Collection),
            }
        }
        (Endpoint::Item(k), m) => objects::single(st, req, lib, objects::Kind::Item, k, m, data),
        (Endpoint::Collection(k), m) => {
            objects::single(st, req, lib, objects::Kind::Collection, k, m, data)
        }
        (Endpoint::Searches | Endpoint::Search(_), _) => {
            text(501, "The emulator does not model saved searches")
        }
        (Endpoint::Tags, _) => objects::delete_tags(st, req, lib),
        (Endpoint::ItemFile { key, url }, m) => {
            let view = *url || !req.path.ends_with("/file");
            if view {
                return not_here();
            }
            if m == "PATCH" {
                return text(405, "Partial uploads are not supported by the local API");
            }
            files::file(st, server, req, lib, key, data)
        }
        (Endpoint::ItemFullText(k), _) => files::put_fulltext(st, lib, k, data),
        (Endpoint::FullText, _) => files::post_fulltext(st, req, lib, data),
        _ => bare(400, "Endpoint does not support method\n"),
    }
}

/// Another client's edit of the item a local path names (`/api/users/0/items/KEY…`).
pub(crate) fn edited_elsewhere(st: &mut State, path: &str) {
    if let Some(lib) = library_of_local_path(path) {
        let rest: Vec<&str> = path.trim_matches('/').split('/').skip(3).collect();
        if let ["items", key, ..] = rest.as_slice() {
            let web = format!("/{}/items/{key}", lib.path());
            super::super::writes::edited_elsewhere(st, &web);
        }
    }
}

/// The library of a local path (`/api/users/0/…` is the user library).
pub(crate) fn library_of_local_path(path: &str) -> Option<LibraryId> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let id = segs.get(2).and_then(|id| id.parse::<u64>().ok())?;
    match segs.get(1) {
        Some(&"users") => Some(LibraryId::USER),
        Some(&"groups") => Some(LibraryId::Group(id)),
        _ => None,
    }
}

impl Emulator {
    /// The next authorization dialog gets this answer at once.
    pub fn script_dialog(&self, answer: DialogAnswer) {
        self.script_dialog_after(answer, Duration::ZERO);
    }

    /// The next authorization dialog gets this answer after `after` (the person takes
    /// their time; tokio's clock, so a paused test clock drives it).
    pub fn script_dialog_after(&self, answer: DialogAnswer, after: Duration) {
        let mut st = self.state.lock().unwrap();
        st.local.z10.script.push_back((answer, after));
    }

    /// Answers the dialog that is open now (or the next one, without a script): a dialog
    /// with no scripted answer waits for this.
    pub fn answer_dialog(&self, answer: DialogAnswer) {
        let st = self.state.lock().unwrap();
        let _ = st.local.z10.tx.send(answer);
    }

    /// The app names of the authorization dialogs shown so far.
    pub fn dialogs_shown(&self) -> Vec<String> {
        self.state.lock().unwrap().local.z10.dialogs.clone()
    }

    /// A key as if the person had answered a dialog: `remember` = "Always Allow".
    pub fn grant_local_key(&self, app: &str, remember: bool) -> String {
        let key = random_string(32);
        let mut st = self.state.lock().unwrap();
        st.local.z10.keys.push(LocalKey {
            key: key.clone(),
            app: app.to_string(),
            remember,
        });
        key
    }

    /// The keys Zotero holds (`localAPIKeys.json`): `(key, appName, remember)`.
    pub fn local_keys(&self) -> Vec<(String, String, bool)> {
        let st = self.state.lock().unwrap();
        st.local
            .z10
            .keys
            .iter()
            .map(|k| (k.key.clone(), k.app.clone(), k.remember))
            .collect()
    }

    /// Settings → Advanced → "Clear Write Authorizations": every key goes.
    pub fn clear_write_authorizations(&self) {
        self.state.lock().unwrap().local.z10.keys.clear();
    }

    /// The `Zotero-Server-ID` of the open database.
    pub fn server_id(&self) -> String {
        self.state.lock().unwrap().local.z10.server_id.clone()
    }

    /// Zotero opens another database (another data directory): a new `Zotero-Server-ID`;
    /// keys stay (they belong to the profile). The emulator keeps serving the same
    /// libraries (see the README).
    pub fn switch_database(&self) -> String {
        let mut st = self.state.lock().unwrap();
        let id = random_string(12);
        st.local.z10.server_id = id.clone();
        st.local.z10.synced.clear();
        st.local.z10.uploads.clear();
        id
    }
}
