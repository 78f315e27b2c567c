//! A desktop app that answers but cannot serve (503, 500) with a local key stored by
//! `zotero-mcp authorize` and the web API configured: reads that may lag go to the web API,
//! as when Zotero is closed; the reads a desktop write depends on stay on the desktop and
//! fail, saying so, rather than mixing the two backends' versions; a desktop failing before
//! it was ever probed leaves writes to the web API (with `auto`).

use std::path::PathBuf;

use serde_json::{json, Value};
use zotero_emulator::{DesktopRelease, Emulator, Fault, FaultKind, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

/// Zotero 10 with a key stored as `authorize` stores it, `ZOTERO_LOCAL` unset, the web key
/// set.
async fn desktop_with_stored_key(name: &str) -> (Emulator, Server, PathBuf) {
    let emu = Emulator::start().await;
    emu.set_desktop_release(DesktopRelease::Zotero10);
    let key = emu.grant_local_key("zotero-mcp", true);
    let config = std::env::temp_dir().join(format!("zmcp-unavail-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&config);
    std::fs::create_dir_all(config.join("zotero-mcp")).unwrap();
    let file = json!({"keys": {emu.server_id(): key}});
    std::fs::write(
        config.join("zotero-mcp/local-api-keys.json"),
        file.to_string(),
    )
    .unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    env.push((
        "XDG_CONFIG_HOME".into(),
        config.to_string_lossy().into_owned(),
    ));
    let server = in_process(&env).await;
    (emu, server, config)
}

async fn reads_answer(server: &Server) {
    let a = server
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    let items = a.expect_ok()["items"].as_array().unwrap().clone();
    assert!(!items.is_empty(), "{:?}", a.data());
    server
        .call("zotero_list_collections", json!({}))
        .await
        .expect_ok();
    let a = server
        .call("zotero_get_item", json!({"item_key": "VASWANI7"}))
        .await;
    assert_eq!(
        a.expect_ok()["item"]["item_key"],
        "VASWANI7",
        "{:?}",
        a.data()
    );
}

fn web_reads(emu: &Emulator) -> usize {
    emu.requests().iter().filter(|r| r.method == "GET").count()
}

#[tokio::test]
async fn reads_go_to_the_web_api_while_the_desktop_answers_5xx() {
    for (name, kind) in [
        (
            "503",
            FaultKind::Unavailable {
                retry_after: None,
                backoff: None,
            },
        ),
        ("500", FaultKind::ServerError),
    ] {
        let (emu, server, config) = desktop_with_stored_key(name).await;
        emu.inject(Fault::times(kind, 10_000).local());
        reads_answer(&server).await;
        assert!(web_reads(&emu) >= 3, "{name}: the web API answered");
        // Never probed before it failed: with `auto`, the write goes to the web API.
        let a = server
            .call(
                "zotero_create_item",
                json!({"item_type": "book", "title": "While Zotero fails"}),
            )
            .await;
        a.expect_ok();
        assert!(
            emu.requests().iter().any(|r| r.method == "POST"),
            "{name}: written through the web API"
        );
        let _ = std::fs::remove_dir_all(&config);
    }
}

#[tokio::test]
async fn a_read_a_desktop_write_depends_on_fails_rather_than_mixing_backends() {
    let (emu, server, config) = desktop_with_stored_key("current").await;
    // A first write finds Zotero 10: writes go to the desktop from now on.
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Local"}),
        )
        .await;
    a.expect_ok();
    assert!(emu.requests().iter().all(|r| r.method == "GET"));
    emu.inject(
        Fault::times(
            FaultKind::Unavailable {
                retry_after: None,
                backoff: None,
            },
            10_000,
        )
        .local(),
    );
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "fields": {"volume": "9"}}),
        )
        .await;
    let e: Value = a.expect_err("ZOTERO_UPSTREAM_ERROR").clone();
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("desktop app") && message.contains("503"),
        "{e}"
    );
    assert!(message.contains("ZOTERO_WRITE_BACKEND=web"), "{e}");
    assert!(
        emu.requests().iter().all(|r| r.method == "GET"),
        "nothing written through the web API with the desktop's versions"
    );
    // Reads that may lag still answer, from the web API.
    reads_answer(&server).await;
    let _ = std::fs::remove_dir_all(&config);
}
