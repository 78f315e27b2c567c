//! The tools as `tools/list` publishes them: rmcp's `Tool` from the table's definitions, with
//! the annotations MCP's defaults do not already say.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

use crate::mcp::surface;
use crate::tools::{Definition, Hints, ToolName};

/// Every tool as `tools/list` publishes it, offered or not (`zotero-mcp tools --json`, the
/// registry's list): the table's, then `zotero_enable_tools`.
pub fn tool_definitions() -> Vec<Tool> {
    ToolName::ALL
        .iter()
        .copied()
        .map(to_mcp)
        .chain([definition_to_mcp(surface::definition())])
        .collect()
}

fn to_mcp(tool: ToolName) -> Tool {
    to_mcp_with(tool, crate::tools::params::DEFAULT_UPLOAD_MAX_BYTES)
}

/// The tool as MCP lists it, with the base64 bound of this server's upload limit.
pub(super) fn to_mcp_with(tool: ToolName, upload_max_bytes: u64) -> Tool {
    let mut definition = tool.definition();
    if let Some(Value::Object(b64)) = definition
        .input_schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("file_bytes_base64"))
    {
        b64.insert(
            "maxLength".into(),
            Value::from(crate::tools::params::base64_len(upload_max_bytes)),
        );
    }
    definition_to_mcp(definition)
}

/// A definition as rmcp's `Tool`.
pub fn definition_to_mcp(definition: Definition) -> Tool {
    let Definition {
        name,
        title,
        description,
        input_schema,
        output_schema,
        hints,
    } = definition;
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
