//! Prints figures for the database backend on a generated 10,000-item library: opening (the
//! snapshot copy and its index), quick search p50/p99, one item read, an item's children, a
//! page of 100, the `update-db`-style full listing (every key and version, then every item
//! by `itemKey=` batches of 50, as the search index's sync reads them), a read while the
//! files are unchanged, and the process's peak memory. `cargo bench -p zotero-db --bench db`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use zotero_db::{fixture, LibraryScope, ZoteroDb};

const ITEMS: usize = 10_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// The calling thread's CPU time: on a machine shared with other work, wall time also
/// counts the time the thread waited for a core.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec the call writes into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

struct Figures {
    wall: (Duration, Duration),
    cpu: (Duration, Duration),
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:.2?}, p99 {:.2?} (CPU time: p50 {:.2?}, p99 {:.2?})",
            self.wall.0, self.wall.1, self.cpu.0, self.cpu.1
        )
    }
}

fn time<F: FnMut(usize)>(runs: usize, mut f: F) -> Figures {
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..runs)
        .map(|i| {
            let (t, c) = (Instant::now(), thread_cpu());
            f(i);
            (t.elapsed(), thread_cpu() - c)
        })
        .unzip();
    wall.sort();
    cpu.sort();
    Figures {
        wall: (percentile(&wall, 0.5), percentile(&wall, 0.99)),
        cpu: (percentile(&cpu, 0.5), percentile(&cpu, 0.99)),
    }
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    drop(fixture::generated(dir.path(), ITEMS).unwrap());
    let size = std::fs::metadata(fixture::db_path(dir.path()))
        .unwrap()
        .len();
    println!(
        "generated {ITEMS} items ({:.1} MB) in {:.2?}",
        size as f64 / 1e6,
        t.elapsed()
    );

    let (t, c) = (Instant::now(), thread_cpu());
    let db = ZoteroDb::open(dir.path()).unwrap();
    println!(
        "open (copy + schema + index): {:.2?}, CPU time {:.2?}",
        t.elapsed(),
        thread_cpu() - c
    );

    let queries = [
        "topic 42",
        "Author17",
        "1999",
        "Writer250 field",
        "nothing-matches",
    ];
    let f = time(100, |i| {
        let q = queries[i % queries.len()].replace(' ', "%20");
        let a = db
            .answer(
                LibraryScope::User,
                &format!("/items/top?q={q}&limit=25&format=json"),
            )
            .unwrap();
        assert_eq!(a.status, 200);
    });
    println!("quick search, 25 results: {f}");

    let f = time(100, |i| {
        let a = db
            .answer(
                LibraryScope::User,
                &format!("/items/top?tag=tag{}&sort=title&limit=25", i % 50),
            )
            .unwrap();
        assert_eq!(a.status, 200);
    });
    println!("tag filter sorted by title: {f}");

    let f = time(1000, |i| {
        let a = db
            .answer(
                LibraryScope::User,
                &format!("/items/K{:07}", (i * 7) % ITEMS),
            )
            .unwrap();
        assert_eq!(a.status, 200);
    });
    println!("one item: {f}");

    let f = time(20, |i| {
        let a = db
            .answer(
                LibraryScope::User,
                &format!("/items/top?limit=100&start={}", i * 100),
            )
            .unwrap();
        assert_eq!(a.status, 200);
    });
    println!("page of 100 items: {f}");

    let f = time(1000, |i| {
        let a = db
            .answer(
                LibraryScope::User,
                &format!("/items/K{:07}/children", (i * 10) % ITEMS),
            )
            .unwrap();
        assert_eq!(a.status, 200);
    });
    println!("an item's children: {f}");

    // update-db's metadata pass: every key and version, then the items 50 keys at a time.
    let (t, c) = (Instant::now(), thread_cpu());
    let versions = db
        .answer(
            LibraryScope::User,
            "/items?since=0&format=versions&includeTrashed=1",
        )
        .unwrap();
    let versions: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&versions.body).unwrap();
    let keys: Vec<&String> = versions.keys().collect();
    let mut batches = Vec::new();
    let mut read = 0;
    for chunk in keys.chunks(50) {
        let b = Instant::now();
        let joined: Vec<&str> = chunk.iter().map(|k| k.as_str()).collect();
        let a = db
            .answer(
                LibraryScope::User,
                &format!(
                    "/items?itemKey={}&includeTrashed=1&format=json&limit=50",
                    joined.join(",")
                ),
            )
            .unwrap();
        assert_eq!(a.status, 200);
        read += serde_json::from_slice::<Vec<serde_json::Value>>(&a.body)
            .unwrap()
            .len();
        batches.push(b.elapsed());
    }
    let (total, total_cpu) = (t.elapsed(), thread_cpu() - c);
    assert_eq!(read, keys.len());
    batches.sort();
    println!(
        "update-db full listing: {} items in {total:.2?}, CPU time {total_cpu:.2?} ({} batches of 50: p50 {:.2?}, p99 {:.2?})",
        read,
        batches.len(),
        percentile(&batches, 0.5),
        percentile(&batches, 0.99)
    );

    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MB", kib as f64 / 1024.0);
    }
}
