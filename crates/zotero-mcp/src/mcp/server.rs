//! The MCP server: the `ServerHandler` that lists the tools it offers (`ZOTERO_TOOLSETS`,
//! `ZOTERO_READ_ONLY`) and runs each call inside a span carrying its `correlation_id`, turning
//! every outcome (a panic, a tool not offered included) into the `{ok, data, error}` envelope.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionInfo, ContentBlock, DiscoverResult, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ServerCapabilities, SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tracing::Instrument;

use crate::config::Config;
use crate::mcp::envelope::{self, ErrorCode, ToolError};
use crate::service::ZoteroService;
use crate::tools::confirm::{ConfirmFn, Confirmation};
use crate::tools::{Definition, Hints, ToolContext, ToolName, ToolSet};
use zotero_api::upload::ProgressFn;

#[derive(Clone)]
pub struct ZoteroServer {
    svc: Arc<ZoteroService>,
    offer: Arc<Offer>,
    /// What `tools/list` answers: the offered tools, built on the first list (not at start:
    /// deriving the schemas would add to the time to `initialize`).
    tools: Arc<std::sync::OnceLock<Vec<Tool>>>,
    /// `ZOTERO_UPLOAD_MAX_BYTES`, which bounds `file_bytes_base64` in the published schema.
    upload_max_bytes: u64,
    /// The library pollers `resources/subscribe` needs, shared by every session.
    watchers: Arc<crate::mcp::subscriptions::Watchers>,
    /// This session's subscriptions.
    subscriptions: Arc<crate::mcp::subscriptions::Subscriptions>,
    /// The least severe `notifications/message` this session asked for with
    /// `logging/setLevel`; none are sent before it asks.
    log_level: Arc<std::sync::Mutex<Option<ClientLogLevel>>>,
    /// Offered where a session outlives a request (stdio); not over stateless HTTP, where
    /// there is no connection to send `notifications/resources/updated` on.
    subscribe: bool,
}

impl ZoteroServer {
    /// The server for this configuration; an error says what could not be set up.
    pub fn new(config: &Config) -> Result<Self, String> {
        Self::with_encoder(config, None)
    }

    /// A server whose search by meaning uses `encoder` (see
    /// [`ZoteroService::with_encoder`]).
    pub fn with_encoder(
        config: &Config,
        encoder: crate::service::index::SharedEncoder,
    ) -> Result<Self, String> {
        let svc = Arc::new(ZoteroService::with_encoder(config, encoder)?);
        let watchers = crate::mcp::subscriptions::Watchers::new(config.subscribe_poll, svc.clone());
        Ok(Self {
            svc,
            offer: Arc::new(Offer::new(config)),
            tools: Arc::default(),
            upload_max_bytes: config.upload_max_bytes,
            subscriptions: Arc::new(crate::mcp::subscriptions::Subscriptions::new(
                watchers.clone(),
            )),
            watchers,
            log_level: Arc::default(),
            subscribe: true,
        })
    }

    /// The server for a new session of a runner with many (Streamable HTTP with sessions):
    /// the same service, tools and library pollers; its own subscriptions and log level.
    pub fn for_session(&self) -> Self {
        Self {
            subscriptions: Arc::new(crate::mcp::subscriptions::Subscriptions::new(
                self.watchers.clone(),
            )),
            log_level: Arc::default(),
            ..self.clone()
        }
    }

    /// Tells the client of this session `data` at `level`, when it asked for that level
    /// (`logging/setLevel`). What is sent is what the tool answer says too: no key, no
    /// file content.
    /// Sent before the answer it is about, so that a stateless HTTP stream still carries it.
    async fn tell(&self, peer: &Peer<RoleServer>, level: ClientLogLevel, data: Value) {
        let wanted = *self.log_level.lock().unwrap_or_else(|e| e.into_inner());
        if wanted.is_none_or(|w| level < w) {
            return;
        }
        // A client that went away does not hear it; nothing else depends on it.
        #[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
        let _ = peer.notify_logging_message(level.message(data)).await;
    }

    /// The server for a runner without sessions (stateless Streamable HTTP): no
    /// `resources/subscribe`.
    pub fn without_subscriptions(mut self) -> Self {
        self.subscribe = false;
        self
    }

    /// What a resource read or list gets: the calls of the tools it reuses, cancelled with
    /// the request; no progress, no questions to the user (nothing is written).
    fn reading_context(&self, cancel: tokio_util::sync::CancellationToken) -> ToolContext {
        ToolContext {
            svc: self.svc.clone(),
            cancel,
            progress: None,
            confirm: None,
        }
    }

    fn tools(&self) -> &[Tool] {
        self.tools.get_or_init(|| {
            self.offer
                .listed()
                .into_iter()
                .map(|t| to_mcp_with(t, self.upload_max_bytes))
                .collect()
        })
    }
}

/// Which tools this server offers (lists, and lets be called): the sets of `ZOTERO_TOOLSETS`,
/// without any tool that writes when `ZOTERO_READ_ONLY` is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    read_only: bool,
    /// Only the desktop app's local API is configured: nothing can be written either.
    local_only: bool,
    sets: BTreeSet<ToolSet>,
}

impl Offer {
    pub fn new(config: &Config) -> Self {
        Self {
            read_only: config.read_only,
            local_only: config.local_only(),
            sets: config.toolsets.clone(),
        }
    }

    /// `None` when `tool` is offered; otherwise the answer to a call of it. Either way
    /// nothing is sent anywhere.
    ///
    /// `ZOTERO_AUTH_ERROR`: the caller is not permitted to use the tool, as with a key that
    /// may not write (Zotero's 403). Not a validation error (no argument would help) and not
    /// "not found" (the tool exists; the message says how to enable it).
    pub fn refusal(&self, tool: ToolName) -> Option<ToolError> {
        let name = tool.name();
        if self.read_only && tool.writes() {
            let e = ToolError::new(
                ErrorCode::Auth,
                format!(
                    "{name} changes the library, and read-only mode is on (ZOTERO_READ_ONLY=1); \
                     to allow changes, unset ZOTERO_READ_ONLY (or set it to 0) and restart the server"
                ),
            );
            return Some(e.with_detail("variable", "ZOTERO_READ_ONLY"));
        }
        if self.local_only && tool.writes() {
            let e = ToolError::new(
                ErrorCode::Auth,
                format!(
                    "{name} changes the library, and this server reads through the Zotero desktop \
                     app's local API (ZOTERO_LOCAL=1) or Zotero's database (ZOTERO_DATA_DIR) \
                     only, which it uses read-only; set \
                     ZOTERO_API_KEY and ZOTERO_USER_ID (https://www.zotero.org/settings/keys) \
                     and restart the server to write through the Web API"
                ),
            );
            return Some(e.with_detail("missing", vec!["ZOTERO_API_KEY", "ZOTERO_USER_ID"]));
        }
        let set = tool.set();
        if !self.sets.contains(&set) {
            let sets: Vec<&str> = self.sets.iter().map(|s| s.name()).collect();
            let e = ToolError::new(
                ErrorCode::Auth,
                format!(
                    "{name} is in the tool set '{}', which ZOTERO_TOOLSETS ({}) leaves out; \
                     add {} to ZOTERO_TOOLSETS and restart the server to use it",
                    set.name(),
                    sets.join(","),
                    set.name()
                ),
            );
            return Some(
                e.with_detail("variable", "ZOTERO_TOOLSETS")
                    .with_detail("tool_set", set.name()),
            );
        }
        None
    }

    /// The offered tools, in the table's order.
    pub fn listed(&self) -> Vec<ToolName> {
        ToolName::ALL
            .iter()
            .copied()
            .filter(|t| self.refusal(*t).is_none())
            .collect()
    }

    /// The `instructions` of `initialize`: what the offered tools are for, by set.
    pub fn instructions(&self) -> String {
        let listed = self.listed();
        let mut text = String::from(
            "Tools for the user's Zotero libraries (their own, and groups: see zotero_list_libraries; pass library to choose one).",
        );
        for set in ToolSet::ALL {
            let names: Vec<&str> = listed
                .iter()
                .filter(|t| t.set() == set)
                .map(|t| t.name())
                .collect();
            if !names.is_empty() {
                text.push_str(&format!(" To {}: {}.", set.purpose(), names.join(", ")));
            }
        }
        if self.read_only {
            text.push_str(" Read-only mode is on: nothing can be changed.");
        } else if self.local_only {
            text.push_str(
                " Reading through the Zotero desktop app or its database only: nothing can be changed.",
            );
        }
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        text.push_str(&format!(
            " Every tool answers {{ok, data, error}}; error.code is one of {}.",
            codes.join(", ")
        ));
        text
    }
}

/// Progress notifications for one call, sent in order by one task.
/// What a tool's progress counts: bytes for uploads, objects for the others.
fn progress_message(tool: ToolName, done: u64, total: u64) -> String {
    if tool.set() == ToolSet::Files {
        format!("uploaded {done} of {total} bytes")
    } else {
        format!("{done} of {total} done")
    }
}

fn progress_reporter(peer: Peer<RoleServer>, token: ProgressToken, tool: ToolName) -> ProgressFn {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, u64)>();
    tokio::spawn(
        async move {
            while let Some((done, total)) = rx.recv().await {
                let mut p = ProgressNotificationParam::new(token.clone(), done as f64);
                p.total = Some(total as f64);
                p.message = Some(progress_message(tool, done, total));
                if peer.notify_progress(p).await.is_err() {
                    break;
                }
            }
        }
        .in_current_span(),
    );
    Arc::new(move |done, total| {
        let _ = tx.send((done, total));
    })
}

/// A yes/no question to the user, when the client declared form elicitation.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead with this change?
    confirm: bool,
}
rmcp::elicit_safe!(Confirm);

/// How long the user has to answer before the change is called off.
const CONFIRM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Asks the client's user through MCP elicitation; `None` when the client cannot be asked.
fn confirmer(peer: &Peer<RoleServer>) -> Option<ConfirmFn> {
    // From 2026-07-28 a server may not send requests to the client (it would answer
    // `InputRequiredResult` instead, which this server does not do yet): not asked.
    let forbids = peer
        .peer_info()
        .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28);
    if forbids
        || !peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
    {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |question: String| {
        let peer = peer.clone();
        Box::pin(async move {
            use rmcp::service::ElicitationError as E;
            match peer
                .elicit_with_timeout::<Confirm>(question, Some(CONFIRM_TIMEOUT))
                .await
            {
                Ok(Some(Confirm { confirm: true })) => Confirmation::Confirmed,
                Ok(_) => Confirmation::Declined("the user did not confirm".into()),
                Err(E::UserDeclined) => Confirmation::Declined("the user declined".into()),
                Err(E::UserCancelled) => {
                    Confirmation::Declined("the user dismissed the question".into())
                }
                Err(E::CapabilityNotSupported) => Confirmation::NotAsked,
                Err(e) => Confirmation::Declined(format!("the question could not be asked: {e}")),
            }
        })
    }))
}

/// Every tool as `tools/list` publishes it, offered or not (`zotero-mcp tools --json`, the
/// registry's list).
pub fn tool_definitions() -> Vec<Tool> {
    ToolName::ALL.iter().copied().map(to_mcp).collect()
}

fn to_mcp(tool: ToolName) -> Tool {
    to_mcp_with(tool, crate::tools::params::DEFAULT_UPLOAD_MAX_BYTES)
}

/// The tool as MCP lists it, with the base64 bound of this server's upload limit.
fn to_mcp_with(tool: ToolName, upload_max_bytes: u64) -> Tool {
    let Definition {
        name,
        title,
        description,
        mut input_schema,
        output_schema,
        hints,
    } = tool.definition();
    if let Some(Value::Object(b64)) = input_schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("file_bytes_base64"))
    {
        b64.insert(
            "maxLength".into(),
            Value::from(crate::tools::params::base64_len(upload_max_bytes)),
        );
    }
    Tool::new_with_raw(
        name,
        Some(Cow::Borrowed(description)),
        Arc::new(input_schema),
    )
    .with_title(title)
    .with_raw_output_schema(Arc::new(output_schema))
    .with_annotations(annotations(hints))
}

/// The hints as MCP annotations, leaving out what the spec's defaults already say
/// (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint`
/// true; the destructive and idempotent hints mean something only for a tool that writes),
/// since every byte of `tools/list` is paid for in the agent's context. No title either:
/// the tool's own `title` says it.
pub fn annotations(hints: Hints) -> ToolAnnotations {
    let mut a = ToolAnnotations::new();
    if hints.read_only {
        a = a.read_only(true);
    } else {
        a = a.destructive(hints.destructive);
        if hints.idempotent {
            a = a.idempotent(true);
        }
    }
    if !hints.open_world {
        a = a.open_world(false);
    }
    a
}

/// A failed `resources/read` names the URI asked for in `data.uri` (SEP-2164), quoted within
/// the bound of every echoed argument.
fn naming_uri(mut e: McpError, uri: &str) -> McpError {
    let uri = Value::String(crate::tools::params::quote(uri));
    match e.data.as_mut() {
        Some(Value::Object(data)) => {
            data.insert("uri".into(), uri);
        }
        _ => e.data = Some(serde_json::json!({ "uri": uri })),
    }
    e
}

/// A short random id that ties together every log line of one tool call.
fn correlation_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

impl ServerHandler for ZoteroServer {
    #[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        if self.subscribe {
            if let Some(resources) = capabilities.resources.as_mut() {
                resources.subscribe = Some(true);
            }
        }
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("zotero-mcp", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(self.offer.instructions())
    }

    /// Protocol versions from 2025-03-26 on.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .filter(|v| v.as_str() >= ProtocolVersion::V_2025_03_26.as_str())
                .cloned()
                .collect(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools().to_vec()))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let ctx = self.reading_context(context.ct.clone());
        let cursor = request.and_then(|r| r.cursor);
        Ok(crate::mcp::resources::list(cursor.as_deref(), &ctx).await?)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            crate::mcp::resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let ctx = self.reading_context(context.ct.clone());
        let span = tracing::info_span!(
            "resource_read",
            correlation_id = %correlation_id(),
            uri = %crate::tools::params::quote(&request.uri)
        );
        let result = crate::mcp::resources::read(&request.uri, &ctx)
            .instrument(span)
            .await;
        match result {
            Ok(read) => Ok(read.into()),
            Err(e) => Err(naming_uri(e.into(), &request.uri)),
        }
    }

    /// As rmcp's, without `resources.subscribe`: the 2026-07-28 lifecycle subscribes with
    /// `subscriptions/listen`, which this server does not serve (rmcp refuses
    /// `resources/subscribe` to such requests), so it must not claim the capability there.
    /// `initialize` (the older revisions, with a session) still offers it.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        let mut info = self.get_info();
        if let Some(resources) = info.capabilities.resources.as_mut() {
            resources.subscribe = None;
        }
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    /// Item and collection keys for the prompts' `item_key` and `collection_key` and the
    /// templates' `{key}`; nothing for other arguments.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        use crate::mcp::resources::Completable;
        let what = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Prompt(_), "item_key") => Some(Completable::Item),
            (Reference::Prompt(_), "collection_key") => Some(Completable::Collection),
            (Reference::Resource(r), "key") if r.uri.contains("/collections/") => {
                Some(Completable::Collection)
            }
            (Reference::Resource(r), "key") if r.uri.contains("/items/") => Some(Completable::Item),
            _ => None,
        };
        let Some(what) = what else {
            return Ok(CompleteResult::default());
        };
        let library = request
            .context
            .as_ref()
            .and_then(|c| c.arguments.as_ref())
            .and_then(|a| a.get("library"))
            .and_then(|l| l.replace("%3A", ":").replace("%3a", ":").parse().ok())
            .unwrap_or(self.svc.default_library);
        let ctx = self.reading_context(context.ct.clone());
        let values =
            crate::mcp::resources::complete(what, &request.argument.value, library, &ctx).await?;
        let info = CompletionInfo::with_all_values(values)
            .map_err(|e| McpError::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.subscribe {
            return Err(McpError::invalid_request(
                "resources/subscribe needs a session: this server runs stateless HTTP; poll the resource, or use stdio",
                None,
            ));
        }
        self.subscriptions
            .subscribe(&request.uri, context.peer.clone())
            .await?;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    /// `logging/setLevel`: from now on this session hears of each tool call at `info`
    /// (tool, time taken) and of each failure at `warning` (`error` for internal ones).
    #[allow(deprecated)] // logging is part of every protocol version before 2026-07-28
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(ClientLogLevel::from_mcp(request.level));
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(
            crate::mcp::prompts::list(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let result =
            crate::mcp::prompts::get(&request.name, request.arguments, self.svc.default_library)?;
        Ok(result.into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = ToolName::from_name(&request.name) else {
            let known: Vec<&str> = ToolName::ALL.iter().map(|t| t.name()).collect();
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool '{}'; known tools: {}",
                    crate::tools::params::quote(&request.name),
                    known.join(", ")
                ),
                None,
            ));
        };
        let name = tool.name();
        if let Some(refusal) = self.offer.refusal(tool) {
            tracing::info!(
                tool = name,
                code = refusal.code.as_str(),
                "tool not offered"
            );
            return Ok(tool_result(Err(refusal)).into());
        }
        let span =
            tracing::info_span!("tool_call", correlation_id = %correlation_id(), tool = name);
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| progress_reporter(context.peer.clone(), token, tool));
        let ctx = ToolContext {
            svc: self.svc.clone(),
            cancel: context.ct.clone(),
            progress,
            confirm: confirmer(&context.peer),
        };
        let arguments = request.arguments;
        let call = async move {
            let started = Instant::now();
            tracing::info!("tool call started");
            let result = tool.call(&ctx, arguments).await.map_err(ToolError::bounded);
            let elapsed_ms = started.elapsed().as_millis() as u64;
            match &result {
                Ok(_) => tracing::info!(ok = true, elapsed_ms, "tool call finished"),
                Err(e) => tracing::info!(
                    ok = false, elapsed_ms, code = e.code.as_str(), error = %e.message,
                    "tool call finished"
                ),
            }
            result
        }
        .instrument(span.clone());

        let started = Instant::now();
        let result = guarded(name, call).await;
        if let Err(e) = &result {
            if e.code == ErrorCode::Internal {
                tracing::error!(parent: &span, "tool call aborted");
            }
        }
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let (level, data) = match &result {
            Ok(_) => (
                ClientLogLevel::Info,
                serde_json::json!({"tool": name, "ok": true, "elapsed_ms": elapsed_ms}),
            ),
            Err(e) => (
                if e.code == ErrorCode::Internal {
                    ClientLogLevel::Error
                } else {
                    ClientLogLevel::Warning
                },
                serde_json::json!({
                    "tool": name, "ok": false, "elapsed_ms": elapsed_ms,
                    "code": e.code.as_str(), "message": e.message,
                }),
            ),
        };
        self.tell(&context.peer, level, data).await;
        Ok(tool_result(result).into())
    }
}

/// The severities of MCP's `notifications/message`, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClientLogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

#[allow(deprecated)] // rmcp deprecates logging with the 2026-07-28 protocol
impl ClientLogLevel {
    fn from_mcp(level: rmcp::model::LoggingLevel) -> Self {
        use rmcp::model::LoggingLevel as L;
        match level {
            L::Debug => Self::Debug,
            L::Info => Self::Info,
            L::Notice => Self::Notice,
            L::Warning => Self::Warning,
            L::Error => Self::Error,
            L::Critical => Self::Critical,
            L::Alert => Self::Alert,
            L::Emergency => Self::Emergency,
        }
    }

    fn message(self, data: Value) -> rmcp::model::LoggingMessageNotificationParam {
        use rmcp::model::LoggingLevel as L;
        let level = match self {
            Self::Debug => L::Debug,
            Self::Info => L::Info,
            Self::Notice => L::Notice,
            Self::Warning => L::Warning,
            Self::Error => L::Error,
            Self::Critical => L::Critical,
            Self::Alert => L::Alert,
            Self::Emergency => L::Emergency,
        };
        rmcp::model::LoggingMessageNotificationParam::new(level, data).with_logger("zotero-mcp")
    }
}

/// Runs a tool call in its own task: a panic inside it ends that task only, the caller gets
/// a `ZOTERO_INTERNAL_ERROR` envelope and the server keeps serving.
pub async fn guarded<F>(name: &str, call: F) -> Result<Value, ToolError>
where
    F: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    match tokio::spawn(call).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::new(
            ErrorCode::Internal,
            format!("{name} failed inside the server; the server is still running"),
        )),
    }
}

/// The envelope as structured content, the same JSON as text, and `isError` when not ok.
pub fn tool_result(result: Result<Value, ToolError>) -> CallToolResult {
    let (envelope, is_error) = match &result {
        Ok(data) => (envelope::ok(data.clone()), false),
        Err(e) => (envelope::err(e), true),
    };
    let text = envelope.to_string();
    let mut out = CallToolResult::success(vec![ContentBlock::text(text)]);
    out.structured_content = Some(envelope);
    out.is_error = Some(is_error);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(vars: &[(&str, &str)]) -> Offer {
        let env = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Offer::new(&Config::from_map(&env).unwrap())
    }

    fn names(tools: &[ToolName]) -> Vec<&'static str> {
        tools.iter().map(|t| t.name()).collect()
    }

    #[test]
    fn by_default_every_tool_is_offered() {
        let o = offer(&[]);
        assert_eq!(o.listed(), ToolName::ALL.to_vec());
        let text = o.instructions();
        for t in ToolName::ALL {
            assert!(text.contains(t.name()), "{text}");
        }
        assert!(!text.contains("read-only"), "{text}");
    }

    #[test]
    fn read_only_mode_offers_no_tool_that_writes() {
        let o = offer(&[("ZOTERO_READ_ONLY", "1")]);
        assert_eq!(
            names(&o.listed()),
            [
                "zotero_search_items",
                "zotero_list_collections",
                "zotero_get_item",
                "zotero_get_sort_values",
                "zotero_list_libraries",
                "zotero_list_items",
                "zotero_list_tags",
                "zotero_get_item_fulltext",
                "zotero_get_item_metadata",
                "zotero_cite",
                "zotero_export",
                "zotero_get_item_children",
                "zotero_get_notes",
                "zotero_get_annotations",
                // The index set writes only the local search index.
                "zotero_semantic_search",
                "zotero_get_search_database_status",
                "zotero_update_search_database"
            ]
        );
        for t in ToolName::ALL.iter().filter(|t| t.writes()) {
            let e = o.refusal(*t).unwrap();
            assert_eq!(e.code, ErrorCode::Auth);
            assert!(e.message.contains("read-only mode is on"), "{}", e.message);
            assert!(
                e.message.contains("unset ZOTERO_READ_ONLY"),
                "{}",
                e.message
            );
            assert_eq!(e.details["variable"], "ZOTERO_READ_ONLY");
        }
        let text = o.instructions();
        assert!(text.contains("Read-only mode is on"), "{text}");
        assert!(!text.contains("zotero_create_item"), "{text}");
        // Read-only wins over a tool set that asks for writes.
        let o = offer(&[("ZOTERO_READ_ONLY", "true"), ("ZOTERO_TOOLSETS", "write")]);
        assert!(o.listed().is_empty());
    }

    #[test]
    fn the_local_api_alone_offers_no_tool_that_writes() {
        let o = offer(&[("ZOTERO_LOCAL", "1")]);
        assert!(o.listed().iter().all(|t| !t.writes()));
        assert!(o.listed().contains(&ToolName::ListLibraries));
        let e = o.refusal(ToolName::CreateItem).unwrap();
        assert_eq!(e.code, ErrorCode::Auth);
        assert!(e.message.contains("ZOTERO_LOCAL=1"), "{}", e.message);
        assert!(e.message.contains("ZOTERO_API_KEY"), "{}", e.message);
        // With the Web API's credentials as well, everything is offered.
        let o = offer(&[
            ("ZOTERO_LOCAL", "1"),
            ("ZOTERO_API_KEY", "k"),
            ("ZOTERO_USER_ID", "1"),
        ]);
        assert_eq!(o.listed(), ToolName::ALL.to_vec());
    }

    #[test]
    fn tool_sets_choose_what_is_offered() {
        let o = offer(&[("ZOTERO_TOOLSETS", "read,files")]);
        assert_eq!(
            names(&o.listed()),
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
        let e = o.refusal(ToolName::CreateItem).unwrap();
        assert_eq!(e.code, ErrorCode::Auth);
        assert!(e.message.contains("'write'"), "{}", e.message);
        assert!(
            e.message.contains("ZOTERO_TOOLSETS (read,files)"),
            "{}",
            e.message
        );
        assert_eq!(e.details["tool_set"], "write");
        let text = o.instructions();
        assert!(text.contains("zotero_attach_arxiv_pdf"), "{text}");
        assert!(!text.contains("zotero_add_item_to_collection"), "{text}");
    }

    #[tokio::test]
    async fn a_panicking_tool_becomes_an_internal_error_envelope() {
        let r = guarded("zotero_boom", async {
            if std::hint::black_box(true) {
                panic!("boom");
            }
            Ok(Value::Null)
        })
        .await;
        let e = r.unwrap_err();
        assert_eq!(e.code, ErrorCode::Internal);
        assert!(e.message.contains("zotero_boom"));
        let out = tool_result(Err(e));
        assert_eq!(out.is_error, Some(true));
        assert_eq!(
            out.structured_content.unwrap()["error"]["code"],
            "ZOTERO_INTERNAL_ERROR"
        );
        // The runtime is still fine after the panic.
        let ok = guarded("zotero_fine", async { Ok(Value::Bool(true)) }).await;
        assert_eq!(ok.unwrap(), Value::Bool(true));
    }
}
