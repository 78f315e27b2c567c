//! The severities of MCP's `notifications/message` a session asks for with `logging/setLevel`.

use serde_json::Value;

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
    pub(super) fn from_mcp(level: rmcp::model::LoggingLevel) -> Self {
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

    pub(super) fn message(self, data: Value) -> rmcp::model::LoggingMessageNotificationParam {
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
