//! MCP resources and prompts against the emulator: the templates, `resources/list` paging
//! through recent items, each resource read as the tool that reads the same thing answers
//! it (bounded, with its mime type), MCP error codes for an unknown object and a malformed
//! URI, group libraries, and the prompts' messages and argument checks.

use rmcp::model::{
    ContentBlock, GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams,
    ResourceContents,
};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, FullText, GroupSpec, KeyAccess, Library, API_KEY, USER_ID};

use crate::common::{env_for, in_process, in_process_as, obj, Server, TestClient};

const GROUP: u64 = 4101;

async fn setup() -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

/// The one text content of a read, and its mime type.
async fn read(s: &Server, uri: &str) -> (String, String) {
    let r = s
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e}"));
    assert_eq!(r.contents.len(), 1, "{uri}");
    match r.contents.into_iter().next().unwrap() {
        ResourceContents::TextResourceContents {
            uri: u,
            mime_type,
            text,
            ..
        } => {
            assert_eq!(u, uri);
            (text, mime_type.unwrap())
        }
        other => panic!("{uri}: not text: {other:?}"),
    }
}

/// The MCP error of a read that fails: its code and data.
async fn read_err(s: &Server, uri: &str) -> (i32, Value, String) {
    match s
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
    {
        Err(rmcp::ServiceError::McpError(e)) => (
            e.code.0,
            e.data.unwrap_or(Value::Null),
            e.message.to_string(),
        ),
        other => panic!("{uri}: expected an MCP error, got {other:?}"),
    }
}

async fn read_json(s: &Server, uri: &str) -> Value {
    let (text, mime) = read(s, uri).await;
    assert_eq!(mime, "application/json", "{uri}");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn capabilities_and_templates_are_declared() {
    let (_emu, s) = setup().await;
    let caps = &s.client.peer_info().unwrap().capabilities;
    assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.tools.is_some());
    let templates = s
        .client
        .list_resource_templates(None)
        .await
        .unwrap()
        .resource_templates;
    let got: Vec<(String, String)> = templates
        .iter()
        .map(|t| (t.uri_template.clone(), t.mime_type.clone().unwrap()))
        .collect();
    let want = [
        ("zotero://{library}/items/{key}", "application/json"),
        ("zotero://{library}/items/{key}/fulltext.txt", "text/plain"),
        ("zotero://{library}/items/{key}/notes.md", "text/markdown"),
        (
            "zotero://{library}/items/{key}/annotations.md",
            "text/markdown",
        ),
        (
            "zotero://{library}/items/{key}/annotations.json",
            "application/json",
        ),
        ("zotero://{library}/collections/{key}", "application/json"),
        ("zotero://styles", "application/json"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(u, m)| (u.to_string(), m.to_string()))
            .collect::<Vec<_>>()
    );
    assert!(templates.iter().all(|t| t.description.is_some()));
}

#[tokio::test]
async fn the_list_pages_through_recent_items_with_a_cursor() {
    let (_emu, s) = setup().await;
    let first = s.client.list_resources(None).await.unwrap();
    assert_eq!(first.resources[0].uri, "zotero://styles");
    let listed = s
        .call("zotero_list_items", json!({"limit": 25}))
        .await
        .expect_ok()
        .clone();
    let want: Vec<String> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("zotero://user/items/{}", i["item_key"].as_str().unwrap()))
        .collect();
    let got: Vec<String> = first.resources[1..].iter().map(|r| r.uri.clone()).collect();
    assert_eq!(got, want);
    for (r, i) in first.resources[1..]
        .iter()
        .zip(listed["items"].as_array().unwrap())
    {
        let title = i["title"].as_str().unwrap();
        if !title.is_empty() {
            assert_eq!(r.name, title);
        }
        assert_eq!(r.mime_type.as_deref(), Some("application/json"));
        assert!(r.description.as_ref().unwrap().len() < 200);
    }
    let total = listed["total"].as_u64().unwrap();
    // Every page after the first, by the cursor, without gap or overlap.
    let mut seen = got.len() as u64;
    let mut cursor = first.next_cursor.clone();
    assert_eq!(cursor.is_some(), total > 25, "total {total}");
    let mut pages = 1;
    while let Some(c) = cursor {
        let page = s
            .client
            .list_resources(Some(
                PaginatedRequestParams::default().with_cursor(Some(c.clone())),
            ))
            .await
            .unwrap();
        assert!(page.resources.iter().all(|r| r.uri != "zotero://styles"));
        let again = s
            .call(
                "zotero_list_items",
                json!({"limit": 25, "start": c.parse::<u64>().unwrap()}),
            )
            .await;
        let keys: Vec<String> = again.expect_ok()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| format!("zotero://user/items/{}", i["item_key"].as_str().unwrap()))
            .collect();
        assert_eq!(
            page.resources
                .iter()
                .map(|r| r.uri.clone())
                .collect::<Vec<_>>(),
            keys
        );
        seen += page.resources.len() as u64;
        cursor = page.next_cursor;
        pages += 1;
        assert!(pages < 20);
    }
    assert_eq!(seen, total);
    // A cursor this server did not give is invalid params.
    let bad = s
        .client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some("x".into())),
        ))
        .await;
    match bad {
        Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{e:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn each_resource_reads_as_its_tool_answers() {
    let (_emu, s) = setup().await;
    // The item: the metadata tool's data.
    let item = read_json(&s, "zotero://user/items/VASWANI7").await;
    let tool = s
        .call("zotero_get_item_metadata", json!({"item_key": "VASWANI7"}))
        .await;
    assert_eq!(&item, tool.expect_ok());
    assert_eq!(item["item"]["item_key"], "VASWANI7");

    // The full text: the tool's first page.
    let (text, mime) = read(&s, "zotero://user/items/VASWANI7/fulltext.txt").await;
    assert_eq!(mime, "text/plain");
    let tool = s
        .call("zotero_get_item_fulltext", json!({"item_key": "VASWANI7"}))
        .await;
    assert_eq!(text, tool.expect_ok()["text"].as_str().unwrap());

    // Notes, as Markdown.
    let (md, mime) = read(&s, "zotero://user/items/RESNET52/notes.md").await;
    assert_eq!(mime, "text/markdown");
    let notes = s
        .call(
            "zotero_get_notes",
            json!({"item_key": "RESNET52", "limit": 25}),
        )
        .await;
    let notes = notes.expect_ok()["notes"].as_array().unwrap().clone();
    assert!(!notes.is_empty());
    for n in &notes {
        assert!(
            md.contains(&format!("## {}", n["title"].as_str().unwrap())),
            "{md}"
        );
        assert!(md.contains(n["zotero_url"].as_str().unwrap()), "{md}");
    }

    // Annotations, as JSON (the tool's data) and as Markdown.
    let ann = read_json(&s, "zotero://user/items/RESNET52/annotations.json").await;
    let tool = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": "RESNET52", "limit": 50}),
        )
        .await;
    assert_eq!(&ann, tool.expect_ok());
    let (md, mime) = read(&s, "zotero://user/items/RESNET52/annotations.md").await;
    assert_eq!(mime, "text/markdown");
    for a in ann["annotations"].as_array().unwrap() {
        assert!(md.contains(a["annotation_key"].as_str().unwrap()), "{md}");
        if let Some(t) = a["text"].as_str() {
            let first_line = t.lines().next().unwrap_or_default();
            assert!(md.contains(&format!("> {first_line}")), "{md}");
        }
    }
    // In reading order.
    let keys: Vec<&str> = ann["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["annotation_key"].as_str().unwrap())
        .collect();
    let at: Vec<usize> = keys.iter().map(|k| md.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{md}");

    // A collection: the listing tool's data.
    let coll = read_json(&s, "zotero://user/collections/9KH9TNSJ").await;
    let tool = s
        .call(
            "zotero_list_items",
            json!({"collection_key": "9KH9TNSJ", "limit": 25}),
        )
        .await;
    let tool = tool.expect_ok();
    assert!(!coll["items"].as_array().unwrap().is_empty());
    assert_eq!(coll["items"], tool["items"]);
    assert_eq!(coll["total"], tool["total"]);
    match tool["next_start"].as_u64() {
        Some(next) => assert!(
            coll["read_on"]
                .as_str()
                .unwrap()
                .contains(&format!("start {next}")),
            "{coll}"
        ),
        None => assert!(coll.get("read_on").is_none()),
    }

    // The styles the cite tool takes.
    let styles = read_json(&s, "zotero://styles").await;
    let list = styles["styles"].as_array().unwrap();
    assert!(list.contains(&json!("apa")) && list.contains(&json!("ieee")));
    let cited = s
        .call(
            "zotero_cite",
            json!({"item_keys": ["VASWANI7"], "style": list[0]}),
        )
        .await;
    cited.expect_ok();
}

#[tokio::test]
async fn a_long_full_text_is_cut_saying_how_to_read_on() {
    let emu = Emulator::start().await;
    let long = "All you need is attention. ".repeat(4_000);
    emu.set_fulltext_of("VASPDF23", FullText::pdf(&long, 15, 15));
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let (text, _) = read(&s, "zotero://user/items/VASWANI7/fulltext.txt").await;
    let tool = s
        .call("zotero_get_item_fulltext", json!({"item_key": "VASWANI7"}))
        .await;
    let d = tool.expect_ok();
    let next = d["next_offset"].as_u64().unwrap();
    assert!(text.starts_with(d["text"].as_str().unwrap()));
    assert!(text.len() < 80_000, "{}", text.len());
    assert!(
        text.contains(&format!("\"offset\": {next}")) && text.contains("zotero_get_item_fulltext"),
        "{}",
        &text[text.len() - 300..]
    );
}

#[tokio::test]
async fn unknown_objects_and_malformed_uris_are_mcp_errors() {
    let (_emu, s) = setup().await;
    for uri in [
        "zotero://user/items/ZZZZ2345",
        "zotero://user/items/ZZZZ2345/notes.md",
        "zotero://user/collections/ZZZZ2345",
    ] {
        let (code, data, _) = read_err(&s, uri).await;
        assert_eq!(code, -32002, "{uri}");
        assert_eq!(data["code"], "ZOTERO_NOT_FOUND", "{uri}");
        assert_eq!(data["uri"], uri, "the URI asked for (SEP-2164)");
    }
    for uri in [
        "zotero://user/items/not-a-key",
        "zotero://user/items/VASWANI7/pdf",
        "zotero://everyone/items/VASWANI7",
        "https://www.zotero.org/styles",
        "zotero://user",
    ] {
        let (code, data, message) = read_err(&s, uri).await;
        assert_eq!(code, -32602, "{uri}");
        assert_eq!(data["details"]["field"], "uri", "{uri}");
        assert_eq!(data["uri"], uri, "the URI asked for (SEP-2164)");
        assert!(message.contains("zotero://{library}"), "{message}");
    }
}

#[tokio::test]
async fn group_libraries_are_read_by_their_uri() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let group = format!("group:{GROUP}");
    let before = emu.requests().len();
    let ann = read_json(
        &s,
        &format!("zotero://{group}/items/RESNET52/annotations.json"),
    )
    .await;
    let tool = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": "RESNET52", "limit": 50, "library": group}),
        )
        .await;
    assert_eq!(&ann, tool.expect_ok());
    assert!(ann["annotations"][0]["zotero_url"]
        .as_str()
        .unwrap()
        .contains(&format!("groups/{GROUP}")));
    // Percent-encoded, the same.
    let item = read_json(&s, &format!("zotero://group%3A{GROUP}/items/RESNET52")).await;
    assert_eq!(
        item["zotero_url"],
        format!("zotero://select/groups/{GROUP}/items/RESNET52")
    );
    let reqs = emu.requests();
    assert!(reqs[before..]
        .iter()
        .all(|r| r.path.starts_with(&format!("/groups/{GROUP}/"))));
}

async fn prompt(
    s: &Server,
    name: &str,
    args: Value,
) -> Result<rmcp::model::GetPromptResult, rmcp::ErrorData> {
    match s
        .client
        .get_prompt(GetPromptRequestParams::new(name).with_arguments(obj(args)))
        .await
    {
        Ok(r) => Ok(r),
        Err(rmcp::ServiceError::McpError(e)) => Err(e),
        Err(e) => panic!("{e}"),
    }
}

/// The text of the messages and the URIs they link.
fn parts(r: &rmcp::model::GetPromptResult) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut links = Vec::new();
    for m in &r.messages {
        match &m.content {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(l) => links.push(l.uri.clone()),
            other => panic!("{other:?}"),
        }
    }
    (text, links)
}

#[tokio::test]
async fn prompts_link_the_resources_and_name_the_tools() {
    let (_emu, s) = setup().await;
    let listed = s.client.list_prompts(None).await.unwrap().prompts;
    let names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "summarize_item",
            "flashcards",
            "deep_research",
            "literature_review"
        ]
    );
    let required = |name: &str| -> Vec<String> {
        listed
            .iter()
            .find(|p| p.name == name)
            .unwrap()
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect()
    };
    assert_eq!(required("deep_research"), ["question"]);
    assert_eq!(required("literature_review"), ["collection_key"]);

    let r = prompt(
        &s,
        "summarize_item",
        json!({"item_key": "VASWANI7", "focus": "methods"}),
    )
    .await
    .unwrap();
    let (text, links) = parts(&r);
    assert_eq!(
        links,
        [
            "zotero://user/items/VASWANI7",
            "zotero://user/items/VASWANI7/fulltext.txt",
            "zotero://user/items/VASWANI7/notes.md",
            "zotero://user/items/VASWANI7/annotations.md"
        ]
    );
    assert!(
        text.contains("methods") && text.contains("zotero_get_item_fulltext"),
        "{text}"
    );
    // Every link reads.
    for l in &links {
        read(&s, l).await;
    }

    let r = prompt(
        &s,
        "flashcards",
        json!({"item_key": "RESNET52", "card_type": "cloze", "use_annotations": "false", "library": format!("group:{GROUP}")}),
    )
    .await
    .unwrap();
    let (text, links) = parts(&r);
    assert!(
        text.contains("Write 10 flashcards") && text.contains("cloze"),
        "{text}"
    );
    assert!(links
        .iter()
        .all(|l| l.starts_with(&format!("zotero://group:{GROUP}/"))));
    assert!(
        !links.iter().any(|l| l.ends_with("annotations.md")),
        "{links:?}"
    );

    let r = prompt(
        &s,
        "deep_research",
        json!({"question": "Why does attention work?", "top_n": "3"}),
    )
    .await
    .unwrap();
    let (text, _) = parts(&r);
    for want in [
        "Why does attention work?",
        "at most 3 rounds",
        "write 4 search queries",
        "the 3 most relevant",
        "zotero_search_items",
        "zotero_semantic_search",
        "zotero_get_item_fulltext",
        "fulltext.txt",
        "zotero://select/",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }

    let r = prompt(
        &s,
        "literature_review",
        json!({"collection_key": "ATTNDP62"}),
    )
    .await
    .unwrap();
    let (text, links) = parts(&r);
    assert_eq!(links, ["zotero://user/collections/ATTNDP62"]);
    assert!(
        text.contains("zotero_list_items") && text.contains("zotero_cite"),
        "{text}"
    );
    read(&s, &links[0]).await;
}

#[tokio::test]
async fn prompt_arguments_are_checked() {
    let (emu, s) = setup().await;
    let before = emu.requests().len();
    for (name, args, field) in [
        ("summarize_item", json!({}), "item_key"),
        (
            "summarize_item",
            json!({"item_key": "VASWANI7", "focus": "vibes"}),
            "focus",
        ),
        (
            "flashcards",
            json!({"item_key": "VASWANI7", "num_cards": "500"}),
            "num_cards",
        ),
        (
            "flashcards",
            json!({"item_key": "VASWANI7", "card_type": "essay"}),
            "card_type",
        ),
        ("deep_research", json!({}), "question"),
        (
            "deep_research",
            json!({"question": "q", "max_rounds": "0"}),
            "max_rounds",
        ),
        (
            "deep_research",
            json!({"question": "q", "queries_per_round": "11"}),
            "queries_per_round",
        ),
        (
            "literature_review",
            json!({"collection_key": "bad"}),
            "collection_key",
        ),
        ("nonexistent", json!({}), "name"),
    ] {
        let e = prompt(&s, name, args.clone()).await.unwrap_err();
        assert_eq!(e.code.0, -32602, "{name} {args}");
        assert!(e.message.contains(field), "{name} {args}: {}", e.message);
        assert_eq!(e.data.unwrap()["details"]["field"], field);
    }
    // Prompts never reach Zotero.
    assert_eq!(emu.requests().len(), before);
}

#[tokio::test]
async fn keys_are_completed_from_recent_items_and_collections() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let caps = &s.client.peer_info().unwrap().capabilities;
    assert!(caps.completions.is_some());
    // By the start of the key, or by words of the title, whatever the case.
    let by_key = s
        .client
        .complete_prompt_simple("summarize_item", "item_key", "vasw")
        .await
        .unwrap();
    assert_eq!(by_key, ["VASWANI7"]);
    let by_title = s
        .client
        .complete_prompt_simple("flashcards", "item_key", "all you need")
        .await
        .unwrap();
    assert!(by_title.contains(&"VASWANI7".to_string()), "{by_title:?}");
    let colls = s
        .client
        .complete_prompt_simple("literature_review", "collection_key", "ATTN")
        .await
        .unwrap();
    assert!(colls.contains(&"ATTNDP62".to_string()), "{colls:?}");
    let any = s
        .client
        .complete_resource_simple("zotero://{library}/collections/{key}", "key", "")
        .await
        .unwrap();
    assert!(!any.is_empty() && any.len() <= 20, "{any:?}");
    // In the library the other arguments name.
    let before = emu.requests().len();
    let ctx = rmcp::model::CompletionContext::with_arguments(
        [("library".to_string(), format!("group:{GROUP}"))].into(),
    );
    let in_group = s
        .client
        .complete_resource_argument("zotero://{library}/items/{key}", "key", "RESNET", Some(ctx))
        .await
        .unwrap();
    assert_eq!(in_group.values, ["RESNET52"]);
    assert!(emu.requests()[before..]
        .iter()
        .all(|r| r.path.starts_with(&format!("/groups/{GROUP}/"))));
    // Nothing for other arguments.
    let none = s
        .client
        .complete_prompt_simple("summarize_item", "focus", "k")
        .await
        .unwrap();
    assert!(none.is_empty());
}

#[tokio::test]
async fn long_notes_are_bounded_saying_how_to_read_on() {
    let emu = Emulator::with_library(crate::read_notes::with_long_notes(6, 40_000)).await;
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let (md, _) = read(&s, "zotero://user/items/RESNET52/notes.md").await;
    assert!(md.chars().count() <= 20_000, "{}", md.len());
    // A long note is cut at 8,000 characters, naming the call that reads on.
    assert!(md.contains("## Long 0"), "{}", &md[..300]);
    assert!(
        md.contains("library user and offset 8000 reads on"),
        "{}",
        &md[..300]
    );
    // Not every note fits: the last line says how many were shown and where to start.
    let tail = &md[md.char_indices().rev().nth(300).map_or(0, |(i, _)| i)..];
    let total = s
        .call("zotero_get_notes", json!({"item_key": "RESNET52"}))
        .await
        .expect_ok()["total"]
        .as_u64()
        .unwrap();
    let shown = md.matches("\n---\n").count();
    assert!(shown > 0 && (shown as u64) < total, "{shown} of {total}");
    assert!(
        tail.contains(&format!("{shown} of {total} notes shown"))
            && tail.contains(&format!("start {shown} reads the others")),
        "{tail}"
    );
}

/// Waits until `pred` holds for the URIs notified so far (60 s at most: a bound for a hung
/// test, not a timing; it returns as soon as the notification came).
async fn notified(client: &TestClient, pred: impl Fn(&[String]) -> bool) -> Vec<String> {
    for _ in 0..1200 {
        let now = client.updated.lock().unwrap().clone();
        if pred(&now) {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    client.updated.lock().unwrap().clone()
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the subscription of protocols before 2026-07-28
async fn subscribed_resources_are_notified_when_they_change() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_SUBSCRIBE_POLL_SECONDS".into(), "0.05".into()));
    let client = TestClient::default();
    let s = in_process_as(&env, client.clone()).await;
    let caps = &s.client.peer_info().unwrap().capabilities;
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    let item = "zotero://user/items/VASWANI7";
    let notes = "zotero://user/items/RESNET52/notes.md";
    for uri in [item, notes, "zotero://styles"] {
        s.client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .unwrap();
    }
    // What cannot be read cannot be subscribed.
    for (uri, code) in [
        ("zotero://user/items/ZZZZ2345", -32002),
        ("zotero://user/things/VASWANI7", -32602),
    ] {
        match s.client.subscribe(SubscribeRequestParams::new(uri)).await {
            Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, code, "{uri}"),
            other => panic!("{uri}: {other:?}"),
        }
    }
    // A change of the item: its resource is notified, the other not.
    s.call(
        "zotero_update_item",
        json!({"item_key": "VASWANI7", "title": "Attention Is Still All You Need"}),
    )
    .await
    .expect_ok();
    let got = notified(&client, |u| u.iter().any(|x| x == item)).await;
    assert_eq!(got, [item]);
    // A new note under RESNET52 changes its notes.
    s.call(
        "zotero_create_note",
        json!({"parent_key": "RESNET52", "content": "A later thought on shortcuts."}),
    )
    .await
    .expect_ok();
    let got = notified(&client, |u| u.iter().any(|x| x == notes)).await;
    assert_eq!(got, [item, notes]);
    // Unsubscribed, no more.
    s.client
        .unsubscribe(UnsubscribeRequestParams::new(item))
        .await
        .unwrap();
    s.call(
        "zotero_update_item",
        json!({"item_key": "VASWANI7", "title": "Attention Is All You Need"}),
    )
    .await
    .expect_ok();
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(client.updated.lock().unwrap().len(), 2);
}
