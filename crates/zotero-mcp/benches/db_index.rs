//! The search index synced from Zotero's own database, as the issue measures it
//! ("`update-db` on a 10,000-item library's metadata in seconds"): a generated
//! `zotero.sqlite` of BENCH_ITEMS (default 10,000) journal articles, then
//! `zotero-mcp update-db --no-fulltext` with `ZOTERO_DATA_DIR` and no model, timed: the
//! first (full) pass, a pass after 10 edits, and a pass with nothing changed. Prints the
//! machine's load (`uptime`) with the figures, and the binary measured.
//!
//! `cargo bench -p zotero-mcp --bench db_index` measures the newest release build
//! (`support::server_binary`; `ZOTERO_MCP_BENCH_BIN` names another, e.g. a debug build).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn uptime() -> String {
    Command::new("uptime")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|e| format!("(uptime: {e})"))
}

/// GNU time, when installed: the CPU seconds a run took, which the machine's load does not
/// inflate as it inflates the wall time.
const GNU_TIME: &str = "/usr/bin/time";

/// One `update-db` run: its wall time, its CPU time (user + system) when GNU time is
/// there, and its summary line.
fn update_db(bin: &Path, data: &Path, index: &Path) -> (f64, Option<f64>, String) {
    let timed = Path::new(GNU_TIME).is_file();
    let mut cmd = if timed {
        let mut c = Command::new(GNU_TIME);
        c.args(["-f", "cpu %U %S"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let started = Instant::now();
    let out = cmd
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("ZOTERO_DATA_DIR", data)
        .env("ZOTERO_INDEX_DIR", index)
        .env("ZOTERO_EMBEDDING_MODEL", "none")
        .args(["update-db", "--no-fulltext"])
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "update-db failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cpu = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("cpu "))
        .and_then(|t| {
            let mut parts = t.split_whitespace().map(|v| v.parse::<f64>().ok());
            Some(parts.next()?? + parts.next()??)
        });
    (
        secs,
        cpu,
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    )
}

fn cpu(c: Option<f64>) -> String {
    c.map_or(String::new(), |c| format!(" ({c:.2} s CPU)"))
}

fn main() {
    let items = env_usize("BENCH_ITEMS", 10_000);
    let bin = support::server_binary();
    println!("binary: {}", bin.display());
    let data = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let zotero = zotero_db::fixture::generated(data.path(), items).unwrap();
    println!(
        "generated {items} items in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    println!("load before: {}", uptime());
    let (secs, c, summary) = update_db(&bin, data.path(), index.path());
    println!(
        "update-db, first pass ({items} items' metadata): {secs:.2} s{} — {summary}",
        cpu(c)
    );

    // Zotero edits 10 items (`Item.save()` stamps clientDateModified).
    zotero
        .conn
        .execute(
            "UPDATE items SET clientDateModified = datetime('now'), synced = 0 \
             WHERE itemID IN (SELECT itemID FROM items ORDER BY itemID LIMIT 10)",
            [],
        )
        .unwrap();
    let (secs, c, summary) = update_db(&bin, data.path(), index.path());
    println!(
        "update-db after 10 edits: {secs:.2} s{} — {summary}",
        cpu(c)
    );
    let (secs, c, summary) = update_db(&bin, data.path(), index.path());
    println!(
        "update-db, nothing changed: {secs:.2} s{} — {summary}",
        cpu(c)
    );
    println!("load after: {}", uptime());
}
