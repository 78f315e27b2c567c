//! `zotero_get_item_fulltext` reading an attachment's FILE page by page (issue 36): a paper
//! whose file Zotero has not indexed is read from its file (`source: "file"`), `pages`
//! selects pages by label or number, each page is headed by its label and a page without
//! text says why; with Zotero's full text and no `pages` the answer is the index's, as
//! before; the database backend reads `storage/`; and an extracted document is cached, so a
//! second read downloads nothing.
//!
//! The extraction is SEAMED: `Config::text.extract` is replaced by [`fake_extract`], which
//! reads a test format (`%PDF-FAKE`, pages split by form feeds, `label|text` each), since
//! the PDF extractor is written elsewhere. Everything else (download, cache, pages, answer)
//! is the product's own path.

use base64::Engine;
use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_text::{Document, DocumentKind, Limits, Page, PageStatus, TextError};

use crate::common::{env_for, in_process_configured, Server};

const TOOL: &str = "zotero_get_item_fulltext";
/// A fixture item (with no file of its own read here).
const PARENT: &str = "NLPML6K7";

/// The test's "PDF": `%PDF-FAKE\n` then pages split by `\x0c`, each `label|text`; the text
/// `#scan` is a page without a text layer.
fn fake_extract(bytes: &[u8], kind: DocumentKind, _: &Limits) -> Result<Document, TextError> {
    let body = std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.strip_prefix("%PDF-FAKE\n"))
        .ok_or(TextError::Damaged {
            reason: "not the test format".into(),
        })?;
    assert_eq!(kind, DocumentKind::Pdf);
    let pages = body
        .split('\x0c')
        .enumerate()
        .map(|(i, p)| {
            let (label, text) = p.split_once('|').unwrap();
            let scan = text == "#scan";
            Page {
                index: i as u32,
                label: label.into(),
                status: if scan {
                    PageStatus::NoTextLayer
                } else {
                    PageStatus::Text
                },
                text: if scan { String::new() } else { text.into() },
                glyphs: vec![],
                view_box: [0.0, 0.0, 612.0, 792.0],
                rotation: 0,
            }
        })
        .collect();
    Ok(Document {
        kind: DocumentKind::Pdf,
        pages,
    })
}

fn paper() -> Vec<u8> {
    [
        "%PDF-FAKE\ni|Preface words.",
        "ii|#scan",
        "1|Introduction: transformers attend.",
        "2|Method: multi-head attention.",
        "3|Results: BLEU 28.4.",
    ]
    .join("\x0c")
    .into_bytes()
}

async fn server(env: Vec<(String, String)>) -> Server {
    in_process_configured(&env, |c| c.text.extract = fake_extract).await
}

/// The emulator, the server's variables (with a fresh index directory for the cache) and
/// that directory.
async fn start() -> (Emulator, Vec<(String, String)>, tempfile::TempDir) {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push((
        "ZOTERO_INDEX_DIR".into(),
        dir.path().to_string_lossy().into_owned(),
    ));
    (emu, env, dir)
}

/// Uploads the test paper under [`PARENT`]; answers the attachment's key.
async fn upload(s: &Server) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(paper());
    let a = s
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_bytes_base64": encoded, "filename": "paper.pdf"}),
        )
        .await;
    a.expect_ok()["attachment_key"]
        .as_str()
        .unwrap()
        .to_string()
}

fn downloads(emu: &Emulator) -> usize {
    emu.bucket_requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count()
}

fn labels(data: &Value) -> Vec<String> {
    data["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_file_zotero_has_not_indexed_is_read_page_by_page() {
    let (emu, env, _dir) = start().await;
    let s = server(env).await;
    let key = upload(&s).await;

    let a = s.call(TOOL, json!({"item_key": key})).await;
    let d = a.expect_ok();
    assert_eq!(d["source"], "file");
    assert_eq!(labels(d), ["i", "ii", "1", "2", "3"]);
    let text = d["text"].as_str().unwrap();
    assert!(
        text.starts_with("=== Page i ===\n\nPreface words."),
        "{text}"
    );
    assert!(
        text.contains("=== Page ii ===\n\n[no text: no_text_layer]"),
        "{text}"
    );
    assert!(
        text.contains("=== Page 3 ===\n\nResults: BLEU 28.4."),
        "{text}"
    );
    assert_eq!(d["pages"][1]["status"], "no_text_layer");
    assert_eq!(d["pages"][2]["status"], "text");
    assert_eq!(d["sections"][0]["attachment_key"], key.as_str());
    assert_eq!(d["sections"][0]["total_pages"], 5);
    // Offsets are exact: each page's part is where it says, in characters.
    let chars: Vec<char> = text.chars().collect();
    for p in d["pages"].as_array().unwrap() {
        let (from, to) = (
            p["offset"].as_u64().unwrap(),
            p["end_offset"].as_u64().unwrap(),
        );
        let part: String = chars[from as usize..to as usize].iter().collect();
        assert!(part.starts_with(&format!("=== Page {} ===", p["label"].as_str().unwrap())));
    }
    assert_eq!(d["total_chars"], chars.len() as u64);

    // `pages` selects, in document order, each page once.
    let a = s
        .call(TOOL, json!({"item_key": key, "pages": "2, i-ii"}))
        .await;
    let d = a.expect_ok();
    assert_eq!(labels(d), ["i", "ii", "2"]);
    let text = d["text"].as_str().unwrap();
    assert!(!text.contains("Introduction"), "{text}");
    assert!(text.contains("=== Page 2 ===\n\nMethod"), "{text}");

    // "4" is no label: the 4th page (labelled 2); "3" is a label and wins.
    let d = s.call(TOOL, json!({"item_key": key, "pages": "4"})).await;
    assert_eq!(labels(d.expect_ok()), ["2"]);
    let d = s.call(TOOL, json!({"item_key": key, "pages": "3"})).await;
    assert_eq!(labels(d.expect_ok()), ["3"]);

    // Only pages without text: an error that says why, never an empty success.
    let e = s.call(TOOL, json!({"item_key": key, "pages": "ii"})).await;
    let e = e.expect_err("ZOTERO_NOT_FOUND");
    assert_eq!(e["details"]["reason"], "no_text_layer");
    let e = s.call(TOOL, json!({"item_key": key, "pages": "ix"})).await;
    let e = e.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "pages");
    assert!(e["message"].as_str().unwrap().contains("labelled i to 3"));

    // A small page: next_offset continues within the same pages.
    let a = s
        .call(
            TOOL,
            json!({"item_key": key, "pages": "1-3", "max_chars": 60}),
        )
        .await;
    let d = a.expect_ok();
    // Page 1's part is 50 characters, then 2 between parts: page 2 starts at 52.
    assert_eq!(d["next_offset"], 60);
    assert_eq!(d["pages"][1]["offset"], 52);
    assert_eq!(labels(d), ["1", "2"]);
    drop(emu);
}

#[tokio::test]
async fn zotero_s_index_stays_the_answer_without_pages() {
    let (emu, env, _dir) = start().await;
    let s = server(env).await;
    let a = s.call(TOOL, json!({"item_key": "VASWANI7"})).await;
    let d = a.expect_ok();
    assert_eq!(d["source"], "zotero_index");
    assert!(d.get("pages").is_none(), "{d}");
    // The file was not asked for.
    assert_eq!(downloads(&emu), 0);
    assert!(!emu.requests().iter().any(|r| r.path.ends_with("/file")));
}

#[tokio::test]
async fn a_second_read_comes_from_the_cache_without_a_download() {
    let (emu, env, _dir) = start().await;
    let s = server(env.clone()).await;
    let key = upload(&s).await;
    s.call(TOOL, json!({"item_key": key})).await.expect_ok();
    assert_eq!(downloads(&emu), 1);
    let file_reads = || {
        emu.requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.ends_with("/file"))
            .count()
    };
    assert_eq!(file_reads(), 1);
    let d = s.call(TOOL, json!({"item_key": key, "pages": "1"})).await;
    assert_eq!(labels(d.expect_ok()), ["1"]);
    // Another server on the same index directory: the cache is on disk.
    let again = server(env).await;
    let d = again
        .call(TOOL, json!({"item_key": key, "pages": "i"}))
        .await;
    assert_eq!(labels(d.expect_ok()), ["i"]);
    assert_eq!((downloads(&emu), file_reads()), (1, 1));
}

#[tokio::test]
async fn the_database_backend_reads_the_file_in_storage() {
    let (emu, env, _dir) = start().await;
    let key = upload(&server(env.clone()).await).await;
    let data = crate::database_backend::mirror(&emu);
    let file = data.path().join("storage").join(&key).join("paper.pdf");
    std::fs::write(&file, paper()).unwrap();
    let mut db_env = env;
    db_env.push((
        "ZOTERO_DATA_DIR".into(),
        data.path().to_string_lossy().into_owned(),
    ));
    let s = server(db_env).await;
    let d = s.call(TOOL, json!({"item_key": key, "pages": "1"})).await;
    let d = d.expect_ok();
    assert_eq!(d["source"], "file");
    assert!(d["text"].as_str().unwrap().contains("Introduction"));
    // Nothing was downloaded: the bytes came from the data directory.
    assert_eq!(downloads(&emu), 0);
}
