//! JSON log lines on stderr (stdout belongs to the MCP protocol). Span fields, among them
//! each tool call's `correlation_id`, appear on every line inside the span.

use tracing_subscriber::{fmt, EnvFilter};

use crate::config::Config;

pub fn init(config: &Config) {
    // rmcp logs whole protocol messages at debug level; they can carry tool arguments (file
    // bytes, in later tools), so its lines stop at warn whatever our level.
    let filter = EnvFilter::new(format!("{},rmcp=warn", config.log.level));
    let subscriber = fmt()
        .json()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(true)
        .finish();
    // Only fails if a subscriber is already set (tests): keep that one.
    let _ = tracing::subscriber::set_global_default(subscriber);

    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(%location, %message, "panic");
    }));
}

/// With `ZOTERO_MCP_DEBUG`, the line that says a server started and how it is configured
/// (whether credentials are set, never what they are).
pub fn server_start(config: &Config) {
    if config.log.debug {
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            api_base = %config.zotero.api_base,
            credentials = config.missing_credentials().is_empty(),
            read_cache = config.zotero.read_cache.is_some(),
            "server.start"
        );
    }
}
