//! The command line: serve MCP on stdio (default) or Streamable HTTP (`serve --http`), `check`
//! the configuration, sign in with Zotero (`login`), add papers by identifier (`add`), build the search index (`update-db`,
//! `db-status`), or print the tool list. Every command's printing lives here.

pub mod add;
pub mod authorize;
pub mod check;
pub mod index;
pub mod login;

use std::process::ExitCode;

use crate::config::Config;
use crate::mcp::server::tool_definitions;
use clap::{Parser, Subcommand};

/// MCP server for a personal Zotero library. With no command it serves MCP on stdio.
/// Configuration comes from the environment (ZOTERO_API_KEY, ZOTERO_USER_ID, ...).
#[derive(Parser)]
#[command(name = "zotero-mcp", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP on stdin/stdout (the default), or with --http over Streamable HTTP.
    Serve {
        /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (ADDR defaults to
        /// 127.0.0.1:8000). Beyond loopback ZOTERO_MCP_HTTP_TOKEN is required.
        #[arg(
            long,
            value_name = "ADDR",
            num_args = 0..=1,
            default_missing_value = crate::transport::http::DEFAULT_ADDR
        )]
        http: Option<std::net::SocketAddr>,
    },
    /// Check the configuration against Zotero: ZOTERO_API_KEY and ZOTERO_USER_ID (who the key
    /// belongs to, what it may do in each library) and the desktop app's local API; says
    /// which files file_path may read (ZOTERO_UPLOAD_ROOTS).
    Check,
    /// Add papers by DOI, arXiv id, ISBN, PMID or PMCID (or a URL carrying one) to the
    /// library, with their PDF when one is open; prints what was added.
    Add {
        /// 1 to 20 identifiers.
        #[arg(required = true, num_args = 1..=20)]
        identifiers: Vec<String>,
        /// user or group:<id> (the default library otherwise).
        #[arg(long)]
        library: Option<String>,
        /// Put the new items into the collection of this key or name.
        #[arg(long)]
        collection: Option<String>,
        /// A tag for every new item (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Do not attach PDFs.
        #[arg(long)]
        no_pdf: bool,
        /// Look everything up and say what would be added, without writing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Build or update the local search index of a library (search by meaning): reads only
    /// what changed since the last update. Progress on stderr; Ctrl-C stops after the
    /// current batch, keeping what was committed.
    UpdateDb {
        /// user or group:<id> (the default library otherwise).
        #[arg(long)]
        library: Option<String>,
        /// Rebuild the index from nothing.
        #[arg(long)]
        full: bool,
        /// Leave attachments' full texts out.
        #[arg(long)]
        no_fulltext: bool,
    },
    /// Print the status of the local search indexes.
    DbStatus {
        /// user or group:<id> (default: every indexed library and the default one).
        #[arg(long)]
        library: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Ask the Zotero 10 desktop app for a local API key (a person answers a dialog in
    /// Zotero) and store it for this Zotero database, so that writes go through the desktop
    /// app without a web API key.
    Authorize {
        /// Print the key on stdout (for ZOTERO_LOCAL_API_KEY in a container) instead of
        /// storing it.
        #[arg(long)]
        print: bool,
        /// The name Zotero's dialog shows.
        #[arg(long, default_value = "zotero-mcp")]
        app_name: String,
        /// How many seconds to wait for the answer (1 to 3600).
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
        wait: u64,
    },
    /// Sign in with Zotero in the browser (zotero.org's OAuth) and store the web API key it
    /// makes, with your user ID, for this user (no key to copy). Needs an application
    /// registered at zotero.org/oauth/apps: ZOTERO_OAUTH_CLIENT_KEY, ZOTERO_OAUTH_CLIENT_SECRET.
    Login {
        /// Open no browser: print the address to open on stdout, and take Zotero's answer on
        /// the loopback port or as the address pasted on stdin (containers, remote shells).
        #[arg(long)]
        print: bool,
        /// Ask for no write access (read the library, its notes and your groups).
        #[arg(long)]
        read_only: bool,
        /// Access to all your groups: none, read or write (default: write; read with
        /// --read-only).
        #[arg(long, value_parser = ["none", "read", "write"])]
        groups: Option<String>,
        /// Refuse a key that may do more than asked (it is then not stored).
        #[arg(long)]
        strict: bool,
        /// How many seconds to wait for the answer (1 to 3600).
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
        wait: u64,
        /// The loopback port Zotero's answer comes back to (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// The key's name on zotero.org's list of keys.
        #[arg(long, default_value = "zotero-mcp")]
        name: String,
    },
    /// Print the tools this server lists: as JSON (the default), or as Markdown.
    Tools {
        /// JSON output: every tool as `tools/list` gives it (the default).
        #[arg(long, conflicts_with_all = ["markdown", "readme_table", "budget"])]
        json: bool,
        /// The tools reference in Markdown (`docs/tools.md`).
        #[arg(long, conflicts_with_all = ["readme_table", "budget"])]
        markdown: bool,
        /// The README's table of tools, one line each.
        #[arg(long, conflicts_with = "budget")]
        readme_table: bool,
        /// The bytes of each tool's definition (what a model is sent, and on the wire), and
        /// the totals of the default surface, of each family and of all.
        #[arg(long)]
        budget: bool,
    },
}

/// Parses the command line, reads the configuration and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zotero-mcp: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Some(Command::Tools {
            markdown,
            readme_table,
            budget,
            ..
        }) => tools(markdown, readme_table, budget),
        Some(Command::Check) => run(crate::cli::check::run(config)),
        Some(Command::Authorize {
            print,
            app_name,
            wait,
        }) => run(crate::cli::authorize::run(
            config,
            crate::cli::authorize::Authorize {
                print,
                app_name,
                wait: std::time::Duration::from_secs(wait),
            },
        )),
        Some(Command::Login {
            print,
            read_only,
            groups,
            strict,
            wait,
            port,
            name,
        }) => run(crate::cli::login::run(
            config,
            crate::cli::login::Login {
                print,
                access: crate::cli::login::Login::access(read_only, groups.as_deref()),
                strict,
                wait: std::time::Duration::from_secs(wait),
                port,
                name,
            },
        )),
        Some(Command::UpdateDb {
            library,
            full,
            no_fulltext,
        }) => run(crate::cli::index::update_db(
            config,
            crate::cli::index::UpdateDb {
                library,
                full,
                no_fulltext,
            },
        )),
        Some(Command::DbStatus { library, json }) => {
            run(crate::cli::index::db_status(config, library, json))
        }
        Some(Command::Add {
            identifiers,
            library,
            collection,
            tags,
            no_pdf,
            dry_run,
        }) => run(crate::cli::add::run(
            config,
            crate::cli::add::CliAdd {
                identifiers,
                library,
                collection,
                tags,
                attach_pdf: !no_pdf,
                dry_run,
            },
        )),
        Some(Command::Serve { http: Some(addr) }) => {
            if let Err(message) = crate::transport::http::check_bind(&config, addr) {
                eprintln!("zotero-mcp: {message}");
                return ExitCode::from(2);
            }
            run(crate::transport::http::serve(config, addr))
        }
        None | Some(Command::Serve { http: None }) => run(crate::transport::stdio::serve(config)),
    }
}

/// `tools`: the reference in Markdown, the README's table, the byte budget, or the JSON.
fn tools(markdown: bool, readme_table: bool, budget: bool) -> ExitCode {
    if markdown {
        print!("{}", crate::tool_docs::reference());
    } else if readme_table {
        print!("{}", crate::tool_docs::readme_table());
    } else if budget {
        print!("{}", crate::tool_docs::budget());
    } else {
        match serde_json::to_string_pretty(&tool_definitions()) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("zotero-mcp: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn run(fut: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(fut),
        Err(e) => {
            eprintln!("zotero-mcp: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
