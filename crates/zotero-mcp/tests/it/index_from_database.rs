//! The search index synced from Zotero's own database (`ZOTERO_DATA_DIR`): a full build,
//! then incremental updates after Zotero edits, adds, erases and trashes items in its
//! `zotero.sqlite` (written here as Zotero writes it: WAL, `clientDateModified`) or indexes
//! a PDF again or clears its text; group libraries; and not one request reaches the API
//! meanwhile, although the API's credentials are set too. With the database alone, the
//! index shows stale after a local edit no library version shows.

use serde_json::{json, Value};
use zotero_db::fixture::{self, keys, Builder};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

struct Setup {
    emu: Emulator,
    server: Server,
    /// The source database, open as Zotero keeps it.
    zotero: Builder,
    _data: tempfile::TempDir,
    _index: tempfile::TempDir,
}

/// The standard fixture in WAL mode (as Zotero 10 runs it), served alongside the web API.
async fn setup() -> Setup {
    let emu = Emulator::start().await;
    let data = tempfile::tempdir().unwrap();
    let zotero = fixture::standard(data.path()).unwrap();
    zotero.journal_as_zotero_10().unwrap();
    let index = tempfile::tempdir().unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_DATA_DIR".into(), data.path().display().to_string()));
    env.push((
        "ZOTERO_INDEX_DIR".into(),
        index.path().display().to_string(),
    ));
    let server = in_process(&env).await;
    Setup {
        emu,
        server,
        zotero,
        _data: data,
        _index: index,
    }
}

/// An update, which must send no request at all.
async fn update(s: &Setup, args: Value) -> Value {
    s.emu.reset_counts();
    let report = s
        .server
        .call("zotero_update_search_database", args)
        .await
        .expect_ok()
        .clone();
    assert_eq!(report["requests"], 0, "{report}");
    let sent: Vec<String> = s.emu.requests().iter().map(|r| r.path.clone()).collect();
    assert!(sent.is_empty(), "requests reached the API: {sent:?}");
    assert_eq!(report["cancelled"], false, "{report}");
    report
}

/// The item keys a keyword search finds.
async fn found(s: &Setup, query: &str, library: &str) -> Vec<String> {
    found_with(
        s,
        json!({"query": query, "mode": "keyword", "library": library}),
    )
    .await
}

async fn found_with(s: &Setup, args: Value) -> Vec<String> {
    let a = s
        .server
        .call("zotero_semantic_search", args)
        .await
        .expect_ok()
        .clone();
    a["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["item_key"].as_str().unwrap().to_string())
        .collect()
}

fn count_items(b: &Builder, library: i64) -> u64 {
    b.conn
        .query_row(
            "SELECT COUNT(*) FROM items WHERE libraryID = ?1",
            [library],
            |r| r.get(0),
        )
        .unwrap()
}

#[tokio::test]
async fn the_index_is_built_and_kept_in_step_from_the_database_without_a_request() {
    let s = setup().await;
    // A collection of its own (the tools take only keys Zotero could make).
    let erased = "ERASEDCX";
    let collection = s.zotero.collection(1, erased, "To erase", None).unwrap();
    let retracted: i64 = s
        .zotero
        .conn
        .query_row(
            "SELECT itemID FROM items WHERE key = ?1",
            [keys::RETRACTED],
            |r| r.get(0),
        )
        .unwrap();
    s.zotero.file(collection, retracted).unwrap();
    let all = count_items(&s.zotero, 1);

    // A full build: every item, note, annotation and the PDF's text, from the database.
    let first = update(&s, json!({})).await;
    assert_eq!(first["objects_read"], all, "{first}");
    assert_eq!(first["fulltexts_read"], 1, "{first}");
    assert_eq!(first["library_version"], 40, "{first}");
    assert_eq!(found(&s, "cyanobacteria", "user").await, [keys::ARTICLE]);
    // The PDF's text and its annotations are filed under the article.
    assert_eq!(found(&s, "fluorescence", "user").await, [keys::ARTICLE]);
    assert!(found(&s, "Kuhn first", "user")
        .await
        .contains(&keys::STANDALONE_NOTE.to_string()));
    assert!(
        found(&s, "discarded draft", "user").await.is_empty(),
        "the trash is left out"
    );

    // Nothing written since: only the items of the last change's second are read again.
    let idle = update(&s, json!({})).await;
    assert!(idle["objects_read"].as_u64().unwrap() <= 1, "{idle}");
    assert_eq!(idle["fulltexts_read"], 1, "the mark is inclusive: {idle}");
    assert_eq!(idle["removed"], 0, "{idle}");

    let in_biology = json!({"query": "fabricated", "mode": "keyword",
                            "collection_key": erased});
    assert_eq!(found_with(&s, in_biology.clone()).await, [keys::RETRACTED]);

    // Zotero edits a title, adds an item, erases a book, trashes the thesis, erases a
    // collection (`Collection._eraseData`: its rows go, its items' rows stay as they were).
    let c = &s.zotero.conn;
    s.zotero
        .edit_title(
            keys::ARTICLE,
            "Quasar light in cyanobacteria",
            "2024-06-01 12:00:00",
        )
        .unwrap();
    let new_id = s
        .zotero
        .item(
            1,
            "NEWITEM1",
            "book",
            &[("title", "Quasar spectra")],
            &[],
            &[],
        )
        .unwrap();
    c.execute(
        "UPDATE items SET clientDateModified = '2024-06-01 12:00:01', synced = 0 WHERE itemID = ?1",
        [new_id],
    )
    .unwrap();
    s.zotero.erase(keys::BOOK).unwrap();
    // `Zotero.Items.trash`: the stamp and a `deletedItems` row, no `save()`.
    c.execute(
        "UPDATE items SET synced = 0, clientDateModified = '2024-06-01 12:00:01' WHERE key = ?1",
        [keys::THESIS],
    )
    .unwrap();
    c.execute(
        "INSERT INTO deletedItems (itemID) SELECT itemID FROM items WHERE key = ?1",
        [keys::THESIS],
    )
    .unwrap();
    for sql in [
        "DELETE FROM collectionItems WHERE collectionID = \
         (SELECT collectionID FROM collections WHERE key = ?1)",
        "DELETE FROM collections WHERE key = ?1",
    ] {
        c.execute(sql, [erased]).unwrap();
    }
    assert!(found(&s, "quantum yields", "user")
        .await
        .contains(&keys::THESIS.to_string()));

    let next = update(&s, json!({})).await;
    // The three it wrote, whatever shared the previous mark's second, and the retracted
    // article (filed in the erased collection).
    let read = next["objects_read"].as_u64().unwrap();
    assert!((4..=5).contains(&read), "only what changed is read: {next}");
    assert!(
        found_with(&s, in_biology).await.is_empty(),
        "the collection is gone"
    );
    assert!(next["removed"].as_u64().unwrap() >= 1, "{next}");
    let mut quasar = found(&s, "quasar", "user").await;
    quasar.sort();
    assert_eq!(quasar, [keys::ARTICLE, "NEWITEM1"]);
    assert!(
        !found(&s, "Scientific Revolutions", "user")
            .await
            .contains(&keys::BOOK.to_string()),
        "the erased book is gone"
    );
    assert!(
        !found(&s, "quantum yields", "user")
            .await
            .contains(&keys::THESIS.to_string()),
        "the trashed thesis is left out"
    );

    // Zotero indexes the PDF again: its new text is read, nothing else changed.
    let cache = s
        .zotero
        .dir
        .join("storage")
        .join(keys::PDF)
        .join(".zotero-ft-cache");
    std::fs::write(&cache, "Spectroscopy of pulsars and their magnetars").unwrap();
    let f = std::fs::File::options().write(true).open(&cache).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(2))
        .unwrap();
    let texts = update(&s, json!({})).await;
    assert_eq!(texts["fulltexts_read"], 1, "{texts}");
    assert_eq!(found(&s, "magnetars", "user").await, [keys::ARTICLE]);
    assert!(
        found(&s, "varying", "user").await.is_empty(),
        "the old text is gone"
    );

    // A group library has its own index, from the same database.
    let group = format!("group:{}", keys::GROUP_A);
    let g = update(&s, json!({"library": group})).await;
    assert_eq!(g["objects_read"], 1, "{g}");
    assert_eq!(found(&s, "protocol", &group).await, [keys::GROUP_ITEM]);
    s.server.stop().await;
}

#[tokio::test]
async fn a_library_the_database_lacks_is_named() {
    let s = setup().await;
    let e = s
        .server
        .call(
            "zotero_update_search_database",
            json!({"library": "group:999"}),
        )
        .await;
    let err = e.expect_err("ZOTERO_NOT_FOUND");
    assert!(
        err["message"].as_str().unwrap().contains("group:999"),
        "{err}"
    );
    assert!(s.emu.requests().is_empty(), "{:?}", s.emu.requests().len());
    s.server.stop().await;
}

/// The standard fixture (WAL) and a server with the database alone: no key, no desktop.
async fn database_only() -> (Builder, Server, tempfile::TempDir, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let zotero = fixture::standard(data.path()).unwrap();
    zotero.journal_as_zotero_10().unwrap();
    let index = tempfile::tempdir().unwrap();
    let server = in_process(&[
        ("ZOTERO_DATA_DIR".into(), data.path().display().to_string()),
        (
            "ZOTERO_INDEX_DIR".into(),
            index.path().display().to_string(),
        ),
        // No sentence model: the default would be fetched from huggingface.co.
        ("ZOTERO_EMBEDDING_MODEL".into(), "none".into()),
    ])
    .await;
    (zotero, server, data, index)
}

/// The user library's freshness in the status tool's row and in a search's answer.
async fn freshness(server: &Server) -> (Value, Value) {
    let status = server
        .call(
            "zotero_get_search_database_status",
            json!({"library": "user"}),
        )
        .await
        .expect_ok()
        .clone();
    let row = status["libraries"][0].clone();
    let search = server
        .call(
            "zotero_semantic_search",
            json!({"query": "cyanobacteria", "mode": "keyword"}),
        )
        .await
        .expect_ok()
        .clone();
    (row, search["index"][0].clone())
}

/// The user library's `stale` flag, the same in the status tool and in a search's answer.
async fn stale(server: &Server) -> (Value, Value) {
    let (row, search) = freshness(server).await;
    assert_eq!(search["stale"], row["stale"], "{search} / {row}");
    (row["stale"].clone(), row)
}

#[tokio::test]
async fn local_edits_not_synced_show_the_index_stale_with_the_database_alone() {
    let (zotero, server, data, _index) = database_only().await;
    server
        .call("zotero_update_search_database", json!({}))
        .await
        .expect_ok();
    let (fresh, row) = stale(&server).await;
    assert_eq!(fresh, false, "{row}");

    // Zotero saves an edit and has not synced it: the library version stays 40.
    zotero
        .edit_title(
            keys::ARTICLE,
            "Quasar light in cyanobacteria",
            "2024-06-01 12:00:00",
        )
        .unwrap();
    let (behind, row) = stale(&server).await;
    assert_eq!(behind, true, "{row}");
    assert_eq!(row["current_version"], row["indexed_version"], "{row}");
    assert!(
        row["action"].as_str().unwrap().contains("update-db"),
        "{row}"
    );
    server
        .call("zotero_update_search_database", json!({}))
        .await
        .expect_ok();
    assert_eq!(stale(&server).await.0, false);

    // Zotero indexes the PDF again: its cache file is newer than the index's mark.
    let cache = data
        .path()
        .join("storage")
        .join(keys::PDF)
        .join(".zotero-ft-cache");
    let f = std::fs::File::options().write(true).open(&cache).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(2))
        .unwrap();
    // The status compares the full texts; a search compares the items only (the texts'
    // check reads every cache file's time, which each search would pay).
    let (row, search) = freshness(&server).await;
    assert_eq!(row["stale"], true, "{row}");
    assert_eq!(search["stale"], false, "{search}");
    server.stop().await;
}

#[tokio::test]
async fn a_full_text_whose_cache_file_is_gone_leaves_the_index() {
    let s = setup().await;
    update(&s, json!({})).await;
    assert_eq!(found(&s, "varying", "user").await, [keys::ARTICLE]);
    // Zotero clears the PDF's index (`Zotero.FullText.clearItemWords`: the cache file and
    // the row go); the attachment stays.
    std::fs::remove_file(
        s.zotero
            .dir
            .join("storage")
            .join(keys::PDF)
            .join(".zotero-ft-cache"),
    )
    .unwrap();
    s.zotero
        .conn
        .execute(
            "DELETE FROM fulltextItems WHERE itemID = (SELECT itemID FROM items WHERE key = ?1)",
            [keys::PDF],
        )
        .unwrap();
    let next = update(&s, json!({})).await;
    assert!(next["removed"].as_u64().unwrap() >= 1, "{next}");
    assert!(
        found(&s, "varying", "user").await.is_empty(),
        "the text is gone"
    );
    // The PDF's annotations and the article stay.
    assert_eq!(found(&s, "fluorescence", "user").await, [keys::ARTICLE]);
    assert_eq!(found(&s, "cyanobacteria", "user").await, [keys::ARTICLE]);
    s.server.stop().await;
}
