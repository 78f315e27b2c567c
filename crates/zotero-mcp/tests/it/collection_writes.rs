//! Conformance of `zotero_create_collection` and `zotero_update_collection` against the
//! emulator: exactly-once creates (own key, write token, `version: 0`, a lost answer),
//! sibling names compared in any case, renames and moves through the edit engine with an edit
//! made in Zotero between the server's read and its write, moves into a subcollection refused,
//! deletes asked for, version-checked, cascading to subcollections and keeping the items,
//! trashed collections in listings, dry runs and read-only libraries that write nothing.

use crate::common::{env_for, in_process_as, setup, writes, Backend, TestClient};

/// Queues a fault for the backend under test.
fn inject(emu: &Emulator, backend: Backend, fault: Fault) {
    emu.inject(backend.fault(fault));
}
use serde_json::{json, Value};
use zotero_emulator::testing::{get, lib};
use zotero_emulator::{
    Emulator, Fault, FaultKind, GroupSpec, KeyAccess, Library, ZoteroEdit, API_KEY, USER_ID,
};

const CREATE: &str = "zotero_create_collection";
const UPDATE: &str = "zotero_update_collection";
const COLLECTIONS: &str = "/users/475425/collections";

fn named(emu: &Emulator, name: &str) -> Vec<Value> {
    emu.collections()
        .into_iter()
        .filter(|c| c["data"]["name"] == name)
        .collect()
}

fn version_of(emu: &Emulator, key: &str) -> u64 {
    emu.collection(key).unwrap()["version"].as_u64().unwrap()
}

fn item_collections(emu: &Emulator, key: &str) -> Value {
    emu.item(key).unwrap()["data"]["collections"].clone()
}

fn body(r: &zotero_emulator::Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

async fn create_posts_once_with_its_own_key_a_write_token_and_version_0(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let a = server.call(CREATE, json!({"name": "  Surveys "})).await;
    let d = a.expect_ok().clone();
    assert_eq!(d["status"], "created");
    assert_eq!(
        (d["created"].clone(), d["already_existed"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(d["dry_run"], false);
    assert_eq!(d["name"], "Surveys");
    assert!(d.get("parent_key").is_none());
    let key = d["collection_key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 8);
    assert!(
        key.bytes()
            .all(|b| b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ".contains(&b)),
        "{key}"
    );
    assert_eq!(
        d["zotero_url"],
        format!("zotero://select/library/collections/{key}")
    );
    let stored = emu.collection(&key).unwrap();
    assert_eq!(stored["data"]["name"], "Surveys");
    assert_eq!(stored["data"]["parentCollection"], false);
    assert_eq!(d["version"], stored["version"]);

    let posts: Vec<_> = backend
        .requests(&emu)
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].path, COLLECTIONS);
    let token = posts[0].header("zotero-write-token").unwrap();
    assert_eq!(token.len(), 32);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        body(&posts[0]),
        json!([{"name": "Surveys", "parentCollection": false, "key": key, "version": 0}])
    );

    // A repeat finds it: nothing written.
    emu.reset_counts();
    let d = server
        .call(CREATE, json!({"name": "surveys"}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "already_existed");
    assert_eq!(
        (d["created"].clone(), d["already_existed"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(d["collection_key"], json!(key));
    assert_eq!(d["name"], "Surveys");
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    assert_eq!(named(&emu, "Surveys").len(), 1);
    server.stop().await;
}

async fn sibling_names_are_compared_in_any_case_under_the_same_parent_only(backend: Backend) {
    let (emu, server) = backend.setup().await;
    // "Transformers" is under "Reading List" (RDLSTUP3).
    let d = server
        .call(
            CREATE,
            json!({"name": "TRANSFORMERS", "parent_key": "RDLSTUP3"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "already_existed");
    assert_eq!(d["collection_key"], "TRNSFM52");
    assert_eq!(d["parent_key"], "RDLSTUP3");
    assert!(backend.writes(&emu).is_empty());
    // Two top-level namesakes ("Reading List", "reading list"): the one spelled alike.
    let d = server
        .call(CREATE, json!({"name": "reading list"}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["collection_key"], "RDLSTLW4");
    let d = server
        .call(CREATE, json!({"name": "Reading List "}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["collection_key"], "RDLSTUP3");
    assert!(backend.writes(&emu).is_empty());

    // The same name under another parent, or at the top level, is another collection.
    let d = server
        .call(
            CREATE,
            json!({"name": "Transformers", "parent_key": "RDLSTLW4"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "created");
    assert_eq!(d["parent_key"], "RDLSTLW4");
    let key = d["collection_key"].as_str().unwrap();
    assert_ne!(key, "TRNSFM52");
    assert_eq!(
        emu.collection(key).unwrap()["data"]["parentCollection"],
        "RDLSTLW4"
    );
    let d = server
        .call(CREATE, json!({"name": "Transformers"}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "created");
    assert_eq!(named(&emu, "Transformers").len(), 3);

    // An unknown parent: not found, naming the argument; nothing written.
    emu.reset_counts();
    let a = server
        .call(CREATE, json!({"name": "x", "parent_key": "ZZZZZZZZ"}))
        .await;
    let e = a.expect_err("ZOTERO_NOT_FOUND");
    assert_eq!(e["details"]["field"], "parent_key");
    assert!(e["message"].as_str().unwrap().contains("ZZZZZZZZ"));
    assert!(backend.writes(&emu).is_empty());
    server.stop().await;
}

async fn a_lost_answer_creates_one_collection_not_two(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::Drop).on(COLLECTIONS).method("POST"),
    );
    let d = server
        .call(CREATE, json!({"name": "Lost Answers"}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "created");
    let found = named(&emu, "Lost Answers");
    assert_eq!(found.len(), 1, "exactly once");
    assert_eq!(d["collection_key"], found[0]["key"]);
    assert_eq!(d["version"], found[0]["version"]);
    let posts: Vec<_> = backend
        .requests(&emu)
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    if backend == Backend::Web {
        // The create was sent again with the same token and key, and refused as a repeat.
        assert_eq!(posts.len(), 2);
        assert_eq!(
            posts[0].header("zotero-write-token"),
            posts[1].header("zotero-write-token")
        );
        assert_eq!(body(&posts[0]), body(&posts[1]));
    } else {
        // Never sent again: reading the key back found the collection.
        assert_eq!(posts.len(), 1);
    }
    assert_eq!(emu.faults_pending(), 0);
    server.stop().await;
}

#[tokio::test]
async fn dry_runs_answer_what_would_change_and_write_nothing() {
    let emu = Emulator::start().await;
    let client = TestClient::confirming(true);
    let server = in_process_as(&env_for(&emu.uri(), USER_ID, API_KEY), client.clone()).await;
    let d = server
        .call(
            CREATE,
            json!({"name": "Someday", "parent_key": "RDLSTUP3", "dry_run": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["dry_run"], true);
    assert_eq!(d["status"], "would_create");
    assert_eq!(d["created"], false);
    assert!(d.get("collection_key").is_none());
    assert_eq!(
        (d["name"].clone(), d["parent_key"].clone()),
        (json!("Someday"), json!("RDLSTUP3"))
    );

    let v = version_of(&emu, "TRNSFM52");
    let d = server
        .call(UPDATE, json!({"collection_key": "TRNSFM52", "name": "Attention", "top_level": true, "dry_run": true}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["dry_run"], true);
    assert_eq!(d["result"]["status"], "would_change");
    let changes = d["result"]["changes"].as_array().unwrap();
    assert!(
        changes.contains(&json!({"field": "name", "before": "Transformers", "after": "Attention"}))
    );
    assert!(changes
        .contains(&json!({"field": "parentCollection", "before": "RDLSTUP3", "after": false})));
    assert_eq!(d["name"], "Attention", "as it would be");
    assert!(d.get("parent_key").is_none());

    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true, "dry_run": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(
        (d["deleted"].clone(), d["dry_run"].clone()),
        (json!(false), json!(true))
    );
    let subs: Vec<&str> = d["subcollections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["collection_key"].as_str().unwrap())
        .collect();
    assert_eq!(subs, ["TRNSFM52", "ATTNDP62"]);
    assert_eq!(d["items_filed"], 4);

    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    assert!(client.questions().is_empty(), "a dry run asks nothing");
    assert_eq!(version_of(&emu, "TRNSFM52"), v);
    assert!(named(&emu, "Someday").is_empty());
    server.stop().await;
}

async fn a_rename_is_version_checked_and_repeats_change_nothing(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let v = version_of(&emu, "RDLSTLW4");
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTLW4", "name": "To Read"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["result"]["status"], "changed");
    assert_eq!(
        d["result"]["changes"],
        json!([{"field": "name", "before": "reading list", "after": "To Read"}])
    );
    assert_eq!(d["name"], "To Read");
    assert_eq!(
        d["zotero_url"],
        "zotero://select/library/collections/RDLSTLW4"
    );
    let stored = emu.collection("RDLSTLW4").unwrap();
    assert_eq!(stored["data"]["name"], "To Read");
    assert_eq!(d["result"]["version"], stored["version"]);
    let posts: Vec<_> = backend
        .requests(&emu)
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].path, COLLECTIONS);
    assert_eq!(
        body(&posts[0]),
        json!([{"key": "RDLSTLW4", "version": v, "name": "To Read"}])
    );

    emu.reset_counts();
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTLW4", "name": "To Read"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["result"]["status"], "unchanged");
    assert!(backend.writes(&emu).is_empty());
    server.stop().await;
}

async fn a_rename_in_zotero_meanwhile_is_a_conflict_naming_both_values(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::collection("RDLSTUP3").set("name", json!("Renamed in Zotero")),
        ))
        .on(COLLECTIONS)
        .method("POST"),
    );
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "name": "To Read"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "changed_in_zotero");
    assert_eq!(e["details"]["written"], false);
    assert_eq!(
        e["details"]["conflicts"],
        json!([{"field": "name", "before": "Reading List", "yours": "To Read", "in_zotero": "Renamed in Zotero"}])
    );
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("name"), "{message}");
    assert_eq!(
        emu.collection("RDLSTUP3").unwrap()["data"]["name"],
        "Renamed in Zotero"
    );
    assert_eq!(emu.faults_pending(), 0);
    server.stop().await;
}

async fn a_move_in_zotero_meanwhile_is_kept_beside_our_rename(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let v = version_of(&emu, "TRNSFM52");
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::collection("TRNSFM52").set("parentCollection", json!("RDLSTLW4")),
        ))
        .on(COLLECTIONS)
        .method("POST"),
    );
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "TRNSFM52", "name": "Transformer Models"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["result"]["status"], "changed");
    assert_eq!(d["parent_key"], "RDLSTLW4");
    let stored = emu.collection("TRNSFM52").unwrap();
    assert_eq!(stored["data"]["name"], "Transformer Models");
    assert_eq!(
        stored["data"]["parentCollection"], "RDLSTLW4",
        "Zotero's move is kept"
    );
    // Refused once at the version read, written at the version after Zotero's edit.
    let versions: Vec<Value> = backend
        .requests(&emu)
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| body(r)[0]["version"].clone())
        .collect();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0], json!(v));
    assert!(versions[1].as_u64().unwrap() > v);
    server.stop().await;
}

async fn moves_go_anywhere_but_into_the_collection_itself_or_below_it(backend: Backend) {
    let (emu, server) = backend.setup().await;
    // Into its own subcollection's subcollection: refused before anything is written.
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "parent_key": "ATTNDP62"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "parent_key");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("ATTNDP62") && m.contains("subcollection"), "{m}");
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "parent_key": "RDLSTUP3"}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "parent_key"
    );
    // To a name a sibling there has: refused, naming the sibling.
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTLW4", "name": "READING LIST"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "name");
    assert_eq!(e["details"]["sibling_key"], "RDLSTUP3");
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );

    // Up to the top level, and under another collection.
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "ATTNDP62", "top_level": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(
        d["result"]["changes"],
        json!([{"field": "parentCollection", "before": "TRNSFM52", "after": false}])
    );
    assert!(d.get("parent_key").is_none());
    assert_eq!(
        emu.collection("ATTNDP62").unwrap()["data"]["parentCollection"],
        false
    );
    server
        .call(
            UPDATE,
            json!({"collection_key": "ATTNDP62", "parent_key": "RDLSTLW4"}),
        )
        .await
        .expect_ok();
    assert_eq!(
        emu.collection("ATTNDP62").unwrap()["data"]["parentCollection"],
        "RDLSTLW4"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_refused_confirmation_deletes_nothing_and_says_so() {
    let emu = Emulator::start().await;
    let client = TestClient::confirming(false);
    let server = in_process_as(&env_for(&emu.uri(), USER_ID, API_KEY), client.clone()).await;
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "not_confirmed");
    assert_eq!(e["details"]["written"], false);
    assert!(e["message"].as_str().unwrap().contains("not confirmed"));
    let q = client.questions();
    assert_eq!(q.len(), 1);
    assert!(q[0].contains("'Reading List' (RDLSTUP3)"), "{}", q[0]);
    assert!(q[0].contains("2 subcollections"), "{}", q[0]);
    assert!(q[0].contains("4 items"), "{}", q[0]);
    assert!(writes(&emu).is_empty());
    assert!(emu.collection("RDLSTUP3").is_some() && emu.collection("ATTNDP62").is_some());
    server.stop().await;
}

#[tokio::test]
async fn a_confirmed_delete_takes_the_subcollections_and_keeps_the_items() {
    let emu = Emulator::start().await;
    let client = TestClient::confirming(true);
    let server = in_process_as(&env_for(&emu.uri(), USER_ID, API_KEY), client.clone()).await;
    let items_before = emu.items().len();
    let v = version_of(&emu, "RDLSTUP3");
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(client.questions().len(), 1);
    assert_eq!(
        (d["deleted"].clone(), d["dry_run"].clone()),
        (json!(true), json!(false))
    );
    assert!(d.get("already_gone").is_none());
    assert_eq!(d["name"], "Reading List");
    assert_eq!(d["items_filed"], 4);
    let subs: Vec<&str> = d["subcollections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["collection_key"].as_str().unwrap())
        .collect();
    assert_eq!(subs, ["TRNSFM52", "ATTNDP62"]);
    assert!(d["summary"]
        .as_str()
        .unwrap()
        .contains("stay in the library"));
    for k in ["RDLSTUP3", "TRNSFM52", "ATTNDP62"] {
        assert!(emu.collection(k).is_none(), "{k}");
    }
    // The items stay, minus those memberships only.
    assert_eq!(emu.items().len(), items_before);
    assert_eq!(item_collections(&emu, "VASWANI7"), json!([]));
    assert_eq!(item_collections(&emu, "NLPML6K7"), json!([]));
    assert_eq!(item_collections(&emu, "BERTDV82"), json!(["RDLSTLW4"]));
    let deletes: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .collect();
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].path, format!("{COLLECTIONS}/RDLSTUP3"));
    assert_eq!(
        deletes[0].header("if-unmodified-since-version"),
        Some(v.to_string().as_str())
    );

    // Again: already gone, a success that writes nothing and asks nothing.
    emu.reset_counts();
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(
        (d["deleted"].clone(), d["already_gone"].clone()),
        (json!(true), json!(true))
    );
    assert!(writes(&emu).is_empty());
    assert_eq!(client.questions().len(), 1);
    // A key no collection ever had is not "already gone".
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "ZZZZZZZZ", "delete": true}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_NOT_FOUND")["details"]["field"],
        "collection_key"
    );
    server.stop().await;
}

async fn without_elicitation_a_delete_goes_ahead_and_a_change_meanwhile_is_retried(
    backend: Backend,
) {
    let (emu, server) = backend.setup().await;
    let v = version_of(&emu, "QM6T3KHX");
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::collection("QM6T3KHX").set("name", json!("Renamed meanwhile")),
        ))
        .on(COLLECTIONS)
        .method("DELETE"),
    );
    let d = server
        .call(
            UPDATE,
            json!({"collection_key": "QM6T3KHX", "delete": true}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["deleted"], true);
    assert_eq!(
        d["name"], "Renamed meanwhile",
        "the answer tells what was deleted"
    );
    assert_eq!(d["subcollections"][0]["collection_key"], "TVPC4XK4");
    assert!(emu.collection("QM6T3KHX").is_none() && emu.collection("TVPC4XK4").is_none());
    let versions: Vec<u64> = backend
        .requests(&emu)
        .iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| {
            r.header("if-unmodified-since-version")
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0], v);
    assert!(versions[1] > v);
    // The item stays, in its other collection.
    assert_eq!(item_collections(&emu, "6MCAN2NC"), json!(["9KH9TNSJ"]));
    server.stop().await;
}

#[tokio::test]
async fn a_read_only_group_is_refused_and_nothing_is_written() {
    const GROUP: u64 = 31337;
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let client = TestClient::confirming(true);
    let server = in_process_as(&env_for(&emu.uri(), USER_ID, API_KEY), client.clone()).await;
    let g = format!("group:{GROUP}");
    for (tool, args) in [
        (CREATE, json!({"name": "New", "library": g})),
        (
            CREATE,
            json!({"name": "New", "library": g, "dry_run": true}),
        ),
        (
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "name": "x", "library": g}),
        ),
        (
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true, "library": g}),
        ),
    ] {
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_AUTH_ERROR");
        assert!(e["message"].as_str().unwrap().contains("write"), "{e}");
    }
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    assert!(client.questions().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn bad_input_names_the_argument_and_sends_nothing() {
    let (emu, server) = setup().await;
    let long = "x".repeat(256);
    for (tool, args, field) in [
        (CREATE, json!({"name": " "}), "name"),
        (CREATE, json!({"name": long}), "name"),
        (
            CREATE,
            json!({"name": "a", "parent_key": "abc"}),
            "parent_key",
        ),
        (UPDATE, json!({"collection_key": "RDLSTUP3"}), "name"),
        (
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "parent_key": "RDLSTLW4", "top_level": true}),
            "top_level",
        ),
        (
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "delete": true, "name": "x"}),
            "delete",
        ),
    ] {
        let a = server.call(tool, args.clone()).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], field, "{args}: {e}");
    }
    assert!(emu.requests().is_empty(), "nothing sent");
    // Unknown collections: not found.
    let a = server
        .call(UPDATE, json!({"collection_key": "ZZZZZZZZ", "name": "x"}))
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_NOT_FOUND")["details"]["key"],
        "ZZZZZZZZ"
    );
    let a = server
        .call(
            UPDATE,
            json!({"collection_key": "RDLSTUP3", "parent_key": "ZZZZZZZZ"}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_NOT_FOUND")["details"]["field"],
        "parent_key"
    );
    assert!(writes(&emu).is_empty());
    server.stop().await;
}

#[tokio::test]
async fn trashed_collections_are_listed_marked_and_never_reused() {
    let (emu, server) = setup().await;
    emu.edit_in_zotero(&ZoteroEdit::collection("A5G9W6AX").set("deleted", json!(true)))
        .unwrap();
    // The Web API lists them, with `deleted` (dataserver `Zotero_Collections::search`).
    for path in ["collections?limit=100", "collections/top?limit=100"] {
        let listed = get(&emu, &lib(path)).await.json();
        let c = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == "A5G9W6AX")
            .unwrap_or_else(|| panic!("{path}"))
            .clone();
        assert_eq!(c["data"]["deleted"], true);
    }
    // `collectionKey` picks collections, trashed ones too (the engine's read).
    let r = get(
        &emu,
        &lib("collections?collectionKey=A5G9W6AX,RDLSTUP3,&includeTrashed=1&limit=100"),
    )
    .await;
    let mut keys: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    assert_eq!(keys, ["A5G9W6AX", "RDLSTUP3"]);
    assert_eq!(r.header("total-results").as_deref(), Some("2"));

    // zotero_list_collections marks them, flat and in a tree.
    let d = server
        .call("zotero_list_collections", json!({"limit": 100}))
        .await
        .expect_ok()
        .clone();
    let entry = |list: &Value, key: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|c| c["collection_key"] == key)
            .cloned()
            .unwrap()
    };
    assert_eq!(entry(&d["collections"], "A5G9W6AX")["in_trash"], true);
    assert!(entry(&d["collections"], "RDLSTUP3")
        .get("in_trash")
        .is_none());
    let d = server
        .call("zotero_list_collections", json!({"tree": true}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(entry(&d["collections"], "A5G9W6AX")["in_trash"], true);

    // A create of its name makes a new one and says the trashed one is there.
    let d = server
        .call(CREATE, json!({"name": "r-INTRO"}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(d["status"], "created");
    assert_ne!(d["collection_key"], "A5G9W6AX");
    assert_eq!(
        d["in_trash"],
        json!([{"collection_key": "A5G9W6AX", "name": "R-intro"}])
    );
    // Nothing is created inside a trashed collection.
    emu.reset_counts();
    let a = server
        .call(CREATE, json!({"name": "x", "parent_key": "A5G9W6AX"}))
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "parent_key");
    assert!(e["message"].as_str().unwrap().contains("trash"));
    assert!(writes(&emu).is_empty());
    server.stop().await;
}

crate::on_both_backends!(
    create_posts_once_with_its_own_key_a_write_token_and_version_0,
    sibling_names_are_compared_in_any_case_under_the_same_parent_only,
    a_lost_answer_creates_one_collection_not_two,
    a_rename_is_version_checked_and_repeats_change_nothing,
    a_rename_in_zotero_meanwhile_is_a_conflict_naming_both_values,
    a_move_in_zotero_meanwhile_is_kept_beside_our_rename,
    moves_go_anywhere_but_into_the_collection_itself_or_below_it,
    without_elicitation_a_delete_goes_ahead_and_a_change_meanwhile_is_retried
);
