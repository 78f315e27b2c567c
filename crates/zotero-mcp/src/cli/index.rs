//! `zotero-mcp update-db` and `zotero-mcp db-status`: the search index from the command
//! line. Progress goes to stderr (one line redrawn on a terminal, plain lines otherwise);
//! results to stdout. Exit codes: 0 done, 1 failed or cancelled, 2 bad usage or
//! configuration.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use zotero_api::LibraryRef;

use crate::config::Config;
use crate::service::index::{
    self as search_index, Phase, Progress, ProgressCallback, UpdateOptions,
};
use crate::service::ZoteroService;
use crate::tools::index::search_database_status::{statuses, SearchDatabaseStatusData};
use crate::tools::index::semantic_search::SearchLibrary;

/// Arguments of `update-db`.
pub struct UpdateDb {
    pub library: Option<String>,
    pub full: bool,
    pub no_fulltext: bool,
}

fn usage(message: &str) -> ExitCode {
    eprintln!("zotero-mcp: {message}");
    ExitCode::from(2)
}

fn parse_library(given: Option<&str>) -> Result<Option<LibraryRef>, ExitCode> {
    match given.map(str::parse::<LibraryRef>) {
        None => Ok(None),
        Some(Ok(l)) => Ok(Some(l)),
        Some(Err(_)) => Err(usage("--library takes user or group:<id>")),
    }
}

/// Prints progress on stderr: at most ten redraws a second on a terminal, a line every
/// two seconds (and at each phase's end) otherwise.
fn progress_printer() -> ProgressCallback {
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    let state: Mutex<(Option<Phase>, Instant, Instant)> =
        Mutex::new((None, started, started - Duration::from_secs(10)));
    Arc::new(move |p: Progress| {
        let Ok(mut s) = state.lock() else {
            return;
        };
        let now = Instant::now();
        if s.0 != Some(p.phase) {
            s.0 = Some(p.phase);
            s.1 = now;
        }
        let end = p.done >= p.total;
        let every = if tty { 100 } else { 2_000 };
        if !end && now.duration_since(s.2) < Duration::from_millis(every) {
            return;
        }
        s.2 = now;
        let secs = now.duration_since(s.1).as_secs_f64().max(0.001);
        let rate = p.done as f64 / secs;
        let eta = if rate > 0.0 && !end {
            format!(
                ", ETA {:.0} s",
                p.total.saturating_sub(p.done) as f64 / rate
            )
        } else {
            String::new()
        };
        let line = format!(
            "{}: {} of {} {}, {} chunks written, {:.0}/s{eta}{}",
            p.phase.name(),
            p.done,
            p.total,
            match p.phase {
                Phase::Vectors => "chunks",
                Phase::Files => "files",
                _ => "objects",
            },
            p.chunks,
            rate,
            if end { " — done" } else { "" }
        );
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            if end {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{line}");
        }
    })
}

pub async fn update_db(config: Config, args: UpdateDb) -> ExitCode {
    let library = match parse_library(args.library.as_deref()) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let dir = match &config.index.dir {
        Ok(d) => d.clone(),
        Err(e) => return usage(&e.to_string()),
    };
    let svc = match ZoteroService::new(&config) {
        Ok(s) => Arc::new(s),
        Err(e) => return usage(&e.to_string()),
    };
    let library = library.unwrap_or(svc.default_library);
    if let Err(e) = svc.library(Some(library)) {
        return usage(&e.message);
    }
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    // Registered here, before any work: a Ctrl-C from the first moment stops cleanly (with
    // `ctrl_c()` the handler came only when the spawned task first ran).
    let interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    tokio::spawn(async move {
        if let Some(mut interrupt) = interrupt {
            if interrupt.recv().await.is_some() {
                eprintln!(
                    "\nzotero-mcp: stopping after the current batch (what was committed stays)"
                );
                on_signal.cancel();
            }
        }
    });
    eprintln!(
        "zotero-mcp: updating the search index of {library} in {}{}",
        dir.display(),
        if args.full { " (full rebuild)" } else { "" }
    );
    let result = search_index::update_with_model(
        svc.clone(),
        &svc.search,
        library,
        dir,
        UpdateOptions {
            full: args.full,
            include_fulltext: !args.no_fulltext,
        },
        Some(progress_printer()),
        cancel,
    )
    .await;
    report(result)
}

/// What `update-db` prints of its outcome, and its exit code.
fn report(result: Result<search_index::UpdateReport, search_index::UpdateError>) -> ExitCode {
    match result {
        Ok(r) => {
            if let Some(note) = &r.note {
                eprintln!("zotero-mcp: {note}");
            }
            println!(
                "{}: {} objects and {} full texts read, {} removed, {} chunks written, {} vectors \
                 added, library version {}, {} requests, {:.1} s",
                r.library,
                r.objects_read,
                r.fulltexts_read,
                r.removed,
                r.chunks_written,
                r.vectors_added,
                r.library_version.map_or("?".to_string(), |v| v.to_string()),
                r.requests,
                r.seconds
            );
            if let Some(line) = files_line(&r) {
                println!("{line}");
            }
            if r.files.contains_key("not_downloaded") {
                eprintln!(
                    "zotero-mcp: some attachments' files are only on zotero.org and were not \
                     downloaded; ZOTERO_INDEX_DOWNLOAD_FILES=missing (or all) downloads them to \
                     index their text (see docs/configuration.md for what it costs)"
                );
            }
            if r.cancelled {
                eprintln!("zotero-mcp: cancelled; run update-db again to resume");
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("zotero-mcp: the update failed: {e}");
            // An index directory that cannot be used is configuration (exit 2); a damaged
            // file, a full disk, another update running are failures of this run (exit 1).
            match &e {
                search_index::UpdateError::Index(
                    zotero_index::IndexError::NoDirectory
                    | zotero_index::IndexError::Io {
                        remedy: zotero_index::Remedy::Directory,
                        ..
                    }
                    | zotero_index::IndexError::Storage {
                        remedy: zotero_index::Remedy::Directory,
                        ..
                    },
                ) => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// The files read for their text, by outcome: `files: 3 due; text 2, damaged 1`.
fn files_line(r: &search_index::UpdateReport) -> Option<String> {
    if r.files_to_read == 0 && r.files.is_empty() {
        return None;
    }
    let outcomes: Vec<String> = r.files.iter().map(|(k, n)| format!("{k} {n}")).collect();
    Some(format!(
        "{}: {} attachment files due{}{}",
        r.library,
        r.files_to_read,
        if outcomes.is_empty() { "" } else { "; " },
        outcomes.join(", ")
    ))
}

pub async fn db_status(config: Config, library: Option<String>, json: bool) -> ExitCode {
    let which = match parse_library(library.as_deref()) {
        Ok(l) => l.map(SearchLibrary::One),
        Err(code) => return code,
    };
    let svc = match ZoteroService::new(&config) {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let data = match statuses(&svc, which, &CancellationToken::new()).await {
        Ok(d) => d,
        Err(e) => return usage(&e.message),
    };
    if json {
        match serde_json::to_string_pretty(&data) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("zotero-mcp: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", human(&data));
    }
    ExitCode::SUCCESS
}

fn human(d: &SearchDatabaseStatusData) -> String {
    let mut out = format!("index directory: {}\n", d.index_dir);
    match &d.encoder {
        Some(m) => out.push_str(&format!("sentence model: {} ({} dims)\n", m.id, m.dims)),
        None => out.push_str("sentence model: not loaded (`zotero-mcp update-db` loads it)\n"),
    }
    if let Some(m) = &d.embedding_model_setting {
        out.push_str(&format!("configured model (ZOTERO_EMBEDDING_MODEL): {m}\n"));
    }
    for l in &d.libraries {
        out.push_str(&format!("\n{}:\n", l.library));
        if !l.initialized {
            out.push_str("  no index\n");
        } else {
            let version = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
            out.push_str(&format!(
                "  {} items, {} objects, {} chunks ({} with vectors)\n  library version {} indexed, {} now{}\n  last update {}, {} bytes, full text {}\n",
                l.items,
                l.documents,
                l.chunks,
                l.chunks_with_vectors,
                version(l.indexed_version),
                version(l.current_version),
                match l.versions_behind {
                    // Zotero's database holds edits that no library version shows yet.
                    Some(0) if l.stale == Some(true) => {
                        " (changes in Zotero not indexed yet)".to_string()
                    }
                    Some(0) => " (up to date)".to_string(),
                    Some(n) => format!(" ({n} behind)"),
                    None => String::new(),
                },
                l.last_update.as_deref().unwrap_or("never"),
                l.size_bytes,
                if l.fulltext_included { "included" } else { "not included" },
            ));
            if let Some(m) = &l.model {
                out.push_str(&format!(
                    "  vectors of {}@{} ({} dims)\n",
                    m.id, m.revision, m.dims
                ));
            }
        }
        if let Some(a) = &l.action {
            out.push_str(&format!("  {a}\n"));
        }
    }
    out
}
