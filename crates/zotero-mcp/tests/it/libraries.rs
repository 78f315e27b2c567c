//! Every library and both backends, through the MCP tools against the emulator: group
//! libraries read and written with `library: "group:<id>"`, `ZOTERO_LIBRARY` as the default,
//! access refused with `ZOTERO_AUTH_ERROR` naming the library before any write is sent,
//! `zotero_list_libraries`, the desktop's local API alone (read-only server) and beside the
//! Web API (reads that may lag go local; what a write depends on comes from the web, even
//! while the desktop lags).

use serde_json::json;
use zotero_emulator::{Emulator, GroupSpec, KeyAccess, Library, LibraryId, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};
use crate::emulator_client::{api, lib};

const LAB: u64 = 4001;
const READERS: u64 = 4002;
const HIDDEN: u64 = 4003;

/// The emulator with three groups: the key may write LAB, only read READERS, and has no
/// access at all to HIDDEN.
async fn with_groups() -> Emulator {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(LAB, "Lab"), Library::empty());
    emu.add_group(GroupSpec::new(READERS, "Readers"), Library::from_fixtures());
    emu.add_group(GroupSpec::new(HIDDEN, "Hidden"), Library::empty());
    emu.set_key_access(KeyAccess::groups(&[(LAB, true), (READERS, false)]));
    emu
}

async fn server(emu: &Emulator, extra: &[(&str, &str)]) -> Server {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    in_process(&env).await
}

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

fn writes(emu: &Emulator) -> Vec<String> {
    emu.requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test]
async fn list_libraries_names_each_library_with_what_the_key_may_do() {
    let emu = with_groups().await;
    let s = server(&emu, &[]).await;
    let data = s.call("zotero_list_libraries", json!({})).await;
    let libs = data.expect_ok()["libraries"].as_array().unwrap().clone();
    let by_name = |l: &str| libs.iter().find(|x| x["library"] == l).cloned();
    let user = by_name("user").unwrap();
    assert_eq!(user["type"], "user");
    assert_eq!(
        [&user["read"], &user["write"], &user["files"]],
        [true, true, true]
    );
    let lab = by_name(&format!("group:{LAB}")).unwrap();
    assert_eq!(
        (lab["name"].clone(), lab["type"].clone()),
        (json!("Lab"), json!("group"))
    );
    assert_eq!([&lab["read"], &lab["write"]], [true, true]);
    let readers = by_name(&format!("group:{READERS}")).unwrap();
    assert_eq!([&readers["read"], &readers["write"]], [true, false]);
    assert!(readers["num_items"].as_u64().unwrap() > 0);
    // A group the key cannot see is not listed.
    assert!(by_name(&format!("group:{HIDDEN}")).is_none(), "{libs:?}");
}

#[tokio::test]
async fn a_group_library_is_read_and_written_by_naming_it() {
    let emu = with_groups().await;
    let s = server(&emu, &[]).await;
    let group = format!("group:{LAB}");
    let created = s
        .call(
            "zotero_create_item",
            json!({"library": group, "item_type": "book", "title": "Group Notebook"}),
        )
        .await;
    let key = created.expect_ok()["item_key"]
        .as_str()
        .unwrap()
        .to_string();
    // It is in the group, not in the user library.
    assert!(emu.library(LibraryId::Group(LAB)).item(&key).is_some());
    assert!(emu.item(&key).is_none());
    let found = s
        .call(
            "zotero_search_items",
            json!({"library": group, "query": "Notebook"}),
        )
        .await;
    assert_eq!(found.expect_ok()["items"][0]["item_key"], key.as_str());
    // The same search in the user library does not see it.
    let mine = s
        .call("zotero_search_items", json!({"query": "Notebook"}))
        .await;
    assert_eq!(mine.expect_ok()["total"], 0);
    let got = s
        .call(
            "zotero_get_item",
            json!({"library": group, "item_key": key}),
        )
        .await;
    assert_eq!(got.expect_ok()["item"]["title"], "Group Notebook");
    let up = s
        .call(
            "zotero_upload_attachment",
            json!({"library": group, "item_key": key, "file_bytes_base64": "aGVsbG8=", "filename": "hello.txt"}),
        )
        .await;
    let attachment = up.expect_ok()["attachment_key"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = emu
        .library(LibraryId::Group(LAB))
        .item(&attachment)
        .unwrap();
    assert_eq!(stored["data"]["parentItem"], key.as_str());
    // Every write to Zotero went to the group's URLs (the file itself to the storage host).
    for w in writes(&emu).iter().filter(|w| !w.contains("/s3/")) {
        assert!(w.contains(&format!("/groups/{LAB}/")), "{w}");
    }
}

#[tokio::test]
async fn zotero_library_is_the_default_library() {
    let emu = with_groups().await;
    let s = server(&emu, &[("ZOTERO_LIBRARY", &format!("group:{READERS}"))]).await;
    let found = s
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    assert!(found.expect_ok()["total"].as_u64().unwrap() > 0);
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.path == format!("/groups/{READERS}/items/top")));
    // Naming the user library still reaches it.
    let mine = s
        .call(
            "zotero_search_items",
            json!({"library": "user", "query": "attention"}),
        )
        .await;
    mine.expect_ok();
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.path == format!("/users/{USER_ID}/items/top")));
}

#[tokio::test]
async fn writes_the_key_may_not_make_are_refused_before_any_request() {
    let emu = with_groups().await;
    let s = server(&emu, &[]).await;
    for (group, tool, args) in [
        (
            READERS,
            "zotero_create_item",
            json!({"item_type": "book", "title": "No"}),
        ),
        (
            READERS,
            "zotero_add_item_to_collection",
            json!({"item_key": "VASWANI7", "collection_name": "Transformers"}),
        ),
        (
            READERS,
            "zotero_upload_attachment",
            json!({"item_key": "VASWANI7", "file_bytes_base64": "aGk=", "filename": "hi.txt"}),
        ),
        (
            HIDDEN,
            "zotero_create_item",
            json!({"item_type": "book", "title": "No"}),
        ),
    ] {
        let mut args = args;
        args["library"] = json!(format!("group:{group}"));
        let a = s.call(tool, args).await;
        let e = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(e["details"]["library"], format!("group:{group}"), "{tool}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains(&format!("group:{group}")),
            "{e}"
        );
    }
    // Nothing but the key's access was asked (once for the process, and again before each
    // refusal, in case it was just changed), and nothing was written.
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    let paths: Vec<String> = emu.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, vec!["/keys/current"; 5]);
}

#[tokio::test]
async fn a_group_the_key_cannot_read_is_named_in_the_error() {
    let emu = with_groups().await;
    let s = server(&emu, &[]).await;
    let a = s
        .call(
            "zotero_search_items",
            json!({"library": format!("group:{HIDDEN}"), "query": "x"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_AUTH_ERROR");
    assert_eq!(e["details"]["library"], format!("group:{HIDDEN}"));
    // A malformed library is refused as input, before anything is sent.
    let before = emu.requests().len();
    let a = s
        .call(
            "zotero_search_items",
            json!({"library": "groups/1", "query": "x"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "library");
    assert_eq!(emu.requests().len(), before);
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
async fn write_to_all_groups_reaches_only_where_the_group_lets_the_user_edit() {
    use zotero_emulator::{FileEditing, LibraryEditing};
    let emu = Emulator::start().await;
    // The user is a plain member: group A lets only admins edit; group B lets members edit
    // but nobody upload files.
    let mut a = GroupSpec::new(LAB, "Admins edit");
    (a.owner, a.members, a.library_editing) = (1, vec![USER_ID], LibraryEditing::Admins);
    emu.add_group(a, Library::from_fixtures());
    let mut b = GroupSpec::new(READERS, "No files");
    (b.owner, b.members, b.file_editing) = (1, vec![USER_ID], FileEditing::None);
    emu.add_group(b, Library::from_fixtures());
    emu.set_key_access(KeyAccess::all_groups(true));
    let s = server(&emu, &[]).await;
    let a = s
        .call(
            "zotero_create_item",
            json!({"library": format!("group:{LAB}"), "item_type": "book", "title": "No"}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_AUTH_ERROR")["details"]["needed"],
        "write to"
    );
    let b = s
        .call(
            "zotero_upload_attachment",
            json!({"library": format!("group:{READERS}"), "item_key": "VASWANI7",
                   "file_bytes_base64": "aGk=", "filename": "hi.txt"}),
        )
        .await;
    assert_eq!(
        b.expect_err("ZOTERO_AUTH_ERROR")["details"]["needed"],
        "upload files to"
    );
    // Where the group lets the user edit, the write goes through.
    let ok = s
        .call(
            "zotero_create_item",
            json!({"library": format!("group:{READERS}"), "item_type": "book", "title": "Yes"}),
        )
        .await;
    ok.expect_ok();
    let libs = s.call("zotero_list_libraries", json!({})).await;
    let libs = libs.expect_ok()["libraries"].as_array().unwrap().clone();
    let of = |id: u64| {
        libs.iter()
            .find(|l| l["library"] == format!("group:{id}"))
            .cloned()
            .unwrap()
    };
    assert_eq!([&of(LAB)["write"], &of(READERS)["write"]], [false, true]);
    assert_eq!(of(READERS)["files"], false);
    // One write in all: the allowed create.
    assert_eq!(writes(&emu), [format!("POST /groups/{READERS}/items")]);
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
