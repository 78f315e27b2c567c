//! Conformance of the four read tools, through the built binary over stdio: mapping of
//! Zotero's items and collections, search parameters, pagination, sort fallback, attachments.

mod common;
mod emulator;

use common::{env_for, spawn};
use emulator::{Emulator, API_KEY, USER_ID};
use serde_json::{json, Value};

async fn setup() -> (Emulator, common::Server) {
    let emu = Emulator::start().await;
    let server = spawn(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

#[tokio::test]
async fn search_maps_items_to_the_seed_fields() {
    let (emu, server) = setup().await;
    let a = server
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    let data = a.expect_ok();
    let items = data["items"].as_array().unwrap();
    let vaswani = items
        .iter()
        .find(|i| i["item_key"] == "VASWANI7")
        .unwrap_or_else(|| panic!("VASWANI7 not in {data}"));
    assert_eq!(vaswani["item_type"], "journalArticle");
    assert_eq!(vaswani["title"], "Attention Is All You Need");
    assert_eq!(vaswani["doi"], "10.48550/arXiv.1706.03762");
    assert!(vaswani["version"].as_u64().unwrap() > 0);
    assert_eq!(vaswani["creators"][0]["creator_type"], "author");
    assert_eq!(vaswani["creators"][0]["last_name"], "Vaswani");
    assert!(vaswani["tags"]
        .as_array()
        .unwrap()
        .contains(&json!("transformers")));
    // Fields named the Zotero way never leak through.
    for wire in ["DOI", "abstractNote", "creatorType", "itemType", "key"] {
        assert!(vaswani.get(wire).is_none(), "{wire} in {vaswani}");
    }
    assert_eq!(data["total"], json!(items.len()));
    // One request for the search (the relevance rejection) plus one with the fallback.
    assert_eq!(emu.count("GET", &format!("/users/{USER_ID}/items")), 2);
    assert_eq!(data["sort_used"], "dateModified");
    server.stop().await;
}

#[tokio::test]
async fn tools_list_has_the_four_read_tools_with_schemas() {
    let (_emu, server) = setup().await;
    let tools = server.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for n in [
        "zotero_search_items",
        "zotero_list_collections",
        "zotero_get_item",
        "zotero_get_sort_values",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{}", t.name);
        assert!(t.output_schema.is_some(), "{} has no output schema", t.name);
        let ann = t.annotations.as_ref().expect("annotations");
        assert_eq!(ann.read_only_hint, Some(true));
    }
    server.stop().await;
}
