//! The search index reads attachments' files (issue 36), with the real extractor on PDFs the
//! tests write: an attachment Zotero has no full text of becomes findable by a word of its
//! page 2; the hit names the page's label, and its offset reads on in
//! `zotero_get_item_fulltext` with that page as `pages` (whose answer gives the page's
//! position; the index itself keeps label and index, `zotero-index`'s tests check both). A
//! file on this machine is preferred to Zotero's text; a web library's files are downloaded
//! only as ZOTERO_INDEX_DOWNLOAD_FILES says (`missing`: where Zotero has no text; `all`); a
//! damaged file is counted and the run completes; a cancelled update stops between files and
//! the next reads the rest; an unchanged file is not read again, a changed one is.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::LibraryRef;
use zotero_db::fixture::{self, Builder};
use zotero_emulator::testing::create;
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_mcp::service::index::{self as search_index, Phase, Progress, UpdateOptions};

use crate::common::{env_for, in_process, Server};
use crate::pdf_fixture::labelled_pages;

/// Three pages labelled 216–218; "thermometer" is on the second (index 1, label 217).
fn paper() -> Vec<u8> {
    labelled_pages(
        &[
            "Filler on the first page.",
            "The thermometer resolves one tenth of a kelvin.",
            "Closing words on the last page.",
        ],
        216,
    )
}

async fn update(s: &Server) -> Value {
    let r = s
        .call("zotero_update_search_database", json!({}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(r["cancelled"], false, "{r}");
    r
}

/// The first hit of a keyword search, if any.
async fn first_hit(s: &Server, query: &str) -> Option<Value> {
    let a = s
        .call(
            "zotero_semantic_search",
            json!({"query": query, "mode": "keyword"}),
        )
        .await
        .expect_ok()
        .clone();
    a["results"].as_array().unwrap().first().cloned()
}

/// The outcome counts of a report (`{}` when none).
fn files(r: &Value) -> Value {
    r.get("files").cloned().unwrap_or_else(|| json!({}))
}

/// Checks that `hit` is `item`'s, found on page 217 (index 1) of `attachment`, and that its
/// offset reads on in that page's text.
async fn check_page_hit(s: &Server, hit: &Value, item: &str, attachment: &str) {
    assert_eq!(hit["item_key"], item, "{hit}");
    let p = &hit["passages"][0];
    assert_eq!(p["key"], attachment, "{hit}");
    assert_eq!(p["matched"], "fulltext", "{hit}");
    assert_eq!(p["page"], "217", "{hit}");
    let offset = p["fulltext_offset"].as_u64().unwrap();
    let read = s
        .call(
            "zotero_get_item_fulltext",
            json!({"item_key": attachment, "pages": "217", "offset": offset}),
        )
        .await;
    let read = read.expect_ok();
    let text = read["text"].as_str().unwrap();
    let passage = p["text"].as_str().unwrap();
    assert!(text.starts_with(passage), "{text:?} / {passage:?}");
    // The page's position: the second of the file (index 1).
    assert_eq!(read["pages"][0]["number"], 2, "{read}");
}

fn web_env(emu: &Emulator, dir: &std::path::Path, download: Option<&str>) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_INDEX_DIR".into(), dir.display().to_string()));
    if let Some(d) = download {
        env.push(("ZOTERO_INDEX_DOWNLOAD_FILES".into(), d.into()));
    }
    env
}

/// Uploads `bytes` as a PDF under `parent`; the attachment's key.
async fn upload(s: &Server, parent: &str, bytes: &[u8]) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let a = s
        .call(
            "zotero_upload_attachment",
            json!({"item_key": parent, "file_bytes_base64": encoded, "filename": "paper.pdf"}),
        )
        .await;
    a.expect_ok()["attachment_key"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The attachments whose file the server asked the Web API for since the counts were reset.
fn file_requests(emu: &Emulator) -> Vec<String> {
    emu.requests()
        .iter()
        .filter(|r| r.path.ends_with("/file"))
        .map(|r| r.path.clone())
        .collect()
}

#[tokio::test]
async fn a_web_library_s_files_are_downloaded_for_the_index_only_when_asked() {
    let emu = Emulator::start().await;
    let item = create(
        &emu,
        json!({"itemType": "journalArticle", "title": "Thermometry"}),
    )
    .await;
    let other = create(
        &emu,
        json!({"itemType": "journalArticle", "title": "Indexed by Zotero"}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = in_process(&web_env(&emu, dir.path(), None)).await;
    let att = upload(&s, &item, &paper()).await;
    let indexed = upload(&s, &other, &labelled_pages(&["Quasar spectra.", "x"], 1)).await;
    emu.set_fulltext(&indexed, "Words Zotero extracted.");

    // No variable: nothing is downloaded; the file is reported as not downloaded.
    emu.reset_counts();
    let r = update(&s).await;
    assert!(file_requests(&emu).is_empty(), "{:?}", file_requests(&emu));
    assert!(emu.bucket_requests().is_empty());
    assert!(files(&r)["not_downloaded"].as_u64().unwrap() >= 1, "{r}");
    assert!(files(&r).get("text").is_none(), "{r}");
    assert!(first_hit(&s, "thermometer").await.is_none());

    // `missing`: the file of the attachment Zotero has no text of is downloaded and read.
    let s = in_process(&web_env(&emu, dir.path(), Some("missing"))).await;
    emu.reset_counts();
    let r = update(&s).await;
    assert_eq!(files(&r)["text"], 1, "{r}");
    let asked = file_requests(&emu);
    assert!(asked.iter().any(|p| p.contains(&att)), "{asked:?}");
    assert!(!asked.iter().any(|p| p.contains(&indexed)), "{asked:?}");
    let hit = first_hit(&s, "thermometer").await.expect("a hit");
    check_page_hit(&s, &hit, &item, &att).await;
    // Zotero's text stays the other's (no page).
    let hit = first_hit(&s, "extracted").await.expect("Zotero's text");
    assert!(hit["passages"][0].get("page").is_none(), "{hit}");

    // Nothing changed: nothing is read or downloaded again.
    emu.reset_counts();
    let r = update(&s).await;
    assert!(files(&r).get("text").is_none(), "{r}");
    assert!(
        file_requests(&emu).is_empty(),
        "{:?} {r}",
        file_requests(&emu)
    );

    // `all`: the other file too, whose text then names its pages.
    let s = in_process(&web_env(&emu, dir.path(), Some("all"))).await;
    emu.reset_counts();
    let r = update(&s).await;
    assert_eq!(files(&r)["text"], 1, "{r}");
    assert!(file_requests(&emu).iter().any(|p| p.contains(&indexed)));
    let hit = first_hit(&s, "quasar").await.expect("the file's text");
    assert_eq!(hit["passages"][0]["page"], "1", "{hit}");
}

/// The standard fixture's data directory with three more attachments: `PAGEPDF2` (the test
/// paper, no full text in Zotero) under `PAGEITM2`, `PAGEPDF3` (a one-page file whose
/// Zotero text differs: the file's is indexed) under `PAGEITM3`, `BRKNPDF4` (a damaged
/// file) under `PAGEITM4`. The fixture's own PDF is damaged too (its text is Zotero's).
fn data_dir() -> (tempfile::TempDir, Builder) {
    let data = tempfile::tempdir().unwrap();
    let b = fixture::standard(data.path()).unwrap();
    let attach = |item: &str, att: &str, fulltext: Option<(&str, i64)>, bytes: Option<Vec<u8>>| {
        let parent = b
            .item(1, item, "journalArticle", &[("title", item)], &[], &[])
            .unwrap();
        b.attachment(1, att, Some(parent), "PDF", "file.pdf", fulltext)
            .unwrap();
        if let Some(bytes) = bytes {
            std::fs::write(
                data.path().join("storage").join(att).join("file.pdf"),
                bytes,
            )
            .unwrap();
        }
    };
    attach("PAGEITM2", "PAGEPDF2", None, Some(paper()));
    attach(
        "PAGEITM3",
        "PAGEPDF3",
        Some(("Words Zotero extracted.", 1)),
        Some(labelled_pages(&["Quasar spectra."], 1)),
    );
    attach("PAGEITM4", "BRKNPDF4", None, None);
    (data, b)
}

fn db_env(data: &std::path::Path, index: &std::path::Path) -> Vec<(String, String)> {
    vec![
        ("ZOTERO_DATA_DIR".into(), data.display().to_string()),
        ("ZOTERO_INDEX_DIR".into(), index.display().to_string()),
        ("ZOTERO_EMBEDDING_MODEL".into(), "none".into()),
    ]
}

#[tokio::test]
async fn a_data_directory_s_files_are_read_by_page_once_until_they_change() {
    let (data, b) = data_dir();
    let index = tempfile::tempdir().unwrap();
    let s = in_process(&db_env(data.path(), index.path())).await;

    let r = update(&s).await;
    assert_eq!(r["requests"], 0, "{r}");
    assert_eq!(r["files_to_read"], 4, "{r}");
    assert_eq!(files(&r)["text"], 2, "{r}");
    // BRKNPDF4 and the fixture's own PDF: counted, and the run went on.
    assert_eq!(files(&r)["damaged"], 2, "{r}");
    let hit = first_hit(&s, "thermometer").await.expect("a hit");
    check_page_hit(&s, &hit, "PAGEITM2", "PAGEPDF2").await;
    // The file's text took the place of Zotero's.
    let hit = first_hit(&s, "quasar").await.expect("the file's text");
    assert_eq!(hit["item_key"], "PAGEITM3");
    assert_eq!(hit["passages"][0]["page"], "1", "{hit}");
    assert!(first_hit(&s, "extracted").await.is_none());
    // The fixture's PDF, damaged, keeps Zotero's text.
    let hit = first_hit(&s, "fluorescence").await.expect("Zotero's text");
    assert_eq!(hit["item_key"], fixture::keys::ARTICLE);

    // Nothing changed: no file is read again, and Zotero's text (read again: the
    // database's mark is inclusive) does not take the file's place.
    let r = update(&s).await;
    assert_eq!(r["files_to_read"], 0, "{r}");
    assert_eq!(files(&r), json!({}), "{r}");
    let hit = first_hit(&s, "quasar").await.expect("the file's text");
    assert_eq!(hit["passages"][0]["page"], "1", "{hit}");
    assert!(first_hit(&s, "extracted").await.is_none());

    // PAGEPDF2's file changes (Zotero saves its new MD5): it alone is read again.
    let changed = labelled_pages(&["New first page.", "A barometer now."], 216);
    let path = data.path().join("storage/PAGEPDF2/file.pdf");
    std::fs::write(&path, &changed).unwrap();
    b.conn
        .execute(
            "UPDATE itemAttachments SET storageHash = '0123456789abcdef0123456789abcdef'
             WHERE itemID = (SELECT itemID FROM items WHERE key = 'PAGEPDF2')",
            [],
        )
        .unwrap();
    b.conn
        .execute(
            "UPDATE items SET clientDateModified = '2030-01-01 00:00:00', synced = 0
             WHERE key = 'PAGEPDF2'",
            [],
        )
        .unwrap();
    let r = update(&s).await;
    assert_eq!(r["files_to_read"], 1, "{r}");
    assert_eq!(files(&r), json!({"text": 1}), "{r}");
    let hit = first_hit(&s, "barometer").await.expect("the new text");
    assert_eq!(hit["passages"][0]["page"], "217", "{hit}");
    assert!(first_hit(&s, "thermometer").await.is_none());
}

/// Zotero downloads files on demand: a file not on this machine is looked for again at each
/// update while its attachment has no text from Zotero (and found once it comes, the item
/// unchanged), not where Zotero's text stands in; an erased attachment is forgotten.
#[tokio::test]
async fn a_missing_file_is_looked_for_until_it_comes_and_forgotten_with_its_attachment() {
    let (data, b) = data_dir();
    let storage = data.path().join("storage");
    let parent = b
        .item(
            1,
            "GNEITM55",
            "journalArticle",
            &[("title", "Gone")],
            &[],
            &[],
        )
        .unwrap();
    b.attachment(1, "GNEPDF55", Some(parent), "PDF", "file.pdf", None)
        .unwrap();
    for att in ["PAGEPDF2", "PAGEPDF3", "GNEPDF55"] {
        std::fs::remove_file(storage.join(att).join("file.pdf")).unwrap();
    }
    let index = tempfile::tempdir().unwrap();
    let s = in_process(&db_env(data.path(), index.path())).await;
    let r = update(&s).await;
    assert_eq!(files(&r)["missing"], 3, "{r}");
    // PAGEPDF3 has Zotero's text: not looked for again.
    let r = update(&s).await;
    assert_eq!(r["files_to_read"], 2, "{r}");
    assert_eq!(files(&r), json!({"missing": 2}), "{r}");

    // PAGEPDF2's file comes; GNEPDF55 is erased.
    std::fs::write(storage.join("PAGEPDF2/file.pdf"), paper()).unwrap();
    b.erase("GNEPDF55").unwrap();
    let r = update(&s).await;
    assert_eq!(r["files_to_read"], 1, "{r}");
    assert_eq!(files(&r), json!({"text": 1}), "{r}");
    let hit = first_hit(&s, "thermometer").await.expect("a hit");
    check_page_hit(&s, &hit, "PAGEITM2", "PAGEPDF2").await;
    let r = update(&s).await;
    assert_eq!(r["files_to_read"], 0, "{r}");
}

#[tokio::test]
async fn a_cancelled_update_stops_between_files_and_the_next_reads_the_rest() {
    let (data, _b) = data_dir();
    let index = tempfile::tempdir().unwrap();
    let vars = db_env(data.path(), index.path()).into_iter().collect();
    let config = zotero_mcp::config::Config::from_map(&vars).unwrap();
    let svc = Arc::new(zotero_mcp::service::ZoteroService::new(&config).unwrap());
    let run = |cancel_after: Option<u64>| {
        let svc = svc.clone();
        let dir = index.path().to_path_buf();
        async move {
            let cancel = CancellationToken::new();
            let stop = cancel.clone();
            let progress: search_index::ProgressCallback = Arc::new(move |p: Progress| {
                if p.phase == Phase::Files && cancel_after.is_some_and(|n| p.done >= n) {
                    stop.cancel();
                }
            });
            search_index::update_with_model(
                svc.clone(),
                &svc.search,
                LibraryRef::User,
                dir,
                UpdateOptions {
                    full: false,
                    include_fulltext: true,
                },
                Some(progress),
                cancel,
            )
            .await
            .unwrap()
        }
    };
    let first = run(Some(1)).await;
    assert!(first.cancelled);
    assert_eq!(first.files_to_read, 4);
    assert_eq!(first.files.values().sum::<u64>(), 1, "{:?}", first.files);
    let rest = run(None).await;
    assert!(!rest.cancelled);
    assert_eq!(rest.files_to_read, 3);
    assert_eq!(rest.files.values().sum::<u64>(), 3, "{:?}", rest.files);
    let all = run(None).await;
    assert_eq!(all.files_to_read, 0);
}
