//! What one tool call carries and how it ends: its progress notifications, its questions to
//! the user, its own task (a panic ends only that), and its answer as the envelope.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;
use tracing::Instrument;
use zotero_api::upload::ProgressFn;

use crate::error::ToolError;
use crate::mcp::envelope;
use crate::tools::support::confirm::{ConfirmFn, Confirmation};
use crate::tools::{ToolName, ToolSet};

/// What a tool's progress counts: bytes for uploads, objects for the others.
fn progress_message(tool: ToolName, done: u64, total: u64) -> String {
    if tool.set() == ToolSet::Files {
        format!("uploaded {done} of {total} bytes")
    } else {
        format!("{done} of {total} done")
    }
}

/// Progress notifications for one call, sent in order by one task.
pub(super) fn progress_reporter(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    tool: ToolName,
) -> ProgressFn {
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
pub(super) fn confirmer(peer: &Peer<RoleServer>) -> Option<ConfirmFn> {
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

/// A short random id that ties together every log line of one tool call.
pub(super) fn correlation_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// Runs a tool call in its own task: a panic inside it ends that task only, the caller gets
/// a `ZOTERO_INTERNAL_ERROR` envelope and the server keeps serving.
pub async fn guarded<F>(name: &str, call: F) -> Result<Value, ToolError>
where
    F: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    match tokio::spawn(call).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::internal(format!(
            "{name} failed inside the server; the server is still running"
        ))),
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
    use crate::error::ErrorCode;

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
