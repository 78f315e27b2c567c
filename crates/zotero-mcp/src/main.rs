//! zotero-mcp: an MCP server for Zotero libraries. Everything lives in the library crate;
//! `cli` reads the command line.

fn main() -> std::process::ExitCode {
    zotero_mcp::cli::main()
}
