//! What a tool is: the [`ZoteroTool`] trait, its [`Hints`], the [`ToolContext`] a call gets
//! and the [`Definition`] `tools/list` publishes. A leaf the tool files import, so that they
//! do not import the table in `tools/mod.rs` that lists them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::upload::ProgressFn;

pub use crate::config::ToolSet;
use crate::error::ToolError;
use crate::service::ZoteroService;

/// One MCP tool.
pub trait ZoteroTool {
    /// The name clients call it by; fixed, agents depend on it.
    const NAME: &'static str;
    /// A short human-readable name.
    const TITLE: &'static str;
    /// What it does and when to use it, for the model choosing a tool.
    const DESCRIPTION: &'static str;
    /// What it may do, published as MCP annotations.
    const HINTS: Hints;
    /// `ZOTERO_TOOLSETS` picks tools by this.
    const SET: ToolSet;
    /// The arguments: `#[serde(deny_unknown_fields)]`, a `///` on every field (it becomes the
    /// field's description).
    type Params: DeserializeOwned + JsonSchema + Send;
    /// The envelope's `data` on success, `///` on every field likewise.
    type Data: Serialize + JsonSchema + Send;

    /// Checks across fields that serde cannot express (exactly one of several, an alias
    /// given twice); each names the field to change. Runs before `run`, so a refused call
    /// sends nothing.
    fn validate(_params: &Self::Params) -> Result<(), ToolError> {
        Ok(())
    }

    /// Does what the checked `params` ask.
    fn run(
        params: Self::Params,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Self::Data, ToolError>> + Send;
}

/// What a tool may do, published as MCP tool annotations (`server::annotations` leaves out
/// what the spec's defaults already say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// Changes nothing.
    pub read_only: bool,
    /// May destroy or overwrite data (only meaningful for a tool that writes).
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// Talks to something outside the server (Zotero, a file host).
    pub open_world: bool,
}

impl Hints {
    /// Reads Zotero.
    pub const READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: true,
    };
    /// Adds something new on every call.
    pub const CREATE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };
    /// Writes, but a repeat finds the work done and changes nothing.
    pub const ADD_IDEMPOTENT: Hints = Hints {
        idempotent: true,
        ..Hints::CREATE
    };
    /// Changes or removes what is there (a field's value, a tag, a membership), and a repeat
    /// changes nothing more.
    pub const CHANGE: Hints = Hints {
        destructive: true,
        ..Hints::ADD_IDEMPOTENT
    };
}

/// What a running tool call gets.
pub struct ToolContext {
    /// The service: the Zotero client and this server's defaults.
    pub svc: Arc<ZoteroService>,
    /// Cancelled when the MCP client cancels the call.
    pub cancel: CancellationToken,
    /// Set when the client asked for progress notifications (a `progressToken`).
    pub progress: Option<ProgressFn>,
    /// Set when the client can ask its user (MCP elicitation); see [`ToolContext::confirm`].
    pub confirm: Option<ConfirmFn>,
}

/// A tool as `tools/list` publishes it (the server turns it into rmcp's `Tool`).
#[derive(Debug, Clone)]
pub struct Definition {
    /// The name clients call it by.
    pub name: &'static str,
    /// A short human-readable name.
    pub title: &'static str,
    /// What it does and when to use it.
    pub description: &'static str,
    /// The schema of its arguments.
    pub input_schema: Map<String, Value>,
    /// The envelope around the `data` schema.
    pub output_schema: Map<String, Value>,
    /// What it may do.
    pub hints: Hints,
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// The user said yes.
    Confirmed,
    /// The user said no, dismissed the question, or the question could not be asked on a
    /// client that claims to support it (the reason says which).
    Declined(String),
    /// The client cannot be asked (no elicitation capability).
    NotAsked,
}

/// Asks the client's user one yes/no question.
pub type ConfirmFn =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Confirmation> + Send>> + Send + Sync>;
