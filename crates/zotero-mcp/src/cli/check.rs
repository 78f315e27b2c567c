//! `zotero-mcp check`: reports which files `file_path` may read and every configured backend
//! (the Web API with what the key may do in each library; the desktop app's local API;
//! Zotero's own database), and says what to change when one fails.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;
use zotero_api::{LibraryId, LibraryInfo, Permissions, ZoteroClient};

use crate::config::{Config, KeySource};

/// Exit code 2: nothing is configured; 1: a configured backend failed; 0: all good.
pub async fn run(config: Config) -> ExitCode {
    let missing = config.missing_credentials();
    if !missing.is_empty()
        && !config.zotero.local
        && !config.writes_locally()
        && config.database.is_none()
    {
        eprintln!(
            "zotero-mcp check: run `zotero-mcp login` to sign in with Zotero, or set {} (create a key at https://www.zotero.org/settings/keys; your user ID is shown there too), or ZOTERO_LOCAL=1 to read through the Zotero desktop app, or ZOTERO_DATA_DIR=/path/to/Zotero to read Zotero's own database",
            missing.join(" and ")
        );
        return ExitCode::from(2);
    }
    let client = match crate::service::client(&config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zotero-mcp check: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("file_path: {}", upload_policy(&config.uploads.roots));
    let cancel = CancellationToken::new();
    let mut ok = true;
    if missing.is_empty() {
        ok &= web(&config, &client, &cancel).await;
    } else {
        println!(
            "web API:   not used (set {} to write, or to reach group libraries through zotero.org)",
            missing.join(" and ")
        );
    }
    if config.zotero.local || config.writes_locally() {
        ok &= local(&config, &client, &cancel).await;
    } else {
        println!("local API: not used (ZOTERO_LOCAL=1 reads through the Zotero desktop app)");
    }
    ok &= writes(&config, &client, &cancel).await;
    match client.database() {
        Some(db) => ok &= database(db.clone()).await,
        None => println!(
            "database:  not used (ZOTERO_DATA_DIR=/path/to/Zotero reads Zotero's own zotero.sqlite, offline)"
        ),
    }
    if ok {
        println!("ok");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The database: where, its schema version, its items, and whether Zotero has it open.
async fn database(db: std::sync::Arc<zotero_db::ZoteroDb>) -> bool {
    match tokio::task::spawn_blocking(move || db.status()).await {
        Ok(Ok(s)) => {
            println!(
                "database:  {} (schema {}): {} items outside the trash ({} rows with notes, attachments, annotations and the trash), {} group libraries; {}",
                s.path.display(),
                s.version,
                s.regular_items,
                s.all_items,
                s.group_libraries,
                if s.open_in_zotero {
                    "Zotero has it open (read from a private copy; nothing is written)"
                } else {
                    "Zotero does not have it open"
                }
            );
            true
        }
        Ok(Err(e)) => {
            println!("database:  FAILED: {e}");
            false
        }
        Err(e) => {
            println!("database:  FAILED: {e}");
            false
        }
    }
}

/// Which files `file_path` may read: the roots, or the default policy.
fn upload_policy(roots: &[std::path::PathBuf]) -> String {
    if roots.is_empty() {
        format!(
            "any file the server can read, except hidden files and directories and {} (set ZOTERO_UPLOAD_ROOTS=/path/to/papers to allow only chosen directories)",
            zotero_sources::SYSTEM_DIRS.join(" ")
        )
    } else {
        let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        format!(
            "only files below {} (ZOTERO_UPLOAD_ROOTS; hidden names below them are refused)",
            roots.join(", ")
        )
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn rights(p: Permissions) -> String {
    format!(
        "read {}, write {}, files {}, notes {}",
        yes_no(p.library),
        yes_no(p.write),
        yes_no(p.files),
        yes_no(p.notes)
    )
}

fn group_line(l: &LibraryInfo) -> String {
    let items = l
        .num_items
        .map(|n| format!(", {n} items"))
        .unwrap_or_default();
    format!(
        "  {} \"{}\" ({}{items}): {}",
        l.library,
        l.name,
        l.group_type.as_deref().unwrap_or("group"),
        rights(l.permissions)
    )
}

/// The Web API: where, whose key (and where the key came from, never the key), what it may
/// do in each library. `login` reports a new key with it.
pub(super) async fn web(
    config: &Config,
    client: &ZoteroClient,
    cancel: &CancellationToken,
) -> bool {
    println!("API base:  {}", config.zotero.api_base);
    match &config.zotero.key_source {
        KeySource::Env => println!("key:       from ZOTERO_API_KEY"),
        KeySource::Stored(path) => println!(
            "key:       stored by `zotero-mcp login` in {} (ZOTERO_API_KEY is not set)",
            path.display()
        ),
        KeySource::None => {}
    }
    // Read now, and kept for the group listing below: one `/keys/current`.
    let info = match client.access(true, cancel).await {
        Ok(i) => i,
        Err(e) => {
            eprintln!("zotero-mcp check: {e}");
            return false;
        }
    };
    let user = info.permissions(LibraryId::User(info.user_id));
    println!("user:      {}, user ID {}", info.owner_name(), info.user_id);
    println!("read:      {}", yes_no(user.library));
    println!("write:     {}", yes_no(user.write));
    println!("upload:    {}", yes_no(user.files));
    if config.zotero.user_id != Some(info.user_id) {
        eprintln!(
            "zotero-mcp check: ZOTERO_USER_ID is {} but the key belongs to user {}; set ZOTERO_USER_ID={}",
            config.zotero.user_id.map(|u| u.to_string()).unwrap_or_default(),
            info.user_id,
            info.user_id
        );
        return false;
    }
    if !user.library {
        eprintln!("zotero-mcp check: the key may not read the personal library; allow 'library access' for it at https://www.zotero.org/settings/keys");
        return false;
    }
    match client.libraries(cancel).await {
        Ok(libs) => {
            let groups: Vec<&LibraryInfo> = libs.iter().filter(|l| l.kind == "group").collect();
            println!("groups:    {}", groups.len());
            for g in groups {
                println!("{}", group_line(g));
            }
            // The default library must be one the key reaches.
            match libs.iter().find(|l| l.library == config.zotero.library) {
                Some(l) => {
                    println!("default:   {} ({})", l.library, rights(l.permissions));
                    true
                }
                None => {
                    eprintln!(
                        "zotero-mcp check: ZOTERO_LIBRARY is {} but the key cannot reach that library; use one of the libraries listed above",
                        config.zotero.library
                    );
                    false
                }
            }
        }
        Err(e) => {
            eprintln!("zotero-mcp check: cannot list the groups: {e}");
            false
        }
    }
}

async fn local(config: &Config, client: &ZoteroClient, cancel: &CancellationToken) -> bool {
    match client.local_libraries(cancel).await {
        Ok(libs) => {
            let groups: Vec<&LibraryInfo> = libs.iter().filter(|l| l.kind == "group").collect();
            let role = if config.writes_locally() {
                "reads; writes as below"
            } else {
                "read-only here"
            };
            println!(
                "local API: {} answers ({role}); {} group(s)",
                config.zotero.local_api_base,
                groups.len()
            );
            for g in groups {
                println!("{}", group_line(g));
            }
            true
        }
        Err(e) => {
            eprintln!(
                "zotero-mcp check: the local API at {} did not answer: {e} (is Zotero running?)",
                config.zotero.local_api_base
            );
            false
        }
    }
}

/// Which backend writes, and why (never the key).
async fn writes(config: &Config, client: &ZoteroClient, cancel: &CancellationToken) -> bool {
    use zotero_api::{DesktopProbe, WriteBackend, WriteRoute};
    if config.tools.read_only {
        println!("writes:    off (ZOTERO_READ_ONLY=1)");
        return true;
    }
    let route = client.write_route(cancel).await;
    let why_web = async {
        if config.zotero.local_writes.backend == WriteBackend::Web {
            return "ZOTERO_WRITE_BACKEND=web".to_string();
        }
        if !config.zotero.local_writes.has_key() {
            return "no local API key: `zotero-mcp authorize` lets the Zotero 10 desktop app write without a web key".to_string();
        }
        match client.probe_desktop(cancel).await {
            None => "the desktop app is not used".to_string(),
            Some(DesktopProbe::Zotero10 { server_id }) if !client.has_local_key_for(&server_id) => {
                format!("no local key for the open Zotero database ({server_id}); run `zotero-mcp authorize`")
            }
            Some(DesktopProbe::Zotero10 { .. }) => "the desktop app was not usable".to_string(),
            Some(DesktopProbe::Off) => {
                "the desktop's local API is off (Settings → Advanced)".to_string()
            }
            Some(DesktopProbe::ReadOnlyRelease) => {
                "this Zotero is 9 or older: upgrade to Zotero 10 to write locally".to_string()
            }
            Some(DesktopProbe::Unreachable { .. }) => {
                "the Zotero desktop app does not answer (not running?)".to_string()
            }
        }
    };
    match route {
        Ok(WriteRoute::Local { server_id, .. }) => {
            println!(
                "writes:    through the Zotero desktop app at {} (Zotero 10, database {server_id}, local API key set)",
                config.zotero.local_api_base
            );
            true
        }
        Ok(WriteRoute::Web) if client.has_web() => {
            println!("writes:    web API ({})", why_web.await);
            true
        }
        Ok(WriteRoute::Web) => {
            println!(
                "writes:    none: {} (or set ZOTERO_API_KEY and ZOTERO_USER_ID)",
                why_web.await
            );
            true
        }
        Err(e) => {
            eprintln!("zotero-mcp check: writes cannot go anywhere: {e}");
            false
        }
    }
}
