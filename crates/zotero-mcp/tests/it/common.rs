//! Test harness: the server driven with rmcp's MCP client, either in this process over an
//! in-memory pipe (`in_process`: most tool tests and the property tests) or as the BUILT binary
//! over stdio (`spawn`: stdio itself, the CLI, exit codes and the JSON log lines on stderr).
//! Every answer that goes through [`Server::call`] (or [`Server::check_output`]) is checked
//! against the output schema its tool publishes in `tools/list`.
use std::collections::HashMap;
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

/// A running server and what it has written to stderr so far (a spawned binary only).
pub struct Server {
    pub client: RunningService<RoleClient, TestClient>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// The in-process server's task, ended with the test.
    _task: Option<ServerTask>,
    /// The output schema of each listed tool, compiled on first use.
    output_schemas: tokio::sync::OnceCell<HashMap<String, jsonschema::Validator>>,
}

/// Aborts the in-process server when the test's `Server` goes.
struct ServerTask(tokio::task::JoinHandle<()>);

impl Drop for ServerTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts the server in this process with exactly these variables, connected to the client
/// through an in-memory pipe: the same handler the binary serves on stdio, without a process.
pub async fn in_process(env: &[(String, String)]) -> Server {
    in_process_as(env, TestClient::default()).await
}

/// How the test client answers a server's question (MCP elicitation): given the question,
/// the action and content it sends back.
pub type Answerer = Arc<dyn Fn(&str) -> rmcp::model::ElicitResult + Send + Sync>;

/// The MCP client of the tests: without an `answerer` it declares no elicitation (like most
/// clients); with one it declares form elicitation and answers with it, keeping each question.
#[derive(Clone, Default)]
pub struct TestClient {
    pub answerer: Option<Answerer>,
    pub asked: Arc<Mutex<Vec<String>>>,
    /// The URIs of `notifications/resources/updated` received, in order.
    pub updated: Arc<Mutex<Vec<String>>>,
    /// The `notifications/message` received (level, logger, data), in order.
    pub logged: Arc<Mutex<Vec<serde_json::Value>>>,
    /// How many `notifications/tools/list_changed` were received.
    pub tools_changed: Arc<std::sync::atomic::AtomicUsize>,
}

// Used by the write tools' tests of confirmation.
#[allow(dead_code)]
impl TestClient {
    /// A client whose user answers every question with `accept` and `{"confirm": yes}`.
    pub fn confirming(yes: bool) -> Self {
        Self::answering(Arc::new(move |_| {
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(serde_json::json!({ "confirm": yes }))
        }))
    }

    pub fn answering(answerer: Answerer) -> Self {
        Self {
            answerer: Some(answerer),
            asked: Arc::default(),
            updated: Arc::default(),
            logged: Arc::default(),
            tools_changed: Arc::default(),
        }
    }

    /// The questions asked so far.
    pub fn questions(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl rmcp::ClientHandler for TestClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        if self.answerer.is_some() {
            info.capabilities.elicitation = Some(
                rmcp::model::ElicitationCapability::new()
                    .with_form(rmcp::model::FormElicitationCapability::default()),
            );
        }
        info
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    #[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.logged
            .lock()
            .unwrap()
            .push(serde_json::to_value(params).unwrap());
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let message = match &request {
            rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } => {
                message.clone()
            }
            _ => String::new(),
        };
        self.asked.lock().unwrap().push(message.clone());
        Ok(match &self.answerer {
            Some(answer) => answer(&message),
            None => rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Decline),
        })
    }
}

/// The emulator with its fixture library and the server pointed at it, in this process.
pub async fn setup() -> (zotero_emulator::Emulator, Server) {
    let emu = zotero_emulator::Emulator::start().await;
    let server = in_process(&env_for(
        &emu.uri(),
        zotero_emulator::USER_ID,
        zotero_emulator::API_KEY,
    ))
    .await;
    (emu, server)
}

/// The requests that reached the web API other than reads, as `METHOD path`.
pub fn writes(emu: &zotero_emulator::Emulator) -> Vec<String> {
    emu.requests()
        .iter()
        .filter(|r| r.method != "GET" && r.method != "HEAD")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

/// [`in_process`] with this client.
pub async fn in_process_as(env: &[(String, String)], test_client: TestClient) -> Server {
    in_process_full(env, test_client, None).await
}

/// [`in_process`] with a sentence encoder for search by meaning (the hook the model crate
/// will use; tests give `zotero_index::SynonymEncoder`).
#[allow(dead_code)]
pub async fn in_process_with_encoder(
    env: &[(String, String)],
    encoder: Option<Arc<dyn zotero_index::Encoder>>,
) -> Server {
    in_process_full(env, TestClient::default(), encoder).await
}

/// [`in_process`] with the configuration changed after it is read: what no variable can set
/// (the address guard's test policy).
#[allow(dead_code)]
pub async fn in_process_configured(
    env: &[(String, String)],
    change: impl FnOnce(&mut zotero_mcp::config::Config),
) -> Server {
    let vars: HashMap<String, String> = env.iter().cloned().collect();
    let mut config = zotero_mcp::config::Config::from_map(&vars).expect("configuration");
    change(&mut config);
    serve_config(config, TestClient::default(), None).await
}

async fn in_process_full(
    env: &[(String, String)],
    test_client: TestClient,
    encoder: Option<Arc<dyn zotero_index::Encoder>>,
) -> Server {
    let vars: HashMap<String, String> = env.iter().cloned().collect();
    let config = zotero_mcp::config::Config::from_map(&vars).expect("configuration");
    serve_config(config, test_client, encoder).await
}

/// [`in_process`] with attachment files read by `documents` (the tests of annotations give
/// the documents their PDFs would be).
#[allow(dead_code)]
pub async fn in_process_with_documents(
    env: &[(String, String)],
    documents: Arc<dyn zotero_mcp::service::annotations::DocumentSource>,
) -> Server {
    let vars: HashMap<String, String> = env.iter().cloned().collect();
    let config = zotero_mcp::config::Config::from_map(&vars).expect("configuration");
    let mut svc = zotero_mcp::service::ZoteroService::with_encoder(&config, None).expect("service");
    svc.documents = Some(documents);
    let handler = zotero_mcp::mcp::server::ZoteroServer::from_service(&config, svc);
    serve_handler(handler, TestClient::default()).await
}

async fn serve_config(
    config: zotero_mcp::config::Config,
    test_client: TestClient,
    encoder: Option<Arc<dyn zotero_index::Encoder>>,
) -> Server {
    let handler =
        zotero_mcp::mcp::server::ZoteroServer::with_encoder(&config, encoder).expect("server");
    serve_handler(handler, test_client).await
}

async fn serve_handler(
    handler: zotero_mcp::mcp::server::ZoteroServer,
    test_client: TestClient,
) -> Server {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = test_client.serve(client_io).await.expect("MCP initialize");
    Server {
        client,
        stderr: Arc::new(Mutex::new(Vec::new())),
        _task: Some(ServerTask(task)),
        output_schemas: tokio::sync::OnceCell::new(),
    }
}

/// The environment that points the server at an emulator, with quick retries; the number
/// of attempts (3) is set here because fault counts in the tests are written against it.
pub fn env_for(base: &str, user_id: u64, key: &str) -> Vec<(String, String)> {
    vec![
        ("ZOTERO_API_BASE".into(), base.into()),
        ("ZOTERO_USER_ID".into(), user_id.to_string()),
        ("ZOTERO_API_KEY".into(), key.into()),
        ("ZOTERO_RETRY_BASE_DELAY".into(), "0.01".into()),
        ("ZOTERO_RETRY_MAX_DELAY".into(), "0.05".into()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS".into(), "3".into()),
        // No sentence model unless a test serves one: the default would be fetched from
        // huggingface.co, and tests never reach the internet.
        ("ZOTERO_EMBEDDING_MODEL".into(), "none".into()),
    ]
}

/// Starts the binary with exactly these variables (nothing inherited but PATH).
pub async fn spawn(env: &[(String, String)]) -> Server {
    spawn_as(env, None).await
}

/// Like [`spawn`], as the user `uid` (its group too) when given: tests of file permissions,
/// which the superuser would pass through, run the server as `nobody` when they run as root.
pub async fn spawn_as(env: &[(String, String)], uid: Option<u32>) -> Server {
    spawn_with(env, uid, TestClient::default()).await
}

/// Like [`spawn_as`], with this test client (to see what the server sends unasked).
pub async fn spawn_with(env: &[(String, String)], uid: Option<u32>, client: TestClient) -> Server {
    let mut cmd = tokio::process::Command::new(BIN);
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
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
    let client = client.serve(transport).await.expect("MCP initialize");
    Server {
        client,
        stderr: lines,
        _task: None,
        output_schemas: tokio::sync::OnceCell::new(),
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
    /// Calls `tool`; the answer has the envelope's shape and matches the tool's output schema.
    pub async fn call(&self, tool: &str, args: Value) -> Answer {
        let result = self.call_raw(tool, args).await.expect("tools/call");
        let answer = to_answer(result);
        self.check_output(tool, &answer).await;
        answer
    }

    /// Panics unless the answer's structured content matches the output schema `tool`
    /// publishes in `tools/list` (every answer, failures included: the schema describes the
    /// whole envelope).
    pub async fn check_output(&self, tool: &str, answer: &Answer) {
        let errors = self.output_errors(tool, &answer.envelope).await;
        assert!(
            errors.is_empty(),
            "{tool}: the answer does not match the published output schema: {errors:?}\n{}",
            answer.envelope
        );
    }

    /// Where `envelope` departs from `tool`'s published output schema: as listed, or for a
    /// tool the server permits without listing it (the default surface), as `tools --json`
    /// publishes it.
    pub async fn output_errors(&self, tool: &str, envelope: &Value) -> Vec<String> {
        let schemas = self
            .output_schemas
            .get_or_init(|| async {
                let mut tools = self.tools().await;
                for t in zotero_mcp::mcp::server::tool_definitions() {
                    if !tools.iter().any(|l| l.name == t.name) {
                        tools.push(t);
                    }
                }
                tools
                    .into_iter()
                    .map(|t| {
                        let schema =
                            Value::Object((*t.output_schema.expect("an output schema")).clone());
                        let validator = jsonschema::draft202012::new(&schema).unwrap_or_else(|e| {
                            panic!("{}: output schema does not compile: {e}", t.name)
                        });
                        (t.name.to_string(), validator)
                    })
                    .collect()
            })
            .await;
        let Some(validator) = schemas.get(tool) else {
            return Vec::new();
        };
        validator
            .iter_errors(envelope)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
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

/// What a raw JSON-RPC session printed: every stdout line and every stderr line.
pub struct RawSession {
    pub responses: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
    pub status: std::process::ExitStatus,
}

/// Speaks raw JSON-RPC to the binary: sends `initialize` (with `protocol`), the
/// `initialized` notification, then `requests` (each gets id 2, 3, ...), waits for every
/// answer, closes stdin and collects everything the process printed.
pub fn raw_session(env: &[(String, String)], protocol: &str, requests: &[Value]) -> RawSession {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut cmd = std::process::Command::new(BIN);
    cmd.env_clear();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let send = |stdin: &mut std::process::ChildStdin, v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion": protocol, "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
    );
    let mut reader = BufReader::new(stdout);
    let mut stdout_text = String::new();
    let mut responses = Vec::new();
    let mut read_until = |id: u64, reader: &mut BufReader<std::process::ChildStdout>| loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("server closed stdout before answering id {id}");
        }
        stdout_text.push_str(&line);
        let v: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
        if v["id"] == id {
            responses.push(v);
            return;
        }
    };
    read_until(1, &mut reader);
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    for (i, r) in requests.iter().enumerate() {
        let id = i as u64 + 2;
        let mut msg = r.clone();
        msg["jsonrpc"] = "2.0".into();
        msg["id"] = id.into();
        send(&mut stdin, msg);
        read_until(id, &mut reader);
    }
    drop(stdin);
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    stdout_text.push_str(&rest);
    let status = child.wait().unwrap();
    RawSession {
        responses,
        stdout: stdout_text,
        stderr: err_thread.join().unwrap(),
        status,
    }
}

pub fn tool_call(name: &str, args: Value) -> Value {
    serde_json::json!({"method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// The backend a write-path test runs against: the web API, or Zotero 10's local API (the
/// emulator's `DesktopRelease::Zotero10` with a granted key; the web credentials stay set,
/// so `ZOTERO_WRITE_BACKEND=auto` must pick the desktop). Write-path tests take one and run
/// on both ([`on_both_backends!`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Web,
    Local,
}

#[allow(dead_code)]
impl Backend {
    /// The emulator and the server's variables for this backend.
    pub async fn start(self) -> (zotero_emulator::Emulator, Vec<(String, String)>) {
        let emu = zotero_emulator::Emulator::start().await;
        let mut env = env_for(
            &emu.uri(),
            zotero_emulator::USER_ID,
            zotero_emulator::API_KEY,
        );
        if self == Backend::Local {
            emu.set_desktop_release(zotero_emulator::DesktopRelease::Zotero10);
            let key = emu.grant_local_key("zotero-mcp", true);
            env.push(("ZOTERO_LOCAL".into(), "1".into()));
            env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
            env.push(("ZOTERO_LOCAL_API_KEY".into(), key));
        }
        (emu, env)
    }

    /// [`setup`] on this backend.
    pub async fn setup(self) -> (zotero_emulator::Emulator, Server) {
        let (emu, env) = self.start().await;
        let server = in_process(&env).await;
        (emu, server)
    }

    /// The requests the backend received, with paths as the web API names them
    /// (`/users/{USER_ID}/…`), so one assertion fits both.
    pub fn requests(self, emu: &zotero_emulator::Emulator) -> Vec<zotero_emulator::Recorded> {
        match self {
            Backend::Web => emu.requests(),
            Backend::Local => emu
                .local_requests()
                .into_iter()
                .filter(|r| !r.path.starts_with("/api/local/"))
                .map(|mut r| {
                    let rest = r.path.strip_prefix("/api").unwrap_or(&r.path).to_string();
                    r.path = match rest.strip_prefix("/users/0") {
                        Some(tail) => format!("/users/{}{tail}", zotero_emulator::USER_ID),
                        None => rest,
                    };
                    r
                })
                .collect(),
        }
    }

    /// The writes the backend received, as `METHOD path` ([`writes`] for both).
    pub fn writes(self, emu: &zotero_emulator::Emulator) -> Vec<String> {
        self.requests(emu)
            .iter()
            .filter(|r| r.method != "GET" && r.method != "HEAD")
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// A fault aimed at this backend (its path filter rewritten to the desktop's paths).
    pub fn fault(self, mut f: zotero_emulator::Fault) -> zotero_emulator::Fault {
        if self == Backend::Web {
            return f;
        }
        let user = format!("/users/{}", zotero_emulator::USER_ID);
        f.path_prefix = f.path_prefix.map(|p| match p.strip_prefix(&user) {
            Some(tail) => format!("/api/users/0{tail}"),
            None => format!("/api{p}"),
        });
        f.local()
    }
}

/// Runs a write-path test `async fn name(backend: Backend)` once per backend: the tests
/// `name::web` and `name::local`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn web() {
                super::$name($crate::common::Backend::Web).await
            }
            #[tokio::test]
            async fn local() {
                super::$name($crate::common::Backend::Local).await
            }
        }
    )+};
}
