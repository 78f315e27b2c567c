//! Asking the user before a write that is hard to take back (trashing many items, deleting a
//! collection, a library-wide tag change), through MCP elicitation when the client offers it.
//! A client without elicitation is not asked: the tool's description and hints already told
//! the agent what the call does.

use crate::error::ToolError;
use crate::tools::tool::ToolContext;
pub use crate::tools::tool::{ConfirmFn, Confirmation};

impl ToolContext {
    /// Asks the user to confirm `question` when the client can be asked. `Ok` to go ahead
    /// (confirmed, or not asked); a refusal is an error saying nothing was written. The call
    /// being cancelled while waiting is a refusal too.
    pub async fn confirm(&self, tool: &str, question: String) -> Result<bool, ToolError> {
        let Some(ask) = &self.confirm else {
            return Ok(false);
        };
        let answer = tokio::select! {
            a = ask(question) => a,
            () = self.cancel.cancelled() => Confirmation::Declined("the call was cancelled".into()),
        };
        match answer {
            Confirmation::Confirmed => Ok(true),
            Confirmation::NotAsked => Ok(false),
            Confirmation::Declined(why) => Err(ToolError::validation(format!(
                "{tool}: not confirmed ({why}); nothing was written"
            ))
            .with_detail("reason", "not_confirmed")
            .with_detail("written", false)),
        }
    }
}
