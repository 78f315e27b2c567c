//! Conformance of `zotero_create_item` and `zotero_add_item_to_collection`, through the built
//! binary over stdio against the emulator: templates, field mapping, exactly-once creates
//! (write tokens, lost answers), Zotero's per-object failures, collection resolution by key
//! or name over every page, version-checked membership.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
mod emulator;

use common::{env_for, spawn};
use emulator::{Emulator, Fault, FaultKind, Library, API_KEY, USER_ID};
use serde_json::{json, Value};

const ITEMS: &str = "/users/475425/items";

async fn setup() -> (Emulator, common::Server) {
    let emu = Emulator::start().await;
    let server = spawn(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

fn with_title(emu: &Emulator, title: &str) -> Vec<Value> {
    emu.items()
        .into_iter()
        .filter(|i| i["data"]["title"] == title)
        .collect()
}

fn creates(emu: &Emulator) -> Vec<emulator::Recorded> {
    emu.requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path == ITEMS)
        .collect()
}

#[tokio::test]
async fn create_fills_the_template_and_sends_a_key_and_write_token() {
    let (emu, server) = setup().await;
    let a = server
        .call(
            "zotero_create_item",
            json!({
                "item_type": "journalArticle",
                "title": "Sparse Attention Revisited",
                "creators": [
                    {"creator_type": "author", "first_name": "Ada", "last_name": "Lovelace"},
                    {"creator_type": "author", "name": "The Analytical Engine Society"}
                ],
                "date": "2024-03-01",
                "doi": "10.1234/sparse.2024",
                "url": "https://example.org/sparse",
                "abstract": "We revisit sparse attention.",
                "tags": ["attention", "sparse", "attention"],
                "extra": "Citation Key: lovelace2024"
            }),
        )
        .await;
    let data = a.expect_ok().clone();
    let key = data["item_key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 8);
    assert!(data["version"].as_u64().unwrap() > 0);
    assert!(data.get("moved_to_extra").is_none(), "{data}");
    assert_eq!(data["item"]["item_key"], key);
    assert_eq!(data["item"]["doi"], "10.1234/sparse.2024");

    let stored = emu.item(&key).expect("the item is in the library");
    let d = &stored["data"];
    assert_eq!(d["itemType"], "journalArticle");
    assert_eq!(d["DOI"], "10.1234/sparse.2024");
    assert_eq!(d["abstractNote"], "We revisit sparse attention.");
    assert_eq!(d["date"], "2024-03-01");
    assert_eq!(d["url"], "https://example.org/sparse");
    assert_eq!(d["extra"], "Citation Key: lovelace2024");
    assert_eq!(
        d["creators"],
        json!([
            {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
            {"creatorType": "author", "name": "The Analytical Engine Society"}
        ])
    );
    assert_eq!(d["tags"], json!([{"tag": "attention"}, {"tag": "sparse"}]));

    // The key was chosen by the server and sent with a write token.
    let posts = creates(&emu);
    assert_eq!(posts.len(), 1);
    let token = posts[0].header("zotero-write-token").expect("write token");
    assert_eq!(token.len(), 32);
    let body: Value = serde_json::from_slice(&posts[0].body).unwrap();
    assert_eq!(body[0]["key"], key);
    // The template was fetched once and is kept.
    server
        .call(
            "zotero_create_item",
            json!({"item_type": "journalArticle", "title": "Second"}),
        )
        .await
        .expect_ok();
    assert_eq!(emu.count("GET", "/items/new"), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_field_the_type_lacks_goes_into_extra_and_the_answer_says_so() {
    let (emu, server) = setup().await;
    // Today's schema has DOI on every regular type; older schemas had none on books.
    emu.drop_field("book", "DOI");
    let a = server
        .call(
            "zotero_create_item",
            json!({
                "item_type": "book",
                "title": "Deep Learning",
                "doi": "10.5555/dl.2016",
                "extra": "Original Date: 2016"
            }),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["moved_to_extra"], json!(["doi"]));
    let stored = emu.item(data["item_key"].as_str().unwrap()).unwrap();
    assert!(stored["data"].get("DOI").is_none());
    assert_eq!(
        stored["data"]["extra"],
        "Original Date: 2016\nDOI: 10.5555/dl.2016"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_item_type_lists_the_valid_ones_and_creates_nothing() {
    let (emu, server) = setup().await;
    let before = emu.items().len();
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "journalArticel", "title": "Typo"}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(err["details"]["field"], "item_type");
    let valid = err["details"]["valid_item_types"].as_array().unwrap();
    assert!(valid.contains(&json!("journalArticle")));
    assert!(valid.contains(&json!("preprint")));
    assert!(err["message"].as_str().unwrap().contains("journalArticle"));
    assert!(creates(&emu).is_empty());
    assert_eq!(emu.items().len(), before);

    // Attachments and notes have tools of their own.
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "attachment", "title": "x"}),
        )
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    server.stop().await;
}

#[tokio::test]
async fn bad_arguments_are_refused_before_any_request() {
    let (emu, server) = setup().await;
    for (args, field) in [
        (json!({"item_type": "book"}), "title"),
        (json!({"title": "x"}), "item_type"),
        (json!({"item_type": "book", "title": ""}), "title"),
        (
            json!({"item_type": "book", "title": "x", "creators": [{"first_name": "A", "last_name": "B"}]}),
            "creators",
        ),
        (
            json!({"item_type": "book", "title": "x", "tags": ["ok", ""]}),
            "tags",
        ),
        (
            json!({"item_type": "book", "title": "x", "isbn": "123"}),
            "isbn",
        ),
    ] {
        let a = server.call("zotero_create_item", args.clone()).await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], field, "{args}");
    }
    assert!(emu.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_create_whose_answer_is_dropped_leaves_exactly_one_item() {
    let (emu, server) = setup().await;
    emu.inject(Fault::once(FaultKind::Drop).on(ITEMS).method("POST"));
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "journalArticle", "title": "Dropped Once"}),
        )
        .await;
    let data = a.expect_ok();
    let found = with_title(&emu, "Dropped Once");
    assert_eq!(found.len(), 1, "exactly one item");
    assert_eq!(found[0]["key"], data["item_key"]);
    assert_eq!(data["version"], found[0]["version"]);
    // The retry carried the same token and met "Write token already used".
    let posts = creates(&emu);
    assert_eq!(posts.len(), 2);
    assert_eq!(
        posts[0].header("zotero-write-token"),
        posts[1].header("zotero-write-token")
    );
    server.stop().await;
}

#[tokio::test]
async fn every_answer_lost_still_ends_with_one_item_found_by_its_key() {
    let (emu, server) = setup().await;
    // Three attempts (the default), every answer cut after the request was applied.
    emu.inject(Fault::times(FaultKind::Drop, 3).on(ITEMS).method("POST"));
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Lost Thrice"}),
        )
        .await;
    let data = a.expect_ok();
    let found = with_title(&emu, "Lost Thrice");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["key"], data["item_key"]);
    server.stop().await;
}

#[tokio::test]
async fn a_create_that_never_reached_zotero_says_nothing_was_created() {
    let (emu, server) = setup().await;
    emu.inject(
        Fault::times(FaultKind::ServerError, 3)
            .on(ITEMS)
            .method("POST"),
    );
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Never There"}),
        )
        .await;
    a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert!(with_title(&emu, "Never There").is_empty());

    // One server error, then success: one item.
    emu.inject(Fault::once(FaultKind::ServerError).on(ITEMS).method("POST"));
    server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Second Try"}),
        )
        .await
        .expect_ok();
    assert_eq!(with_title(&emu, "Second Try").len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_failed_object_is_an_error_with_zoteros_message() {
    let (emu, server) = setup().await;
    let a = server
        .call(
            "zotero_create_item",
            json!({
                "item_type": "journalArticle",
                "title": "Bad Creator",
                "creators": [{"creator_type": "composer", "first_name": "A", "last_name": "B"}]
            }),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("composer"), "{message}");
    assert!(with_title(&emu, "Bad Creator").is_empty());
    server.stop().await;
}

// --- zotero_add_item_to_collection ---------------------------------------------------

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
    let server = spawn(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
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
    emu.inject(
        Fault::times(FaultKind::Status(412), 2)
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
    assert_eq!(emu.count("PATCH", "/"), 3);
    assert!(collections_of(&emu, "BERTDV82").contains(&json!("ATTNDP62")));

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
