//! Conformance of `zotero_create_item`, through the built binary over stdio against the
//! emulator: templates, field mapping, exactly-once creates (write tokens, lost answers,
//! answers that cannot be read back), Zotero's per-object failures. Collections:
//! `collections.rs`.

use crate::common::{env_for, in_process};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, API_KEY, USER_ID};

const ITEMS: &str = "/users/475425/items";

async fn setup() -> (Emulator, crate::common::Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

fn with_title(emu: &Emulator, title: &str) -> Vec<Value> {
    emu.items()
        .into_iter()
        .filter(|i| i["data"]["title"] == title)
        .collect()
}

fn creates(emu: &Emulator) -> Vec<zotero_emulator::Recorded> {
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

    // The key was chosen by zotero-mcp (not by Zotero) and sent with a write token.
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
            "creators[0].creator_type",
        ),
        (
            json!({"item_type": "book", "title": "x", "creators": [
                {"creator_type": "author", "name": "CERN"},
                {"creator_type": "author", "first_name": "Ada"}
            ]}),
            "creators[1].last_name",
        ),
        (
            json!({"item_type": "book", "title": "x", "creators": [{"creator_type": "author", "nmae": "X"}]}),
            "creators[0].nmae",
        ),
        (
            json!({"item_type": "book", "title": "x", "tags": ["ok", ""]}),
            "tags[1]",
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
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR");
    // A plain error: no `created` hint, since the key was checked and is not there.
    assert!(err["details"].get("created").is_none(), "{err}");
    assert_eq!(err["details"]["status"], 500);
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
    assert!(
        message.contains("'composer' is not a valid creator type for item type 'journalArticle'"),
        "{message}"
    );
    assert_eq!(creates(&emu).len(), 1, "sent once, refused by Zotero");
    assert!(with_title(&emu, "Bad Creator").is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_landed_create_is_found_even_when_the_retries_then_fail() {
    let (emu, server) = setup().await;
    // The first attempt lands but its answer is lost; the two repeats meet server errors.
    emu.inject(Fault::once(FaultKind::Drop).on(ITEMS).method("POST"));
    emu.inject(
        Fault::times(FaultKind::ServerError, 2)
            .on(ITEMS)
            .method("POST"),
    );
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Landed Early"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(with_title(&emu, "Landed Early").len(), 1);
    assert_eq!(with_title(&emu, "Landed Early")[0]["key"], data["item_key"]);
    server.stop().await;
}

#[tokio::test]
async fn a_create_that_cannot_be_read_back_says_it_was_created() {
    let (emu, server) = setup().await;
    emu.inject(Fault::once(FaultKind::Drop).on(ITEMS).method("POST"));
    // Every read of the new item fails (three attempts, twice: read-back and the check).
    emu.inject(
        Fault::times(FaultKind::ServerError, 6)
            .on("/users/475425/items/")
            .method("GET"),
    );
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Unreadable"}),
        )
        .await;
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert_eq!(err["details"]["created"], true);
    let found = with_title(&emu, "Unreadable");
    assert_eq!(found.len(), 1);
    assert_eq!(err["details"]["item_key"], found[0]["key"]);
    assert!(err["message"].as_str().unwrap().contains("was created"));
    server.stop().await;
}
