//! What the log says: `ZOTERO_MCP_DEBUG` and `ZOTERO_MCP_LOG_LEVEL`.

use super::parse::{parse_bool, Vars};
use super::ConfigError;

/// The log's level and whether start-up details are logged.
#[derive(Debug, Clone)]
pub struct LogConfig {
    pub debug: bool,
    /// A `tracing` filter directive such as `info` or `debug`.
    pub level: String,
}

impl LogConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let debug = parse_bool(get, "ZOTERO_MCP_DEBUG", false)?;
        let level = match get("ZOTERO_MCP_LOG_LEVEL") {
            None => "info".to_string(),
            Some(v) => {
                let lower = v.to_ascii_lowercase();
                let level = match lower.as_str() {
                    "warning" => "warn",
                    "critical" | "fatal" => "error",
                    other => other,
                };
                if !["trace", "debug", "info", "warn", "error", "off"].contains(&level) {
                    return Err(ConfigError {
                        var: "ZOTERO_MCP_LOG_LEVEL",
                        value: v,
                        expected: "one of TRACE, DEBUG, INFO, WARN, ERROR, OFF".into(),
                    });
                }
                level.to_string()
            }
        };
        Ok(LogConfig { debug, level })
    }
}
