//! What a source without library versions (Zotero's own database) keeps in an index: its
//! marks, which survive a reopen, never lower the index's library version, can be
//! forgotten, and go with a rebuild; and the collections each document is filed in.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use zotero_index::{Index, LibraryId};

#[test]
fn marks_survive_a_reopen_stay_apart_from_versions_and_go_with_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let id = LibraryId::User;
    {
        let mut index = Index::open(dir.path(), &id).unwrap();
        assert_eq!(index.source_mark("db-items").unwrap(), None);
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        b.set_sync_version("items", 40).unwrap();
        b.set_source_mark("db-items", "2024-06-01 12:00:01")
            .unwrap();
        b.set_source_mark("db-fulltext", "1717243201000").unwrap();
        b.commit().unwrap();
    }
    let mut index = Index::open(dir.path(), &id).unwrap();
    assert_eq!(
        index.source_mark("db-items").unwrap().as_deref(),
        Some("2024-06-01 12:00:01")
    );
    assert_eq!(
        index.library_version().unwrap(),
        Some(40),
        "no mark is a version"
    );
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        b.clear_source_mark("db-fulltext").unwrap();
        b.commit().unwrap();
    }
    assert_eq!(index.source_mark("db-fulltext").unwrap(), None);
    drop(index);
    let lock = Index::lock(dir.path(), &id).unwrap();
    let rebuilt = Index::replace(&lock, &id).unwrap();
    assert_eq!(rebuilt.source_mark("db-items").unwrap(), None);
}

#[test]
fn documents_name_the_collections_they_are_filed_in() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let mut filed = index.document_collections().unwrap();
    filed.sort();
    assert_eq!(
        filed,
        [
            (
                "CANCER01".to_string(),
                vec!["COLLAAAA".to_string(), "COLLBBBB".to_string()]
            ),
            ("SLEEP001".to_string(), vec!["COLLAAAA".to_string()]),
        ]
    );
}
