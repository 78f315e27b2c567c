//! Conformance of `zotero_add_item_to_collection`, through the built binary over stdio
//! against the emulator: by key or by name over every page of collections, ambiguous and
//! unknown names, version-checked PATCH with re-reads on 412, already-member no-ops.

use crate::common::{env_for, in_process};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, Library, API_KEY, USER_ID};

async fn setup() -> (Emulator, crate::common::Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

fn collections_of(emu: &Emulator, key: &str) -> Vec<Value> {
    emu.item(key).unwrap()["data"]["collections"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn add_by_key_patches_the_collections_with_the_items_version() {
    let (emu, server) = setup().await;
    let before = emu.item("BERTDV82").unwrap();
    assert!(!collections_of(&emu, "BERTDV82").contains(&json!("ATTNDP62")));
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["item_key"], "BERTDV82");
    assert_eq!(data["collection_key"], "ATTNDP62");
    assert_eq!(data["already_member"], false);
    let after = collections_of(&emu, "BERTDV82");
    assert!(after.contains(&json!("ATTNDP62")));
    // Existing memberships are kept.
    for c in before["data"]["collections"].as_array().unwrap() {
        assert!(after.contains(c));
    }
    let patch = emu
        .requests()
        .into_iter()
        .find(|r| r.method == "PATCH")
        .expect("a PATCH");
    assert_eq!(patch.path, "/users/475425/items/BERTDV82");
    assert_eq!(
        patch.header("if-unmodified-since-version"),
        Some(before["version"].to_string().as_str())
    );

    // Again: already a member, nothing written.
    emu.reset_counts();
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_name": "ATTENTION mechanisms"}),
        )
        .await;
    assert_eq!(a.expect_ok()["already_member"], true);
    assert_eq!(emu.count("PATCH", "/"), 0);
    server.stop().await;
}

#[tokio::test]
async fn an_ambiguous_name_lists_both_keys_and_an_unknown_one_the_closest_names() {
    let (emu, server) = setup().await;
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_name": "Reading list"}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    let keys: Vec<&str> = err["details"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["collection_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 2);
    assert!(keys.contains(&"RDLSTUP3") && keys.contains(&"RDLSTLW4"));
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("RDLSTUP3") && message.contains("RDLSTLW4"));

    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_name": "Readng Lst"}),
        )
        .await;
    let err = a.expect_err("ZOTERO_NOT_FOUND");
    let closest = err["details"]["closest_names"].as_array().unwrap();
    assert!(closest
        .iter()
        .any(|n| n.as_str().unwrap().eq_ignore_ascii_case("reading list")));
    assert_eq!(emu.count("PATCH", "/"), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_name_is_found_on_any_page_of_collections() {
    let mut lib = Library::from_fixtures();
    for i in 0..230 {
        let key = format!("PG{:06}", i).replace('0', "A").replace('1', "B");
        lib.collections.push(json!({
            "key": key, "version": 5,
            "data": {"key": key, "version": 5, "name": format!("Filler {i}"), "parentCollection": false, "relations": {}}
        }));
    }
    lib.collections.push(json!({
        "key": "LASTPG22", "version": 5,
        "data": {"key": "LASTPG22", "version": 5, "name": "Zeta Deep Page", "parentCollection": false, "relations": {}}
    }));
    let emu = Emulator::with_library(lib).await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "VASWANI7", "collection_name": "zeta deep page"}),
        )
        .await;
    assert_eq!(a.expect_ok()["collection_key"], "LASTPG22");
    assert!(collections_of(&emu, "VASWANI7").contains(&json!("LASTPG22")));
    assert!(emu.count("GET", "/users/475425/collections") >= 3);
    server.stop().await;
}

#[tokio::test]
async fn a_stale_version_is_read_again_and_retried() {
    let (emu, server) = setup().await;
    // Someone else edits the item just before each of the first two PATCHes: the emulator
    // itself answers 412 to the stale version.
    emu.inject(
        Fault::times(FaultKind::EditedElsewhere, 2)
            .on("/users/475425/items/BERTDV82")
            .method("PATCH"),
    );
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62"}),
        )
        .await;
    a.expect_ok();
    assert!(collections_of(&emu, "BERTDV82").contains(&json!("ATTNDP62")));
    // Each PATCH came after a fresh read and carried the version that read returned.
    let item_reqs: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.path == "/users/475425/items/BERTDV82")
        .collect();
    let methods: Vec<&str> = item_reqs.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "PATCH", "GET", "PATCH", "GET", "PATCH"]);
    let versions: Vec<u64> = item_reqs
        .iter()
        .filter(|r| r.method == "PATCH")
        .map(|r| {
            r.header("if-unmodified-since-version")
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");

    // A PATCH whose answer is lost: the repeat meets 412, the re-read shows the membership.
    emu.inject(Fault::once(FaultKind::Drop).method("PATCH"));
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "NLPML6K7", "collection_key": "TRNSFM52"}),
        )
        .await;
    a.expect_ok();
    let c = collections_of(&emu, "NLPML6K7");
    assert_eq!(c.iter().filter(|k| **k == json!("TRNSFM52")).count(), 1);
    server.stop().await;
}

#[tokio::test]
async fn collection_arguments_and_missing_objects_are_explained() {
    let (emu, server) = setup().await;
    for (args, code, field) in [
        (
            json!({"item_key": "BERTDV82"}),
            "ZOTERO_VALIDATION_ERROR",
            Some("collection_key"),
        ),
        (
            json!({"item_key": "BERTDV82", "collection_key": "TRNSFM52", "collection_name": "x"}),
            "ZOTERO_VALIDATION_ERROR",
            Some("collection_key"),
        ),
        (
            json!({"item_key": "bad", "collection_key": "TRNSFM52"}),
            "ZOTERO_VALIDATION_ERROR",
            Some("item_key"),
        ),
        (
            json!({"item_key": "BERTDV82", "collection_key": "ZZZZZZZZ"}),
            "ZOTERO_NOT_FOUND",
            None,
        ),
        (
            json!({"item_key": "ZZZZZZZZ", "collection_key": "TRNSFM52"}),
            "ZOTERO_NOT_FOUND",
            None,
        ),
    ] {
        let a = server
            .call("zotero_add_item_to_collection", args.clone())
            .await;
        let err = a.expect_err(code);
        if let Some(f) = field {
            assert_eq!(err["details"]["field"], f, "{args}");
        }
    }
    assert_eq!(emu.count("PATCH", "/"), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_patch_whose_answer_was_lost_is_reported_as_this_calls_write() {
    let (emu, server) = setup().await;
    assert!(!collections_of(&emu, "NLPML6K7").contains(&json!("TRNSFM52")));
    // The PATCH is applied, its answer lost; the repeat meets 412 and the re-read shows the
    // membership: this call added it.
    emu.inject(Fault::once(FaultKind::Drop).method("PATCH"));
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "NLPML6K7", "collection_key": "TRNSFM52"}),
        )
        .await;
    assert_eq!(a.expect_ok()["already_member"], false, "{}", a.envelope);
    assert_eq!(emu.faults_pending(), 0);
    assert!(collections_of(&emu, "NLPML6K7").contains(&json!("TRNSFM52")));

    // Every answer lost (the write applied by the first attempt): read back, not an error.
    emu.inject(Fault::times(FaultKind::Drop, 3).method("PATCH"));
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62"}),
        )
        .await;
    assert_eq!(a.expect_ok()["already_member"], false, "{}", a.envelope);
    assert_eq!(emu.faults_pending(), 0);
    let c = collections_of(&emu, "BERTDV82");
    assert_eq!(c.iter().filter(|k| **k == json!("ATTNDP62")).count(), 1);

    // A member when first read: already_member, nothing written.
    emu.reset_counts();
    let a = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62"}),
        )
        .await;
    assert_eq!(a.expect_ok()["already_member"], true);
    assert_eq!(emu.count("PATCH", "/"), 0);
    server.stop().await;
}
