//! What happens when an upload fails, through the built binary against the emulator: a
//! failure at any step leaves no attachment item, lost answers are retried into one
//! complete upload, a full quota says so plainly, a cancelled call cleans up after itself,
//! and no secret reaches a log line or an answer.

use crate::common::spawn;
use crate::upload_support::{assert_stored, attachments_of, bytes, env, setup, temp_file, PARENT};
use base64::Engine;
use serde_json::json;
use zotero_emulator::{Emulator, Fault, FaultKind, API_KEY};

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
    assert_eq!(emu.faults_pending(), 0, "{fault:?} never fired");
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
        // Reading the attachment back fails: the upload is done and stays done.
        Fault::times(FaultKind::ServerError, 3)
            .method("GET")
            .on("/users/475425/items/")
            .skip(2),
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
        assert_eq!(emu.faults_pending(), 0, "{fault:?} never fired");
        assert_stored(&emu, a.data(), &content);
        assert_eq!(attachments_of(&emu, PARENT).len(), before + 1, "{fault:?}");
        server.stop().await;
    }
}

#[tokio::test]
async fn a_full_storage_quota_says_so_plainly() {
    let (emu, server) = setup().await;
    // 3 MB of quota; the library's files take some already; 1 MB more does not fit.
    let used = emu.storage_usage();
    let quota = 3 * 1024 * 1024;
    assert!(
        used < quota && used + 1024 * 1024 > quota,
        "fixture usage {used}: the quota must hold it, and not 1 MB more"
    );
    emu.set_storage_quota(quota);
    let path = temp_file("big.pdf", &bytes(1024 * 1024, 2));
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
    assert_eq!(err["details"]["storage_quota_mb"], "3", "{err}");
    let usage: f64 = err["details"]["storage_usage_mb"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((usage - used as f64 / 1048576.0).abs() < 0.1, "{err}");
    assert!(message.contains("3 MB quota"), "{message}");
    assert_eq!(err["details"]["file_size"], 1024 * 1024);
    assert_eq!(err["details"]["attachment_removed"], true);
    assert!(attachments_of(&emu, PARENT).is_empty());

    // Half a megabyte still fits.
    let small = temp_file("small.pdf", &bytes(512 * 1024, 3));
    server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": small}),
        )
        .await
        .expect_ok();
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
    // The failed upload's cleanup is logged last: every line of both calls is in by then.
    assert!(
        server
            .wait_for_log(std::time::Duration::from_secs(5), |v| {
                v["fields"]["message"] == "removed the attachment item of a failed upload"
            })
            .await,
        "the cleanup was not logged"
    );
    let logs = server.stderr().join("\n");
    assert!(logs.lines().count() > 10, "trace logging is on: {logs}");
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
async fn a_cancelled_upload_removes_its_attachment_item() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;

    let (emu, server) = setup().await;
    // Storage takes its time answering: the call is cancelled while it waits.
    emu.inject(Fault::once(FaultKind::Slow(std::time::Duration::from_secs(10))).on("/s3/"));
    let path = temp_file("slow.pdf", &bytes(200_000, 11));
    let params = CallToolRequestParams::new("zotero_upload_attachment").with_arguments(
        crate::common::obj(json!({"item_key": PARENT, "file_path": path})),
    );
    let handle = server
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while emu.count("POST", "/s3/") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upload never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    handle
        .cancel(Some("the user gave up".into()))
        .await
        .unwrap();

    // The server notices, stops, and deletes the attachment item it had created.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while emu.count("DELETE", "/users/475425/items/") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no cleanup after cancel"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(attachments_of(&emu, PARENT).is_empty());
    assert_eq!(
        emu.count("POST", "/users/475425/items/"),
        1,
        "authorized, never registered"
    );
    // And keeps serving.
    server
        .call("zotero_get_item", json!({"item_key": PARENT}))
        .await
        .expect_ok();
    server.stop().await;
}

#[tokio::test]
async fn a_file_that_changes_after_hashing_is_never_stored() {
    let (emu, server) = setup().await;
    let usage = emu.storage_usage();
    // The authorization takes a moment: the file is rewritten (same size) meanwhile.
    emu.inject(
        Fault::once(FaultKind::Slow(std::time::Duration::from_millis(800)))
            .method("POST")
            .path_suffix("/file"),
    );
    let original = bytes(600_000, 21);
    let path = temp_file("draft.pdf", &original);
    let mut changed = original.clone();
    changed[300_000] ^= 0xFF;
    // Rewritten once the authorization request has arrived: after hashing, before sending.
    let rewrite = async {
        while emu.count("POST", "/users/475425/items/") == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        std::fs::write(&path, &changed).unwrap();
    };
    let call = server.call(
        "zotero_upload_attachment",
        json!({"item_key": PARENT, "file_path": path}),
    );
    let (a, ()) = tokio::join!(call, rewrite);
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(
        err["message"].as_str().unwrap().contains("changed"),
        "{err}"
    );
    assert_eq!(err["details"]["attachment_removed"], true);
    assert!(attachments_of(&emu, PARENT).is_empty());
    assert_eq!(emu.storage_usage(), usage, "nothing stored");
    server.stop().await;
}

#[tokio::test]
async fn a_storage_refusal_is_an_upstream_error_not_an_auth_error() {
    let (emu, server) = setup().await;
    // The bytes reach the bucket after the authorization's policy expired: S3 answers
    // `403 AccessDenied`, which says nothing about the API key.
    emu.set_upload_policy_ttl(-120);
    let path = temp_file("late.pdf", &bytes(30_000, 31));
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR").clone();
    let d = &err["details"];
    assert_eq!(d["status"], 403, "{err}");
    assert_eq!(d["storage_code"], "AccessDenied", "{err}");
    assert_eq!(
        d["storage_message"], "Invalid according to Policy: Policy expired.",
        "{err}"
    );
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("403") && message.contains("AccessDenied"),
        "{message}"
    );
    assert!(!message.contains("API key"), "{message}");
    assert!(!message.contains("settings/keys"), "{message}");
    // The existing clean-up: no orphan attachment.
    assert_eq!(d["attachment_removed"], true, "{err}");
    assert!(attachments_of(&emu, PARENT).is_empty());
    // Nothing of the authorization is in the answer.
    assert!(!a.text.contains("/s3/"), "{}", a.text);
    assert!(!a.text.contains("x-amz"), "{}", a.text);
    for k in emu.upload_keys() {
        assert!(!a.text.contains(k.as_str()), "upload key leaked");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_cleanup_whose_answer_was_lost_is_reported_as_done() {
    let (emu, server) = setup().await;
    // The upload fails (registration refused), so its attachment item is deleted again; the
    // first DELETE goes through but every answer to it (and to its repeats) is lost.
    emu.inject(
        Fault::once(FaultKind::Status(409))
            .method("POST")
            .path_suffix("/file")
            .body_contains("upload="),
    );
    emu.inject(Fault::times(FaultKind::Drop, 3).method("DELETE"));
    let path = temp_file("paper.pdf", &bytes(20_000, 41));
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR").clone();
    assert_eq!(emu.faults_pending(), 0, "every fault fired");
    let key = err["details"]["attachment_key"].as_str().unwrap();
    assert!(emu.item(key).is_none(), "the first DELETE went through");
    assert!(attachments_of(&emu, PARENT).is_empty());
    assert_eq!(err["details"]["attachment_removed"], true, "{err}");
    assert!(
        err["message"].as_str().unwrap().contains("removed again"),
        "{err}"
    );
    server.stop().await;
}

/// The attachment's create landed but its answer was lost, and every repeat was refused
/// (403): the refusal of a repeat says nothing of the first attempt, so the item is looked
/// for under its key, found, and the upload goes on with it — never a refusal that leaves
/// an item behind. (Found by `prop_uploads`.)
#[tokio::test]
async fn a_refused_repeat_of_a_create_that_landed_is_not_taken_for_nothing_created() {
    let (emu, server) = setup().await;
    let before = attachments_of(&emu, PARENT).len();
    let create = |f: Fault| f.method("POST").path_suffix("/items");
    emu.inject(create(Fault::once(FaultKind::Drop)));
    emu.inject(create(Fault::times(FaultKind::Status(403), 3)));
    let content = bytes(30_000, 7);
    let path = temp_file("paper.pdf", &content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    assert!(a.ok(), "{}", a.envelope);
    assert_stored(&emu, a.data(), &content);
    assert_eq!(attachments_of(&emu, PARENT).len(), before + 1);
    server.stop().await;
}

/// The storage URL of an upload authorization passes the address guard of outside requests:
/// on another host than the API's, a loopback address is refused before anything is sent
/// (no bytes, no signed fields), and the error names neither the URL's path nor the upload
/// key; `ZOTERO_FETCH_ALLOW_PRIVATE=1` lifts it.
#[tokio::test]
async fn a_storage_url_on_a_private_host_is_refused_unless_private_addresses_are_allowed() {
    let emu = Emulator::start().await;
    // The API through `localhost`: the storage URL the emulator names (127.0.0.1) is then
    // another host, and a loopback one.
    let api = emu.uri().replace("127.0.0.1", "localhost");
    assert_ne!(api, emu.uri());
    let upload = json!({"item_key": PARENT,
        "file_bytes_base64": base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.4 guarded"),
        "filename": "guarded.pdf"});
    let env = crate::common::env_for(&api, zotero_emulator::USER_ID, API_KEY);
    let server = crate::common::in_process(&env).await;
    let a = server
        .call("zotero_upload_attachment", upload.clone())
        .await;
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR").clone();
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("loopback") && message.contains("ZOTERO_FETCH_ALLOW_PRIVATE=1"),
        "{err}"
    );
    assert!(!err.to_string().contains("/s3/"), "no URL path: {err}");
    assert_eq!(emu.count("POST", "/s3/"), 0, "nothing sent to the storage");
    for line in server.stderr() {
        assert!(!line.contains("/s3/"), "the URL is never logged: {line}");
    }

    let mut env = env;
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    let server = crate::common::in_process(&env).await;
    server
        .call("zotero_upload_attachment", upload)
        .await
        .expect_ok();
    assert_eq!(emu.count("POST", "/s3/"), 1, "allowed, the bytes go once");
}
