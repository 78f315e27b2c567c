//! Every library and both backends, through the MCP tools against the emulator: group
//! libraries read and written with `library: "group:<id>"`, `ZOTERO_LIBRARY` as the default,
//! access refused with `ZOTERO_AUTH_ERROR` naming the library before any write is sent,
//! `zotero_list_libraries`, group settings narrowing a write to all groups, `check`. The
//! desktop's local API: `local.rs`.

mod local;

use serde_json::json;
use zotero_emulator::{Emulator, GroupSpec, KeyAccess, Library, LibraryId, API_KEY, USER_ID};

use crate::common::{env_for, in_process, writes, Server};

pub(super) const LAB: u64 = 4001;
pub(super) const READERS: u64 = 4002;
pub(super) const HIDDEN: u64 = 4003;

/// The emulator with three groups: the key may write LAB, only read READERS, and has no
/// access at all to HIDDEN.
pub(super) async fn with_groups() -> Emulator {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(LAB, "Lab"), Library::empty());
    emu.add_group(GroupSpec::new(READERS, "Readers"), Library::from_fixtures());
    emu.add_group(GroupSpec::new(HIDDEN, "Hidden"), Library::empty());
    emu.set_key_access(KeyAccess::groups(&[(LAB, true), (READERS, false)]));
    emu
}

pub(super) async fn server(emu: &Emulator, extra: &[(&str, &str)]) -> Server {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    in_process(&env).await
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
    assert_eq!(
        found.expect_ok()["items"][0]["zotero_url"],
        format!("zotero://select/groups/{LAB}/items/{key}")
    );
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
async fn check_refuses_a_default_library_the_key_cannot_reach() {
    let emu = with_groups().await;
    let run = |library: String| {
        std::process::Command::new(crate::common::BIN)
            .arg("check")
            .env_clear()
            .env("ZOTERO_API_BASE", emu.uri())
            .env("ZOTERO_USER_ID", USER_ID.to_string())
            .env("ZOTERO_API_KEY", API_KEY)
            .env("ZOTERO_LIBRARY", library)
            .output()
            .unwrap()
    };
    let out = run(format!("group:{READERS}"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("default:   group:{READERS} (read yes, write no")),
        "{text}"
    );
    let out = run(format!("group:{HIDDEN}"));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("ZOTERO_LIBRARY is group:{HIDDEN}")),
        "{err}"
    );
}
