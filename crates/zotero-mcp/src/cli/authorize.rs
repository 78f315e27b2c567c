//! `zotero-mcp authorize`: asks Zotero 10 for a local API key. Finds the desktop app
//! (`GET /api/` and its `Zotero-Server-ID`), asks once (`POST /api/local/authorize`), tells the
//! person on stderr to answer the dialog in Zotero, waits (bounded by `--wait`, Ctrl-C stops),
//! and stores an "Always Allow" key for that database in the user's config directory (mode
//! 0600) — or prints it with `--print` for `ZOTERO_LOCAL_API_KEY`. The key never reaches
//! stderr or a log line. Each outcome has its own exit code ([`exit`]).

use std::process::ExitCode;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use zotero_api::http::HttpClient;
use zotero_api::local_writes::{probe, request_key, KeyRequest};
use zotero_api::{DesktopProbe, ZoteroError};

use crate::config::local_writes::store_key;
use crate::config::Config;

/// Exit codes of `authorize`, one per outcome.
pub mod exit {
    /// The key could not be stored (or the answer could not be read).
    pub const FAILED: u8 = 1;
    /// The person chose "Deny".
    pub const DENIED: u8 = 3;
    /// The person chose "Allow": a key for one write only, useless to a server.
    pub const ONE_TIME: u8 = 4;
    /// Zotero's limit of 5 authorization prompts a minute.
    pub const TOO_MANY_PROMPTS: u8 = 5;
    /// The local API is turned off in Zotero's settings.
    pub const LOCAL_API_OFF: u8 = 6;
    /// Zotero 9 or older: its local API cannot write.
    pub const TOO_OLD: u8 = 7;
    /// Zotero does not answer (not running).
    pub const NOT_RUNNING: u8 = 8;
    /// Nobody answered the dialog within `--wait`.
    pub const NO_ANSWER: u8 = 9;
    /// Ctrl-C.
    pub const CANCELLED: u8 = 130;
}

/// The command's arguments.
pub struct Authorize {
    /// Print the key on stdout instead of storing it.
    pub print: bool,
    /// The name Zotero shows in its dialog.
    pub app_name: String,
    /// How long to wait for the person to answer.
    pub wait: Duration,
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("zotero-mcp authorize: {message}");
    ExitCode::from(code)
}

/// Runs `zotero-mcp authorize`.
pub async fn run(config: Config, args: Authorize) -> ExitCode {
    let base = config.zotero.local_api_base.clone();
    let mut client_config = config.client();
    // One attempt (a second request would open a second dialog), waiting as long as the
    // person may take.
    client_config.timeout = args.wait;
    client_config.retry.max_attempts = 1;
    client_config.read_cache = None;
    let http = match HttpClient::new_local(&client_config, &base) {
        Ok(h) => h,
        Err(e) => return fail(exit::FAILED, &e.to_string()),
    };
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });

    let server_id = match probe(&http, &cancel).await {
        DesktopProbe::Zotero10 { server_id } => server_id,
        DesktopProbe::Off => return off(),
        DesktopProbe::ReadOnlyRelease => return too_old(),
        DesktopProbe::Unreachable { reason } => {
            return fail(
                exit::NOT_RUNNING,
                &format!("Zotero does not answer at {base} ({reason}); start the Zotero desktop app (10 or later) and run this again"),
            )
        }
    };
    eprintln!(
        "zotero-mcp authorize: Zotero 10 found at {base}. A dialog \"Local API Authorization\" is open in Zotero now: choose \"Always Allow\" to let {} add and change items in your libraries. Waiting up to {} s (Ctrl-C to stop)…",
        args.app_name,
        args.wait.as_secs()
    );
    let asked = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ZoteroError::Cancelled),
        r = request_key(&http, &server_id, &args.app_name, &cancel) => r,
    };
    let key = match asked {
        Ok(KeyRequest::Granted {
            key,
            remember: true,
        }) => key,
        Ok(KeyRequest::Granted {
            remember: false, ..
        }) => {
            return fail(
                exit::ONE_TIME,
                "\"Allow\" grants a key for one write only, which a server cannot use; run `zotero-mcp authorize` again and choose \"Always Allow\"",
            )
        }
        Ok(KeyRequest::Denied) => {
            return fail(
                exit::DENIED,
                "the request was denied in Zotero; nothing was stored. Run `zotero-mcp authorize` again to ask once more",
            )
        }
        Ok(KeyRequest::TooManyPrompts { retry_after_secs }) => {
            return fail(
                exit::TOO_MANY_PROMPTS,
                &format!("Zotero shows at most 5 authorization prompts a minute; try again in {retry_after_secs} s"),
            )
        }
        Ok(KeyRequest::Off) => return off(),
        Ok(KeyRequest::NotSupported) => return too_old(),
        Ok(KeyRequest::DatabaseChanged) => {
            return fail(
                exit::FAILED,
                "Zotero opened another database while asking; run `zotero-mcp authorize` again",
            )
        }
        Err(ZoteroError::Cancelled) => {
            return fail(
                exit::CANCELLED,
                "stopped; if the dialog is still open in Zotero, answer \"Deny\" (a later \"Allow\" makes a key nobody receives)",
            )
        }
        Err(ZoteroError::Timeout { .. }) => {
            return fail(
                exit::NO_ANSWER,
                &format!("nobody answered within {} s; the dialog may still be open in Zotero: answer it (\"Deny\" if you will ask again) before running `zotero-mcp authorize` again (--wait SECONDS waits longer)", args.wait.as_secs()),
            )
        }
        Err(e @ ZoteroError::Network { .. }) => {
            return fail(exit::NOT_RUNNING, &format!("{e}; is Zotero still running?"))
        }
        Err(e) => return fail(exit::FAILED, &e.to_string()),
    };
    if args.print {
        println!("{}", key.expose());
        eprintln!(
            "zotero-mcp authorize: granted. Set ZOTERO_LOCAL_API_KEY to the line printed on stdout (keep it secret: it lets any program write to your Zotero libraries)"
        );
        return ExitCode::SUCCESS;
    }
    let Some(dir) = config.zotero.config_dir.clone() else {
        return fail(
            exit::FAILED,
            "granted, but there is no config directory (set XDG_CONFIG_HOME or HOME), or run with --print",
        );
    };
    match store_key(&dir, &server_id, key.expose()) {
        Ok(path) => {
            eprintln!(
                "zotero-mcp authorize: granted. The key for this Zotero database is stored in {} (readable by you only); zotero-mcp now writes through the Zotero desktop app",
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(
            exit::FAILED,
            &format!(
                "granted, but the key could not be stored in {}: {e}",
                dir.display()
            ),
        ),
    }
}

fn off() -> ExitCode {
    fail(
        exit::LOCAL_API_OFF,
        "Zotero's local API is off: turn on Settings → Advanced → \"Allow other applications on this computer to communicate with Zotero\", then run this again",
    )
}

fn too_old() -> ExitCode {
    fail(
        exit::TOO_OLD,
        "this Zotero cannot grant write access: its local API is read-only before Zotero 10. Upgrade (Help → Check for Updates, or https://www.zotero.org/download), or write through the web API with ZOTERO_API_KEY and ZOTERO_USER_ID",
    )
}
