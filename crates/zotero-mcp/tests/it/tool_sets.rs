//! `ZOTERO_READ_ONLY` and `ZOTERO_TOOLSETS`, through the built binary: what `tools/list` and
//! the instructions offer, and that a call to a tool left out is refused with
//! `ZOTERO_AUTH_ERROR` before any request reaches Zotero.

use crate::common::{env_for, spawn, Server, BIN};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_mcp::tools::{ToolName, ToolSet};

const PARENT: &str = "VASWANI7";

async fn setup(extra: &[(&str, &str)]) -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let server = spawn(&env).await;
    (emu, server)
}

async fn listed(server: &Server) -> Vec<String> {
    server
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

fn instructions(server: &Server) -> String {
    server
        .client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default()
}

/// A valid call of each tool that writes.
fn write_calls() -> [(&'static str, Value); 10] {
    [
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "Read-only"}),
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_bytes_base64": "aGk=", "filename": "hi.txt"}),
        ),
        (
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "1706.03762"}),
        ),
        (
            "zotero_add_item_to_collection",
            json!({"item_key": PARENT, "collection_name": "Transformers"}),
        ),
        (
            "zotero_create_note",
            json!({"parent_key": PARENT, "content": "# Read-only"}),
        ),
        (
            "zotero_update_note",
            json!({"note_key": "PQN9TE22", "content": "Read-only"}),
        ),
        (
            "zotero_remove_item_from_collection",
            json!({"item_key": PARENT, "collection_name": "Transformers"}),
        ),
        (
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "rename", "new_name": "NLP"}),
        ),
        ("zotero_create_collection", json!({"name": "Read-only"})),
        (
            "zotero_update_collection",
            json!({"collection_key": "RDLSTUP3", "delete": true}),
        ),
    ]
}

#[tokio::test]
async fn read_only_mode_lists_no_write_tool_and_refuses_one_without_a_request() {
    let (emu, server) = setup(&[("ZOTERO_READ_ONLY", "1")]).await;
    // Every tool that does not write Zotero, in the table's order: the index set writes
    // only the local search index, never Zotero, so it stays.
    let readers: Vec<&str> = ToolName::ALL
        .iter()
        .filter(|t| !t.writes())
        .map(|t| t.name())
        .collect();
    assert!(
        readers.contains(&"zotero_update_search_database"),
        "{readers:?}"
    );
    assert!(!readers.contains(&"zotero_create_item"), "{readers:?}");
    assert_eq!(listed(&server).await, readers);
    let text = instructions(&server);
    assert!(text.contains("Read-only mode is on"), "{text}");
    assert!(!text.contains("zotero_create_item"), "{text}");

    for (tool, args) in write_calls() {
        let a = server.call(tool, args).await;
        let err = a.expect_err("ZOTERO_AUTH_ERROR");
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("read-only mode is on"), "{message}");
        assert!(message.contains("unset ZOTERO_READ_ONLY"), "{message}");
        assert_eq!(err["details"]["variable"], "ZOTERO_READ_ONLY");
    }
    // Every tool that writes, whatever its arguments: refused before they are read.
    let writers: Vec<&str> = ToolName::ALL
        .iter()
        .filter(|t| t.writes())
        .map(|t| t.name())
        .collect();
    assert!(writers.len() >= 6, "{writers:?}");
    for tool in writers {
        let a = server.call(tool, json!({})).await;
        let err = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(err["details"]["variable"], "ZOTERO_READ_ONLY", "{tool}");
    }
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());

    // Reading still works.
    let a = server
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    a.expect_ok();
    server.stop().await;
}

#[tokio::test]
async fn tool_sets_choose_what_is_listed_and_callable() {
    let (emu, server) = setup(&[("ZOTERO_TOOLSETS", "read, FILES")]).await;
    assert_eq!(
        listed(&server).await,
        [
            "zotero_search_items",
            "zotero_list_collections",
            "zotero_get_item",
            "zotero_upload_attachment",
            "zotero_attach_arxiv_pdf",
            "zotero_get_sort_values",
            "zotero_list_libraries",
            "zotero_list_items",
            "zotero_list_tags",
            "zotero_get_item_fulltext",
            "zotero_get_item_metadata",
            "zotero_get_item_children",
            "zotero_get_notes",
            "zotero_get_annotations"
        ]
    );
    let text = instructions(&server);
    assert!(text.contains("zotero_upload_attachment"), "{text}");
    assert!(!text.contains("zotero_create_item"), "{text}");
    for (tool, args) in write_calls() {
        if !matches!(tool, "zotero_upload_attachment" | "zotero_attach_arxiv_pdf") {
            let a = server.call(tool, args).await;
            let err = a.expect_err("ZOTERO_AUTH_ERROR");
            let message = err["message"].as_str().unwrap();
            assert!(message.contains("'write'"), "{message}");
            assert!(message.contains("ZOTERO_TOOLSETS"), "{message}");
            assert_eq!(err["details"]["tool_set"], "write");
        }
    }
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
    // The files set is callable.
    let a = server
        .call("zotero_upload_attachment", write_calls()[1].1.clone())
        .await;
    assert_eq!(a.expect_ok()["parent_item_key"], PARENT);
    server.stop().await;

    let (emu, server) = setup(&[("ZOTERO_TOOLSETS", "write")]).await;
    let write_set: Vec<&str> = ToolName::ALL
        .iter()
        .filter(|t| t.set() == ToolSet::Write)
        .map(|t| t.name())
        .collect();
    assert_eq!(listed(&server).await, write_set);
    assert!(write_set.contains(&"zotero_update_item"), "{write_set:?}");
    let a = server
        .call("zotero_search_items", json!({"query": "attention"}))
        .await;
    let err = a.expect_err("ZOTERO_AUTH_ERROR");
    assert!(err["message"].as_str().unwrap().contains("'read'"), "{err}");
    assert!(emu.requests().is_empty());
    server.stop().await;

    let (_emu, server) = setup(&[("ZOTERO_TOOLSETS", "cite")]).await;
    assert_eq!(listed(&server).await, ["zotero_cite", "zotero_export"]);
    server.stop().await;
}

#[test]
fn an_unknown_tool_set_stops_start_up_naming_the_variable_and_the_sets() {
    for value in ["read,writes", ","] {
        let out = std::process::Command::new(BIN)
            .env_clear()
            .env("ZOTERO_TOOLSETS", value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ZOTERO_TOOLSETS"), "{err}");
        assert!(
            err.contains("read, write, files, cite, identify, index"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = std::process::Command::new(BIN)
        .env_clear()
        .env("ZOTERO_READ_ONLY", "maybe")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ZOTERO_READ_ONLY"));
}

#[test]
fn the_tools_command_lists_every_tool_whatever_is_offered() {
    let out = std::process::Command::new(BIN)
        .args(["tools", "--json"])
        .env_clear()
        .env("ZOTERO_READ_ONLY", "1")
        .env("ZOTERO_TOOLSETS", "read")
        .output()
        .unwrap();
    assert!(out.status.success());
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tools.len(), ToolName::ALL.len());
}
