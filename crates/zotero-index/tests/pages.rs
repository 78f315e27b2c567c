//! Text read from an attachment's file page by page: its chunks name their page, a hit by
//! words or by meaning says on which page its passage is, and the `files` table keeps which
//! files are due to be read (a new state, an outcome tried again) and forgets what is
//! deleted.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use zotero_index::{
    DocKind, Document, FileEntry, Matched, Mode, PageRef, PageText, SearchQuery, SynonymEncoder,
};

/// A two-page file's text for the attachment `FILEATT1` of `CANCER01`; page 2 (labelled
/// `217`) holds the word "thermometer", its text starting at character 20 of a reader's.
fn file_doc() -> Document {
    Document::file_text(
        "FILEATT1",
        "CANCER01",
        11,
        &[
            PageText {
                index: 0,
                label: "216",
                text: "Filler on the first page.",
                offset: Some(20),
            },
            PageText {
                index: 1,
                label: "217",
                text: "The thermometer resolves one tenth of a kelvin.",
                offset: Some(20),
            },
        ],
        false,
    )
}

#[test]
fn a_hit_in_a_file_s_text_names_its_page_by_words_and_by_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        b.upsert(&file_doc()).unwrap();
        b.commit().unwrap();
        up.embed_pending(&SynonymEncoder::default(), 4, usize::MAX)
            .unwrap();
    }
    let enc = SynonymEncoder::default();
    for mode in [Mode::Keyword, Mode::Semantic, Mode::Hybrid] {
        let a = index
            .search(Some(&enc), &SearchQuery::new("thermometer").mode(mode))
            .unwrap();
        let hit = &a.hits[0];
        assert_eq!(hit.item_key, "CANCER01", "{mode:?}");
        let p = &hit.passages[0];
        assert_eq!(
            (p.matched, p.doc_key.as_str()),
            (Matched::Fulltext, "FILEATT1")
        );
        assert_eq!(
            p.page,
            Some(PageRef {
                index: 1,
                label: "217".into()
            }),
            "{mode:?}"
        );
        // The page's reader's offset: the page's text starts at 20.
        assert_eq!(p.fulltext_offset, Some(20), "{mode:?}");
    }
    // Zotero's full text (no pages) still answers without one.
    let a = index.search(None, &SearchQuery::new("carcinoma")).unwrap();
    assert_eq!(a.hits[0].passages[0].page, None);
}

fn entry<'a>(key: &'a str, state: &'a str) -> FileEntry<'a> {
    FileEntry {
        key,
        item_key: "CANCER01",
        deleted: false,
        state,
        source: "{}",
    }
}

fn due(index: &zotero_index::Index, retry: &[&str], textless: &[&str]) -> Vec<String> {
    index
        .files_due(retry, textless)
        .unwrap()
        .into_iter()
        .map(|d| d.key)
        .collect()
}

#[test]
fn files_are_due_when_new_changed_or_tried_again_and_go_with_their_item() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    // ATTACH01 has Zotero's text indexed; FILEATT1 and SCANNED1 have none.
    b.note_file(&entry("ATTACH01", "md5a")).unwrap();
    b.note_file(&entry("FILEATT1", "md5f")).unwrap();
    b.note_file(&entry("SCANNED1", "md5s")).unwrap();
    b.commit().unwrap();
    assert_eq!(
        due(up.index(), &[], &[]),
        ["ATTACH01", "FILEATT1", "SCANNED1"]
    );
    // A source that cannot say what was deleted compares these keys too.
    let known = up.index().document_keys().unwrap();
    assert!(known.contains(&("SCANNED1".to_string(), "file".to_string())));
    let found = up.index().files_due(&[], &[]).unwrap();
    assert!(found[0].other_text && !found[0].file_text);
    assert!(!found[1].other_text && !found[1].file_text);

    let mut b = up.batch().unwrap();
    b.upsert(&file_doc()).unwrap();
    b.file_read("FILEATT1", "md5f", "text").unwrap();
    b.file_read("SCANNED1", "md5s", "no_text_layer").unwrap();
    b.file_read("ATTACH01", "md5a", "missing").unwrap();
    b.commit().unwrap();
    // Read: due no more, unless the outcome is tried again (`missing` only where nothing
    // else gives the attachment a text: ATTACH01 has Zotero's).
    assert!(due(up.index(), &[], &["missing"]).is_empty());
    assert_eq!(due(up.index(), &["missing"], &[]), ["ATTACH01"]);
    assert_eq!(due(up.index(), &[], &["no_text_layer"]), ["SCANNED1"]);
    assert!(up.index().file_text_current("FILEATT1").unwrap());
    assert!(!up.index().file_text_current("ATTACH01").unwrap());

    // A new state (the file changed): due again, its earlier text known as the file's.
    let mut b = up.batch().unwrap();
    b.note_file(&entry("FILEATT1", "md5f2")).unwrap();
    b.commit().unwrap();
    let found = up.index().files_due(&[], &[]).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].key, "FILEATT1");
    assert!(found[0].file_text && !found[0].other_text);
    assert_eq!(found[0].outcome.as_deref(), Some("text"));
    assert!(!up.index().file_text_current("FILEATT1").unwrap());

    // Full texts no longer wanted: every file is due again when they are.
    let mut b = up.batch().unwrap();
    b.delete_kind(DocKind::Fulltext).unwrap();
    b.commit().unwrap();
    assert_eq!(due(up.index(), &[], &[]).len(), 3);

    // A link instead of a file, and an item deleted with its attachments: no row stays.
    let mut b = up.batch().unwrap();
    b.forget_file("SCANNED1").unwrap();
    b.commit().unwrap();
    assert_eq!(due(up.index(), &[], &[]), ["ATTACH01", "FILEATT1"]);
    let mut b = up.batch().unwrap();
    b.delete_item("CANCER01").unwrap();
    b.commit().unwrap();
    assert!(due(up.index(), &["text", "missing"], &[]).is_empty());
    assert!(!up
        .index()
        .document_keys()
        .unwrap()
        .iter()
        .any(|(_, kind)| kind == "file"));
}

#[test]
fn a_file_text_follows_its_attachment_to_another_item_and_into_the_trash() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    b.note_file(&entry("FILEATT1", "md5f")).unwrap();
    b.upsert(&file_doc()).unwrap();
    b.file_read("FILEATT1", "md5f", "text").unwrap();
    b.reattach("FILEATT1", "CARS0001", true).unwrap();
    b.commit().unwrap();
    drop(up);
    let a = index
        .search(None, &SearchQuery::new("thermometer"))
        .unwrap();
    assert!(a.hits.is_empty(), "in the trash: {:?}", a.hits);
    let found = index.files_due(&["text"], &[]).unwrap();
    assert_eq!(found[0].item_key, "CARS0001");
    assert!(found[0].deleted);
}
