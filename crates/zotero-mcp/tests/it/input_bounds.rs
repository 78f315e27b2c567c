//! Work and answers an input can force: every string and array argument is bounded (refused
//! naming the field, before anything is sent), refusals quote at most a little of what was
//! sent, and tags in a search filter are matched as written, never read as operators.

use crate::common::{env_for, in_process, raw_session, tool_call};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

const MB: usize = 1 << 20;

/// (tool, arguments, the field the refusal must name)
fn oversized_calls() -> Vec<(&'static str, Value, &'static str)> {
    let huge = "a".repeat(MB);
    let key = "VASWANI7";
    vec![
        ("zotero_search_items", json!({"query": huge}), "query"),
        (
            "zotero_search_items",
            json!({"query": "x", "tags": ["t".repeat(256)]}),
            "tags[0]",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "tags": (0..21).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
            "tags",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "sort": huge}),
            "sort",
        ),
        (
            "zotero_search_items",
            json!({"query": "x", "limit": huge}),
            "limit",
        ),
        (
            "zotero_add_item_to_collection",
            json!({"item_key": key, "collection_name": huge}),
            "collection_name",
        ),
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "é".repeat(40_000)}),
            "title",
        ),
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "t",
                   "creators": vec![json!({"creator_type": "author", "name": "n"}); 501]}),
            "creators",
        ),
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "t",
                   "creators": [{"creator_type": "author", "name": "n".repeat(256)}]}),
            "creators[0].name",
        ),
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "t",
                   "tags": (0..201).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
            "tags",
        ),
        (
            "zotero_create_item",
            json!({"item_type": huge, "title": "t"}),
            "item_type",
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": key, "file_path": format!("/{}", "p".repeat(5000))}),
            "file_path",
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": key, "file_url": format!("https://example.org/{huge}")}),
            "file_url",
        ),
        (
            "zotero_attach_arxiv_pdf",
            json!({"item_key": key, "arxiv_id": huge}),
            "arxiv_id",
        ),
        ("zotero_get_item", json!({"item_key": huge}), "item_key"),
        (
            "zotero_get_item",
            json!({"item_key": key, "library": huge}),
            "library",
        ),
    ]
}

#[tokio::test]
async fn oversized_arguments_are_refused_naming_the_field_without_echoing_them() {
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let cases = oversized_calls();
    let mut calls: Vec<Value> = cases
        .iter()
        .map(|(tool, args, _)| tool_call(tool, args.clone()))
        .collect();
    // An unknown field whose name is 100 KB long.
    let mut odd = serde_json::Map::new();
    odd.insert("k".repeat(100_000), json!(1));
    odd.insert("query".into(), json!("x"));
    calls.push(tool_call("zotero_search_items", Value::Object(odd)));
    // An unknown tool whose name is 1 MB long.
    calls.push(tool_call(&"z".repeat(MB), json!({})));
    let sent: usize = calls.iter().map(|c| c.to_string().len()).sum();

    let s = tokio::task::spawn_blocking(move || raw_session(&env, "2025-06-18", &calls))
        .await
        .unwrap();
    // responses[0] answers initialize.
    for (i, (tool, _, field)) in cases.iter().enumerate() {
        let result = &s.responses[i + 1]["result"];
        let envelope = &result["structuredContent"];
        assert_eq!(
            envelope["error"]["code"], "ZOTERO_VALIDATION_ERROR",
            "{tool} {field}: {envelope}"
        );
        assert_eq!(envelope["error"]["details"]["field"], *field, "{tool}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{tool}: {message}");
        assert!(
            message.len() < 600,
            "{tool} {field}: {} bytes",
            message.len()
        );
    }
    let unknown = &s.responses[cases.len() + 1]["result"]["structuredContent"]["error"];
    assert_eq!(unknown["code"], "ZOTERO_VALIDATION_ERROR", "{unknown}");
    assert!(unknown["message"]
        .as_str()
        .unwrap()
        .contains("unknown field"));
    assert!(unknown.to_string().len() < 2_000, "{unknown}");
    let no_tool = &s.responses[cases.len() + 2];
    assert!(no_tool["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown tool"));
    assert!(no_tool.to_string().len() < 2_000);

    // Megabytes in; a few kilobytes out, on stdout and in the log alike.
    assert!(sent > 5 * MB, "{sent}");
    assert!(
        s.stdout.len() < 64 * 1024,
        "stdout: {} bytes",
        s.stdout.len()
    );
    assert!(
        s.stderr.len() < 64 * 1024,
        "stderr: {} bytes",
        s.stderr.len()
    );
    // Nothing reached Zotero.
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
}

#[tokio::test]
async fn values_at_the_limits_are_accepted() {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "q".repeat(500), "tags": ["t".repeat(255)]}),
        )
        .await;
    assert_eq!(a.expect_ok()["total"], 0);
    let creators =
        vec![json!({"creator_type": "author", "last_name": "L", "first_name": "F"}); 500];
    let a = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "é".repeat(32_767), "creators": creators,
                   "tags": (0..200).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
        )
        .await;
    let key = a.expect_ok()["item_key"].as_str().unwrap().to_string();
    let got = server
        .call("zotero_get_item", json!({"item_key": key}))
        .await;
    // The answer holds what fits in its budget and says where the rest is.
    let got = got.expect_ok();
    let shown = got["item"]["creators"].as_array().unwrap().len();
    assert!(shown > 0 && shown < 500, "{shown}");
    assert!(
        got["truncated"].to_string().contains(&format!(
            "creators: the first {shown} of 500; zotero_get_item_metadata with item_key {key}, field=creators, offset={shown}"
        )),
        "{got}"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_base64_bound_follows_the_upload_limit() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_UPLOAD_MAX_BYTES".into(), "3000".into()));
    let server = in_process(&env).await;
    let tools = server.tools().await;
    let upload = tools
        .iter()
        .find(|t| t.name == "zotero_upload_attachment")
        .unwrap();
    assert_eq!(
        upload.input_schema["properties"]["file_bytes_base64"]["maxLength"],
        4000
    );
    server.stop().await;
}

/// Two items with the same title word, one tagged `-draft`.
async fn two_zebrafish(server: &crate::common::Server) -> String {
    let tagged = server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Zebrafish tagged", "tags": ["-draft", "a || b"]}),
        )
        .await;
    server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "Zebrafish plain", "tags": ["draft2"]}),
        )
        .await
        .expect_ok();
    tagged.expect_ok()["item_key"].as_str().unwrap().to_string()
}

fn keys(a: &crate::common::Answer) -> Vec<String> {
    a.expect_ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item_key"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_tag_filter_matches_the_tag_as_written_never_as_an_operator() {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let tagged = two_zebrafish(&server).await;

    // `-draft` is the tag "-draft", not "every item without draft".
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "tags": ["-draft"]}),
        )
        .await;
    assert_eq!(keys(&a), vec![tagged.clone()]);
    let r = emu.requests().pop().unwrap();
    let tag: Vec<&str> = r
        .query
        .iter()
        .filter(|(n, _)| n == "tag")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(tag, vec!["\\-draft"]);

    // `||` would be read as OR: refused, naming the tag, and nothing is sent.
    let before = emu.requests().len();
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "tags": ["x", "a || b"]}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "tags[1]");
    assert!(e["message"].as_str().unwrap().contains("OR"), "{e}");
    assert_eq!(emu.requests().len(), before);
    server.stop().await;
}

#[tokio::test]
async fn exclude_tags_leaves_out_items_carrying_any_of_them() {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let tagged = two_zebrafish(&server).await;
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "exclude_tags": ["draft2", "unused"]}),
        )
        .await;
    assert_eq!(keys(&a), vec![tagged]);
    // Zotero cannot exclude a tag that starts with '-': refused, not sent.
    let before = emu.requests().len();
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "exclude_tags": ["-draft"]}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "exclude_tags[0]");
    assert_eq!(emu.requests().len(), before);
    server.stop().await;
}

#[tokio::test]
async fn tag_filters_mean_the_same_through_the_local_api() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_LOCAL".into(), "1".into()));
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    let server = in_process(&env).await;
    let tagged = two_zebrafish(&server).await;
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "tags": ["-draft"]}),
        )
        .await;
    assert_eq!(keys(&a), vec![tagged.clone()]);
    let a = server
        .call(
            "zotero_search_items",
            json!({"query": "Zebrafish", "exclude_tags": ["draft2"]}),
        )
        .await;
    assert_eq!(keys(&a), vec![tagged]);
    // Both searches were answered by the desktop app.
    assert!(
        emu.local_requests()
            .iter()
            .filter(|r| r.path.ends_with("/items/top"))
            .count()
            >= 2
    );
    server.stop().await;
}
