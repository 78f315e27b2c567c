//! The database backend against the fixture built from Zotero's schema: the original is
//! never touched, a WAL database is read with its un-checkpointed rows, foreign, corrupt and
//! too-new files are refused clearly, and the answers have the web API's wire shape.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use serde_json::Value;
use zotero_db::fixture::{self, keys, Builder};
use zotero_db::{DbError, LibraryScope, ZoteroDb};

fn standard() -> (tempfile::TempDir, ZoteroDb) {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let db = ZoteroDb::open(dir.path()).unwrap();
    (dir, db)
}

fn get(db: &ZoteroDb, path: &str) -> (u16, Value, Option<u64>) {
    get_in(db, LibraryScope::User, path)
}

fn get_in(db: &ZoteroDb, scope: LibraryScope, path: &str) -> (u16, Value, Option<u64>) {
    let a = db.answer(scope, path).unwrap();
    let body = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
    (a.status, body, a.total_results)
}

fn keys_of(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

#[test]
fn an_item_has_every_field_under_zoteros_names_and_creators_in_order() {
    let (_dir, db) = standard();
    let (status, item, _) = get(&db, &format!("/items/{}", keys::ARTICLE));
    assert_eq!(status, 200);
    let d = &item["data"];
    assert_eq!(d["itemType"], "journalArticle");
    assert_eq!(d["title"], "Photosynthesis in cyanobacteria");
    assert_eq!(d["publicationTitle"], "Journal of Plant Science");
    // Stored "2017-12-00 December 2017": shown after the first space.
    assert_eq!(d["date"], "December 2017");
    assert_eq!(item["meta"]["parsedDate"], "2017-12");
    // Every field of the type is sent, empty when unset (as the web API sends them).
    assert_eq!(d["issue"], "");
    let creators = d["creators"].as_array().unwrap();
    assert_eq!(creators.len(), 3);
    assert_eq!(creators[0]["lastName"], "Lovelace");
    assert_eq!(creators[1]["lastName"], "Babbage");
    assert_eq!(creators[2]["name"], "Royal Society");
    assert_eq!(creators[2]["creatorType"], "editor");
    assert_eq!(
        d["tags"],
        serde_json::json!([{"tag": "biology"}, {"tag": "light", "type": 1}])
    );
    assert_eq!(d["collections"], serde_json::json!([keys::SUB_COLLECTION]));
    assert_eq!(d["dateAdded"].as_str().unwrap().len(), 20);
    assert_eq!(item["meta"]["numChildren"], 2);

    let (_, paper, _) = get(&db, &format!("/items/{}", keys::PAPER));
    assert_eq!(
        paper["data"]["proceedingsTitle"],
        "Advances in Neural Information Processing Systems"
    );
    let (_, thesis, _) = get(&db, &format!("/items/{}", keys::THESIS));
    assert_eq!(thesis["data"]["university"], "University of Oxford");
    assert_eq!(thesis["data"]["date"], "May 2020");
    let (status, _, _) = get(&db, "/items/NOPE0000");
    assert_eq!(status, 404);
}

#[test]
fn quick_search_matches_titles_creators_years_and_full_text_and_excludes_the_trash() {
    let (_dir, db) = standard();
    // The trashed book is by Lovelace too, and is left out.
    let (_, found, total) = get(&db, "/items/top?q=lovelace&format=json");
    assert_eq!(keys_of(&found), vec![keys::ARTICLE]);
    assert_eq!(total, Some(1));
    let (_, found, _) = get(&db, "/items/top?q=1962");
    assert_eq!(keys_of(&found), vec![keys::BOOK, keys::SECTION]);
    let (_, found, _) = get(&db, "/items/top?q=kuhn%20normal");
    assert_eq!(keys_of(&found), vec![keys::SECTION]);
    // Full text only with qmode=everything; a match in the PDF shows its parent at the top.
    let (_, found, _) = get(&db, "/items/top?q=chlorophyll");
    assert_eq!(keys_of(&found), Vec::<String>::new());
    let (_, found, _) = get(&db, "/items/top?q=chlorophyll&qmode=everything");
    assert_eq!(keys_of(&found), vec![keys::ARTICLE]);
    let (_, found, _) = get(&db, "/items?q=chlorophyll&qmode=everything");
    assert_eq!(keys_of(&found), vec![keys::HIGHLIGHT, keys::PDF]);
    // The trash, and the trash included.
    let (_, found, _) = get(&db, "/items/trash");
    assert_eq!(keys_of(&found), vec![keys::TRASHED]);
    let (_, found, _) = get(&db, "/items/top?q=lovelace&includeTrashed=1");
    assert_eq!(keys_of(&found), vec![keys::ARTICLE, keys::TRASHED]);
}

/// Zotero 10 folds text and search terms alike (`normalizeForSearch`): diacritics, the
/// letters NFKD leaves alone (ø, ß, ł…), typographic quotes and dashes.
#[test]
fn quick_search_folds_accents_letters_quotes_and_dashes_as_zotero_does() {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    let id = b
        .item(
            1,
            "ERDSKEY2",
            "journalArticle",
            &[
                ("title", "Über die Straße: the mind—body “problem”"),
                ("date", "1947"),
                ("publicationTitle", "Acta Łódź"),
            ],
            &[
                ("author", Some("Paul"), "Erdős"),
                ("author", Some("Søren"), "Kierkegaard"),
            ],
            &[],
        )
        .unwrap();
    b.note(1, "ERDSNOT2", Some(id), "<p>Þórr and Ærø</p>")
        .unwrap();
    drop(b);
    let db = ZoteroDb::open(dir.path()).unwrap();
    for q in [
        "Erdos",
        "ERDŐS",
        "soren%20kierkegaard",
        "uber%20strasse",
        "mind-body",
        "%22problem%22",
    ] {
        let (_, found, _) = get(&db, &format!("/items/top?q={q}"));
        assert_eq!(keys_of(&found), vec!["ERDSKEY2"], "q={q}");
    }
    // Every field and the notes, with qmode=everything.
    for q in ["lodz", "thorr%20aero"] {
        let (_, found, _) = get(&db, &format!("/items/top?q={q}&qmode=everything"));
        assert_eq!(keys_of(&found), vec!["ERDSKEY2"], "q={q}");
    }
}

#[test]
fn tags_item_types_collections_keys_and_paging_filter_as_the_web_api_does() {
    let (_dir, db) = standard();
    let (_, found, _) = get(&db, "/items/top?tag=biology");
    assert_eq!(keys_of(&found), vec![keys::ARTICLE, keys::THESIS]);
    let (_, found, _) = get(
        &db,
        "/items/top?tag=biology%20%7C%7C%20philosophy&tag=-light",
    );
    assert_eq!(keys_of(&found), vec![keys::BOOK, keys::THESIS]);
    let (_, found, _) = get(&db, "/items/top?itemType=book%20%7C%7C%20thesis");
    assert_eq!(keys_of(&found), vec![keys::BOOK, keys::THESIS]);
    let (_, found, _) = get(&db, "/items/top?itemType=-journalArticle");
    assert_eq!(found.as_array().unwrap().len(), 5);
    let (_, found, _) = get(
        &db,
        &format!("/collections/{}/items/top", keys::SUB_COLLECTION),
    );
    assert_eq!(
        keys_of(&found),
        vec![keys::ARTICLE, keys::RETRACTED, keys::THESIS]
    );
    let (status, _, _) = get(&db, "/collections/NOPE0000/items");
    assert_eq!(status, 404);
    let (_, found, _) = get(
        &db,
        &format!("/items?itemKey={},{}", keys::BOOK, keys::PAPER),
    );
    assert_eq!(keys_of(&found), vec![keys::BOOK, keys::PAPER]);
    let (_, page, total) = get(&db, "/items/top?sort=title&direction=asc&limit=2&start=1");
    assert_eq!(total, Some(7));
    let titles: Vec<&str> = page
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, vec!["Attention is all you need", "Normal science"]);
    let (_, versions, _) = get(&db, "/items/top?format=versions");
    assert!(versions.as_object().unwrap().contains_key(keys::BOOK));
}

#[test]
fn children_notes_annotations_and_full_text() {
    let (_dir, db) = standard();
    let (_, children, _) = get(&db, &format!("/items/{}/children", keys::ARTICLE));
    assert_eq!(keys_of(&children), vec![keys::NOTE, keys::PDF]);
    let (_, pdf, _) = get(
        &db,
        &format!("/items/{}/children?itemType=attachment", keys::ARTICLE),
    );
    let pdf = &pdf[0];
    assert_eq!(pdf["data"]["linkMode"], "imported_file");
    assert_eq!(pdf["data"]["filename"], "lovelace2017.pdf");
    assert_eq!(pdf["data"]["parentItem"], keys::ARTICLE);
    assert_eq!(pdf["links"]["enclosure"]["length"], 16);
    let (_, note, _) = get(&db, &format!("/items/{}", keys::NOTE));
    assert_eq!(
        note["data"]["note"],
        "<p>Read this twice: the methods matter.</p>"
    );
    let (_, annotations, _) = get(&db, &format!("/items/{}/children", keys::PDF));
    let by_key = |k: &str| {
        annotations
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == k)
            .unwrap()
            .clone()
    };
    let a = by_key(keys::COMMENT);
    assert_eq!(a["data"]["annotationType"], "highlight");
    assert_eq!(a["data"]["annotationText"], "quantum yield of 0.8");
    assert_eq!(a["data"]["annotationComment"], "Key number");
    assert_eq!(a["data"]["annotationColor"], "#ff6666");
    assert_eq!(a["data"]["annotationPageLabel"], "2");
    assert_eq!(a["data"]["annotationSortIndex"], "00001|000200|00100");
    assert!(a["data"]["annotationPosition"].is_string());
    let (status, text, _) = get(&db, &format!("/items/{}/fulltext", keys::PDF));
    assert_eq!(status, 200);
    assert_eq!(text["content"], fixture::PDF_TEXT);
    assert_eq!(text["totalPages"], 2);
    let (status, _, _) = get(&db, &format!("/items/{}/fulltext", keys::BOOK));
    assert_eq!(status, 404);
}

#[test]
fn collections_tags_and_group_libraries() {
    let (_dir, db) = standard();
    let (_, all, total) = get(&db, "/collections?sort=title");
    assert_eq!(total, Some(2));
    assert_eq!(all[0]["data"]["name"], "Biology");
    assert_eq!(all[0]["data"]["parentCollection"], keys::TOP_COLLECTION);
    assert_eq!(all[1]["data"]["parentCollection"], false);
    assert_eq!(all[1]["meta"]["numCollections"], 1);
    let (_, top, _) = get(&db, "/collections/top");
    assert_eq!(keys_of(&top), vec![keys::TOP_COLLECTION]);
    let (_, subs, _) = get(
        &db,
        &format!("/collections/{}/collections", keys::TOP_COLLECTION),
    );
    assert_eq!(keys_of(&subs), vec![keys::SUB_COLLECTION]);
    let (_, tags, _) = get(&db, "/tags");
    let names: Vec<&str> = tags
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["biology", "light", "machine learning", "philosophy"]
    );
    assert_eq!(tags[0]["meta"]["numItems"], 2);

    let a = db.groups().unwrap();
    let groups: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(groups.as_array().unwrap().len(), 2);
    let (_, items, _) = get_in(&db, LibraryScope::Group(keys::GROUP_A), "/items/top");
    assert_eq!(keys_of(&items), vec![keys::GROUP_ITEM]);
    assert_eq!(items[0]["library"]["type"], "group");
    let (status, _, _) = get_in(&db, LibraryScope::Group(999), "/items");
    assert_eq!(status, 404);
}

/// Collections in Zotero's trash (`deletedCollections`, Zotero 7+) and trashed child items
/// are left out of listings, as Zotero's own local API leaves them out, and listed, marked
/// `deleted`, with `includeTrashed=1`.
#[test]
fn trashed_collections_and_children_are_left_out_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    let top: i64 = b
        .conn
        .query_row(
            "SELECT collectionID FROM collections WHERE key = ?1",
            [keys::TOP_COLLECTION],
            |r| r.get(0),
        )
        .unwrap();
    let old = b
        .collection(1, "OLDCOLL2", "Old drafts", Some(top))
        .unwrap();
    b.collection(1, "OLDSUB22", "Older drafts", Some(old))
        .unwrap();
    b.trash_collection(old).unwrap();
    let article: i64 = b
        .conn
        .query_row(
            "SELECT itemID FROM items WHERE key = ?1",
            [keys::ARTICLE],
            |r| r.get(0),
        )
        .unwrap();
    let gone = b
        .note(1, "NTEGONE2", Some(article), "<p>Thrown away</p>")
        .unwrap();
    b.trash(gone).unwrap();
    drop(b);
    let db = ZoteroDb::open(dir.path()).unwrap();

    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let (_, all, total) = get(&db, "/collections");
    assert_eq!(
        keys_of(&all),
        sorted(vec![
            keys::SUB_COLLECTION.into(),
            keys::TOP_COLLECTION.into()
        ])
    );
    assert_eq!(total, Some(2));
    let (_, subs, _) = get(
        &db,
        &format!("/collections/{}/collections", keys::TOP_COLLECTION),
    );
    assert_eq!(keys_of(&subs), vec![keys::SUB_COLLECTION]);
    let (_, one, _) = get(&db, &format!("/collections/{}", keys::TOP_COLLECTION));
    assert_eq!(
        one["meta"]["numCollections"], 1,
        "a trashed subcollection is not counted"
    );
    let (_, all, total) = get(&db, "/collections?includeTrashed=1");
    assert_eq!(total, Some(4));
    let trashed: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["data"]["deleted"] == true)
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(trashed.len(), 2, "{all}");
    assert!(trashed.contains(&"OLDCOLL2") && trashed.contains(&"OLDSUB22"));
    // Asked for by its key, it answers, marked.
    let (status, one, _) = get(&db, "/collections/OLDCOLL2");
    assert_eq!((status, &one["data"]["deleted"]), (200, &Value::Bool(true)));

    let (_, children, total) = get(&db, &format!("/items/{}/children", keys::ARTICLE));
    assert_eq!(keys_of(&children), vec![keys::NOTE, keys::PDF]);
    assert_eq!(total, Some(2));
    let (_, children, _) = get(
        &db,
        &format!("/items/{}/children?includeTrashed=1", keys::ARTICLE),
    );
    assert_eq!(
        keys_of(&children),
        sorted(vec![keys::NOTE.into(), "NTEGONE2".into(), keys::PDF.into()])
    );
    let gone = children
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "NTEGONE2")
        .unwrap();
    assert_eq!(gone["data"]["deleted"], true);
}

#[test]
fn retractions_are_carried_and_listed() {
    let (_dir, db) = standard();
    let (_, item, _) = get(&db, &format!("/items/{}", keys::RETRACTED));
    let r = &item["meta"]["retraction"];
    assert_eq!(r["date"], "2020-06-01");
    assert_eq!(r["reasons"][0], "Falsification/Fabrication of Data");
    assert_eq!(r["urls"][0], "https://retractionwatch.com/notice/1");
    assert_eq!(r["hidden"], false);
    let (_, plain, _) = get(&db, &format!("/items/{}", keys::BOOK));
    assert!(plain["meta"].get("retraction").is_none());
    let (_, flagged, _) = get(&db, "/items/top?retracted=1");
    assert_eq!(keys_of(&flagged), vec![keys::RETRACTED]);
    let (_, flagged, _) = get(
        &db,
        &format!(
            "/collections/{}/items/top?retracted=1",
            keys::TOP_COLLECTION
        ),
    );
    assert_eq!(keys_of(&flagged), Vec::<String>::new());
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_original_database_is_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let path = fixture::db_path(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let before = listing(dir.path());
    {
        let db = ZoteroDb::open(dir.path()).unwrap();
        for p in [
            "/items/top?q=kuhn",
            "/collections",
            "/tags",
            "/items/PDFA2345/fulltext",
        ] {
            db.answer(LibraryScope::User, p).unwrap();
        }
        db.status().unwrap();
        assert_eq!(
            listing(dir.path()),
            before,
            "nothing is created beside it while open"
        );
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    assert_eq!(listing(dir.path()), before);
    assert!(!before
        .iter()
        .any(|n| n.ends_with("-journal") || n.ends_with("-wal") || n.ends_with("-shm")));
}

#[test]
fn a_wal_database_is_read_with_its_uncheckpointed_rows_and_followed_as_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    // As Zotero 10 runs it: WAL, exclusive locking, and rows still in the -wal.
    b.journal_as_zotero_10().unwrap();
    b.item(
        1,
        "WALITEM1",
        "book",
        &[("title", "Only in the WAL")],
        &[],
        &[],
    )
    .unwrap();
    let wal = dir.path().join("zotero.sqlite-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let db = ZoteroDb::open(dir.path()).unwrap();
    let (_, found, _) = get(&db, "/items/top?q=WAL");
    assert_eq!(keys_of(&found), vec!["WALITEM1"]);
    // Zotero writes again: the next read copies again and sees it.
    b.item(
        1,
        "WALITEM2",
        "book",
        &[("title", "Also in the WAL")],
        &[],
        &[],
    )
    .unwrap();
    let (_, found, _) = get(&db, "/items/top?q=WAL");
    assert_eq!(keys_of(&found), vec!["WALITEM1", "WALITEM2"]);
    drop(b);
}

#[test]
fn foreign_corrupt_and_newer_databases_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("zotero.sqlite"),
        b"this is not a database at all, not at all",
    )
    .unwrap();
    let err = ZoteroDb::open(dir.path()).err().unwrap();
    assert!(matches!(err, DbError::NotZotero { .. }), "{err}");
    assert!(err.to_string().contains("ZOTERO_DATA_DIR"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let c = rusqlite::Connection::open(dir.path().join("zotero.sqlite")).unwrap();
    c.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        .unwrap();
    drop(c);
    let err = ZoteroDb::open(dir.path()).err().unwrap();
    assert!(matches!(err, DbError::NotZotero { .. }), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let b = Builder::create(dir.path()).unwrap();
    b.conn
        .execute(
            "UPDATE version SET version = 130 WHERE schema = 'userdata'",
            [],
        )
        .unwrap();
    drop(b);
    let err = ZoteroDb::open(dir.path()).err().unwrap();
    let text = err.to_string();
    assert!(text.contains("130") && text.contains("129"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let err = ZoteroDb::open(dir.path()).err().unwrap();
    assert!(matches!(err, DbError::NotFound { .. }), "{err}");
}

#[test]
fn status_reports_version_counts_and_whether_zotero_has_it_open() {
    let (dir, db) = standard();
    let s = db.status().unwrap();
    assert_eq!(s.version.userdata, 129);
    assert_eq!(s.version.to_string(), "129 (Zotero 10)");
    // Five types, a retracted article, the group items; the trash, notes, PDF and
    // annotations are not regular items.
    assert_eq!(s.regular_items, 8);
    assert_eq!(s.group_libraries, 2);
    assert!(!s.open_in_zotero);
    assert!(!zotero_db::zotero_has_it_open(&fixture::db_path(
        dir.path()
    )));
}

#[test]
fn types_and_fields_are_joined_by_name_whatever_their_ids() {
    // The fixture numbers types and fields unlike a fresh install; renumber once more to be
    // sure nothing depends on an ID.
    let dir = tempfile::tempdir().unwrap();
    let b = fixture::standard(dir.path()).unwrap();
    b.conn
        .execute_batch(
            "UPDATE itemTypes SET itemTypeID = itemTypeID + 500; \
             UPDATE itemTypesCombined SET itemTypeID = itemTypeID + 500; \
             UPDATE items SET itemTypeID = itemTypeID + 500; \
             UPDATE itemTypeFields SET itemTypeID = itemTypeID + 500; \
             UPDATE baseFieldMappings SET itemTypeID = itemTypeID + 500;",
        )
        .unwrap();
    drop(b);
    let db = ZoteroDb::open(dir.path()).unwrap();
    let (_, paper, _) = get(&db, &format!("/items/{}", keys::PAPER));
    assert_eq!(paper["data"]["itemType"], "conferencePaper");
    assert_eq!(paper["data"]["date"], "2017");
}

#[test]
fn citations_and_exports_are_left_to_the_api() {
    let (_dir, db) = standard();
    for path in [
        "/items?format=bibtex",
        "/items/top?format=bib&style=apa",
        "/items/ARTC2345?include=data,bibtex",
        "/items?include=bib,citation",
        "/searches",
    ] {
        let a = db.answer(LibraryScope::User, path).unwrap();
        assert!(a.is_unsupported(), "{path}: {}", a.status);
    }
    let a = db
        .answer(
            LibraryScope::User,
            "/items/ARTC2345?include=data&format=json",
        )
        .unwrap();
    assert_eq!(a.status, 200);
}

/// An attachment row as Zotero writes one (`Item._saveData`): `linkMode`, content type,
/// path, the sync's hash, when it was added, its URL; the file written when `file` is.
#[allow(clippy::too_many_arguments)]
fn attach(
    b: &Builder,
    parent: i64,
    key: &str,
    mode: i64,
    content_type: &str,
    added: &str,
    url: Option<&str>,
    hash: Option<&str>,
    file: Option<&[u8]>,
) -> i64 {
    let mut fields = vec![("title", "Attachment")];
    if let Some(u) = url {
        fields.push(("url", u));
    }
    let id = b.item(1, key, "attachment", &fields, &[], &[]).unwrap();
    b.conn
        .execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path, storageHash) \
             VALUES (?1, ?2, ?3, ?4, 'storage:file.bin', ?5)",
            rusqlite::params![id, parent, mode, content_type, hash],
        )
        .unwrap();
    b.conn
        .execute(
            "UPDATE items SET dateAdded = ?1 WHERE itemID = ?2",
            rusqlite::params![added, id],
        )
        .unwrap();
    if let Some(bytes) = file {
        let folder = b.dir.join("storage").join(key);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("file.bin"), bytes).unwrap();
    }
    id
}

#[test]
fn the_best_attachment_is_linked_as_the_web_api_picks_it() {
    let dir = tempfile::tempdir().unwrap();
    let b = Builder::create(dir.path()).unwrap();
    let url = "https://example.org/paper";
    let parent = b
        .item(
            1,
            "PRNT2345",
            "journalArticle",
            &[("title", "A paper"), ("url", url)],
            &[],
            &[],
        )
        .unwrap();
    // The oldest, but an EPUB: any PDF comes first.
    attach(
        &b,
        parent,
        "EPUB2345",
        0,
        "application/epub+zip",
        "2024-01-01 00:00:00",
        None,
        None,
        Some(b"epub"),
    );
    // A linked file and a link are never named.
    attach(
        &b,
        parent,
        "LINK2345",
        2,
        "application/pdf",
        "2024-01-02 00:00:00",
        None,
        None,
        None,
    );
    attach(
        &b,
        parent,
        "LURL2345",
        3,
        "application/pdf",
        "2024-01-02 00:00:00",
        Some(url),
        None,
        None,
    );
    // Among the PDFs, the one whose URL is the item's before an older one.
    attach(
        &b,
        parent,
        "PDFB2345",
        0,
        "application/pdf",
        "2024-01-05 00:00:00",
        None,
        None,
        Some(b"older pdf"),
    );
    let with_url = attach(
        &b,
        parent,
        "PDFC2345",
        1,
        "application/pdf",
        "2024-01-06 00:00:00",
        Some(url),
        Some("d41d8cd98f00b204e9800998ecf8427e"),
        Some(b"%PDF-1.7 the one"),
    );
    // In the trash: left out, though it would come first.
    let trashed = attach(
        &b,
        parent,
        "PDFD2345",
        0,
        "application/pdf",
        "2023-12-01 00:00:00",
        Some(url),
        None,
        Some(b"trashed"),
    );
    b.trash(trashed).unwrap();
    let link = |db: &ZoteroDb| get(db, "/items/PRNT2345").1["links"]["attachment"].clone();

    let db = ZoteroDb::open(dir.path()).unwrap();
    assert_eq!(
        link(&db),
        serde_json::json!({
            "href": "https://api.zotero.org/users/0/items/PDFC2345",
            "type": "application/json",
            "attachmentType": "application/pdf",
            "attachmentSize": 16,
        })
    );
    // Only regular items name one.
    assert!(get(&db, "/items/PDFC2345").1["links"]["attachment"].is_null());

    // The account Zotero logged in to names the user in the link; the trash moves the
    // choice to the older PDF, and its local file gives the size.
    b.set_account(4242, "someone").unwrap();
    b.trash(with_url).unwrap();
    let db = ZoteroDb::open(dir.path()).unwrap();
    let l = link(&db);
    assert_eq!(
        l["href"], "https://api.zotero.org/users/4242/items/PDFB2345",
        "{l}"
    );
    assert_eq!(l["attachmentSize"], 9, "{l}");

    // The best one's file neither here nor synced: none is named (as the API names none
    // when its best attachment has no file on the server).
    std::fs::remove_file(dir.path().join("storage/PDFB2345/file.bin")).unwrap();
    assert!(link(&db).is_null(), "{}", link(&db));
}

#[test]
fn group_items_link_to_their_page_on_zotero_org_by_the_groups_id() {
    let (_dir, db) = standard();
    let (status, item, _) = get_in(
        &db,
        LibraryScope::Group(keys::GROUP_A),
        &format!("/items/{}", keys::GROUP_ITEM),
    );
    assert_eq!(status, 200);
    assert_eq!(
        item["links"]["alternate"]["href"],
        format!(
            "https://www.zotero.org/groups/{}/items/{}",
            keys::GROUP_A,
            keys::GROUP_ITEM
        ),
        "{item}"
    );
}
