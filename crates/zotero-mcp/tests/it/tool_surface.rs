//! The default surface and `zotero_enable_tools`: what `tools/list` shows out of the box (its
//! size asserted in bytes), `ZOTERO_TOOLSETS` configurations listing what they listed before,
//! and enabling a family over stdio, HTTP with sessions, stateless HTTP and 2026-07-28
//! requests (the list-changed notification where there is a session, the new tools callable
//! everywhere), with its refusals.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_mcp::mcp::surface::{DEFAULT_TOOLS, ENABLE_TOOLS};
use zotero_mcp::tool_docs::{model_bytes, wire_bytes};
use zotero_mcp::tools::{ToolName, ToolSet};

use crate::common::{env_for, spawn, spawn_with, Server, TestClient};
use crate::http_sessions::{eventually, Session};
use crate::http_transport::{emulator_env, messages, post, rpc_as, HttpServer};

/// At most this many tools by default.
const MAX_TOOLS: usize = 14;
/// What a model is sent of the default tools, at most (≈ 3,500 tokens).
const MAX_MODEL_BYTES: usize = 14 * 1024;
/// The whole default `tools/list` answer, output schemas included, at most.
const MAX_ANSWER_BYTES: usize = 36 * 1024;

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn default_names() -> Vec<String> {
    DEFAULT_TOOLS
        .iter()
        .map(|t| t.name().to_string())
        .chain([ENABLE_TOOLS.to_string()])
        .collect()
}

async fn emulated(extra: &[(&str, &str)], client: TestClient) -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let server = spawn_with(&env, None, client).await;
    (emu, server)
}

#[tokio::test]
async fn the_default_surface_is_small_and_within_its_byte_budget() {
    let server = spawn(&[]).await;
    let tools = server.tools().await;
    assert_eq!(names(&tools), default_names());
    assert!(tools.len() <= MAX_TOOLS, "{} tools", tools.len());
    let model: usize = tools.iter().map(model_bytes).sum();
    assert!(model <= MAX_MODEL_BYTES, "a model is sent {model} bytes");
    let answer = serde_json::to_string(&json!({ "tools": tools }))
        .unwrap()
        .len();
    assert!(answer <= MAX_ANSWER_BYTES, "tools/list is {answer} bytes");
    assert!(tools.iter().map(wire_bytes).sum::<usize>() <= answer);
    for t in &tools {
        let d = t.description.as_deref().unwrap_or_default();
        assert!(d.len() <= 400, "{}: {} characters", t.name, d.len());
    }
    // The client hears of list changes.
    let caps = &server.client.peer_info().unwrap().capabilities;
    assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
    server.stop().await;
}

#[tokio::test]
async fn every_tool_description_is_at_most_400_characters() {
    for t in zotero_mcp::mcp::server::tool_definitions() {
        let d = t.description.as_deref().unwrap_or_default();
        assert!(d.len() <= 400, "{}: {} characters", t.name, d.len());
    }
}

/// What each `ZOTERO_TOOLSETS` listed before the default surface: its sets whole, in the
/// table's order, no discovery tool; `all` lists what an unset one did.
#[tokio::test]
async fn toolsets_configurations_list_what_they_listed_before() {
    let emu = Emulator::start().await;
    let env = |sets: &str| {
        let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
        env.push(("ZOTERO_TOOLSETS".into(), sets.into()));
        env
    };
    let all: Vec<String> = ToolName::ALL.iter().map(|t| t.name().to_string()).collect();
    let server = spawn(&env("all")).await;
    assert_eq!(names(&server.tools().await), all);
    let caps = &server.client.peer_info().unwrap().capabilities;
    assert_eq!(caps.tools.as_ref().unwrap().list_changed, None);
    server.stop().await;
    for set in ToolSet::ALL {
        let server = spawn(&env(set.name())).await;
        let expected: Vec<String> = ToolName::ALL
            .iter()
            .filter(|t| t.set() == set)
            .map(|t| t.name().to_string())
            .collect();
        assert_eq!(names(&server.tools().await), expected, "{}", set.name());
        server.stop().await;
    }
    let server = spawn(&env("read,write,files,cite,identify,index,research")).await;
    assert_eq!(names(&server.tools().await), all);
    server.stop().await;
}

#[tokio::test]
async fn a_tool_not_listed_by_default_is_called_by_name() {
    let (_emu, server) = emulated(&[], TestClient::default()).await;
    assert!(!names(&server.tools().await).contains(&"zotero_list_tags".to_string()));
    server.call("zotero_list_tags", json!({})).await.expect_ok();
    server.stop().await;
}

#[tokio::test]
async fn enabling_a_family_over_stdio_lists_it_and_notifies_the_client() {
    let client = TestClient::default();
    let (_emu, server) = emulated(&[], client.clone()).await;
    let listed = server.call(ENABLE_TOOLS, json!({})).await;
    let data = listed.expect_ok();
    let families = data["families"].as_array().unwrap();
    assert_eq!(families.len(), ToolSet::ALL.len());
    assert!(families.iter().all(|f| f["about"].is_string()));
    assert_eq!(client.tools_changed.load(Ordering::SeqCst), 0);

    let a = server
        .call(ENABLE_TOOLS, json!({"families": ["cite", "write"]}))
        .await;
    let data = a.expect_ok();
    assert_eq!(data["list_changed"], true);
    assert_eq!(data["enabled"], json!(["write", "cite"]));
    let how: Vec<&str> = data["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(how.contains(&"zotero_cite") && how.contains(&"zotero_update_item"));
    eventually(|| client.tools_changed.load(Ordering::SeqCst), |n| *n >= 1).await;
    assert_eq!(client.tools_changed.load(Ordering::SeqCst), 1);
    let now = names(&server.tools().await);
    for name in [
        "zotero_cite",
        "zotero_export",
        "zotero_update_item",
        "zotero_trash_items",
    ] {
        assert!(now.contains(&name.to_string()), "{name}: {now:?}");
    }
    assert!(!now.contains(&"zotero_list_tags".to_string()));
    server
        .call(
            "zotero_cite",
            json!({"item_keys": ["VASWANI7"], "style": "apa"}),
        )
        .await
        .expect_ok();
    server.stop().await;
}

#[tokio::test]
async fn refusals_unknown_family_and_writes_in_read_only_mode() {
    let (emu, server) = emulated(&[("ZOTERO_READ_ONLY", "1")], TestClient::default()).await;
    let listed = names(&server.tools().await);
    let expected: Vec<String> = default_names()
        .into_iter()
        .filter(|n| ToolName::from_name(n).is_none_or(|t| !t.writes()))
        .collect();
    assert_eq!(listed, expected);

    let a = server
        .call(ENABLE_TOOLS, json!({"families": ["citations"]}))
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(err["details"]["field"], "families[0]");
    let message = err["message"].as_str().unwrap();
    for known in ["read", "write", "files", "cite", "identify", "index", "all"] {
        assert!(message.contains(known), "{message}");
    }

    for family in ["write", "files", "identify", "all"] {
        let a = server
            .call(ENABLE_TOOLS, json!({"families": ["cite", family]}))
            .await;
        let err = a.expect_err("ZOTERO_AUTH_ERROR");
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("cannot be enabled"), "{message}");
        assert!(message.contains("read-only mode is on"), "{message}");
        assert_eq!(err["details"]["variable"], "ZOTERO_READ_ONLY");
    }
    // Nothing was enabled by the refused calls.
    assert_eq!(names(&server.tools().await), expected);
    // A write tool called by name is refused as before.
    server
        .call(
            "zotero_create_item",
            json!({"item_type": "book", "title": "x"}),
        )
        .await
        .expect_err("ZOTERO_AUTH_ERROR");
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
    server.stop().await;
}

fn sessions_env(emu: &Emulator) -> Vec<(String, String)> {
    let mut env = emulator_env(emu);
    env.push(("ZOTERO_MCP_HTTP_SESSIONS".into(), "1".into()));
    env
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn enabling_a_family_over_http_with_sessions_notifies_the_session() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&sessions_env(&emu)).await;
    let (s, init) = Session::open(server.addr).await;
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    let list = s.request(2, "tools/list", json!({})).await;
    assert_eq!(tool_names(list.last().unwrap()), default_names());

    let call = json!({"name": ENABLE_TOOLS, "arguments": {"families": ["cite"]}});
    let answer = s.request(3, "tools/call", call).await;
    let envelope = &answer.last().unwrap()["result"]["structuredContent"];
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(envelope["data"]["list_changed"], true);
    let changed = || {
        s.unasked
            .lock()
            .unwrap()
            .iter()
            .chain(answer.iter())
            .filter(|m| m["method"] == "notifications/tools/list_changed")
            .count()
    };
    assert_eq!(eventually(changed, |n| *n > 0).await, 1);

    let list = s.request(4, "tools/list", json!({})).await;
    let now = tool_names(list.last().unwrap());
    assert!(now.contains(&"zotero_export".to_string()), "{now:?}");
    let call = json!({"name": "zotero_export", "arguments": {"item_keys": ["VASWANI7"], "format": "bibtex"}});
    let answer = s.request(5, "tools/call", call).await;
    let envelope = &answer.last().unwrap()["result"]["structuredContent"];
    assert_eq!(envelope["ok"], true, "{envelope}");

    // Another session still lists the default surface.
    let (other, _) = Session::open(server.addr).await;
    let list = other.request(2, "tools/list", json!({})).await;
    assert_eq!(tool_names(list.last().unwrap()), default_names());
}

#[tokio::test]
async fn stateless_http_answers_how_to_call_and_the_tools_are_callable() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&emulator_env(&emu)).await;
    let call = json!({"name": ENABLE_TOOLS, "arguments": {"families": ["cite"]}});
    let answer = rpc_as(server.addr, &[], 1, "tools/call", call).await;
    let data = &answer["result"]["structuredContent"]["data"];
    assert_eq!(data["list_changed"], false, "{answer}");
    let cite = data["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "zotero_cite")
        .cloned()
        .unwrap();
    assert_eq!(cite["input_schema"]["type"], "object");
    assert!(cite["input_schema"]["properties"]["item_keys"].is_object());
    // No session: the list is the default one, and the tool is called by name.
    let list = rpc_as(server.addr, &[], 2, "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), default_names());
    let call = json!({"name": "zotero_cite", "arguments": {"item_keys": ["VASWANI7"]}});
    let answer = rpc_as(server.addr, &[], 3, "tools/call", call).await;
    assert_eq!(
        answer["result"]["structuredContent"]["ok"], true,
        "{answer}"
    );
}

#[tokio::test]
async fn a_2026_07_28_request_enables_for_itself_and_discover_claims_no_list_changes() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&sessions_env(&emu)).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let request = |method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        (serde_json::to_vec(&body).unwrap(), method.to_string())
    };
    let (body, method) = request("server/discover", json!({"_meta": meta}));
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method.as_str()),
    ];
    let (_, _, found) = post(server.addr, &headers, body).await;
    let found = messages(&found).pop().unwrap();
    let tools = &found["result"]["capabilities"]["tools"];
    assert!(tools.is_object(), "{found}");
    assert!(tools.get("listChanged").is_none(), "{found}");

    let (body, method) = request(
        "tools/call",
        json!({"_meta": meta, "name": ENABLE_TOOLS, "arguments": {"families": ["cite"]}}),
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method.as_str()),
        ("mcp-name", ENABLE_TOOLS),
    ];
    let (status, _, answer) = post(server.addr, &headers, body).await;
    let got = messages(&answer);
    assert_eq!(status.as_u16(), 200, "{got:?}");
    assert!(got
        .iter()
        .all(|m| m["method"] != "notifications/tools/list_changed"));
    let data = &got.last().unwrap()["result"]["structuredContent"]["data"];
    assert_eq!(data["list_changed"], false, "{got:?}");
    assert!(data["tools"][0]["input_schema"].is_object(), "{got:?}");
}
