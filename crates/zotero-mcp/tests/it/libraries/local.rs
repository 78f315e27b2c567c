//! The desktop's local API through the tools: alone (a read-only server, no key sent), and
//! beside the Web API (reads that may lag go local; what a write depends on comes from the
//! web, even while the desktop lags; the web answers what the desktop cannot).

use serde_json::json;
use zotero_emulator::{Emulator, API_KEY, USER_ID};

use super::{server, with_groups, LAB, READERS};
use crate::common::{in_process, Server};
use zotero_emulator::testing::{api, lib};

/// A server with only the desktop's local API (no key, no user ID).
async fn local_only(emu: &Emulator) -> Server {
    let env: Vec<(String, String)> = [
        ("ZOTERO_LOCAL", "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE", emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    in_process(&env).await
}

#[tokio::test]
async fn the_local_api_alone_serves_reads_and_the_server_is_read_only() {
    let emu = with_groups().await;
    let s = local_only(&emu).await;
    let names: Vec<String> = s.tools().await.iter().map(|t| t.name.to_string()).collect();
    for write in [
        "zotero_create_item",
        "zotero_upload_attachment",
        "zotero_attach_arxiv_pdf",
        "zotero_add_item_to_collection",
    ] {
        assert!(
            !names.iter().any(|n| n == write),
            "{write} listed: {names:?}"
        );
    }
    let found = s
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    assert!(found.expect_ok()["total"].as_u64().unwrap() > 0);
    let got = s
        .call(
            "zotero_get_item",
            json!({"item_key": "VASWANI7", "library": "user"}),
        )
        .await;
    got.expect_ok();
    let group = s
        .call(
            "zotero_search_items",
            json!({"library": format!("group:{READERS}"), "query": "attention"}),
        )
        .await;
    group.expect_ok();
    let libs = s.call("zotero_list_libraries", json!({})).await;
    let libs = libs.expect_ok()["libraries"].as_array().unwrap().clone();
    assert!(libs.iter().all(|l| l["write"] == false), "{libs:?}");
    assert!(libs
        .iter()
        .any(|l| l["library"] == format!("group:{READERS}")));
    // A write is refused, and names what to set; nothing is sent anywhere.
    let local_before = emu.local_requests().len();
    let a = s
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "x"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_AUTH_ERROR");
    assert!(
        e["message"].as_str().unwrap().contains("ZOTERO_API_KEY"),
        "{e}"
    );
    assert_eq!(emu.local_requests().len(), local_before);
    // Everything went to the desktop: its user library is /users/0, and no key went there.
    assert!(emu.requests().is_empty(), "the web API was asked");
    let local = emu.local_requests();
    assert!(local.iter().any(|r| r.path == "/api/users/0/items/top"));
    assert!(local
        .iter()
        .any(|r| r.path == "/api/users/0/items/VASWANI7"));
    assert!(local.iter().all(|r| r.header("zotero-api-key").is_none()));
}

#[tokio::test]
async fn with_both_backends_a_write_reads_its_version_from_the_web_while_the_desktop_lags() {
    let emu = with_groups().await;
    let local = emu.local_uri();
    let s = server(
        &emu,
        &[("ZOTERO_LOCAL", "1"), ("ZOTERO_LOCAL_API_BASE", &local)],
    )
    .await;
    emu.set_local_lag(true);
    // Someone edits the item on the web: the desktop still has the old version.
    let path = lib("items/VASWANI7");
    let v = emu.item("VASWANI7").unwrap()["version"].as_u64().unwrap();
    let h = [("If-Unmodified-Since-Version", v.to_string())];
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = api(
        &emu,
        "PATCH",
        &path,
        &h,
        json!({"title": "Edited on the web"}).to_string(),
    )
    .await;
    assert_eq!(r.status, 204);
    emu.reset_counts();

    // A search may lag: the desktop answers it, with the old title.
    let found = s
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    let items = found.expect_ok()["items"].as_array().unwrap().clone();
    assert!(items
        .iter()
        .any(|i| i["title"] == "Attention Is All You Need"));
    // With the key set, the desktop is asked for the key's own user (it refuses another).
    let mine = format!("/api/users/{USER_ID}/items/top");
    assert!(emu.local_requests().iter().any(|r| r.path == mine));

    // The collection change reads the item (and the collection) from the web, so its
    // version check passes at the first try and the web's edit is kept.
    let local_before = emu.local_requests().len();
    let a = s
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "VASWANI7", "collection_name": "Attention Mechanisms"}),
        )
        .await;
    assert_eq!(a.expect_ok()["already_member"], false);
    assert_eq!(
        emu.local_requests().len(),
        local_before,
        "nothing of the write went local"
    );
    let patches: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert_eq!(patches.len(), 1, "no 412: the version came from the web");
    let item = emu.item("VASWANI7").unwrap();
    assert_eq!(item["data"]["title"], "Edited on the web");
    let cols = item["data"]["collections"].as_array().unwrap();
    assert!(cols.contains(&json!("ATTNDP62")), "{cols:?}");
    // No key ever went to the desktop.
    assert!(emu
        .local_requests()
        .iter()
        .all(|r| r.header("zotero-api-key").is_none()));
}

#[tokio::test]
async fn check_reports_both_backends_and_the_groups() {
    let emu = with_groups().await;
    let out = std::process::Command::new(crate::common::BIN)
        .arg("check")
        .env_clear()
        .env("ZOTERO_API_BASE", emu.uri())
        .env("ZOTERO_USER_ID", USER_ID.to_string())
        .env("ZOTERO_API_KEY", API_KEY)
        .env("ZOTERO_LOCAL", "1")
        .env("ZOTERO_LOCAL_API_BASE", emu.local_uri())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{text}{err}");
    assert!(text.contains(&format!("group:{LAB} \"Lab\"")), "{text}");
    assert!(text.contains("read yes, write no"), "{text}");
    assert!(
        text.contains("local API:") && text.contains("answers"),
        "{text}"
    );
    assert!(!text.contains(API_KEY) && !err.contains(API_KEY));
    // The desktop switched off: check fails and says how to turn it on.
    emu.set_local_enabled(false);
    let out = std::process::Command::new(crate::common::BIN)
        .arg("check")
        .env_clear()
        .env("ZOTERO_LOCAL", "1")
        .env("ZOTERO_LOCAL_API_BASE", emu.local_uri())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("Allow other applications"), "{err}");
}

#[tokio::test]
async fn with_both_backends_the_web_answers_when_the_desktop_cannot() {
    let emu = with_groups().await;
    let local = emu.local_uri();
    let s = server(
        &emu,
        &[("ZOTERO_LOCAL", "1"), ("ZOTERO_LOCAL_API_BASE", &local)],
    )
    .await;
    // A group the desktop does not have (404 there).
    emu.update_group(LAB, |g| g.on_desktop = false);
    let a = s
        .call(
            "zotero_search_items",
            json!({"library": format!("group:{LAB}"), "query": "x"}),
        )
        .await;
    a.expect_ok();
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.path == format!("/groups/{LAB}/items/top")));
    // The desktop closed: searches still work, through the web.
    emu.close_local();
    let a = s
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    assert!(a.expect_ok()["total"].as_u64().unwrap() > 0);
}
