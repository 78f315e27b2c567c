//! `zotero-mcp authorize` over the built binary against the emulated Zotero 10: every dialog
//! outcome (Always Allow, dismissed, Allow, Deny, no answer), the 5-prompts-a-minute limit,
//! the local API off, Zotero 9, Zotero not running — each its own exit code and message; the
//! key stored per server ID with mode 0600 (or printed with `--print`), never on stderr; and
//! `check` saying which backend writes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use zotero_emulator::{DesktopRelease, DialogAnswer, Emulator};

use crate::common::BIN;
use zotero_emulator::testing::send;

async fn zotero10() -> Emulator {
    let emu = Emulator::start().await;
    emu.set_desktop_release(DesktopRelease::Zotero10);
    emu
}

fn temp_config(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zmcp-auth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs the binary (off the test's thread, so the emulator keeps answering).
async fn run(args: &[&str], emu: &Emulator, config: &Path) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let env = vec![
        ("ZOTERO_LOCAL_API_BASE".to_string(), emu.local_uri()),
        (
            "XDG_CONFIG_HOME".to_string(),
            config.to_string_lossy().into_owned(),
        ),
        ("ZOTERO_EMBEDDING_MODEL".to_string(), "none".to_string()),
    ];
    tokio::task::spawn_blocking(move || {
        let out = Command::new(BIN)
            .args(&args)
            .env_clear()
            .envs(env)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

fn stored(config: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(config.join("zotero-mcp/local-api-keys.json")).ok()?;
    serde_json::from_str(&text).ok()
}

#[tokio::test]
async fn always_allow_stores_the_key_for_this_database_privately() {
    let emu = zotero10().await;
    let config = temp_config("always");
    emu.script_dialog(DialogAnswer::AlwaysAllow);
    let (code, out, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "nothing on stdout: {out}");
    assert!(err.contains("Always Allow"), "{err}");
    assert_eq!(emu.dialogs_shown(), ["zotero-mcp"]);
    let (key, _, remember) = emu.local_keys()[0].clone();
    assert!(remember);
    assert!(!err.contains(&key), "the key is never on stderr");
    let file = stored(&config).expect("a key file");
    assert_eq!(file["keys"][emu.server_id()], key.as_str());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = config.join("zotero-mcp/local-api-keys.json");
        assert_eq!(
            std::fs::metadata(path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // check: writes go through the desktop, with no web key.
    let (code, out, err) = run(&["check"], &emu, &config).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("writes:    through the Zotero desktop app"),
        "{out}"
    );
    assert!(!out.contains(&key) && !err.contains(&key));
    // Another database: the stored key is not for it, and check says so.
    emu.switch_database();
    let (code, out, err) = run(&["check"], &emu, &config).await;
    assert_eq!(code, 1, "no backend can write: {out}");
    assert!(
        err.contains("no local API key for this Zotero database"),
        "{out}{err}"
    );
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test]
async fn print_puts_the_key_on_stdout_and_stores_nothing() {
    let emu = zotero10().await;
    let config = temp_config("print");
    // Closing the dialog counts as Always Allow.
    emu.script_dialog(DialogAnswer::Dismiss);
    let (code, out, err) = run(
        &["authorize", "--print", "--app-name", "Lab MCP"],
        &emu,
        &config,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (key, app, _) = emu.local_keys()[0].clone();
    assert_eq!(out.trim(), key);
    assert_eq!(app, "Lab MCP");
    assert!(
        err.contains("ZOTERO_LOCAL_API_KEY") && !err.contains(&key),
        "{err}"
    );
    assert!(stored(&config).is_none());
}

#[tokio::test]
async fn each_refusal_has_its_message_and_exit_code() {
    let emu = zotero10().await;
    let config = temp_config("refusals");
    emu.script_dialog(DialogAnswer::Deny);
    let (code, out, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!((code, out.as_str()), (3, ""), "{err}");
    assert!(err.contains("denied"), "{err}");

    emu.script_dialog(DialogAnswer::Allow);
    let (code, _, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("Always Allow") && err.contains("one write"),
        "{err}"
    );
    assert!(stored(&config).is_none(), "a one-time key is not stored");

    // Nobody answers within --wait.
    let (code, _, err) = run(&["authorize", "--wait", "1"], &emu, &config).await;
    assert_eq!(code, 9, "{err}");
    assert!(err.contains("still be open"), "{err}");
    emu.answer_dialog(DialogAnswer::Deny);

    // That was the 3rd prompt; two more from another app, then the limit.
    for _ in 0..2 {
        emu.script_dialog(DialogAnswer::Deny);
        let url = format!("{}/local/authorize", emu.local_uri());
        let sid = emu.server_id();
        let r = send(
            &emu,
            "POST",
            &url,
            &[
                ("Zotero-Server-ID", &sid),
                ("Content-Type", "application/json"),
            ],
            r#"{"appName":"other"}"#,
        )
        .await
        .unwrap();
        assert_eq!(r.status, 403);
    }
    let (code, _, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains("5 authorization prompts a minute") && err.contains("try again in"),
        "{err}"
    );
    assert_eq!(
        emu.dialogs_shown().len(),
        5,
        "the refused request opened no dialog"
    );

    emu.set_local_enabled(false);
    let (code, _, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("Allow other applications"), "{err}");

    emu.set_local_enabled(true);
    emu.set_desktop_release(DesktopRelease::Zotero9);
    let (code, _, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains("Zotero 10") && err.contains("Check for Updates"),
        "{err}"
    );

    emu.set_desktop_release(DesktopRelease::Zotero10);
    emu.close_local();
    let (code, _, err) = run(&["authorize"], &emu, &config).await;
    assert_eq!(code, 8, "{err}");
    assert!(err.contains("start the Zotero desktop app"), "{err}");
}
