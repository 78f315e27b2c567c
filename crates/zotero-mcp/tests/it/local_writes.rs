//! Writes through Zotero 10's local API (the emulator's `DesktopRelease::Zotero10`): with a
//! local key they go to the desktop app — no web key needed, groups included — with the
//! reads they depend on; `ZOTERO_WRITE_BACKEND` picks; the server ID is on every request, a
//! changed one stops the write; a lost answer is read back, never sent twice; a refused key
//! asks for `zotero-mcp authorize`; no key ever crosses backends (checked on the wire and in
//! the trace-level log).

use serde_json::{json, Value};
use zotero_emulator::{DesktopRelease, Emulator, Fault, FaultKind, Recorded, API_KEY, USER_ID};

use crate::common::{env_for, in_process, spawn, Server};

/// The emulator as Zotero 10 with a remembered key.
pub async fn zotero10() -> (Emulator, String) {
    let emu = Emulator::start().await;
    emu.set_desktop_release(DesktopRelease::Zotero10);
    let key = emu.grant_local_key("zotero-mcp", true);
    (emu, key)
}

/// The variables for writing through the desktop (`web`: the web API's too).
pub fn local_env(emu: &Emulator, key: &str, web: bool) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    if !web {
        env.retain(|(k, _)| k != "ZOTERO_API_KEY" && k != "ZOTERO_USER_ID");
    }
    env.push(("ZOTERO_LOCAL".into(), "1".into()));
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    env.push(("ZOTERO_LOCAL_API_KEY".into(), key.into()));
    env
}

fn local_writes(emu: &Emulator) -> Vec<Recorded> {
    emu.local_requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect()
}

async fn create(server: &Server, title: &str) -> Value {
    server
        .call(
            "zotero_create_item",
            json!({"item_type": "journalArticle", "title": title, "tags": ["t1"],
                   "creators": [{"creator_type": "author", "name": "A"}]}),
        )
        .await
        .expect_ok()
        .clone()
}

#[tokio::test]
async fn without_a_web_key_writes_go_to_the_desktop() {
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    let names: Vec<String> = server
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        names.iter().any(|n| n == "zotero_create_item"),
        "write tools are listed: {names:?}"
    );

    let d = create(&server, "Local paper").await;
    let item_key = d["item_key"].as_str().unwrap().to_string();
    let stored = emu.item(&item_key).expect("created in Zotero");
    assert_eq!(stored["data"]["title"], "Local paper");
    assert!(emu.requests().is_empty(), "nothing reached the web API");
    let sid = emu.server_id();
    for r in local_writes(&emu) {
        assert_eq!(
            r.header("zotero-server-id"),
            Some(sid.as_str()),
            "{} {}",
            r.method,
            r.path
        );
        assert_eq!(r.header("zotero-api-key"), Some(key.as_str()));
        assert!(r.header("authorization").is_none());
        assert!(r.path.starts_with("/api/users/0/"), "{}", r.path);
    }

    // Edit, tag, file, note, trash: all through the desktop.
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": item_key, "fields": {"volume": "7"}, "add_tags": ["read"],
                   "add_collections": ["ATTNDP62"]}),
        )
        .await;
    assert_eq!(a.expect_ok()["status"], "changed", "{:?}", a.data());
    let d = emu.item(&item_key).unwrap()["data"].clone();
    assert_eq!(d["volume"], "7");
    assert_eq!(d["collections"], json!(["ATTNDP62"]));
    let note = server
        .call(
            "zotero_create_note",
            json!({"parent_key": item_key, "content": "Read it."}),
        )
        .await;
    note.expect_ok();
    let a = server
        .call("zotero_trash_items", json!({"item_keys": [item_key]}))
        .await;
    a.expect_ok();
    assert_eq!(
        emu.item(&item_key).unwrap()["data"]["deleted"],
        true,
        "trashed, not erased"
    );
    assert!(emu.requests().is_empty(), "nothing reached the web API");
}

#[tokio::test]
async fn the_write_backend_variable_picks_and_auto_uses_the_desktop() {
    // auto with both: the desktop writes.
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, true)).await;
    create(&server, "Auto").await;
    assert!(
        emu.requests().iter().all(|r| r.method == "GET"),
        "no web write"
    );
    assert!(!local_writes(&emu).is_empty());

    // web: the web API writes, the local key is not used.
    let (emu, key) = zotero10().await;
    let mut env = local_env(&emu, &key, true);
    env.push(("ZOTERO_WRITE_BACKEND".into(), "web".into()));
    let server = in_process(&env).await;
    create(&server, "Web").await;
    assert!(local_writes(&emu).is_empty());
    assert!(emu.requests().iter().any(|r| r.method == "POST"));

    // No local key: the web API writes, as before.
    let emu = Emulator::start().await;
    emu.set_desktop_release(DesktopRelease::Zotero10);
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_LOCAL".into(), "1".into()));
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    let server = in_process(&env).await;
    create(&server, "Web again").await;
    assert!(local_writes(&emu).is_empty());
}

#[tokio::test]
async fn local_backend_on_zotero_9_says_to_upgrade() {
    let (emu, key) = zotero10().await;
    let mut env = local_env(&emu, &key, true);
    env.push(("ZOTERO_WRITE_BACKEND".into(), "local".into()));
    emu.set_desktop_release(DesktopRelease::Zotero9);
    env.retain(|(k, _)| k != "ZOTERO_LOCAL_API_BASE");
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    let server = in_process(&env).await;
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "T"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_AUTH_ERROR");
    assert!(e["message"].as_str().unwrap().contains("Zotero 10"), "{e}");
    assert!(
        emu.requests().iter().all(|r| r.method == "GET"),
        "no fallback to the web"
    );
}

#[tokio::test]
async fn another_database_stops_the_write_and_the_next_one_reads_again() {
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    create(&server, "First").await;
    emu.switch_database();
    let before = local_writes(&emu).len();
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "fields": {"volume": "9"}}),
        )
        .await;
    let e = a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert!(
        e["message"].as_str().unwrap().contains("another database"),
        "{e}"
    );
    let after = local_writes(&emu).len();
    assert!(
        after - before <= 1,
        "never replayed: {:?}",
        &local_writes(&emu)[before..]
    );
    // The new ID was adopted: the next write goes through.
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "fields": {"volume": "9"}}),
        )
        .await;
    a.expect_ok();
    assert_eq!(emu.item("VASWANI7").unwrap()["data"]["volume"], "9");
}

#[tokio::test]
async fn a_lost_answer_is_read_back_never_sent_twice() {
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    emu.inject(
        Fault::once(FaultKind::Drop)
            .local()
            .method("POST")
            .path_suffix("/items"),
    );
    let d = create(&server, "Lost answer").await;
    let item_key = d["item_key"].as_str().unwrap();
    assert!(emu.item(item_key).is_some());
    let posts = local_writes(&emu)
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 1, "sent once, then read back");
    assert_eq!(emu.faults_pending(), 0);
}

#[tokio::test]
async fn a_refused_key_asks_for_a_new_authorization_without_retrying() {
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    emu.clear_write_authorizations();
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "T"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_AUTH_ERROR");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("zotero-mcp authorize"),
        "{e}"
    );
    assert_eq!(
        local_writes(&emu)
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
    assert!(emu.dialogs_shown().is_empty(), "no dialog opened by itself");
}

#[tokio::test]
async fn no_key_crosses_backends_even_at_trace_level() {
    let (emu, key) = zotero10().await;
    let mut env = local_env(&emu, &key, true);
    env.push(("ZOTERO_MCP_LOG_LEVEL".into(), "trace".into()));
    let server = spawn(&env).await;
    create(&server, "Keys stay home").await;
    // A read from the web too, so both backends were used.
    server
        .call("zotero_list_collections", json!({}))
        .await
        .expect_ok();
    assert!(!emu.requests().is_empty() || !emu.local_requests().is_empty());
    for r in emu.local_requests() {
        let all = format!("{:?}", r.headers);
        assert!(
            !all.contains(API_KEY),
            "the web key went to the desktop: {} {}",
            r.method,
            r.path
        );
        assert!(r.header("authorization").is_none());
    }
    for r in emu.requests() {
        let all = format!("{:?}", r.headers);
        assert!(
            !all.contains(&key),
            "the local key went to the web: {} {}",
            r.method,
            r.path
        );
    }
    let traced = server
        .wait_for_log(std::time::Duration::from_secs(10), |l| {
            l.to_string().contains("TRACE") || l.to_string().contains("trace")
        })
        .await;
    assert!(traced, "trace lines were written");
    let log = server_log(&server);
    assert!(!log.is_empty(), "trace lines were written");
    assert!(!log.contains(&key), "the local key is in the log");
    assert!(!log.contains(API_KEY), "the web key is in the log");
}

fn server_log(server: &Server) -> String {
    server.stderr().join("\n")
}

#[tokio::test]
async fn a_file_goes_up_in_three_local_steps() {
    use base64::Engine;
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    let content = b"plain text, with + and spaces".to_vec();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": "VASWANI7", "file_bytes_base64": encoded,
                   "filename": "my notes+1.txt"}),
        )
        .await;
    let d = a.expect_ok().clone();
    let att = d["attachment_key"].as_str().unwrap().to_string();
    let f = emu.file(&att).expect("the file is registered");
    assert_eq!(
        f.bytes.as_deref(),
        Some(&content[..]),
        "bytes unchanged (sent as octet-stream)"
    );
    assert_eq!(f.filename, "my notes+1.txt", "spaces as %20, + as %2B");
    let steps: Vec<String> = local_writes(&emu)
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let uploads: Vec<Recorded> = emu
        .local_requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/api/local/uploads/"))
        .collect();
    assert_eq!(uploads.len(), 1, "{steps:?}");
    assert_eq!(
        uploads[0].header("content-type"),
        Some("application/octet-stream")
    );
    assert!(
        uploads[0].header("zotero-api-key").is_none(),
        "no key with the bytes"
    );
    assert!(
        !steps
            .iter()
            .any(|s| s.starts_with("PATCH") && s.ends_with("/file")),
        "full upload only"
    );
    assert!(
        emu.requests().is_empty(),
        "nothing reached the web API or its storage"
    );
}

#[tokio::test]
async fn group_writes_go_to_the_desktop_too() {
    use zotero_emulator::{GroupSpec, Library};
    let (emu, key) = zotero10().await;
    emu.add_group(GroupSpec::new(4242, "Lab"), Library::from_fixtures());
    let server = in_process(&local_env(&emu, &key, false)).await;
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Group book", "library": "group:4242"}),
        )
        .await;
    let d = a.expect_ok().clone();
    assert!(local_writes(&emu)
        .iter()
        .any(|r| r.path.starts_with("/api/groups/4242/items")));
    let k = d["item_key"].as_str().unwrap();
    assert!(emu
        .library(zotero_emulator::LibraryId::Group(4242))
        .item(k)
        .is_some());
}

/// Attachments of `VASWANI7` carrying a file named `name`.
fn attachments_named(emu: &Emulator, name: &str) -> usize {
    let lib = emu.library(zotero_emulator::LibraryId::USER);
    lib.items()
        .iter()
        .filter(|i| i["data"]["parentItem"] == "VASWANI7" && i["data"]["title"] == name)
        .count()
}

#[tokio::test]
async fn upload_faults_leave_no_orphan_and_a_lost_registration_is_read_back() {
    use base64::Engine;
    let (emu, key) = zotero10().await;
    let server = in_process(&local_env(&emu, &key, false)).await;
    let upload = |name: &str, content: &[u8]| {
        json!({"item_key": "VASWANI7", "filename": name,
               "file_bytes_base64": base64::engine::general_purpose::STANDARD.encode(content)})
    };
    // The desktop fails to take the bytes, every attempt (sending them again is harmless):
    // the attachment item is removed again.
    emu.inject(
        Fault::times(FaultKind::ServerError, 3)
            .local()
            .on("/api/local/uploads/"),
    );
    let a = server
        .call("zotero_upload_attachment", upload("fails.txt", b"one"))
        .await;
    a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert_eq!(
        attachments_named(&emu, "fails.txt"),
        0,
        "no orphan attachment"
    );

    // The registration's answer is lost: the item says the file is there; sent once.
    emu.inject(
        Fault::once(FaultKind::Drop)
            .local()
            .path_suffix("/file")
            .body_contains("upload="),
    );
    let a = server
        .call("zotero_upload_attachment", upload("lost.txt", b"two"))
        .await;
    let d = a.expect_ok().clone();
    let att = d["attachment_key"].as_str().unwrap();
    assert_eq!(emu.file(att).unwrap().bytes.as_deref(), Some(&b"two"[..]));
    assert_eq!(attachments_named(&emu, "lost.txt"), 1);
    let registrations = emu
        .local_requests()
        .iter()
        .filter(|r| {
            r.path.ends_with("/file") && String::from_utf8_lossy(&r.body).contains("upload=")
        })
        .count();
    assert_eq!(registrations, 1, "never resent");
    assert_eq!(emu.faults_pending(), 0);
}

/// The issue's scenario: a Zotero 10 user with no web API key adds a paper by DOI with its
/// open-access PDF, files it in a new collection, tags it and writes a note, all through the
/// desktop app; the same DOI again creates nothing.
#[tokio::test]
async fn a_doi_with_its_pdf_is_added_filed_tagged_and_noted_without_a_web_key() {
    let (emu, key) = zotero10().await;
    let mut env = local_env(&emu, &key, false);
    env.extend(
        [
            ("ZOTERO_DOI_BASE", emu.doi_base()),
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_DATACITE_BASE", emu.datacite_base()),
            ("ZOTERO_UNPAYWALL_BASE", emu.unpaywall_base()),
            ("ZOTERO_CONTACT_EMAIL", "ada@lovelace-lab.org".to_string()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    let server = in_process(&env).await;
    let coll = server
        .call("zotero_create_collection", json!({"name": "To read"}))
        .await
        .expect_ok()
        .clone();
    let coll_key = coll["collection_key"]
        .as_str()
        .or_else(|| coll["collection"]["collection_key"].as_str())
        .unwrap_or_else(|| panic!("{coll}"))
        .to_string();
    let d = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": ["10.1038/nature12373"], "collection_key": coll_key}),
        )
        .await
        .expect_ok()
        .clone();
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{d}");
    assert_eq!(r["pdf"], "attached", "{d}");
    let item_key = r["item_key"].as_str().unwrap().to_string();
    server
        .call(
            "zotero_update_item",
            json!({"item_key": item_key, "add_tags": ["to-read"]}),
        )
        .await
        .expect_ok();
    server
        .call(
            "zotero_create_note",
            json!({"parent_key": item_key, "content": "# Why\n\nThe method of section 3."}),
        )
        .await
        .expect_ok();

    // What Zotero holds: the item in the collection with its tag, a PDF and a note beneath.
    let item = emu.item(&item_key).unwrap();
    let data = &item["data"];
    assert!(
        data["collections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == coll_key.as_str()),
        "{item}"
    );
    assert!(
        data["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["tag"] == "to-read"),
        "{item}"
    );
    let children = server
        .call("zotero_get_item_children", json!({"item_key": item_key}))
        .await
        .expect_ok()
        .to_string();
    assert!(children.contains("application/pdf"), "{children}");
    assert!(children.contains(r#""title":"Why""#), "{children}");
    let notes = server
        .call("zotero_get_notes", json!({"item_key": item_key}))
        .await
        .expect_ok()
        .to_string();
    assert!(notes.contains("The method of section 3"), "{notes}");

    // Every write went to the desktop (none to the web API), and the same DOI again creates
    // nothing.
    assert!(!local_writes(&emu).is_empty());
    assert!(
        !emu.requests()
            .iter()
            .any(|r| r.method != "GET" && r.path.starts_with("/users/")),
        "a write reached the web API"
    );
    let again = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": ["https://doi.org/10.1038/nature12373"]}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(
        again["results"][0]["status"], "already_in_library",
        "{again}"
    );
    assert_eq!(
        again["results"][0]["item_key"],
        item_key.as_str(),
        "{again}"
    );
}
