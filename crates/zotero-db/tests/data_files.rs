//! Only regular files of the data directory are read, and cached full texts only inside
//! `storage/`: a FIFO in place of the `-wal`, the database or a `.zotero-ft-cache` is
//! refused at once (no open waits for a writer, no lock stays held, the next read goes on),
//! and a cache file or key folder linked out of `storage/` never hands over what it points
//! to. A call that does not come back is reported as hung after a minute (a liveness
//! check, not a timing: each answers at once when the files are refused).
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use zotero_db::fixture::{self, keys};
use zotero_db::{DbAnswer, DbError, LibraryScope, ZoteroDb};

/// How long a call may take before it is called hung.
const HUNG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Opens the FIFO for writing and closes it: a reader stuck in its open (the bug) gets
/// end of file and its thread ends.
fn release(fifo: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo);
}

/// Runs `call` on a thread; its result, or a panic naming `what` as hung (after releasing
/// `fifo` so the stuck thread ends).
fn answered<T: Send + 'static>(
    what: &str,
    fifo: &Path,
    call: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(call());
    });
    match rx.recv_timeout(HUNG) {
        Ok(v) => v,
        Err(_) => {
            release(fifo);
            panic!("{what}: hung on a FIFO in the data directory");
        }
    }
}

fn standard() -> (tempfile::TempDir, Arc<ZoteroDb>) {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let db = Arc::new(ZoteroDb::open(dir.path()).unwrap());
    (dir, db)
}

fn cache_of(dir: &Path, key: &str) -> PathBuf {
    dir.join("storage").join(key).join(".zotero-ft-cache")
}

fn get(db: &ZoteroDb, path: &str) -> Result<DbAnswer, DbError> {
    db.answer(LibraryScope::User, path)
}

fn title(db: &ZoteroDb, key: &str) -> String {
    let a = get(db, &format!("/items/{key}")).unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    v["data"]["title"].as_str().unwrap().to_string()
}

#[test]
fn a_fifo_as_the_wal_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let wal = dir.path().join("zotero.sqlite-wal");
    mkfifo(&wal);
    let data = dir.path().to_path_buf();
    let opened = answered("ZoteroDb::open", &wal, move || {
        ZoteroDb::open(&data).map(|_| ())
    });
    let e = opened.unwrap_err();
    assert!(matches!(e, DbError::NotAFile { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("write-ahead log") && text.contains("FIFO"),
        "{text}"
    );
}

#[test]
fn a_database_replaced_by_a_fifo_is_refused_and_reads_resume_when_it_is_back() {
    let (dir, db) = standard();
    let path = fixture::db_path(dir.path());
    let kept = dir.path().join("kept.sqlite");
    std::fs::rename(&path, &kept).unwrap();
    mkfifo(&path);
    let reader = Arc::clone(&db);
    let read = answered("a read", &path, move || {
        get(&reader, &format!("/items/{}", keys::BOOK)).map(|_| ())
    });
    let e = read.unwrap_err();
    assert!(matches!(e, DbError::NotAFile { .. }), "{e:?}");
    assert!(e.to_string().contains("zotero.sqlite"), "{e}");
    // The status's lock probe does not wait on it either.
    let prober = Arc::clone(&db);
    answered("status", &path, move || prober.status().map(|_| ())).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    std::fs::rename(&kept, &path).unwrap();
    assert_eq!(
        title(&db, keys::BOOK),
        "The Structure of Scientific Revolutions"
    );
}

#[test]
fn a_fifo_as_a_full_text_cache_is_refused_and_holds_up_no_other_read() {
    let (dir, db) = standard();
    let cache = cache_of(dir.path(), keys::PDF);
    std::fs::remove_file(&cache).unwrap();
    mkfifo(&cache);
    let reader = Arc::clone(&db);
    let text = answered("the full text", &cache, move || {
        get(&reader, &format!("/items/{}/fulltext", keys::PDF))
    });
    let e = text.unwrap_err();
    assert!(matches!(e, DbError::NotAFile { .. }), "{e:?}");
    assert!(e.to_string().contains("cached full text"), "{e}");
    let reader = Arc::clone(&db);
    let cached = answered("cached_fulltext", &cache, move || {
        reader.cached_fulltext(keys::PDF)
    });
    assert!(
        matches!(cached, Err(DbError::NotAFile { .. })),
        "{cached:?}"
    );
    // A search in everything reads every cache: the FIFO is no match, the rest still are.
    let reader = Arc::clone(&db);
    let found = answered("a search in everything", &cache, move || {
        get(&reader, "/items?q=Kuhn&qmode=everything")
    })
    .unwrap();
    assert_eq!(found.status, 200);
    assert!(found.total_results.unwrap() >= 1);
    // And the next database read is not held up by a lock left held.
    let reader = Arc::clone(&db);
    let next = answered("the next read", &cache, move || title(&reader, keys::BOOK));
    assert_eq!(next, "The Structure of Scientific Revolutions");
}

#[test]
fn a_full_text_cache_linked_out_of_storage_is_never_read() {
    let (dir, db) = standard();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("environ");
    std::fs::write(&secret, "ZOTERO_API_KEY=sekritsekrit").unwrap();
    let cache = cache_of(dir.path(), keys::PDF);
    std::fs::remove_file(&cache).unwrap();
    std::os::unix::fs::symlink(&secret, &cache).unwrap();
    let leaked = |r: &Result<DbAnswer, DbError>| match r {
        Ok(a) => String::from_utf8_lossy(&a.body).contains("sekrit"),
        Err(e) => e.to_string().contains("sekrit"),
    };

    let text = get(&db, &format!("/items/{}/fulltext", keys::PDF));
    assert!(!leaked(&text), "{text:?}");
    assert!(matches!(text, Err(DbError::NotAFile { .. })), "{text:?}");
    let cached = db.cached_fulltext(keys::PDF);
    assert!(
        matches!(cached, Err(DbError::NotAFile { .. })),
        "{cached:?}"
    );
    assert!(!db.has_cached_fulltext(keys::PDF));
    let found = get(&db, "/items?q=sekritsekrit&qmode=everything").unwrap();
    assert_eq!(found.total_results, Some(0));
    // The attachment's file a link out too: not even its size is told.
    let pdf = dir
        .path()
        .join("storage")
        .join(keys::PDF)
        .join("lovelace2017.pdf");
    std::fs::remove_file(&pdf).unwrap();
    std::os::unix::fs::symlink(&secret, &pdf).unwrap();
    let item = get(&db, &format!("/items/{}", keys::PDF)).unwrap();
    let item: Value = serde_json::from_slice(&item.body).unwrap();
    assert!(item["links"].get("enclosure").is_none(), "{item}");

    // The key's folder itself a link out of storage/.
    let folder = dir.path().join("storage").join(keys::PDF);
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(outside.path().join(".zotero-ft-cache"), "sekritsekrit").unwrap();
    std::os::unix::fs::symlink(outside.path(), &folder).unwrap();
    let text = get(&db, &format!("/items/{}/fulltext", keys::PDF));
    assert!(!leaked(&text), "{text:?}");
    assert!(
        matches!(text, Err(DbError::OutsideStorage { .. })),
        "{text:?}"
    );
    assert!(db.cached_fulltext(keys::PDF).is_err());
    let found = get(&db, "/items?q=sekritsekrit&qmode=everything").unwrap();
    assert_eq!(found.total_results, Some(0));
}
