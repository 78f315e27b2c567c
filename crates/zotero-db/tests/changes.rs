//! What changed in a library, read from the snapshot for the search index: every item at
//! first, then what Zotero wrote since the mark (an edit, a new item, the trash) and not what
//! it erased; the marks never pass now; group libraries; the cached full texts by the
//! cache file's time. The tests write the source database as Zotero does (WAL, stamps in
//! `clientDateModified`), and the snapshot follows.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::{Duration, SystemTime};

use rusqlite::Connection;
use zotero_db::fixture::{self, keys, Builder};
use zotero_db::{DbError, LibraryScope, ZoteroDb};

/// The standard fixture, run as Zotero 10 runs it: WAL, nothing checkpointed (every write
/// grows the `-wal`, so the snapshot sees each one).
fn standard() -> (tempfile::TempDir, Builder, ZoteroDb) {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    b.journal_as_zotero_10().unwrap();
    let db = ZoteroDb::open(dir.path()).unwrap();
    (dir, b, db)
}

fn user_keys(c: &Connection) -> Vec<String> {
    let mut stmt = c
        .prepare("SELECT key FROM items WHERE libraryID = 1 ORDER BY key")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn changed_keys(c: &zotero_db::ItemChanges) -> Vec<String> {
    c.changed.iter().map(|c| c.key.clone()).collect()
}

#[test]
fn every_item_first_then_what_zotero_wrote_since_the_mark() {
    let (_dir, b, db) = standard();
    let first = db.item_changes(LibraryScope::User, None).unwrap();
    let all = user_keys(&b.conn);
    let mut listed = changed_keys(&first);
    listed.sort();
    assert_eq!(
        listed, all,
        "a first read lists every item, the trash included"
    );
    assert!(listed.contains(&keys::TRASHED.to_string()));
    assert_eq!(first.keys.len(), all.len());
    assert_eq!(first.library_version, 40);
    let mut collections: Vec<&str> = first.collections.iter().map(String::as_str).collect();
    collections.sort_unstable();
    assert_eq!(collections, [keys::TOP_COLLECTION, keys::SUB_COLLECTION]);
    let stamps: Vec<&str> = first.changed.iter().map(|c| c.changed.as_str()).collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "oldest first");
    let mark = first.mark.clone().unwrap();
    assert_eq!(Some(mark.as_str()), stamps.last().copied());

    // Nothing written: only the items of the mark's second are read again.
    let again = db.item_changes(LibraryScope::User, Some(&mark)).unwrap();
    assert!(again.changed.iter().all(|c| c.changed == mark), "{again:?}");
    assert_eq!(again.mark.as_deref(), Some(mark.as_str()));

    // Zotero edits one item, adds one, erases one, moves one to the trash.
    b.edit_title(
        keys::ARTICLE,
        "Photosynthesis revisited",
        "2024-06-01 12:00:00",
    )
    .unwrap();
    let new_id = b
        .item(
            1,
            "NEWITEM1",
            "book",
            &[("title", "Quasar spectra")],
            &[],
            &[],
        )
        .unwrap();
    b.conn
        .execute(
            "UPDATE items SET clientDateModified = '2024-06-01 12:00:01', synced = 0 WHERE itemID = ?1",
            [new_id],
        )
        .unwrap();
    b.erase(keys::BOOK).unwrap();
    // `Zotero.Items.trash`: the stamp and a `deletedItems` row, no `save()`.
    b.conn
        .execute(
            "UPDATE items SET synced = 0, clientDateModified = '2024-06-01 12:00:01' WHERE key = ?1",
            [keys::THESIS],
        )
        .unwrap();
    b.conn
        .execute(
            "INSERT INTO deletedItems (itemID) SELECT itemID FROM items WHERE key = ?1",
            [keys::THESIS],
        )
        .unwrap();

    let next = db.item_changes(LibraryScope::User, Some(&mark)).unwrap();
    let mut got: Vec<String> = changed_keys(&next)
        .into_iter()
        .filter(|k| next.changed.iter().any(|c| &c.key == k && c.changed > mark))
        .collect();
    got.sort();
    assert_eq!(got, ["ARTC2345", "NEWITEM1", "THES2345"]);
    assert!(!next.keys.contains(keys::BOOK), "an erased item is no key");
    assert!(next.keys.contains("NEWITEM1"));
    assert_eq!(next.mark.as_deref(), Some("2024-06-01 12:00:01"));
    let objects = db
        .items_by_key(
            LibraryScope::User,
            &[keys::THESIS.to_string(), keys::BOOK.to_string()],
        )
        .unwrap();
    assert_eq!(objects.len(), 1, "an erased item is simply absent");
    assert_eq!(objects[0]["data"]["deleted"], true);
    assert_eq!(objects[0]["data"]["title"], "On quantum yields");
}

#[test]
fn a_mark_never_passes_now() {
    let (_dir, b, db) = standard();
    // A clock set ahead when Zotero saved it.
    b.conn
        .execute(
            "UPDATE items SET clientDateModified = '2999-01-01 00:00:00' WHERE key = ?1",
            [keys::PAPER],
        )
        .unwrap();
    let first = db.item_changes(LibraryScope::User, None).unwrap();
    let mark = first.mark.unwrap();
    assert!(mark.as_str() < "2999", "{mark}");
    assert!(mark.as_str() > "2025", "{mark}");
    // So that what is saved after it, at the right time, is still read.
    let next = db.item_changes(LibraryScope::User, Some(&mark)).unwrap();
    assert!(changed_keys(&next).contains(&keys::PAPER.to_string()));
}

#[test]
fn group_libraries_are_read_alone_and_an_unknown_one_is_named() {
    let (_dir, _b, db) = standard();
    let group = db
        .item_changes(LibraryScope::Group(keys::GROUP_A), None)
        .unwrap();
    assert_eq!(changed_keys(&group), [keys::GROUP_ITEM]);
    assert_eq!(group.library_version, 7);
    let objects = db
        .items_by_key(
            LibraryScope::Group(keys::GROUP_A),
            &[keys::GROUP_ITEM.to_string(), keys::ARTICLE.to_string()],
        )
        .unwrap();
    assert_eq!(objects.len(), 1, "another library's key is not this one's");
    let e = db
        .item_changes(LibraryScope::Group(999), None)
        .err()
        .unwrap();
    assert!(matches!(e, DbError::NoLibrary { .. }), "{e}");
    assert!(e.to_string().contains("group:999"), "{e}");
}

#[test]
fn attachments_name_their_top_level_item() {
    let (_dir, _b, db) = standard();
    let tops = db.attachment_items(LibraryScope::User).unwrap();
    assert_eq!(tops.get(keys::PDF).map(String::as_str), Some(keys::ARTICLE));
}

#[test]
fn full_texts_are_read_again_when_their_cache_file_is_written() {
    let (dir, _b, db) = standard();
    let first = db.fulltext_changes(LibraryScope::User, None).unwrap();
    let listed: Vec<&str> = first.changed.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(listed, [keys::PDF]);
    let mark = first.mark.unwrap();
    assert_eq!(
        db.cached_fulltext(keys::PDF).unwrap().as_deref(),
        Some(fixture::PDF_TEXT)
    );
    // Inclusive at the mark, nothing after it.
    assert_eq!(
        db.fulltext_changes(LibraryScope::User, Some(mark))
            .unwrap()
            .changed
            .len(),
        1
    );
    let later = db
        .fulltext_changes(LibraryScope::User, Some(mark + 1))
        .unwrap();
    assert!(later.changed.is_empty());
    assert_eq!(later.mark, Some(mark + 1), "an unchanged mark stays");

    // Zotero indexes the PDF again: the cache file is written anew.
    let cache = dir
        .path()
        .join("storage")
        .join(keys::PDF)
        .join(".zotero-ft-cache");
    std::fs::write(&cache, "Reindexed text about quasars").unwrap();
    let f = std::fs::File::options().write(true).open(&cache).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(2))
        .unwrap();
    let next = db
        .fulltext_changes(LibraryScope::User, Some(mark + 1))
        .unwrap();
    assert_eq!(next.changed.len(), 1);
    assert_eq!(
        db.cached_fulltext(keys::PDF).unwrap().as_deref(),
        Some("Reindexed text about quasars")
    );
    assert_eq!(db.cached_fulltext("NOTEXIST").unwrap(), None);
    assert_eq!(db.cached_fulltext("../x").unwrap(), None);
}

#[test]
fn what_the_next_read_would_bring_is_seen_without_reading_it() {
    let (dir, b, db) = standard();
    let user = LibraryScope::User;
    // Nothing read yet: a library with items is ahead; an empty one is not.
    assert!(db.items_saved_after(user, None).unwrap());
    let empty = tempfile::tempdir().unwrap();
    drop(Builder::create(empty.path()).unwrap());
    let none = ZoteroDb::open(empty.path()).unwrap();
    assert!(!none.items_saved_after(user, None).unwrap());
    assert!(!none.fulltexts_written_after(user, None).unwrap());

    let mark = db.item_changes(user, None).unwrap().mark.unwrap();
    let group = LibraryScope::Group(keys::GROUP_A);
    let group_mark = db.item_changes(group, None).unwrap().mark.unwrap();
    assert!(!db.items_saved_after(user, Some(&mark)).unwrap());
    // A local edit: `clientDateModified` moves, the library version does not.
    b.edit_title(keys::BOOK, "Edited offline", "2099-01-01 00:00:00")
        .unwrap();
    assert!(db.items_saved_after(user, Some(&mark)).unwrap());
    assert!(!db.items_saved_after(group, Some(&group_mark)).unwrap());

    let text_mark = db.fulltext_changes(user, None).unwrap().mark.unwrap();
    assert!(db.fulltexts_written_after(user, None).unwrap());
    assert!(!db.fulltexts_written_after(user, Some(text_mark)).unwrap());
    let cache = dir
        .path()
        .join("storage")
        .join(keys::PDF)
        .join(".zotero-ft-cache");
    let f = std::fs::File::options().write(true).open(&cache).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(2))
        .unwrap();
    assert!(db.fulltexts_written_after(user, Some(text_mark)).unwrap());
    assert!(db.has_cached_fulltext(keys::PDF));
    std::fs::remove_file(&cache).unwrap();
    assert!(!db.has_cached_fulltext(keys::PDF));
    assert!(!db.has_cached_fulltext("../x"));
}
