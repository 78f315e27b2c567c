//! What the server reads from Zotero's data directory stays inside it and is a regular file:
//! an attachment's `.zotero-ft-cache` linked to a file outside (the server's environment,
//! a key file) is answered as an error, never with what it points to; one that is a FIFO
//! is answered with an error at once, and the reads after it go on (no lock left held).
//! A call that does not come back is reported as hung after a minute (a liveness check,
//! not a timing).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use zotero_db::fixture::{self, keys};

use crate::common::{in_process, Answer, Server};

const HUNG: Duration = Duration::from_secs(60);

/// A server over the standard fixture's database alone, with its data directory.
async fn database_only() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    drop(fixture::standard(dir.path()).unwrap());
    let server = in_process(&[(
        "ZOTERO_DATA_DIR".to_string(),
        dir.path().to_string_lossy().into_owned(),
    )])
    .await;
    (dir, server)
}

fn cache_of(dir: &Path) -> PathBuf {
    dir.join("storage").join(keys::PDF).join(".zotero-ft-cache")
}

/// Calls `tool`, or panics as hung after `HUNG`. Before panicking, the data directory is
/// kept and its FIFO opened for writing again and again, so that every reader stuck in its
/// open (the request's, the index's) gets end of file and the runtime can shut down.
async fn call(
    server: &Server,
    dir: &mut tempfile::TempDir,
    tool: &str,
    args: serde_json::Value,
) -> Answer {
    match tokio::time::timeout(HUNG, server.call(tool, args)).await {
        Ok(answer) => answer,
        Err(_) => {
            dir.disable_cleanup(true);
            let fifo = cache_of(dir.path());
            std::thread::spawn(move || {
                while std::fs::OpenOptions::new().write(true).open(&fifo).is_ok() {}
            });
            panic!("{tool}: hung on a FIFO in the data directory");
        }
    }
}

#[tokio::test]
async fn a_full_text_cache_linked_outside_the_data_directory_is_never_answered() {
    let (dir, server) = database_only().await;
    let outside = tempfile::tempdir().unwrap();
    let environ = outside.path().join("environ");
    std::fs::write(&environ, "ZOTERO_API_KEY=fakesecret0123456789").unwrap();
    let cache = cache_of(dir.path());
    std::fs::remove_file(&cache).unwrap();
    std::os::unix::fs::symlink(&environ, &cache).unwrap();

    for key in [keys::ARTICLE, keys::PDF] {
        let answer = server
            .call("zotero_get_item_fulltext", json!({"item_key": key}))
            .await;
        assert!(!answer.text.contains("fakesecret"), "{}", answer.text);
        assert!(
            !answer.envelope.to_string().contains("fakesecret"),
            "{}",
            answer.envelope
        );
        assert!(!answer.ok(), "{}", answer.envelope);
    }
    let found = server
        .call(
            "zotero_search_items",
            json!({"query": "fakesecret0123456789", "qmode": "everything"}),
        )
        .await;
    assert_eq!(found.expect_ok()["total"], 0, "{}", found.envelope);
    server.stop().await;
}

#[tokio::test]
async fn a_fifo_full_text_cache_is_answered_at_once_and_the_next_read_goes_on() {
    let (mut dir, server) = database_only().await;
    let cache = cache_of(dir.path());
    std::fs::remove_file(&cache).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&cache)
        .status()
        .unwrap();
    assert!(made.success());

    let text = call(
        &server,
        &mut dir,
        "zotero_get_item_fulltext",
        json!({"item_key": keys::PDF}),
    )
    .await;
    assert!(!text.ok(), "{}", text.envelope);
    assert!(
        text.envelope.to_string().contains("not a regular file"),
        "{}",
        text.envelope
    );
    let item = call(
        &server,
        &mut dir,
        "zotero_get_item",
        json!({"item_key": keys::BOOK}),
    )
    .await;
    item.expect_ok();
    server.stop().await;
}
