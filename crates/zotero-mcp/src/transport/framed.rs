//! The JSON-RPC layer between stdio and rmcp: a reader task turns stdin into lines and each
//! line into a message for rmcp or a refusal (see `jsonrpc`); a writer task is the one owner
//! of stdout, writing whole lines from rmcp and from the refusals alike, so lines never
//! interleave; rmcp sees a [`Transport`] of already parsed messages.

use std::future::Future;

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::jsonrpc::{self, Verdict};
use super::lines::{Line, LineReader};

/// rmcp's side of the layer: messages in, messages out as lines for the writer.
pub struct FramedTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: Option<mpsc::Sender<Vec<u8>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum FramedError {
    #[error("stdout is closed")]
    Closed,
    #[error("cannot encode a message: {0}")]
    Encode(#[from] serde_json::Error),
}

impl FramedTransport {
    pub fn new(
        incoming: mpsc::Receiver<ClientJsonRpcMessage>,
        outgoing: mpsc::Sender<Vec<u8>>,
    ) -> Self {
        FramedTransport {
            incoming,
            outgoing: Some(outgoing),
        }
    }
}

impl Transport<RoleServer> for FramedTransport {
    type Error = FramedError;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), FramedError>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        async move {
            let outgoing = outgoing.ok_or(FramedError::Closed)?;
            let line = encode(&item)?;
            outgoing.send(line).await.map_err(|_| FramedError::Closed)
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), FramedError> {
        // Sends already under way hold their own sender and still finish.
        self.outgoing = None;
        self.incoming.close();
        Ok(())
    }
}

/// One message as one line. rmcp leaves out the `id` of an error it cannot match to a
/// request; JSON-RPC 2.0 wants `"id": null` there.
fn encode(message: &ServerJsonRpcMessage) -> Result<Vec<u8>, serde_json::Error> {
    if let JsonRpcMessage::Error(error) = message {
        if error.id.is_none() {
            return jsonrpc::error_response_line(&serde_json::Value::Null, &error.error);
        }
    }
    // serde_json escapes every newline inside strings: one message, one line.
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

/// Reads lines until the end of the input: messages go to rmcp, refusals are logged and
/// answered through the writer. Returning drops both senders, which is how rmcp learns
/// that the input ended.
pub async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: LineReader<R>,
    max: usize,
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    answers: mpsc::Sender<Vec<u8>>,
) {
    loop {
        let line = match reader.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(e) => {
                tracing::error!(error = %e, "stdin.read_failed");
                return;
            }
        };
        let verdict = match line {
            Line::Message(bytes) => jsonrpc::classify(&bytes),
            Line::Oversized { len, id } => {
                let (line, refusal) = jsonrpc::oversized(id, len, max);
                Verdict::Answer { line, refusal }
            }
        };
        let delivered = match verdict {
            Verdict::Deliver(message) => to_rmcp.send(*message).await.is_ok(),
            Verdict::Answer { line, refusal } => {
                refusal.log();
                answers.send(line).await.is_ok()
            }
            Verdict::Silence(refusal) => {
                refusal.log();
                true
            }
            Verdict::Skip => true,
        };
        if !delivered {
            // rmcp or the writer has stopped: nobody is left to serve.
            return;
        }
    }
}

/// Writes each line whole, in the order received, until every sender is gone.
pub async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        let written = match out.write_all(&line).await {
            // Flushed once nothing else waits, so a burst of answers goes out together.
            Ok(()) if lines.is_empty() => out.flush().await,
            other => other,
        };
        if let Err(e) = written {
            tracing::error!(error = %e, "stdout.write_failed");
            return;
        }
    }
    if let Err(e) = out.flush().await {
        tracing::error!(error = %e, "stdout.write_failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ErrorData, RequestId, ServerResult};
    use serde_json::{json, Value};

    #[test]
    fn an_error_without_an_id_gets_a_null_id_and_every_message_one_line() {
        let error = ServerJsonRpcMessage::error(ErrorData::invalid_request("x\ny", None), None);
        let line = encode(&error).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x\ny"}})
        );
        let answer = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(3));
        for line in [line, encode(&answer).unwrap()] {
            assert_eq!(line.iter().position(|b| *b == b'\n'), Some(line.len() - 1));
        }
    }
}
