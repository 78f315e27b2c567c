//! zotero.org's OAuth 1.0a key exchange (<https://www.zotero.org/support/dev/web_api/v3/oauth>):
//! `POST /oauth/request` (temporary credentials for a registered application, with its
//! `oauth_callback`), `GET /oauth/authorize` (the new-key form, preset by `library_access`,
//! `notes_access`, `write_access`, `all_groups`, `name`), the person's answer
//! (`POST /oauth/authorize`, what a click on the form sends: a redirect to the callback with
//! `oauth_verifier`, or without it when denied), and `POST /oauth/access` (the approval
//! exchanged once for a new API key: `oauth_token` and `oauth_token_secret` are the key, with
//! `userID` and `username`). Every signed request is checked as RFC 5849 §3.2 says
//! (`sig.rs`): client, timestamp window, single-use nonce, token, signature. Minted keys
//! work on the API with the access they were granted ([`Emulator::oauth_grant_instead`]
//! makes Zotero grant more than asked). What is guessed is in the README.

pub(crate) mod sig;

use std::collections::{BTreeMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::distr::{Alphanumeric, SampleString};

use super::access::{GroupsAccess, KeyAccess, UserAccess};
use super::{Answer, Emulator, Recorded, State, USER_ID};

/// The client key of the application the emulator knows (20 hex digits, as zotero.org's).
pub const OAUTH_CLIENT_KEY: &str = "5a8c1e7b3d9f2046ab1c";
/// Its client secret.
pub const OAUTH_CLIENT_SECRET: &str = "e3b1c9d07a4f5286cd0e";
/// How far a request's `oauth_timestamp` may be from the emulator's clock, in seconds.
pub const TIMESTAMP_WINDOW_SECS: u64 = 300;
/// The emulator user's name, as the access answer gives it.
pub const USERNAME: &str = "z_public_library";

/// The access the authorize URL preset (what the new-key form shows first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub library: bool,
    pub notes: bool,
    pub write: bool,
    /// `all_groups`: `none`, `read` or `write`.
    pub all_groups: &'static str,
}

impl Preset {
    /// What the form shows when the URL presets nothing (guessed: read the library only).
    const DEFAULT: Preset = Preset {
        library: true,
        notes: false,
        write: false,
        all_groups: "none",
    };

    /// The preset with the parameters of `pairs` applied (unknown values are ignored).
    fn with(mut self, pairs: &[(String, String)]) -> Preset {
        for (k, v) in pairs {
            let bit = match v.as_str() {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            };
            match (k.as_str(), bit) {
                ("library_access", Some(b)) => self.library = b,
                ("notes_access", Some(b)) => self.notes = b,
                ("write_access", Some(b)) => self.write = b,
                ("all_groups", _) => {
                    self.all_groups = match v.as_str() {
                        "read" => "read",
                        "write" => "write",
                        "none" => "none",
                        _ => self.all_groups,
                    }
                }
                _ => {}
            }
        }
        self
    }

    /// The key's access (`Zotero_Key`: files go with library access).
    fn access(self) -> KeyAccess {
        KeyAccess {
            user: UserAccess {
                library: self.library,
                files: self.library,
                notes: self.notes,
                write: self.write,
            },
            groups: match self.all_groups {
                "read" => GroupsAccess::All { write: false },
                "write" => GroupsAccess::All { write: true },
                _ => GroupsAccess::None,
            },
        }
    }
}

enum Answered {
    Pending,
    Approved { verifier: String, access: KeyAccess },
    Denied,
}

/// One sign-in's temporary credentials.
struct Temp {
    secret: String,
    callback: String,
    /// What the authorize page was opened with (`None`: not opened yet).
    preset: Option<Preset>,
    answered: Answered,
}

/// zotero.org's side of OAuth: applications, sign-ins under way, nonces seen, minted keys.
pub(crate) struct OAuthState {
    apps: BTreeMap<String, String>,
    temps: BTreeMap<String, Temp>,
    nonces: HashSet<String>,
    /// Keys made by `/oauth/access`, with what they may do.
    pub(crate) keys: BTreeMap<String, KeyAccess>,
    /// What every new key gets instead of what the person approved.
    instead: Option<KeyAccess>,
    /// The presets the authorize page was opened with, in order.
    presets: Vec<Preset>,
}

impl Default for OAuthState {
    fn default() -> OAuthState {
        OAuthState {
            apps: BTreeMap::from([(OAUTH_CLIENT_KEY.into(), OAUTH_CLIENT_SECRET.into())]),
            temps: BTreeMap::new(),
            nonces: HashSet::new(),
            keys: BTreeMap::new(),
            instead: None,
            presets: Vec::new(),
        }
    }
}

/// `oauth_problem=…` (the OAuth Problem Reporting convention) with its status.
fn problem(status: u16, problem: &str) -> Answer {
    Answer::raw(
        status,
        format!("oauth_problem={problem}").into_bytes(),
        "application/x-www-form-urlencoded",
    )
}

fn random(n: usize, hex: bool) -> String {
    if hex {
        (0..n)
            .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap())
            .collect()
    } else {
        Alphanumeric.sample_string(&mut rand::rng(), n)
    }
}

/// Answers a request below `/oauth/`; `None` for any other path.
pub(crate) fn handle(st: &mut State, req: &Recorded, body: &[u8]) -> Option<Answer> {
    if !req.path.starts_with("/oauth/") {
        return None;
    }
    let o = &mut st.oauth;
    Some(match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/oauth/request") => request_token(o, req, body),
        ("GET", "/oauth/authorize") => authorize_page(o, req),
        ("POST", "/oauth/authorize") => decide(o, body),
        ("POST", "/oauth/access") => access_token(o, req, body),
        (_, "/oauth/request" | "/oauth/authorize" | "/oauth/access") => {
            Answer::text(405, "Method Not Allowed")
        }
        _ => Answer::text(404, "Not found"),
    })
}

/// The checks of RFC 5849 §3.2, in order; the request's parameters when it passes.
fn verify(
    o: &mut OAuthState,
    req: &Recorded,
    body: &[u8],
    with_token: bool,
) -> Result<BTreeMap<String, String>, Answer> {
    let all = sig::request_params(req, body);
    let mut params = BTreeMap::new();
    for (k, v) in &all {
        if k.starts_with("oauth_") && params.insert(k.clone(), v.clone()).is_some() {
            return Err(problem(400, "parameter_rejected"));
        }
    }
    let mut required = vec![
        "oauth_consumer_key",
        "oauth_signature_method",
        "oauth_signature",
        "oauth_timestamp",
        "oauth_nonce",
    ];
    if with_token {
        required.push("oauth_token");
    }
    let absent: Vec<&str> = required
        .into_iter()
        .filter(|k| !params.contains_key(*k))
        .collect();
    if !absent.is_empty() {
        return Err(problem(
            400,
            &format!(
                "parameter_absent&oauth_parameters_absent={}",
                sig::encode(&absent.join("&"))
            ),
        ));
    }
    let p = |k: &str| params.get(k).cloned().unwrap_or_default();
    if p("oauth_signature_method") != "HMAC-SHA1" {
        return Err(problem(400, "signature_method_rejected"));
    }
    if params.get("oauth_version").is_some_and(|v| v != "1.0") {
        return Err(problem(400, "version_rejected"));
    }
    let Some(client_secret) = o.apps.get(&p("oauth_consumer_key")).cloned() else {
        return Err(problem(401, "consumer_key_unknown"));
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    match p("oauth_timestamp").parse::<u64>() {
        Ok(t) if t.abs_diff(now) <= TIMESTAMP_WINDOW_SECS => {}
        _ => return Err(problem(401, "timestamp_refused")),
    }
    let token = p("oauth_token");
    let seen = format!(
        "{}\0{token}\0{}\0{}",
        p("oauth_consumer_key"),
        p("oauth_timestamp"),
        p("oauth_nonce")
    );
    if o.nonces.contains(&seen) {
        return Err(problem(401, "nonce_used"));
    }
    let token_secret = if with_token {
        match o.temps.get(&token) {
            Some(t) => t.secret.clone(),
            None => return Err(problem(401, "token_rejected")),
        }
    } else {
        String::new()
    };
    let host = req.header("host").unwrap_or_default();
    let base = sig::base_string(&req.method, host, &req.path, &all);
    if sig::signature(&base, &client_secret, &token_secret) != p("oauth_signature") {
        return Err(problem(401, "signature_invalid"));
    }
    o.nonces.insert(seen);
    Ok(params)
}

/// `POST /oauth/request`: temporary credentials, for a callback given now (1.0a).
fn request_token(o: &mut OAuthState, req: &Recorded, body: &[u8]) -> Answer {
    let params = match verify(o, req, body, false) {
        Ok(p) => p,
        Err(a) => return a,
    };
    let Some(callback) = params.get("oauth_callback").cloned() else {
        return problem(
            400,
            "parameter_absent&oauth_parameters_absent=oauth_callback",
        );
    };
    let absolute = callback.starts_with("http://") || callback.starts_with("https://");
    if callback != "oob" && !absolute {
        return problem(400, "parameter_rejected");
    }
    let token = random(20, true);
    let secret = random(20, true);
    o.temps.insert(
        token.clone(),
        Temp {
            secret: secret.clone(),
            callback,
            preset: None,
            answered: Answered::Pending,
        },
    );
    Answer::raw(
        200,
        format!("oauth_token={token}&oauth_token_secret={secret}&oauth_callback_confirmed=true")
            .into_bytes(),
        "application/x-www-form-urlencoded",
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `GET /oauth/authorize`: the new-key form with the URL's presets.
fn authorize_page(o: &mut OAuthState, req: &Recorded) -> Answer {
    let token = req
        .query_param("oauth_token")
        .unwrap_or_default()
        .to_string();
    let preset = Preset::DEFAULT.with(&req.query);
    match o.temps.get_mut(&token) {
        Some(t) if matches!(t.answered, Answered::Pending) => t.preset = Some(preset),
        _ => return Answer::text(400, "Invalid OAuth token"),
    }
    o.presets.push(preset);
    let name = req.query_param("name").unwrap_or("OAuth key");
    let yes_no = |field: &str, on: bool| {
        let (y, n) = if on {
            (" selected", "")
        } else {
            ("", " selected")
        };
        format!("<label>{field} <select name=\"{field}\"><option value=\"1\"{y}>yes</option><option value=\"0\"{n}>no</option></select></label>")
    };
    let groups: String = ["none", "read", "write"]
        .iter()
        .map(|g| {
            let sel = if *g == preset.all_groups {
                " selected"
            } else {
                ""
            };
            format!("<option value=\"{g}\"{sel}>{g}</option>")
        })
        .collect();
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>New key</title></head><body><main><h1>An application would like to access your account</h1><p>Key name: {}</p><form method=\"post\" action=\"/oauth/authorize\"><input type=\"hidden\" name=\"oauth_token\" value=\"{}\">{}{}{}<label>all_groups <select name=\"all_groups\">{groups}</select></label><button name=\"decision\" value=\"allow\">Accept</button><button name=\"decision\" value=\"deny\">Cancel</button></form></main></body></html>",
        escape(name),
        escape(&token),
        yes_no("library_access", preset.library),
        yes_no("notes_access", preset.notes),
        yes_no("write_access", preset.write),
    );
    Answer::raw(200, page.into_bytes(), "text/html; charset=utf-8")
}

/// The redirect to the application's callback with these parameters.
fn to_callback(callback: &str, params: &str) -> Answer {
    if callback == "oob" {
        return Answer::text(200, params);
    }
    let sep = if callback.contains('?') { '&' } else { '?' };
    Answer::empty(302).header("Location", format!("{callback}{sep}{params}"))
}

/// `POST /oauth/authorize`: the person's click. `decision=allow` approves the preset the
/// page was opened with, changed by any permission field the form sends; `deny` refuses.
fn decide(o: &mut OAuthState, body: &[u8]) -> Answer {
    let form = sig::form(&String::from_utf8_lossy(body));
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let token = get("oauth_token").unwrap_or_default().to_string();
    let Some(temp) = o.temps.get_mut(&token) else {
        return Answer::text(400, "Invalid OAuth token");
    };
    let preset = temp.preset.unwrap_or(Preset::DEFAULT);
    if !matches!(temp.answered, Answered::Pending) {
        return Answer::text(400, "Invalid OAuth token");
    }
    match get("decision") {
        Some("allow") => {
            let verifier = random(20, true);
            temp.answered = Answered::Approved {
                verifier: verifier.clone(),
                access: preset.with(&form).access(),
            };
            to_callback(
                &temp.callback,
                &format!("oauth_token={token}&oauth_verifier={verifier}"),
            )
        }
        Some("deny") => {
            temp.answered = Answered::Denied;
            to_callback(
                &temp.callback,
                &format!("oauth_token={token}&oauth_problem=user_refused"),
            )
        }
        _ => Answer::text(400, "Invalid decision"),
    }
}

/// `POST /oauth/access`: the approval exchanged once for a new key.
fn access_token(o: &mut OAuthState, req: &Recorded, body: &[u8]) -> Answer {
    let params = match verify(o, req, body, true) {
        Ok(p) => p,
        Err(a) => return a,
    };
    let token = params.get("oauth_token").cloned().unwrap_or_default();
    let verifier = params.get("oauth_verifier").cloned().unwrap_or_default();
    let Some(temp) = o.temps.get(&token) else {
        return problem(401, "token_rejected");
    };
    let access = match &temp.answered {
        Answered::Approved {
            verifier: v,
            access,
        } if *v == verifier && !verifier.is_empty() => access.clone(),
        Answered::Approved { .. } => return problem(401, "verifier_invalid"),
        Answered::Denied => return problem(401, "permission_denied"),
        Answered::Pending => return problem(401, "permission_unknown"),
    };
    o.temps.remove(&token);
    let key = random(24, false);
    let access = o.instead.clone().unwrap_or(access);
    o.keys.insert(key.clone(), access);
    Answer::raw(
        200,
        format!("oauth_token={key}&oauth_token_secret={key}&userID={USER_ID}&username={USERNAME}")
            .into_bytes(),
        "application/x-www-form-urlencoded",
    )
}

impl Emulator {
    /// Every key minted from now on gets `access` instead of what the person approved
    /// (`None`: what was approved): Zotero granting more (or less) than asked.
    pub fn oauth_grant_instead(&self, access: Option<KeyAccess>) {
        self.state.lock().unwrap().oauth.instead = access;
    }

    /// The presets the authorize page was opened with, in order.
    pub fn oauth_presets(&self) -> Vec<Preset> {
        self.state.lock().unwrap().oauth.presets.clone()
    }

    /// The keys `/oauth/access` made, with what each may do.
    pub fn oauth_keys(&self) -> Vec<(String, KeyAccess)> {
        let st = self.state.lock().unwrap();
        st.oauth
            .keys
            .iter()
            .map(|(k, a)| (k.clone(), a.clone()))
            .collect()
    }

    /// How many sign-ins have temporary credentials not yet exchanged.
    pub fn oauth_pending(&self) -> usize {
        self.state.lock().unwrap().oauth.temps.len()
    }
}
