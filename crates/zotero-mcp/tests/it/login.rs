//! `zotero-mcp login` over the built binary against the emulated zotero.org OAuth 1.0a: the
//! whole sign-in (a test client plays the browser: it opens the authorize page, approves,
//! and follows the redirect to the loopback listener, or pastes its address on stdin), the
//! key stored with mode 0600 and verified, a denial, forged callbacks, `--read-only`, a key
//! broader than asked (reported; refused with `--strict`), missing client credentials, no
//! answer; and the server using the stored key when `ZOTERO_API_KEY` is unset, the variable
//! winning when set. No secret ever reaches stdout or stderr.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use zotero_emulator::testing::oauth::answer;
use zotero_emulator::testing::{send, Resp};
use zotero_emulator::{
    Emulator, KeyAccess, Preset, API_KEY, OAUTH_CLIENT_KEY, OAUTH_CLIENT_SECRET, USER_ID,
};

use crate::common::{spawn, BIN};

fn temp_config(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zmcp-login-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn key_file(config: &Path) -> PathBuf {
    config.join("zotero-mcp/zotero-api-key.json")
}

fn env(emu: &Emulator, config: &Path, with_client: bool) -> Vec<(String, String)> {
    let mut env = vec![
        ("ZOTERO_API_BASE".to_string(), emu.uri()),
        ("ZOTERO_OAUTH_BASE".to_string(), emu.uri()),
        (
            "XDG_CONFIG_HOME".to_string(),
            config.to_string_lossy().into_owned(),
        ),
        ("ZOTERO_EMBEDDING_MODEL".to_string(), "none".to_string()),
    ];
    if with_client {
        env.push(("ZOTERO_OAUTH_CLIENT_KEY".into(), OAUTH_CLIENT_KEY.into()));
        env.push((
            "ZOTERO_OAUTH_CLIENT_SECRET".into(),
            OAUTH_CLIENT_SECRET.into(),
        ));
    }
    env
}

/// A running `zotero-mcp login` (no PATH: no browser can be opened).
struct Running {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

fn collect(r: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(r).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

impl Running {
    fn start(args: &[&str], env: &[(String, String)]) -> Running {
        let mut child = Command::new(BIN)
            .arg("login")
            .args(args)
            .env_clear()
            .envs(env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Running {
            child,
            stdout,
            stderr,
        }
    }

    /// The authorize address, once printed (stdout with `--print`, else stderr).
    async fn authorize_url(&self) -> String {
        for _ in 0..500 {
            let lines: Vec<String> = self
                .stdout
                .lock()
                .unwrap()
                .iter()
                .chain(self.stderr.lock().unwrap().iter())
                .cloned()
                .collect();
            if let Some(url) = lines
                .iter()
                .map(|l| l.trim())
                .find(|l| l.starts_with("http") && l.contains("/oauth/authorize?"))
            {
                return url.to_string();
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("no authorize URL: {:?}", self.stderr.lock().unwrap());
    }

    async fn paste(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// Exit code, stdout, stderr.
    async fn finish(mut self) -> (i32, String, String) {
        let status = tokio::time::timeout(std::time::Duration::from_secs(60), self.child.wait())
            .await
            .expect("login ends")
            .unwrap();
        // The readers end with the pipes.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let out = self.stdout.lock().unwrap().join("\n");
        let err = self.stderr.lock().unwrap().join("\n");
        (status.code().unwrap_or(-1), out, err)
    }
}

fn location(r: &Resp) -> String {
    assert_eq!(r.status, 302, "{}", r.text());
    r.header("location").unwrap()
}

/// The browser following Zotero's redirect to the listener.
async fn follow(emu: &Emulator, url: &str) -> Resp {
    send(emu, "GET", url, &[], Bytes::new()).await.unwrap()
}

fn no_secret(texts: &[&str], secrets: &[&str]) {
    for t in texts {
        for s in secrets.iter().filter(|s| !s.is_empty()) {
            assert!(!t.contains(s), "a secret leaked into: {t}");
        }
    }
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_full_login_stores_a_private_key_checks_it_and_the_server_uses_it() {
    let emu = Emulator::start().await;
    let config = temp_config("full");
    let env = env(&emu, &config, true);
    let run = Running::start(&["--print"], &env);
    let url = run.authorize_url().await;
    assert!(
        url.starts_with(&format!("{}/oauth/authorize?oauth_token=", emu.uri())),
        "{url}"
    );
    assert!(
        url.contains(
            "library_access=1&notes_access=1&write_access=1&all_groups=write&name=zotero-mcp"
        ),
        "{url}"
    );
    let back = location(&answer(&emu, &url, "allow", "").await);
    assert!(back.starts_with("http://127.0.0.1:"), "{back}");
    let verifier = back.split("oauth_verifier=").nth(1).unwrap().to_string();
    let page = follow(&emu, &back).await;
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    assert!(html.starts_with("<!doctype html>") && html.contains("<html lang=\"en\">"));
    assert!(html.contains("<h1>Zotero answered</h1>"), "{html}");
    assert!(
        !html.contains("<script") && !html.contains("http"),
        "{html}"
    );
    assert_eq!(
        page.header("content-security-policy").unwrap(),
        "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    assert_eq!(page.header("referrer-policy").unwrap(), "no-referrer");

    let (code, out, err) = run.finish().await;
    assert_eq!(code, 0, "{out}\n{err}");
    let (key, access) = emu.oauth_keys()[0].clone();
    assert_eq!(access, KeyAccess::all_groups(true));
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(key_file(&config)).unwrap()).unwrap();
    assert_eq!(stored["key"], key.as_str());
    assert_eq!(stored["userID"], USER_ID);
    #[cfg(unix)]
    {
        assert_eq!(mode(&key_file(&config)), 0o600);
        assert_eq!(mode(&config.join("zotero-mcp")), 0o700);
    }
    assert!(
        out.contains("user:      z_public_library, user ID 475425"),
        "{out}"
    );
    assert!(out.contains("write:     yes"), "{out}");
    assert!(
        out.contains("key:       stored by `zotero-mcp login` in "),
        "{out}"
    );
    assert!(out.ends_with("ok"), "{out}");
    assert!(
        err.contains("signed in as z_public_library (user ID 475425)"),
        "{err}"
    );
    assert!(!err.contains("granted more than asked"), "{err}");
    no_secret(&[&out, &err], &[&key, &verifier, OAUTH_CLIENT_SECRET]);

    // `check` and the server use the stored key while ZOTERO_API_KEY is unset.
    let checked = std::process::Command::new(BIN)
        .arg("check")
        .env_clear()
        .envs(env.iter().cloned())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert!(checked.status.success(), "{out}");
    assert!(
        out.contains("key:       stored by `zotero-mcp login`"),
        "{out}"
    );
    no_secret(&[&out, &String::from_utf8_lossy(&checked.stderr)], &[&key]);

    emu.reset_counts();
    let server = spawn(&env).await;
    server
        .call("zotero_list_libraries", json!({}))
        .await
        .expect_ok();
    let keys: Vec<String> = emu
        .requests()
        .iter()
        .filter_map(|r| r.header("zotero-api-key").map(str::to_string))
        .collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| *k == key),
        "{keys:?}"
    );
    no_secret(&[&server.stderr().join("\n")], &[&key]);
    server.stop().await;

    // The environment wins.
    let mut with_env = env.clone();
    with_env.push(("ZOTERO_API_KEY".into(), API_KEY.into()));
    with_env.push(("ZOTERO_USER_ID".into(), USER_ID.to_string()));
    emu.reset_counts();
    let server = spawn(&with_env).await;
    server
        .call("zotero_list_libraries", json!({}))
        .await
        .expect_ok();
    let keys: Vec<String> = emu
        .requests()
        .iter()
        .filter_map(|r| r.header("zotero-api-key").map(str::to_string))
        .collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| k == API_KEY),
        "{keys:?}"
    );
    server.stop().await;
    let checked = std::process::Command::new(BIN)
        .arg("check")
        .env_clear()
        .envs(with_env)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert!(out.contains("key:       from ZOTERO_API_KEY"), "{out}");
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn a_denial_is_told_and_nothing_is_stored_without_a_browser() {
    let emu = Emulator::start().await;
    let config = temp_config("deny");
    // No PATH: no browser opener; the address is on stderr and the wait goes on.
    let run = Running::start(&[], &env(&emu, &config, true));
    let url = run.authorize_url().await;
    let back = location(&answer(&emu, &url, "deny", "").await);
    let page = follow(&emu, &back).await;
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains("<h1>Access not allowed</h1>"),
        "{}",
        page.text()
    );
    let (code, out, err) = run.finish().await;
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(err.contains("open this address in a browser"), "{err}");
    assert!(
        err.contains("access was not allowed on zotero.org"),
        "{err}"
    );
    assert!(!key_file(&config).exists());
    assert!(emu.oauth_keys().is_empty());
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn forged_callbacks_are_refused_and_store_nothing() {
    let emu = Emulator::start().await;
    let config = temp_config("forged");
    let run = Running::start(&["--print"], &env(&emu, &config, true));
    let url = run.authorize_url().await;
    let back = location(&answer(&emu, &url, "allow", "").await);
    let (listener, query) = back.split_once('?').unwrap();
    let token = query.split('&').next().unwrap();
    // Another token: refused, and the listener keeps waiting.
    let other = follow(
        &emu,
        &format!("{listener}?oauth_token=0000&oauth_verifier=1111"),
    )
    .await;
    assert_eq!(other.status, 400);
    assert!(
        other.text().contains("Not this sign-in"),
        "{}",
        other.text()
    );
    let elsewhere = follow(
        &emu,
        &format!("{}/favicon.ico", listener.trim_end_matches("/callback")),
    )
    .await;
    assert_eq!(elsewhere.status, 404);
    // This sign-in's token with a made-up verifier: Zotero refuses the exchange.
    let forged = follow(
        &emu,
        &format!("{listener}?{token}&oauth_verifier=forged0000"),
    )
    .await;
    assert_eq!(forged.status, 200);
    let (code, out, err) = run.finish().await;
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("refused to exchange the approval"), "{err}");
    assert!(err.contains("verifier_invalid"), "{err}");
    assert!(err.contains("nothing was stored"), "{err}");
    assert!(!key_file(&config).exists());
    assert!(emu.oauth_keys().is_empty());
    // The listener is closed once it took a callback.
    assert!(send(&emu, "GET", &back, &[], Bytes::new()).await.is_err());
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn read_only_asks_for_no_write_and_a_pasted_address_completes_it() {
    let emu = Emulator::start().await;
    let config = temp_config("ro");
    let mut run = Running::start(&["--print", "--read-only"], &env(&emu, &config, true));
    let url = run.authorize_url().await;
    assert!(url.contains("write_access=0&all_groups=read"), "{url}");
    let back = location(&answer(&emu, &url, "allow", "").await);
    assert_eq!(
        emu.oauth_presets(),
        [Preset {
            library: true,
            notes: true,
            write: false,
            all_groups: "read"
        }]
    );
    run.paste("http://127.0.0.1:1/callback?oauth_token=nope&oauth_verifier=x")
        .await;
    run.paste(&back).await;
    let (code, out, err) = run.finish().await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("that address is not Zotero's answer"), "{err}");
    assert!(out.contains("write:     no"), "{out}");
    let (key, _) = emu.oauth_keys()[0].clone();
    no_secret(&[&out, &err], &[&key]);
    assert!(key_file(&config).exists());
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn a_key_broader_than_asked_is_reported_and_refused_with_strict() {
    let emu = Emulator::start().await;
    emu.oauth_grant_instead(Some(KeyAccess::all_groups(true)));
    let config = temp_config("broad");
    let env = env(&emu, &config, true);
    for strict in [true, false] {
        let args: &[&str] = if strict {
            &["--print", "--read-only", "--strict"]
        } else {
            &["--print", "--read-only"]
        };
        let run = Running::start(args, &env);
        let url = run.authorize_url().await;
        let back = location(&answer(&emu, &url, "allow", "").await);
        assert_eq!(follow(&emu, &back).await.status, 200);
        let (code, out, err) = run.finish().await;
        let more = "Zotero granted more than asked: the key may also write to the personal library, write to all groups";
        assert!(err.contains(more), "{err}");
        if strict {
            assert_eq!(code, 4, "{out}\n{err}");
            assert!(
                err.contains(
                    "the key was not stored; revoke it at https://www.zotero.org/settings/keys"
                ),
                "{err}"
            );
            assert!(!key_file(&config).exists());
        } else {
            assert_eq!(code, 0, "{out}\n{err}");
            assert!(out.contains("write:     yes"), "{out}");
            assert!(key_file(&config).exists());
        }
    }
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn missing_client_credentials_and_no_answer_are_told() {
    let emu = Emulator::start().await;
    let config = temp_config("missing");
    let (code, out, err) = Running::start(&[], &env(&emu, &config, false))
        .finish()
        .await;
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("set ZOTERO_OAUTH_CLIENT_KEY and ZOTERO_OAUTH_CLIENT_SECRET"),
        "{err}"
    );
    assert!(err.contains("https://www.zotero.org/oauth/apps"), "{err}");
    assert_eq!(emu.count("POST", "/oauth"), 0);

    let mut wrong = env(&emu, &config, true);
    wrong.push(("ZOTERO_OAUTH_CLIENT_SECRET".into(), "not-the-secret".into()));
    let (code, _, err) = Running::start(&["--print"], &wrong).finish().await;
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "zotero.org refused this application (HTTP 401: oauth_problem=signature_invalid)"
        ),
        "{err}"
    );
    assert!(!err.contains("not-the-secret"), "{err}");

    let (code, _, err) = Running::start(&["--print", "--wait", "1"], &env(&emu, &config, true))
        .finish()
        .await;
    assert_eq!(code, 9, "{err}");
    assert!(
        err.contains("no answer from Zotero within 1 s; nothing was stored"),
        "{err}"
    );
    assert!(!key_file(&config).exists());
}
