//! The MCP server: the `ServerHandler` that lists the tools it offers (`ZOTERO_TOOLSETS`,
//! `ZOTERO_READ_ONLY`) and runs each call inside a span carrying its `correlation_id`, turning
//! every outcome (a panic, a tool not offered included) into the `{ok, data, error}` envelope.

mod call;
mod handler;
mod listing;
mod log_level;

use std::sync::Arc;

use rmcp::model::{CallToolResult, ProtocolVersion, Tool};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;

pub use self::call::{guarded, tool_result};
use self::listing::to_mcp_with;
pub use self::listing::{annotations, definition_to_mcp, tool_definitions};
pub use self::log_level::ClientLogLevel;
use crate::config::Config;
pub use crate::mcp::surface::Offer;
use crate::mcp::surface::{self, Enabled};
use crate::service::{SetupError, ZoteroService};
use crate::tools::{ToolContext, ToolName};

#[derive(Clone)]
pub struct ZoteroServer {
    svc: Arc<ZoteroService>,
    offer: Arc<Offer>,
    /// Every tool as this server lists it (`zotero_enable_tools` last), built on the first
    /// list (not at start: deriving the schemas would add to the time to `initialize`).
    tools: Arc<std::sync::OnceLock<Vec<Tool>>>,
    /// The families this session enabled with `zotero_enable_tools`.
    enabled: Arc<Enabled>,
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
    pub fn new(config: &Config) -> Result<Self, SetupError> {
        Self::with_encoder(config, None)
    }

    /// A server whose search by meaning uses `encoder` (see
    /// [`ZoteroService::with_encoder`]).
    pub fn with_encoder(
        config: &Config,
        encoder: crate::service::index::SharedEncoder,
    ) -> Result<Self, SetupError> {
        Ok(Self::from_service(
            config,
            ZoteroService::with_encoder(config, encoder)?,
        ))
    }

    /// A server around a service built by the caller (tests give it their own
    /// [`crate::service::annotations::DocumentSource`]).
    pub fn from_service(config: &Config, svc: ZoteroService) -> Self {
        let svc = Arc::new(svc);
        let watchers =
            crate::mcp::subscriptions::Watchers::new(config.zotero.subscribe_poll, svc.clone());
        Self {
            svc,
            offer: Arc::new(Offer::new(config)),
            tools: Arc::default(),
            enabled: Arc::default(),
            upload_max_bytes: config.uploads.max_bytes,
            subscriptions: Arc::new(crate::mcp::subscriptions::Subscriptions::new(
                watchers.clone(),
            )),
            watchers,
            log_level: Arc::default(),
            subscribe: true,
        }
    }

    /// The server for a new session of a runner with many (Streamable HTTP with sessions):
    /// the same service, tools and library pollers; its own subscriptions, log level and
    /// enabled tool families.
    pub fn for_session(&self) -> Self {
        Self {
            enabled: Arc::default(),
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
        let wanted = *zotero_net::lock(&self.log_level);
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

    /// Every tool, as listed: [`ToolName::ALL`]'s order, then `zotero_enable_tools`.
    fn all_tools(&self) -> &[Tool] {
        self.tools.get_or_init(|| {
            ToolName::ALL
                .iter()
                .map(|t| to_mcp_with(*t, self.upload_max_bytes))
                .chain([definition_to_mcp(surface::definition())])
                .collect()
        })
    }

    fn tool(&self, tool: ToolName) -> Tool {
        self.all_tools()
            .iter()
            .find(|t| t.name == tool.name())
            .cloned()
            .unwrap_or_else(|| to_mcp_with(tool, self.upload_max_bytes))
    }

    /// What `tools/list` shows this session.
    fn listed(&self) -> Vec<Tool> {
        let listed = self.offer.listed(&self.enabled.get());
        self.all_tools()
            .iter()
            .filter(|t| {
                ToolName::from_name(&t.name).map_or(self.offer.discovers(), |n| listed.contains(&n))
            })
            .cloned()
            .collect()
    }

    /// The listing outlives this request, and a client hears of its changes: stdio and
    /// HTTP sessions opened with `initialize`; not stateless HTTP, nor a 2026-07-28 request
    /// (each is answered alone; this server does not serve `subscriptions/listen`).
    fn has_session(&self, peer: &Peer<RoleServer>) -> bool {
        self.subscribe
            && !peer
                .peer_info()
                .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
    }

    /// `zotero_enable_tools`: enables the families asked for in this session and tells the
    /// client its list changed (before the answer, as `tell` does).
    async fn enable_tools(
        &self,
        arguments: Option<serde_json::Map<String, Value>>,
        peer: &Peer<RoleServer>,
    ) -> CallToolResult {
        let session = self.has_session(peer);
        let outcome = surface::enable(&self.offer, &self.enabled, arguments, session, |t| {
            self.tool(t)
        });
        let result = match outcome {
            Ok(outcome) => {
                if outcome.list_changed {
                    // A client that went away does not hear it; the answer says it all too.
                    let _ = peer.notify_tool_list_changed().await;
                }
                Ok(outcome.data)
            }
            Err(e) => Err(e),
        };
        if let Err(e) = &result {
            tracing::info!(
                tool = surface::ENABLE_TOOLS,
                code = e.code.as_str(),
                "tool call refused"
            );
        }
        tool_result(result)
    }
}
