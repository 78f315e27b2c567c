//! Conformance of `zotero_upload_attachment`, through the built binary over stdio against
//! the emulator: the four-step protocol byte for byte, every source, the size limit, the
//! private-address guard, bad sources explained before anything is written, and the
//! `exists` shortcut. Failures at each step are in `upload_failures.rs`.

use crate::common::{env_for, in_process};
use crate::upload_support::{
    assert_stored, attachments_of, bytes, env, md5_hex, setup, temp_file, PARENT,
};
use base64::Engine;
use serde_json::json;
use zotero_emulator::{Emulator, HostedFile, API_KEY, USER_ID};

#[tokio::test]
async fn a_file_from_a_path_goes_through_all_four_steps() {
    let (emu, server) = setup().await;
    let content = bytes(700_000, 7);
    let path = temp_file("attention-notes.pdf", &content);
    // Blank optional strings count as not given (some clients send every field).
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path, "title": "", "content_type": " "}),
        )
        .await;
    let data = a.expect_ok().clone();
    let item = assert_stored(&emu, &data, &content);
    assert_eq!(data["parent_item_key"], PARENT);
    assert_eq!(data["title"], "attention-notes.pdf");
    assert_eq!(data["content_type"], "application/pdf");
    assert_eq!(item["data"]["filename"], "attention-notes.pdf");
    assert_eq!(item["data"]["contentType"], "application/pdf");
    let mtime = std::fs::metadata(&path)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert_eq!(
        emu.file(data["attachment_key"].as_str().unwrap())
            .unwrap()
            .mtime,
        mtime
    );

    let reqs = emu.requests();
    let file_posts: Vec<_> = reqs
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/file"))
        .collect();
    assert_eq!(file_posts.len(), 2, "authorize and register");
    assert_eq!(file_posts[0].header("if-none-match"), Some("*"));
    assert_eq!(file_posts[1].header("if-none-match"), Some("*"));
    let s3: Vec<_> = reqs.iter().filter(|r| r.path.starts_with("/s3/")).collect();
    assert_eq!(s3.len(), 1);
    assert!(
        s3[0].header("zotero-api-key").is_none(),
        "the key never goes to storage"
    );
    assert!(s3[0].header("authorization").is_none());
    // The attachment item was created with a write token, like every create.
    let create = reqs
        .iter()
        .find(|r| r.method == "POST" && r.path == "/users/475425/items")
        .unwrap();
    assert!(create.header("zotero-write-token").is_some());
    server.stop().await;
}

#[tokio::test]
async fn base64_and_url_sources_store_the_same_bytes() {
    let (emu, server) = setup().await;
    let content = bytes(123_457, 3);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({
                "item_key": PARENT, "file_bytes_base64": encoded, "filename": "data.csv",
                "title": "Raw data"
            }),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_stored(&emu, &data, &content);
    assert_eq!(data["title"], "Raw data");
    assert_eq!(data["content_type"], "text/csv");

    // A URL behind two redirects, named by Content-Disposition, typed by Content-Type.
    let other = bytes(64_000, 9);
    emu.serve(
        "/web/download",
        HostedFile {
            status: 200,
            body: other.clone(),
            content_type: Some("application/epub+zip".into()),
            content_disposition: Some("attachment; filename=\"book.epub\"".into()),
            chunked: true,
        },
    );
    emu.redirect("/web/a", "/web/b", 302);
    emu.redirect("/web/b", "/web/download", 301);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_url": format!("{}/web/a", emu.uri())}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_stored(&emu, &data, &other);
    assert_eq!(data["title"], "book.epub");
    assert_eq!(data["content_type"], "application/epub+zip");
    // The key never goes to the web host either.
    for r in emu
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/web/"))
    {
        assert!(r.header("zotero-api-key").is_none());
    }
    server.stop().await;
}

#[tokio::test]
async fn a_file_over_the_limit_is_refused_without_reading_it() {
    let emu = Emulator::start().await;
    let server = in_process(&env(&emu, &[("ZOTERO_UPLOAD_MAX_BYTES", "1000000")])).await;
    // A sparse file of 1 TiB: reading it would take hours, refusing it takes a stat.
    let path = temp_file("huge.bin", b"");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(err["details"]["field"], "file_path");
    assert!(
        err["message"].as_str().unwrap().contains("1000000"),
        "{err}"
    );

    // Base64 over the limit is refused on its length, before decoding.
    let encoded = "A".repeat(1_400_000);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_bytes_base64": encoded, "filename": "x.bin"}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "file_bytes_base64"
    );

    // A URL announcing too much is refused on its Content-Length.
    emu.serve(
        "/web/big.bin",
        HostedFile {
            status: 200,
            body: vec![0; 1_000_001],
            content_type: None,
            content_disposition: None,
            chunked: false,
        },
    );
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_url": format!("{}/web/big.bin", emu.uri())}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "file_url"
    );
    // ... and so is one that sends too much without saying so.
    emu.serve(
        "/web/big-chunked.bin",
        HostedFile {
            status: 200,
            body: vec![0; 1_000_001],
            content_type: None,
            content_disposition: None,
            chunked: true,
        },
    );
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_url": format!("{}/web/big-chunked.bin", emu.uri())}),
        )
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(
        emu.count("POST", "/users/475425/items"),
        0,
        "nothing written"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_private_address_is_refused_without_zotero_fetch_allow_private() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_ARXIV_BASE".into(), emu.arxiv_base()));
    let server = in_process(&env).await;
    emu.serve(
        "/web/paper.pdf",
        HostedFile {
            status: 200,
            body: b"%PDF-1.4 tiny".to_vec(),
            content_type: Some("application/pdf".into()),
            content_disposition: None,
            chunked: false,
        },
    );
    for url in [
        format!("{}/web/paper.pdf", emu.uri()),
        "http://localhost:9/x.pdf".to_string(),
        "http://169.254.169.254/latest/meta-data".to_string(),
        "http://10.0.0.1/x".to_string(),
        "http://[::1]/x".to_string(),
    ] {
        let a = server
            .call(
                "zotero_upload_attachment",
                json!({"item_key": PARENT, "file_url": url}),
            )
            .await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], "file_url", "{url}: {err}");
    }
    assert_eq!(emu.count("GET", "/web/"), 0, "nothing was fetched");
    // Other schemes are refused outright. (Redirect hops into private addresses are
    // refused too: crates/zotero-sources/src/tests/raw.rs, where a loopback server can play a public one.)
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_url": "file:///etc/passwd"}),
        )
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(emu.count("POST", "/users/475425/items"), 0);
    server.stop().await;
}

#[tokio::test]
async fn bad_sources_are_explained_before_anything_is_written() {
    let (emu, server) = setup().await;
    let in_dir = temp_file("x.txt", b"x");
    let dir = in_dir.parent().unwrap().to_path_buf();
    for (args, field) in [
        (json!({"item_key": PARENT}), "file_path"),
        (
            json!({"item_key": PARENT, "file_path": "/etc/hostname", "file_url": "https://example.org/x"}),
            "file_url",
        ),
        (
            json!({"item_key": PARENT, "file_bytes_base64": "aGVsbG8="}),
            "filename",
        ),
        (
            json!({"item_key": PARENT, "file_bytes_base64": "not base64!!", "filename": "a.txt"}),
            "file_bytes_base64",
        ),
        (json!({"item_key": PARENT, "file_path": dir}), "file_path"),
        (
            json!({"item_key": PARENT, "file_path": dir.join("missing.pdf")}),
            "file_path",
        ),
        (
            json!({"item_key": PARENT, "file_path": "/dev/null"}),
            "file_path",
        ),
        (
            json!({"item_key": "nope", "file_path": "/etc/hostname"}),
            "item_key",
        ),
    ] {
        let a = server.call("zotero_upload_attachment", args.clone()).await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], field, "{args}: {err}");
    }
    // A parent that does not exist, or that is an attachment itself.
    let path = temp_file("a.txt", b"hello");
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": "ZZZZZZZZ", "file_path": path}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": "VASPDF23", "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(err["details"]["field"], "item_key");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("of type attachment"),
        "{err}"
    );
    assert_eq!(emu.count("POST", "/"), 0, "nothing written");
    server.stop().await;
}

#[tokio::test]
async fn bytes_zotero_already_has_are_not_sent_again() {
    let (emu, server) = setup().await;
    let content = bytes(80_000, 4);
    let path = temp_file("same.pdf", &content);
    server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await
        .expect_ok();
    emu.reset_counts();
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": "BERTDV82", "file_path": path}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(emu.count("POST", "/s3/"), 0, "no bytes sent");
    let item = emu.item(data["attachment_key"].as_str().unwrap()).unwrap();
    assert_eq!(item["data"]["md5"], md5_hex(&content));
    assert_eq!(data["version"], item["version"]);
    assert!(data.get("already_attached").is_none());
    server.stop().await;
}

#[tokio::test]
async fn the_same_file_attached_twice_to_one_item_is_not_duplicated() {
    let (emu, server) = setup().await;
    let content = bytes(90_000, 12);
    let path = temp_file("twice.pdf", &content);
    let call = || {
        server.call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
    };
    let first = call().await.expect_ok().clone();
    emu.reset_counts();
    let second = call().await.expect_ok().clone();
    assert_eq!(second["attachment_key"], first["attachment_key"]);
    assert_eq!(second["version"], first["version"]);
    assert_eq!(second["already_attached"], true);
    assert_eq!(emu.count("POST", "/"), 0, "nothing written");
    assert_eq!(attachments_of(&emu, PARENT).len(), 1);

    // Same bytes under another name are another attachment.
    let other = temp_file("renamed.pdf", &content);
    let third = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": other}),
        )
        .await;
    assert_ne!(third.expect_ok()["attachment_key"], first["attachment_key"]);
    assert_eq!(attachments_of(&emu, PARENT).len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn identical_concurrent_uploads_make_one_attachment() {
    use crate::upload_support::{assert_one_attachment, concurrently};
    let (emu, server) = setup().await;
    let server = std::sync::Arc::new(server);
    let content = bytes(120_000, 51);
    let path = temp_file("twins.pdf", &content);
    let answers = concurrently(
        &server,
        8,
        "zotero_upload_attachment",
        json!({"item_key": PARENT, "file_path": path}),
    )
    .await;
    let key = assert_one_attachment(&emu, &answers);
    let created = answers
        .iter()
        .find(|a| a.data()["attachment_key"] == key.as_str())
        .unwrap();
    assert_stored(&emu, created.data(), &content);
    assert_eq!(emu.count("POST", "/s3/"), 1, "the bytes went once");
    std::sync::Arc::try_unwrap(server)
        .ok()
        .unwrap()
        .stop()
        .await;
}

#[tokio::test]
async fn a_twin_cancelled_while_it_waits_leaves_the_turns_working() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;
    use zotero_emulator::{Fault, FaultKind};

    let (emu, server) = setup().await;
    // The first upload holds its turn while storage takes its time.
    emu.inject(Fault::once(FaultKind::Slow(std::time::Duration::from_millis(500))).on("/s3/"));
    let content = bytes(60_000, 71);
    let path = temp_file("twin.pdf", &content);
    let args = json!({"item_key": PARENT, "file_path": path});
    let parent_reads = || emu.count("GET", &format!("/users/475425/items/{PARENT}"));
    let first = server.call("zotero_upload_attachment", args.clone());
    let twin = async {
        until("the first upload sends its bytes", || {
            emu.count("POST", "/s3/") > 0
        })
        .await;
        let reads = parent_reads();
        let params = CallToolRequestParams::new("zotero_upload_attachment")
            .with_arguments(crate::common::obj(args.clone()));
        let handle = server
            .client
            .send_cancellable_request(
                ClientRequest::CallToolRequest(Request::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .unwrap();
        // The twin has checked the parent: next it waits for its turn.
        until("the twin checks the parent", || parent_reads() > reads).await;
        handle
            .cancel(Some("the user gave up".into()))
            .await
            .unwrap();
    };
    let (first, ()) = tokio::join!(first, twin);
    let key = first.expect_ok()["attachment_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_stored(&emu, first.data(), &content);
    // Waiting for its turn, the twin created nothing.
    let creates = |emu: &Emulator| {
        emu.requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path == "/users/475425/items")
            .count()
    };
    assert_eq!(creates(&emu), 1);

    // The turn is free again and nothing was poisoned: a third identical call gets its turn
    // and finds the attachment.
    let third = server.call("zotero_upload_attachment", args).await;
    let data = third.expect_ok();
    assert_eq!(data["attachment_key"], key.as_str());
    assert_eq!(data["already_attached"], true);
    assert_eq!(attachments_of(&emu, PARENT).len(), 1);
    assert_eq!(emu.count("POST", "/s3/"), 1);
    assert_eq!(creates(&emu), 1);
    server.stop().await;
}

/// Waits until `done` holds (checked every few milliseconds); fails after 60 s, a bound for
/// a hung test rather than a timing (it returns as soon as the event happens).
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: never happened"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
