//! The snapshot follows the original exactly and cheaply: unchanged files cost no new copy,
//! a database replaced by one of the same size and mtime is copied again, a database Zotero
//! holds in exclusive locking mode with rows still in its `-wal` is read whole and left
//! byte for byte as it was, and a damaged database is named as such.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;
use zotero_db::fixture::{self, keys, Builder};
use zotero_db::{DbError, LibraryScope, ZoteroDb};

fn title(db: &ZoteroDb, key: &str) -> String {
    let a = db
        .answer(LibraryScope::User, &format!("/items/{key}"))
        .unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    v["data"]["title"].as_str().unwrap_or_default().to_string()
}

fn search(db: &ZoteroDb, q: &str) -> Vec<String> {
    let a = db
        .answer(LibraryScope::User, &format!("/items?q={q}"))
        .unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    let mut keys: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

#[test]
fn unchanged_files_cost_no_copy_and_each_change_one() {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let db = ZoteroDb::open(dir.path()).unwrap();
    for _ in 0..20 {
        assert_eq!(search(&db, "kuhn"), vec![keys::BOOK, keys::SECTION]);
    }
    db.status().unwrap();
    assert_eq!(db.snapshots_taken(), 1);
    let b = Builder::open(dir.path()).unwrap();
    b.item(1, "NEWITEM1", "book", &[("title", "Kuhn again")], &[], &[])
        .unwrap();
    assert_eq!(
        search(&db, "kuhn"),
        vec![keys::BOOK, "NEWITEM1", keys::SECTION]
    );
    assert_eq!(search(&db, "kuhn").len(), 3);
    assert_eq!(db.snapshots_taken(), 2);
}

/// Sets a file's mtime (the same syscall `touch -d` makes).
fn set_mtime(path: &Path, to: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(to)
        .unwrap();
}

#[test]
fn a_database_replaced_by_one_of_the_same_size_and_mtime_is_copied_again() {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let path = fixture::db_path(dir.path());
    let db = ZoteroDb::open(dir.path()).unwrap();
    assert_eq!(
        title(&db, keys::BOOK),
        "The Structure of Scientific Revolutions"
    );
    let (len, mtime) = {
        let m = std::fs::metadata(&path).unwrap();
        (m.len(), m.modified().unwrap())
    };
    // A restored copy (Zotero's backup, a sync tool): the same size and mtime, another file.
    let other = tempfile::tempdir().unwrap();
    let replacement = fixture::db_path(other.path());
    std::fs::copy(&path, &replacement).unwrap();
    let c = Builder::open(other.path()).unwrap();
    c.conn
        .execute(
            "UPDATE itemDataValues SET value = 'The Structure of Scientific RevolutionS' \
             WHERE value = 'The Structure of Scientific Revolutions'",
            [],
        )
        .unwrap();
    drop(c);
    set_mtime(&replacement, mtime);
    std::fs::rename(&replacement, &path).unwrap();
    let m = std::fs::metadata(&path).unwrap();
    assert_eq!((m.len(), m.modified().unwrap()), (len, mtime));
    assert_eq!(
        title(&db, keys::BOOK),
        "The Structure of Scientific RevolutionS"
    );
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>, SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_database_zotero_holds_locked_with_rows_in_its_wal_is_read_whole_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    // As Zotero 10 holds it while it runs: WAL, exclusive locking, the lock taken by a
    // write, and that write still in the -wal.
    b.conn
        .execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; \
             PRAGMA locking_mode = EXCLUSIVE;",
        )
        .unwrap();
    b.item(
        1,
        "LOCKED01",
        "book",
        &[("title", "Written under the lock")],
        &[],
        &[],
    )
    .unwrap();
    let wal = dir.path().join("zotero.sqlite-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    // Another SQLite connection cannot even read it now.
    let other = rusqlite::Connection::open_with_flags(
        fixture::db_path(dir.path()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    assert!(other
        .query_row("SELECT COUNT(*) FROM items", [], |r| r.get::<_, i64>(0))
        .is_err());
    drop(other);
    let before = files(dir.path());
    let db = ZoteroDb::open(dir.path()).unwrap();
    assert_eq!(search(&db, "lock"), vec!["LOCKED01"]);
    assert_eq!(title(&db, "LOCKED01"), "Written under the lock");
    assert_eq!(search(&db, "kuhn"), vec![keys::BOOK, keys::SECTION]);
    for p in [
        "/collections",
        "/tags",
        "/items/PDFA2345/fulltext",
        "/items/top",
    ] {
        assert_eq!(db.answer(LibraryScope::User, p).unwrap().status, 200, "{p}");
    }
    db.status().unwrap();
    drop(db);
    assert!(
        files(dir.path()) == before,
        "zotero.sqlite and its -wal keep their bytes and mtimes, and nothing appears beside them"
    );
    drop(b);
}

#[test]
fn a_damaged_database_is_named_damaged_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let path = fixture::db_path(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // Every page but the first (the header and the schema) overwritten.
    for b in bytes.iter_mut().skip(4096) {
        *b = 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = ZoteroDb::open(dir.path()).err().unwrap();
    assert!(matches!(err, DbError::Corrupt { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("damaged"), "{text}");
    assert!(text.contains("Check Database Integrity"), "{text}");
    assert!(text.contains("zotero.sqlite"), "{text}");
}
