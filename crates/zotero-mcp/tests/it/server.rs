//! The server as a process: start without credentials, protocol versions, the `check`,
//! `--help`, `--version` and `tools` commands, configuration errors, and the JSON logs
//! (correlation ids, `server.start`, and the API key never printed anywhere).

use std::process::Command;

use crate::common::{env_for, raw_session, spawn, tool_call, BIN};
use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

fn run(args: &[&str], env: &[(String, String)]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The tools listed without ZOTERO_TOOLSETS: the default surface and zotero_enable_tools.
const DEFAULT_TOOLS: usize = zotero_mcp::mcp::surface::DEFAULT_TOOLS.len() + 1;

#[tokio::test]
async fn starts_and_lists_tools_without_credentials() {
    let server = spawn(&[]).await;
    let info = server.client.peer_info().expect("initialize answered");
    let server_info = info.server_info.clone().unwrap();
    assert_eq!(server_info.name, "zotero-mcp");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(server.tools().await.len(), DEFAULT_TOOLS);
    // A call that needs Zotero says which variables to set.
    let a = server
        .call("zotero_search_items", json!({"query": "x"}))
        .await;
    let err = a.expect_err("ZOTERO_AUTH_ERROR");
    assert_eq!(
        err["details"]["missing"],
        json!(["ZOTERO_API_KEY", "ZOTERO_USER_ID"])
    );
    let msg = err["message"].as_str().unwrap();
    assert!(msg.contains("ZOTERO_API_KEY") && msg.contains("ZOTERO_USER_ID"));
    // A tool that needs no Zotero still works.
    server
        .call("zotero_get_sort_values", json!({}))
        .await
        .expect_ok();
    server.stop().await;
}

#[tokio::test]
async fn write_tools_without_credentials_name_them_before_any_request() {
    // An emulator stands in for Zotero, the web and arXiv, to see that nothing is asked.
    let emu = Emulator::start().await;
    let env: Vec<(String, String)> = [
        ("ZOTERO_API_BASE", emu.uri()),
        ("ZOTERO_ARXIV_BASE", emu.arxiv_base()),
        ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let server = spawn(&env).await;
    for (tool, args) in [
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "x"}),
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": "VASWANI7", "file_bytes_base64": "aGk=", "filename": "a.txt"}),
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": "VASWANI7", "file_path": BIN}),
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": "VASWANI7", "file_url": format!("{}/web/x.pdf", emu.uri())}),
        ),
        (
            "zotero_attach_arxiv_pdf",
            json!({"item_key": "VASWANI7", "arxiv_id": "1706.03762"}),
        ),
        (
            "zotero_add_item_to_collection",
            json!({"item_key": "VASWANI7", "collection_name": "Reading"}),
        ),
        (
            "zotero_remove_item_from_collection",
            json!({"item_key": "VASWANI7", "collection_name": "Reading"}),
        ),
        (
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "delete"}),
        ),
    ] {
        let a = server.call(tool, args).await;
        let err = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(
            err["details"]["missing"],
            json!(["ZOTERO_API_KEY", "ZOTERO_USER_ID"]),
            "{tool}"
        );
    }
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
    server.stop().await;
}

#[test]
fn protocol_versions_from_2025_03_26_are_accepted() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let s = raw_session(&[], version, &[json!({"method": "tools/list"})]);
        assert_eq!(s.responses[0]["result"]["protocolVersion"], version);
        assert_eq!(s.responses[0]["result"]["serverInfo"]["name"], "zotero-mcp");
        assert_eq!(
            s.responses[1]["result"]["tools"].as_array().unwrap().len(),
            DEFAULT_TOOLS
        );
        assert!(s.status.success());
    }
    // An older client is offered a version this server speaks instead.
    let s = raw_session(&[], "2024-11-05", &[]);
    let offered = s.responses[0]["result"]["protocolVersion"]
        .as_str()
        .unwrap();
    assert!(offered >= "2025-03-26", "{offered}");
}

#[test]
fn help_version_and_tools_commands() {
    let (code, out, _) = run(&["--version"], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        concat!("zotero-mcp ", env!("CARGO_PKG_VERSION"))
    );
    let (code, out, _) = run(&["--help"], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("check") && out.contains("ZOTERO_API_KEY"));
    let (code, out, _) = run(&["tools", "--json"], &[]);
    assert_eq!(code, 0);
    let tools: Vec<Value> = serde_json::from_str(&out).unwrap();
    // Every tool, and zotero_enable_tools.
    assert_eq!(tools.len(), zotero_mcp::tools::ToolName::ALL.len() + 1);
    assert!(tools.iter().all(|t| t["inputSchema"]["type"] == "object"));
    let (code, out, _) = run(&["tools", "--budget"], &[]);
    assert_eq!(code, 0);
    // Every tool of the table (not a hand-kept number): with every set listed up front,
    // zotero_enable_tools is not listed.
    let all = format!(
        "| ZOTERO_TOOLSETS=all | {} |",
        zotero_mcp::tools::ToolName::ALL.len()
    );
    for line in [
        "| default | 14 |",
        all.as_str(),
        "| zotero_enable_tools | - | yes |",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
}

#[test]
fn malformed_configuration_is_a_startup_error_naming_the_variable() {
    for (var, value) in [
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "abc"),
        ("ZOTERO_READ_CACHE_TTL", "-3"),
        ("ZOTERO_API_BASE", "api.zotero.org"),
        ("ZOTERO_USER_ID", "me"),
    ] {
        let (code, out, err) = run(&[], &[(var.to_string(), value.to_string())]);
        assert_ne!(code, 0, "{var}={value} must not start");
        assert!(err.contains(var), "{err}");
        assert!(out.is_empty(), "nothing on stdout: {out}");
    }
}

#[tokio::test]
async fn check_reports_the_key_and_fails_with_advice() {
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let (code, out, err) = tokio::task::spawn_blocking(move || run(&["check"], &env))
        .await
        .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("user ID 475425"), "{out}");
    assert!(out.contains("read:      yes"));
    assert!(out.contains("write:     yes"));
    assert!(out.contains("upload:    yes"));
    assert!(!out.contains(API_KEY) && !err.contains(API_KEY));

    let env = env_for(&emu.uri(), USER_ID, "WrongKey0123456789abcdef");
    let (code, _, err) = tokio::task::spawn_blocking(move || run(&["check"], &env))
        .await
        .unwrap();
    assert_ne!(code, 0);
    assert!(err.contains("ZOTERO_API_KEY"), "{err}");

    let env = env_for(&emu.uri(), 42, API_KEY);
    let (code, _, err) = tokio::task::spawn_blocking(move || run(&["check"], &env))
        .await
        .unwrap();
    assert_ne!(code, 0);
    assert!(err.contains("ZOTERO_USER_ID=475425"), "{err}");

    let (code, _, err) = run(&["check"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("ZOTERO_API_KEY and ZOTERO_USER_ID"), "{err}");
}

#[tokio::test]
async fn the_api_key_never_reaches_logs_or_results_at_debug_level() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_MCP_LOG_LEVEL".into(), "trace".into()));
    env.push(("ZOTERO_MCP_DEBUG".into(), "1".into()));
    env.push(("ZOTERO_RETRY_MAX_ATTEMPTS".into(), "2".into()));
    emu.inject(zotero_emulator::Fault::once(
        zotero_emulator::FaultKind::ServerError,
    ));
    let calls = vec![
        tool_call(
            "zotero_search_items",
            json!({"query": "attention", "tags": ["nlp"]}),
        ),
        tool_call("zotero_list_collections", json!({})),
        tool_call("zotero_get_item", json!({"item_key": "VASWANI7"})),
        tool_call("zotero_get_item", json!({"item_key": "ZZZZZZZZ"})),
        tool_call("zotero_get_sort_values", json!({})),
        tool_call("zotero_search_items", json!({"query": "x", "limit": 0})),
    ];
    let s = tokio::task::spawn_blocking(move || raw_session(&env, "2025-06-18", &calls))
        .await
        .unwrap();
    assert_eq!(s.responses.len(), 7);
    // The calls really ran against the emulator (so the key was really used).
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.header("zotero-api-key") == Some(API_KEY)));
    assert!(!s.stdout.contains(API_KEY), "key on stdout");
    assert!(!s.stderr.contains(API_KEY), "key in logs");
    assert!(!s.stderr.contains("EmuKey"), "part of the key in logs");
    // stderr is JSON lines only; stdout is JSON-RPC only.
    for line in s.stderr.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
    }
    assert!(s.stderr.contains("server.start"));
}

#[tokio::test]
async fn every_line_of_a_tool_call_carries_its_correlation_id() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_MCP_LOG_LEVEL".into(), "debug".into()));
    let calls = vec![
        tool_call("zotero_get_item", json!({"item_key": "VASWANI7"})),
        tool_call("zotero_search_items", json!({"query": "attention"})),
    ];
    let s = tokio::task::spawn_blocking(move || raw_session(&env, "2025-06-18", &calls))
        .await
        .unwrap();
    let lines: Vec<Value> = s
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let upstream: Vec<&Value> = lines
        .iter()
        .filter(|v| v["fields"]["message"] == "upstream")
        .collect();
    // get_item: item + children; search: relevance rejected + fallback.
    assert_eq!(upstream.len(), 4, "{}", s.stderr);
    for v in &upstream {
        assert!(v["span"]["correlation_id"].is_string(), "{v}");
        assert!(v["fields"]["status"].is_u64());
        assert!(v["fields"]["latency_ms"].is_u64());
        assert!(v["fields"]["retries"].is_u64());
        assert!(v["fields"]["path"].is_string());
    }
    let ids: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|v| v["span"]["name"] == "tool_call")
        .map(|v| v["span"]["correlation_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "one id per call");
    // Both upstream lines of the first call share one id, different from the second call's.
    assert_eq!(
        upstream[0]["span"]["correlation_id"],
        upstream[1]["span"]["correlation_id"]
    );
    assert_ne!(
        upstream[1]["span"]["correlation_id"],
        upstream[2]["span"]["correlation_id"]
    );
    // Without ZOTERO_MCP_DEBUG there is no server.start event.
    assert!(!s.stderr.contains("server.start"));
}
