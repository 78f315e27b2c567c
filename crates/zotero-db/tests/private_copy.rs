//! The snapshot is private: under the common umask 022 its folder is made 0700 and its
//! copies 0600, so no other local user reads the library from the temporary directory. A
//! test binary of its own, as it sets the process's umask and TMPDIR.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use zotero_db::fixture::{self, keys};
use zotero_db::{LibraryScope, ZoteroDb};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn the_snapshot_folder_and_copies_are_the_owners_alone_under_umask_022() {
    let data = tempfile::tempdir().unwrap();
    drop(fixture::standard(data.path()).unwrap());
    // Rows in a -wal, so that both files are copied.
    let b = fixture::Builder::open(data.path()).unwrap();
    b.journal_as_zotero_10().unwrap();
    b.item(1, "WALITEM1", "book", &[("title", "In the wal")], &[], &[])
        .unwrap();
    assert!(data.path().join("zotero.sqlite-wal").exists());

    let tmp = tempfile::tempdir().unwrap();
    // SAFETY: umask only sets the process's file mode mask; this binary runs this test alone.
    let before = unsafe { libc::umask(0o022) };
    std::env::set_var("TMPDIR", tmp.path());
    let db = ZoteroDb::open(data.path());
    std::env::remove_var("TMPDIR");
    // SAFETY: as above, restoring the mask found.
    unsafe { libc::umask(before) };
    let db = db.unwrap();
    let a = db
        .answer(LibraryScope::User, &format!("/items/{}", keys::BOOK))
        .unwrap();
    assert_eq!(a.status, 200);

    let folders: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("zotero-mcp-db-")
        })
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let folder = &folders[0];
    assert_eq!(mode(folder), 0o700, "the snapshot's folder");
    let mut copies = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        copies.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    copies.sort();
    assert!(
        copies.starts_with(&["zotero.sqlite".to_string(), "zotero.sqlite-wal".to_string()]),
        "{copies:?}"
    );
    drop(b);
}
