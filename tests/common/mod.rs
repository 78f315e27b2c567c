//! Test harness: starts the BUILT `zotero-mcp` binary as a child process and drives it over
//! stdio with rmcp's MCP client, capturing its stderr (the JSON log lines).
#![allow(dead_code)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;

pub const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

/// A running server and what it has written to stderr so far.
pub struct Server {
    pub client: RunningService<RoleClient, ()>,
    stderr: Arc<Mutex<Vec<String>>>,
}

/// The environment that points the server at an emulator, with quick retries.
pub fn env_for(base: &str, user_id: u64, key: &str) -> Vec<(String, String)> {
    vec![
        ("ZOTERO_API_BASE".into(), base.into()),
        ("ZOTERO_USER_ID".into(), user_id.to_string()),
        ("ZOTERO_API_KEY".into(), key.into()),
        ("ZOTERO_RETRY_BASE_DELAY".into(), "0.01".into()),
        ("ZOTERO_RETRY_MAX_DELAY".into(), "0.05".into()),
    ]
}

/// Starts the binary with exactly these variables (nothing inherited but PATH).
pub async fn spawn(env: &[(String, String)]) -> Server {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.env_clear();
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn zotero-mcp");
    let lines = Arc::new(Mutex::new(Vec::new()));
    if let Some(stderr) = stderr {
        let sink = lines.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                sink.lock().unwrap().push(line);
            }
        });
    }
    let client = ().serve(transport).await.expect("MCP initialize");
    Server {
        client,
        stderr: lines,
    }
}

/// What one tool call answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub envelope: Value,
    pub is_error: bool,
    pub text: String,
}

impl Answer {
    pub fn ok(&self) -> bool {
        self.envelope["ok"] == Value::Bool(true)
    }
    pub fn data(&self) -> &Value {
        &self.envelope["data"]
    }
    pub fn code(&self) -> &str {
        self.envelope["error"]["code"].as_str().unwrap_or("")
    }
    pub fn details(&self) -> &Value {
        &self.envelope["error"]["details"]
    }
    /// Panics with the whole envelope unless the call succeeded.
    pub fn expect_ok(&self) -> &Value {
        assert!(self.ok(), "expected success, got {}", self.envelope);
        assert!(!self.is_error);
        self.data()
    }
    pub fn expect_err(&self, code: &str) -> &Value {
        assert!(!self.ok(), "expected {code}, got {}", self.envelope);
        assert!(self.is_error, "isError must be true on failure");
        assert_eq!(self.code(), code, "envelope: {}", self.envelope);
        assert_eq!(self.envelope["data"], Value::Null);
        &self.envelope["error"]
    }
}

impl Server {
    pub async fn call(&self, tool: &str, args: Value) -> Answer {
        let result = self.call_raw(tool, args).await.expect("tools/call");
        to_answer(result)
    }

    pub async fn call_raw(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.client.call_tool(params).await
    }

    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    /// Every stderr line so far.
    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (bounded) until a stderr line satisfies `pred`.
    pub async fn wait_for_log(&self, within: Duration, pred: impl Fn(&Value) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if self
                .stderr()
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|v| pred(&v))
            {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

pub fn to_answer(result: CallToolResult) -> Answer {
    let envelope = result
        .structured_content
        .clone()
        .expect("structuredContent is always set");
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    let parsed: Value = serde_json::from_str(&text).expect("text content is JSON");
    assert_eq!(parsed, envelope, "text content must be the same JSON");
    Answer {
        envelope,
        is_error: result.is_error.unwrap_or(false),
        text,
    }
}

pub fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}
