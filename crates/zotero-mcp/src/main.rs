//! zotero-mcp: an MCP server for Zotero libraries. Everything lives in the library crate;
//! `cli` reads the command line.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    zotero_mcp::alloc::tune();
    zotero_mcp::cli::main()
}
