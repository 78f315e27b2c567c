//! Conformance of `zotero_upload_attachment` and `zotero_attach_arxiv_pdf`, through the built
//! binary over stdio against the emulator: the four-step protocol byte for byte, every
//! source, the size limit, the private-address guard, all-or-nothing on a failure at any
//! step, a full storage quota, the `exists` shortcut, progress notifications, and secrets
//! kept out of logs and answers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
mod emulator;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine;
use common::{env_for, spawn};
use emulator::{Emulator, Fault, FaultKind, HostedFile, API_KEY, USER_ID};
use md5::{Digest, Md5};
use serde_json::{json, Value};

const PARENT: &str = "NLPML6K7";

fn env(emu: &Emulator, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    env.push(("ZOTERO_ARXIV_BASE".into(), emu.arxiv_base()));
    for (k, v) in extra {
        env.push((k.to_string(), v.to_string()));
    }
    env
}

async fn setup() -> (Emulator, common::Server) {
    let emu = Emulator::start().await;
    let server = spawn(&env(&emu, &[])).await;
    (emu, server)
}

/// A file in a fresh directory of its own.
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zotero-mcp-test-{:016x}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

fn md5_hex(b: &[u8]) -> String {
    format!("{:x}", Md5::digest(b))
}

fn attachments_of(emu: &Emulator, parent: &str) -> Vec<Value> {
    emu.children(parent)
        .into_iter()
        .filter(|c| c["data"]["itemType"] == "attachment")
        .collect()
}

/// Checks that the upload landed: one attachment item under the parent, with these bytes.
fn assert_stored(emu: &Emulator, data: &Value, content: &[u8]) -> Value {
    let key = data["attachment_key"].as_str().unwrap();
    let item = emu.item(key).expect("attachment item exists");
    assert_eq!(item["data"]["parentItem"], data["parent_item_key"]);
    assert_eq!(item["data"]["linkMode"], "imported_file");
    assert_eq!(item["data"]["md5"], md5_hex(content));
    let file = emu.file(key).expect("file stored");
    assert_eq!(file.size, content.len() as u64);
    assert_eq!(file.md5, md5_hex(content));
    assert_eq!(file.bytes.as_deref(), Some(content));
    assert_eq!(data["size"], content.len());
    assert_eq!(data["version"], item["version"]);
    item
}

#[tokio::test]
async fn a_file_from_a_path_goes_through_all_four_steps() {
    let (emu, server) = setup().await;
    let content = bytes(700_000, 7);
    let path = temp_file("attention-notes.pdf", &content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
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
    let server = spawn(&env(&emu, &[("ZOTERO_UPLOAD_MAX_BYTES", "1000000")])).await;
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
async fn a_private_address_is_refused_unless_allowed() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_ARXIV_BASE".into(), emu.arxiv_base()));
    let server = spawn(&env).await;
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
    // A public-looking name is refused too when it leads to a private address after a
    // redirect; and other schemes are refused outright.
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
    let dir = temp_file("x.txt", b"x").parent().unwrap().to_path_buf();
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
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(emu.count("POST", "/"), 0, "nothing written");
    server.stop().await;
}

/// Runs one upload with `fault` injected and checks that it failed and left nothing.
async fn fails_cleanly(fault: Fault, expect_code: &str) {
    let (emu, server) = setup().await;
    let before = attachments_of(&emu, PARENT).len();
    emu.inject(fault.clone());
    let path = temp_file("paper.pdf", &bytes(50_000, 1));
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err(expect_code).clone();
    assert_eq!(
        attachments_of(&emu, PARENT).len(),
        before,
        "{fault:?} left an attachment: {err}"
    );
    assert_eq!(err["details"]["attachment_removed"], true, "{err}");
    let key = err["details"]["attachment_key"].as_str().unwrap();
    assert!(emu.item(key).is_none());
    // The delete was version-checked.
    let delete = emu
        .requests()
        .into_iter()
        .find(|r| r.method == "DELETE")
        .expect("a DELETE");
    assert!(delete.header("if-unmodified-since-version").is_some());
    server.stop().await;
}

#[tokio::test]
async fn an_upload_failing_at_any_step_leaves_no_attachment_item() {
    let file = "/file";
    // Authorization refused.
    fails_cleanly(
        Fault::once(FaultKind::Status(403))
            .method("POST")
            .path_suffix(file),
        "ZOTERO_AUTH_ERROR",
    )
    .await;
    // Authorization failing on every attempt.
    fails_cleanly(
        Fault::times(FaultKind::ServerError, 3)
            .method("POST")
            .path_suffix(file),
        "ZOTERO_UPSTREAM_ERROR",
    )
    .await;
    // Storage refusing the bytes on every attempt.
    fails_cleanly(
        Fault::times(FaultKind::ServerError, 3).on("/s3/"),
        "ZOTERO_UPSTREAM_ERROR",
    )
    .await;
    // Registration failing on every attempt.
    fails_cleanly(
        Fault::times(FaultKind::ServerError, 3)
            .method("POST")
            .path_suffix(file)
            .body_contains("upload="),
        "ZOTERO_UPSTREAM_ERROR",
    )
    .await;
    // Registration refused outright.
    fails_cleanly(
        Fault::once(FaultKind::Status(409))
            .method("POST")
            .path_suffix(file)
            .body_contains("upload="),
        "ZOTERO_VALIDATION_ERROR",
    )
    .await;
}

#[tokio::test]
async fn lost_answers_and_single_failures_are_retried_to_one_complete_upload() {
    for fault in [
        Fault::once(FaultKind::Drop)
            .on("/users/475425/items")
            .method("POST"),
        Fault::once(FaultKind::ServerError).on("/s3/"),
        Fault::once(FaultKind::Drop).on("/s3/"),
        Fault::once(FaultKind::Drop)
            .method("POST")
            .path_suffix("/file")
            .body_contains("upload="),
        Fault::once(FaultKind::Drop)
            .method("POST")
            .path_suffix("/file"),
    ] {
        let (emu, server) = setup().await;
        let before = attachments_of(&emu, PARENT).len();
        emu.inject(fault.clone());
        let content = bytes(40_000, 5);
        let path = temp_file("paper.pdf", &content);
        let a = server
            .call(
                "zotero_upload_attachment",
                json!({"item_key": PARENT, "file_path": path}),
            )
            .await;
        assert!(a.ok(), "{fault:?}: {}", a.envelope);
        assert_stored(&emu, a.data(), &content);
        assert_eq!(attachments_of(&emu, PARENT).len(), before + 1, "{fault:?}");
        server.stop().await;
    }
}

#[tokio::test]
async fn a_full_storage_quota_says_so_plainly() {
    let (emu, server) = setup().await;
    emu.set_storage_quota(100_000);
    let path = temp_file("big.pdf", &bytes(150_000, 2));
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("storage is full"), "{message}");
    assert_eq!(err["details"]["status"], 413);
    assert!(err["details"]["storage_quota_mb"].is_string(), "{err}");
    assert!(err["details"]["storage_usage_mb"].is_string(), "{err}");
    assert_eq!(err["details"]["attachment_removed"], true);
    assert!(attachments_of(&emu, PARENT).is_empty());
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
    server.stop().await;
}

#[tokio::test]
async fn no_secret_reaches_a_log_line_or_an_answer() {
    let emu = Emulator::start().await;
    let server = spawn(&env(&emu, &[("ZOTERO_MCP_LOG_LEVEL", "trace")])).await;
    let marker = b"SECRET-FILE-CONTENT-7f3a";
    let mut content = marker.to_vec();
    content.extend(bytes(10_000, 8));
    let path = temp_file("private-notes.txt", &content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    a.expect_ok();
    // A failing one too (other bytes, so that they are sent), so that error paths are logged.
    emu.inject(Fault::times(FaultKind::Status(400), 1).on("/s3/"));
    content.extend(b"more");
    let b = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_bytes_base64": base64::engine::general_purpose::STANDARD.encode(&content), "filename": "n.txt"}),
        )
        .await;
    assert!(!b.ok());
    let logs = server.stderr().join("\n");
    let answers = format!("{}\n{}", a.text, b.text);
    // File paths stay out of the logs (the caller's own answer may name them).
    assert!(!logs.contains(path.to_str().unwrap()));
    let upload_keys: Vec<String> = emu.upload_keys();
    assert!(!upload_keys.is_empty());
    for text in [&logs, &answers] {
        assert!(!text.contains(API_KEY));
        assert!(!text.contains("SECRET-FILE-CONTENT"));
        for k in &upload_keys {
            assert!(!text.contains(k.as_str()), "upload key leaked");
        }
        assert!(!text.contains("/s3/zotero-uploads"), "storage URL leaked");
        assert!(!text.contains("policy"), "authorization fields leaked");
    }
    server.stop().await;
}

#[tokio::test]
async fn arxiv_ids_in_every_form_fetch_the_pdf() {
    let (emu, server) = setup().await;
    let pdf = |n: u8| {
        let mut b = b"%PDF-1.5\n".to_vec();
        b.extend(bytes(30_000, n));
        b
    };
    emu.add_arxiv("1706.03762v1", pdf(1));
    emu.add_arxiv("1706.03762v7", pdf(2));
    emu.add_arxiv("hep-th/9901001", pdf(3));
    emu.add_arxiv("math.CA/0611800v2", pdf(4));
    for (input, id, filename, content) in [
        ("1706.03762v1", "1706.03762v1", "1706.03762v1.pdf", pdf(1)),
        ("arXiv:1706.03762", "1706.03762", "1706.03762.pdf", pdf(2)),
        (
            "https://arxiv.org/abs/1706.03762v1",
            "1706.03762v1",
            "1706.03762v1.pdf",
            pdf(1),
        ),
        (
            "https://arxiv.org/pdf/1706.03762v7.pdf",
            "1706.03762v7",
            "1706.03762v7.pdf",
            pdf(2),
        ),
        (
            "hep-th/9901001",
            "hep-th/9901001",
            "hep-th_9901001.pdf",
            pdf(3),
        ),
        (
            "arXiv:math.CA/0611800v2",
            "math.CA/0611800v2",
            "math.CA_0611800v2.pdf",
            pdf(4),
        ),
    ] {
        let a = server
            .call(
                "zotero_attach_arxiv_pdf",
                json!({"item_key": PARENT, "arxiv_id": input}),
            )
            .await;
        let data = a.expect_ok().clone();
        assert_eq!(data["arxiv_id"], id, "{input}");
        assert_eq!(data["pdf_url"], format!("{}/pdf/{id}", emu.arxiv_base()));
        assert_eq!(data["title"], filename);
        assert_eq!(data["content_type"], "application/pdf");
        let item = assert_stored(&emu, &data, &content);
        assert_eq!(item["data"]["filename"], filename);
    }
    server.stop().await;
}

#[tokio::test]
async fn arxiv_refuses_what_is_not_a_pdf_and_unknown_ids() {
    let (emu, server) = setup().await;
    emu.add_arxiv_page("2101.00001", "<html><body>Just a moment…</body></html>");
    let a = server
        .call(
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "2101.00001"}),
        )
        .await;
    // arXiv answered, but not with a PDF (a challenge page, a withdrawn paper): upstream.
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert!(err["message"].as_str().unwrap().contains("PDF"), "{err}");
    assert_eq!(err["details"]["content_type"], "text/html");
    let a = server
        .call(
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "2101.99999"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    for bad in [
        "hello",
        "1706.3762",
        "https://example.org/abs/1706.03762",
        "17060.3762",
    ] {
        let a = server
            .call(
                "zotero_attach_arxiv_pdf",
                json!({"item_key": PARENT, "arxiv_id": bad}),
            )
            .await;
        assert_eq!(
            a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
            "arxiv_id",
            "{bad}"
        );
    }
    assert_eq!(emu.count("POST", "/users/475425/items"), 0);
    server.stop().await;
}

// --- progress notifications -------------------------------------------------------------

#[derive(Clone, Default)]
struct ProgressLog(Arc<Mutex<Vec<(f64, Option<f64>)>>>);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push((params.progress, params.total));
    }
}

#[tokio::test]
async fn progress_is_reported_in_bytes_when_asked_for() {
    use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let emu = Emulator::start().await;
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.env_clear();
    for (k, v) in env(&emu, &[]) {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = ProgressLog::default();
    let client = log.clone().serve(transport).await.unwrap();

    let size = 3 * 1024 * 1024 + 17;
    let content = bytes(size, 6);
    let path = temp_file("big.pdf", &content);
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("up-1".into())));
    let mut params = CallToolRequestParams::new("zotero_upload_attachment")
        .with_arguments(common::obj(json!({"item_key": PARENT, "file_path": path})));
    params.meta = Some(meta);
    let result = client.call_tool(params).await.unwrap();
    let answer = common::to_answer(result);
    answer.expect_ok();
    // Notifications may trail the answer by a moment.
    for _ in 0..100 {
        if log.0.lock().unwrap().last().map(|p| p.0) == Some(size as f64) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = log.0.lock().unwrap().clone();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "grows: {seen:?}");
    assert!(seen.iter().all(|p| p.1 == Some(size as f64)));
    assert_eq!(seen.last().unwrap().0, size as f64);
    let _ = client.cancel().await;
}
