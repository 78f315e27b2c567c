//! `zotero-mcp login`: signs in with zotero.org's OAuth 1.0a (`zotero_api::oauth`) so that
//! nobody copies a key by hand. Asks zotero.org for a sign-in whose answer goes to a one-shot
//! listener on loopback (`callback.rs`), opens the authorize page in the browser (or prints
//! it with `--print`, and then also reads the answer's address pasted on stdin), exchanges
//! the approval for a key, checks with `/keys/current` what the key may do against what was
//! asked (more is reported; refused with `--strict`, and then not stored), stores the key
//! and its user ID as `authorize` stores local keys (mode 0600), and reports as `check` does.
//! Neither the key nor the approval ever reaches stderr or a log line. Each outcome has its
//! own exit code ([`exit`]).

mod browser;
mod callback;
mod page;

use std::process::ExitCode;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use zotero_api::oauth::{
    AccessRequest, Callback, GrantedKey, GroupLevel, OAuthClient, OAuthError, APPS_PAGE,
};
use zotero_api::ZoteroClient;

use crate::config::web_key::{store, StoredKey};
use crate::config::{Config, KeySource};

/// Where a person revokes a key.
const KEYS_PAGE: &str = "https://www.zotero.org/settings/keys";

/// Exit codes of `login`, one per outcome.
pub mod exit {
    /// The exchange failed, or the key could not be checked or stored.
    pub const FAILED: u8 = 1;
    /// No application credentials (`ZOTERO_OAUTH_CLIENT_KEY`, `_SECRET`).
    pub const NOT_CONFIGURED: u8 = 2;
    /// The person did not allow access.
    pub const DENIED: u8 = 3;
    /// Zotero granted more than asked and `--strict` refused the key.
    pub const BROADER: u8 = 4;
    /// Nobody answered within `--wait`.
    pub const NO_ANSWER: u8 = 9;
    /// Ctrl-C.
    pub const CANCELLED: u8 = 130;
}

/// The command's arguments.
pub struct Login {
    /// Open no browser: print the authorize address on stdout and also read the answer's
    /// address from stdin.
    pub print: bool,
    pub access: AccessRequest,
    /// Refuse a key that may do more than asked.
    pub strict: bool,
    pub wait: Duration,
    /// The listener's port (0: any free one).
    pub port: u16,
    /// The key's name on zotero.org.
    pub name: String,
}

impl Login {
    /// The access `--read-only` and `--groups` ask for.
    pub fn access(read_only: bool, groups: Option<&str>) -> AccessRequest {
        let mut access = if read_only {
            AccessRequest::READ_ONLY
        } else {
            AccessRequest::READ_WRITE
        };
        if let Some(level) = groups.and_then(|g| g.parse::<GroupLevel>().ok()) {
            // Read-only asks for no write anywhere.
            access.groups = if read_only {
                level.min(GroupLevel::Read)
            } else {
                level
            };
        }
        access
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("zotero-mcp login: {message}");
    ExitCode::from(code)
}

/// What `access` asks for, in words.
fn asked(access: &AccessRequest) -> String {
    let mut parts = Vec::new();
    match (access.library, access.notes) {
        (true, true) => parts.push("read your library and its notes"),
        (true, false) => parts.push("read your library"),
        (false, true) => parts.push("read your library's notes"),
        (false, false) => {}
    }
    if access.write {
        parts.push("write to it");
    }
    parts.push(match access.groups {
        GroupLevel::None => "not reach your groups",
        GroupLevel::Read => "read all your groups",
        GroupLevel::Write => "write to all your groups",
    });
    match parts.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{}, and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Tells the person what to do with the authorize page.
fn instructions(url: &str, port: u16, opened: bool, args: &Login) {
    let wait = args.wait.as_secs();
    let what = format!(
        "a key named \"{}\" that may {}",
        args.name,
        asked(&args.access)
    );
    if opened {
        eprintln!(
            "zotero-mcp login: your browser opens zotero.org's page to make {what} (you may change that there). If no browser opens, open this address:\n  {url}\nWaiting up to {wait} s for your answer (Ctrl-C to stop)…"
        );
        return;
    }
    let lead = format!(
        "zotero-mcp login: to make {what}, open {} in a browser where you are signed in to zotero.org and allow it",
        if args.print {
            "the address printed on stdout"
        } else {
            "this address"
        }
    );
    if args.print {
        println!("{url}");
        eprintln!("{lead}.");
    } else {
        eprintln!("{lead}:\n  {url}");
    }
    eprintln!(
        "Zotero then sends the browser to http://127.0.0.1:{port}/callback on this machine. In a container or over SSH, forward that port (e.g. `ssh -L {port}:127.0.0.1:{port} HOST`), or, when the browser says it cannot reach that page, copy the whole address from its address bar and paste it here.\nWaiting up to {wait} s (Ctrl-C to stop)…"
    );
}

/// Runs `zotero-mcp login`.
pub async fn run(config: Config, args: Login) -> ExitCode {
    let Some(client) = config.oauth.client.clone() else {
        return fail(
            exit::NOT_CONFIGURED,
            &format!(
                "set {}: register an application at {APPS_PAGE} (any name; application type \"client\"), then set ZOTERO_OAUTH_CLIENT_KEY and ZOTERO_OAUTH_CLIENT_SECRET to its client key and secret",
                config.oauth.missing().join(" and ")
            ),
        );
    };
    let Some(dir) = config.zotero.config_dir.clone() else {
        return fail(
            exit::FAILED,
            "there is no config directory to store the key in: set XDG_CONFIG_HOME or HOME",
        );
    };
    let listener = match TcpListener::bind(("127.0.0.1", args.port)).await {
        Ok(l) => l,
        Err(e) => {
            return fail(
                exit::FAILED,
                &format!("cannot listen on 127.0.0.1 port {} for Zotero's answer: {e}; choose another with --port", args.port),
            )
        }
    };
    let port = listener.local_addr().map_or(args.port, |a| a.port());
    let callback_url = format!("http://127.0.0.1:{port}{}", callback::CALLBACK_PATH);
    let oauth = match OAuthClient::new(&config.client(), &config.oauth.base, client) {
        Ok(o) => o,
        Err(e) => return fail(exit::FAILED, &e.to_string()),
    };
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let temp = match oauth.request_token(&callback_url, &cancel).await {
        Ok(t) => t,
        Err(e) => return exchange_failed(e),
    };
    let url = oauth.authorize_url(&temp, &args.access, &args.name);
    let opened = !args.print && browser::open(&url);
    instructions(&url, port, opened, &args);
    let answer = tokio::select! {
        biased;
        () = cancel.cancelled() => return fail(exit::CANCELLED, "stopped; nothing was stored (if you approve in the browser now, that key is never used: revoke it at https://www.zotero.org/settings/keys)"),
        () = tokio::time::sleep(args.wait) => return fail(
            exit::NO_ANSWER,
            &format!("no answer from Zotero within {} s; nothing was stored. Run `zotero-mcp login` again (--wait SECONDS waits longer)", args.wait.as_secs()),
        ),
        cb = callback::wait(listener, &temp.token, !opened) => cb,
    };
    let verifier = match answer {
        Callback::Approved(v) => v,
        Callback::Denied { .. } => {
            return fail(
                exit::DENIED,
                "access was not allowed on zotero.org; no key was made and nothing was stored. Run `zotero-mcp login` again to sign in",
            )
        }
    };
    eprintln!("zotero-mcp login: Zotero answered; exchanging the approval for a key…");
    match oauth.access_token(&temp, &verifier, &cancel).await {
        Ok(granted) => finish(config, &args, &dir, granted, &cancel).await,
        Err(e) => exchange_failed(e),
    }
}

fn exchange_failed(e: OAuthError) -> ExitCode {
    match e {
        OAuthError::Zotero(zotero_api::ZoteroError::Cancelled) => {
            fail(exit::CANCELLED, "stopped; nothing was stored")
        }
        e => fail(exit::FAILED, &format!("{e}; nothing was stored")),
    }
}

/// Checks the new key with `/keys/current` against what was asked, stores it (unless
/// refused) and reports what it may do.
async fn finish(
    config: Config,
    args: &Login,
    dir: &std::path::Path,
    granted: GrantedKey,
    cancel: &CancellationToken,
) -> ExitCode {
    let revoke = format!("revoke it at {KEYS_PAGE}");
    let mut cfg = config.clone();
    cfg.zotero.api_key = Some(granted.key.clone());
    cfg.zotero.user_id = Some(granted.user_id);
    let client = match ZoteroClient::new(&cfg.client()) {
        Ok(c) => c,
        Err(e) => return fail(exit::FAILED, &format!("{e}; nothing was stored ({revoke})")),
    };
    let access = match client.access(true, cancel).await {
        Ok(a) => a,
        Err(e) => {
            return fail(
                exit::FAILED,
                &format!("Zotero made a key but does not confirm it ({e}); nothing was stored: {revoke} and run `zotero-mcp login` again"),
            )
        }
    };
    if access.user_id != granted.user_id {
        return fail(
            exit::FAILED,
            &format!("Zotero said the key is user {}'s, but /keys/current says user {}'s; nothing was stored: {revoke}", granted.user_id, access.user_id),
        );
    }
    let withheld = args.access.withheld(&access);
    if !withheld.is_empty() {
        eprintln!(
            "zotero-mcp login: the key may not {} (changed on zotero.org's page); run `zotero-mcp login` again to ask again",
            withheld.join(", ")
        );
    }
    let beyond = args.access.beyond(&access);
    if !beyond.is_empty() {
        let more = beyond.join(", ");
        if args.strict {
            return fail(
                exit::BROADER,
                &format!("Zotero granted more than asked: the key may also {more}. Refused (--strict): the key was not stored; {revoke}"),
            );
        }
        eprintln!("zotero-mcp login: Zotero granted more than asked: the key may also {more} (--strict refuses such a key)");
    }
    let stored = StoredKey {
        key: granted.key,
        user_id: granted.user_id,
        username: granted.username,
    };
    let path = match store(dir, &stored) {
        Ok(p) => p,
        Err(e) => {
            return fail(
                exit::FAILED,
                &format!(
                    "the key could not be stored in {}: {e}; {revoke}",
                    dir.display()
                ),
            )
        }
    };
    eprintln!(
        "zotero-mcp login: signed in as {} (user ID {}); the key is stored in {} (readable by you only) and zotero-mcp uses it when ZOTERO_API_KEY is not set",
        stored.username,
        stored.user_id,
        path.display()
    );
    if config.zotero.key_source == KeySource::Env {
        eprintln!("zotero-mcp login: ZOTERO_API_KEY is set here and wins over the stored key: unset it (and ZOTERO_USER_ID) to use the new one");
    }
    cfg.zotero.key_source = KeySource::Stored(path);
    if super::check::web(&cfg, &client, cancel).await {
        println!("ok");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_asks_for_no_write_anywhere() {
        assert_eq!(Login::access(false, None), AccessRequest::READ_WRITE);
        assert_eq!(Login::access(true, None), AccessRequest::READ_ONLY);
        let capped = Login::access(true, Some("write"));
        assert!(!capped.write);
        assert_eq!(capped.groups, GroupLevel::Read);
        assert_eq!(Login::access(false, Some("none")).groups, GroupLevel::None);
        assert_eq!(
            asked(&AccessRequest::READ_WRITE),
            "read your library and its notes, write to it, and write to all your groups"
        );
        assert_eq!(
            asked(&Login::access(true, Some("none"))),
            "read your library and its notes, and not reach your groups"
        );
    }
}
