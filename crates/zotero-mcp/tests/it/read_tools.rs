//! Conformance of the four read tools, through the built binary over stdio: mapping of
//! Zotero's items and collections, search parameters, pagination, sort fallback, attachments.

use crate::common::{env_for, in_process};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

async fn setup() -> (Emulator, crate::common::Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
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
    assert_eq!(
        vaswani["zotero_url"],
        "zotero://select/library/items/VASWANI7"
    );
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
async fn tools_list_has_every_tool_with_schemas_and_hints() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    // Every tool listed up front, as before the default surface.
    env.push(("ZOTERO_TOOLSETS".into(), "all".into()));
    let server = in_process(&env).await;
    let tools = server.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    // The seed's order, then the tools added since; (read-only, idempotent, destructive)
    // for each.
    let expected = [
        ("zotero_search_items", true, true, false),
        ("zotero_list_collections", true, true, false),
        ("zotero_get_item", true, true, false),
        ("zotero_create_item", false, false, false),
        ("zotero_upload_attachment", false, false, false),
        ("zotero_attach_arxiv_pdf", false, false, false),
        ("zotero_get_sort_values", true, true, false),
        ("zotero_add_item_to_collection", false, true, false),
        ("zotero_list_libraries", true, true, false),
        ("zotero_list_items", true, true, false),
        ("zotero_list_tags", true, true, false),
        ("zotero_get_item_fulltext", true, true, false),
        ("zotero_get_item_metadata", true, true, false),
        ("zotero_cite", true, true, false),
        ("zotero_export", true, true, false),
        ("zotero_get_item_children", true, true, false),
        ("zotero_get_notes", true, true, false),
        ("zotero_get_annotations", true, true, false),
        ("zotero_update_item", false, true, true),
        ("zotero_trash_items", false, true, true),
        ("zotero_create_note", false, false, false),
        ("zotero_update_note", false, true, true),
        ("zotero_remove_item_from_collection", false, true, true),
        ("zotero_manage_tags", false, true, true),
        ("zotero_create_collection", false, true, false),
        ("zotero_update_collection", false, true, true),
        ("zotero_add_by_identifier", false, true, false),
        ("zotero_semantic_search", true, true, false),
        ("zotero_get_search_database_status", true, true, false),
        // Writes the local search index only, never Zotero.
        ("zotero_update_search_database", false, true, false),
        ("zotero_check_manuscript", true, true, false),
        ("zotero_check_retractions", true, true, false),
        ("zotero_find_related", true, true, false),
        ("zotero_create_annotation", false, false, false),
    ];
    assert_eq!(
        names,
        expected.iter().map(|e| e.0).collect::<Vec<_>>(),
        "tools/list"
    );
    for (t, (_, read_only, idempotent, destructive)) in tools.iter().zip(expected) {
        let schema = Value::Object((*t.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{}", t.name);
        assert!(t.output_schema.is_some(), "{} has no output schema", t.name);
        // What a client reads, with the spec's defaults for what is left out.
        let ann = t.annotations.as_ref().expect("annotations");
        assert_eq!(ann.read_only_hint.unwrap_or(false), read_only, "{}", t.name);
        if !read_only {
            assert_eq!(
                ann.idempotent_hint.unwrap_or(false),
                idempotent,
                "{}",
                t.name
            );
            assert_eq!(
                ann.destructive_hint.unwrap_or(true),
                destructive,
                "{}",
                t.name
            );
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn the_sort_fallback_is_remembered_for_the_process() {
    let (emu, server) = setup().await;
    let path = format!("/users/{USER_ID}/items");
    let first = server
        .call("zotero_search_items", json!({"query": "sherlock"}))
        .await;
    assert_eq!(first.expect_ok()["sort_used"], "dateModified");
    assert_eq!(emu.count("GET", &path), 2);
    let second = server
        .call(
            "zotero_search_items",
            json!({"query": "holmes", "sort": "relevance"}),
        )
        .await;
    assert_eq!(second.expect_ok()["sort_used"], "dateModified");
    assert_eq!(emu.count("GET", &path), 3, "one request, not two");
    let last = emu.requests().pop().unwrap();
    assert!(last.query.contains(&("sort".into(), "dateModified".into())));
    // A real sort key is forwarded as is, with no sort_used.
    let titled = server
        .call(
            "zotero_search_items",
            json!({"query": "sherlock", "sort": "title"}),
        )
        .await;
    let data = titled.expect_ok();
    assert!(data.get("sort_used").is_none());
    let titles: Vec<String> = data["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_lowercase())
        .collect();
    let mut sorted = titles.clone();
    sorted.sort();
    assert_eq!(titles, sorted);
    // An unknown sort is refused before any request, listing the valid keys.
    let before = emu.requests().len();
    let bad = server
        .call(
            "zotero_search_items",
            json!({"query": "x", "sort": "bogus"}),
        )
        .await;
    let err = bad.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(err["details"]["field"], "sort");
    assert!(err["message"].as_str().unwrap().contains("dateAdded"));
    assert_eq!(emu.requests().len(), before);
    server.stop().await;
}

#[tokio::test]
async fn search_filters_by_all_tags_and_sends_the_parameters() {
    let (emu, server) = setup().await;
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "a", "tags": ["nlp", "ml"], "limit": 10, "sort": "title"}),
        )
        .await;
    let keys: Vec<&str> = a.expect_ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item_key"].as_str().unwrap())
        .collect();
    // Only the items tagged with both nlp and ml (BERT, Deep learning), not VASWANI7 (nlp only).
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["BERTDV82", "NLPML6K7"]);
    let r = emu.requests().pop().unwrap();
    let q = |k: &str| -> Vec<&str> {
        r.query
            .iter()
            .filter(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(q("tag"), vec!["nlp", "ml"]);
    assert_eq!(q("q"), vec!["a"]);
    assert_eq!(q("limit"), vec!["10"]);
    assert_eq!(q("start"), vec!["0"]);
    server.stop().await;
}

#[tokio::test]
async fn search_pages_with_next_start_and_offset_alias() {
    let emu = Emulator::with_library(zotero_emulator::Library::synthetic(57, 7)).await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    // "a" occurs in most synthetic titles and names: a result set of several pages.
    let mut seen = std::collections::BTreeSet::new();
    let mut start = 0u64;
    let mut total = None;
    let mut pages = 0;
    loop {
        let a = server
            .call(
                "zotero_search_items",
                json!({"query": "a", "limit": 20, "start": start, "sort": "title"}),
            )
            .await;
        let data = a.expect_ok().clone();
        let t = data["total"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(t), t, "total is stable");
        for i in data["items"].as_array().unwrap() {
            assert!(
                seen.insert(i["item_key"].as_str().unwrap().to_string()),
                "an item came twice"
            );
        }
        pages += 1;
        match data.get("next_start") {
            Some(n) => start = n.as_u64().unwrap(),
            None => break,
        }
    }
    assert!(total.unwrap() > 40, "want several pages, got {total:?}");
    assert_eq!(seen.len() as u64, total.unwrap());
    assert_eq!(pages, total.unwrap().div_ceil(20));
    // offset is an alias of start.
    let by_start = server
        .call(
            "zotero_search_items",
            json!({"query": "a", "start": 20, "sort": "title"}),
        )
        .await;
    let by_offset = server
        .call(
            "zotero_search_items",
            json!({"query": "a", "offset": 20, "sort": "title"}),
        )
        .await;
    assert_eq!(by_start.data(), by_offset.data());
    server.stop().await;
}

#[tokio::test]
async fn get_item_lists_attachments_with_type_and_size() {
    let (emu, server) = setup().await;
    let a = server
        .call("zotero_get_item", json!({"item_key": "VASWANI7"}))
        .await;
    let item = &a.expect_ok()["item"];
    assert_eq!(item["title"], "Attention Is All You Need");
    let atts = item["attachments"].as_array().unwrap();
    // The PDF, not the note.
    assert_eq!(atts.len(), 1, "{atts:?}");
    assert_eq!(atts[0]["attachment_key"], "VASPDF23");
    assert_eq!(atts[0]["content_type"], "application/pdf");
    assert_eq!(atts[0]["size"], 2215244);
    assert!(atts[0]["title"].is_string());

    // An item without children costs one request and has an empty list.
    emu.reset_counts();
    let a = server
        .call("zotero_get_item", json!({"item_key": "X42A7DEE"}))
        .await;
    let item = &a.expect_ok()["item"];
    assert_eq!(item["attachments"], json!([]));
    assert_eq!(item["item_type"], "book");
    assert_eq!(emu.requests().len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn collections_map_parent_and_item_counts_and_page() {
    let (_emu, server) = setup().await;
    let a = server
        .call("zotero_list_collections", json!({"limit": 100}))
        .await;
    let data = a.expect_ok();
    let cols = data["collections"].as_array().unwrap();
    assert_eq!(data["total"], json!(cols.len()));
    assert!(data.get("next_start").is_none());
    let by_key = |k: &str| cols.iter().find(|c| c["collection_key"] == k).unwrap();
    let transformers = by_key("TRNSFM52");
    assert_eq!(transformers["name"], "Transformers");
    assert_eq!(transformers["parent_key"], "RDLSTUP3");
    assert!(transformers["num_items"].is_u64());
    assert!(by_key("RDLSTUP3").get("parent_key").is_none());

    let mut seen = Vec::new();
    let mut start = 0;
    loop {
        let a = server
            .call(
                "zotero_list_collections",
                json!({"limit": 7, "start": start}),
            )
            .await;
        let d = a.expect_ok().clone();
        assert!(d["collections"].as_array().unwrap().len() <= 7);
        seen.extend(
            d["collections"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["collection_key"].as_str().unwrap().to_string()),
        );
        match d.get("next_start") {
            Some(n) => start = n.as_u64().unwrap(),
            None => break,
        }
    }
    let mut all: Vec<String> = cols
        .iter()
        .map(|c| c["collection_key"].as_str().unwrap().to_string())
        .collect();
    all.sort();
    seen.sort();
    assert_eq!(seen, all);
    server.stop().await;
}

#[tokio::test]
async fn sort_values_need_no_request() {
    let (emu, server) = setup().await;
    let a = server.call("zotero_get_sort_values", json!({})).await;
    let d = a.expect_ok();
    assert_eq!(d["default"], "relevance");
    assert_eq!(d["fallback"], "dateModified");
    let values = d["values"].as_array().unwrap();
    for v in ["relevance", "dateModified", "title", "creator", "date"] {
        assert!(values.contains(&json!(v)), "{v}");
    }
    assert_eq!(emu.requests().len(), 0);
    server.stop().await;
}

#[tokio::test]
async fn invalid_arguments_are_refused_without_any_request() {
    let (emu, server) = setup().await;
    let cases = [
        ("zotero_search_items", json!({}), "query"),
        ("zotero_search_items", json!({"query": ""}), "query"),
        ("zotero_search_items", json!({"query": 5}), "query"),
        (
            "zotero_search_items",
            json!({"query": "x", "limit": 0}),
            "limit",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "limit": 101}),
            "limit",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "limit": "10"}),
            "limit",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "start": -1}),
            "start",
        ),
        // 2^64 arrives as a float: refused, never clamped to the largest u64.
        (
            "zotero_search_items",
            json!({"query": "x", "start": 18_446_744_073_709_551_616.0_f64}),
            "start",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "start": 1, "offset": 1}),
            "offset",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "tags": ["a", "a"]}),
            "tags[1]",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "tags": [""]}),
            "tags[0]",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "tags": "nlp"}),
            "tags",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "sort": ""}),
            "sort",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "sort": "relevancy"}),
            "sort",
        ),
        ("zotero_search_items", json!({"query": "  "}), "query"),
        (
            "zotero_search_items",
            json!({"query": "x", "qmode": "fulltext"}),
            "qmode",
        ),
        ("zotero_list_collections", json!({"limit": 1000}), "limit"),
        ("zotero_list_collections", json!({"start": 1.5}), "start"),
        ("zotero_get_item", json!({}), "item_key"),
        ("zotero_get_item", json!({"item_key": "abc"}), "item_key"),
        (
            "zotero_get_item",
            json!({"item_key": "../keys/"}),
            "item_key",
        ),
        (
            "zotero_get_item",
            json!({"item_key": "VASWANI7", "x": 1}),
            "x",
        ),
        (
            "zotero_get_sort_values",
            json!({"anything": true}),
            "anything",
        ),
    ];
    for (tool, args, field) in cases {
        let a = server.call(tool, args.clone()).await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], field, "{tool} {args}: {err}");
        assert!(
            err["message"].as_str().unwrap().contains(field),
            "message names the field: {err}"
        );
    }
    assert_eq!(emu.requests().len(), 0, "nothing reached Zotero");
    server.stop().await;
}
