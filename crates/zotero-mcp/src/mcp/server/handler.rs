//! The `ServerHandler`: what each MCP request does, from `initialize` to `tools/call`.

use std::borrow::Cow;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CompletionInfo,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    Reference, ServerCapabilities, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tracing::Instrument;

use super::call::{confirmer, correlation_id, guarded, progress_reporter, tool_result};
use super::log_level::ClientLogLevel;
use super::ZoteroServer;
use crate::error::{ErrorCode, ToolError};
use crate::mcp::surface;
use crate::tools::{ToolContext, ToolName};

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
            // zotero_enable_tools changes a session's listing.
            if let Some(tools) = capabilities.tools.as_mut() {
                tools.list_changed = self.offer.discovers().then_some(true);
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
        Ok(ListToolsResult::with_all_items(self.listed()))
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
        if let Some(tools) = info.capabilities.tools.as_mut() {
            tools.list_changed = None;
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
        *zotero_net::lock(&self.log_level) = Some(ClientLogLevel::from_mcp(request.level));
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

    /// Any tool a call may reach, listed or not: rmcp checks a call's `Mcp-Param-*` headers
    /// against its schema.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let permitted = |t: &Tool| match ToolName::from_name(&t.name) {
            Some(n) => self.offer.refusal(n).is_none(),
            None => true,
        };
        self.all_tools()
            .iter()
            .find(|t| t.name == name && permitted(t))
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == surface::ENABLE_TOOLS {
            return Ok(self
                .enable_tools(request.arguments, &context.peer)
                .await
                .into());
        }
        let Some(tool) = ToolName::from_name(&request.name) else {
            let known: Vec<&str> = ToolName::ALL
                .iter()
                .map(|t| t.name())
                .chain([surface::ENABLE_TOOLS])
                .collect();
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
