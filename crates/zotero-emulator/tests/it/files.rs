//! Self-test of the emulator's file upload protocol (authorization, the fake S3 bucket,
//! registration, quota) and its fault filters, with a plain hyper client.

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::testing::{
    api, auth_form, create, file_post, get, lib, md5_hex, new_attachment, send, template, upload,
};
use zotero_emulator::{Emulator, Fault, FaultKind, RECORDED_BODY_LIMIT};

const NONE_MATCH: (&str, &str) = ("If-None-Match", "*");

#[tokio::test]
async fn upload_authorize_store_register_download() {
    let emu = Emulator::start().await;
    let usage0 = emu.storage_usage();
    let parent = create(&emu, json!({"itemType": "book", "title": "P"})).await;
    let key = new_attachment(&emu, Some(&parent)).await;
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let form = auth_form(&bytes, "paper.pdf", "application/pdf");

    let r = file_post(&emu, &key, &form, &[]).await;
    assert_eq!(
        (r.status, r.text()),
        (
            428,
            "If-Match/If-None-Match header not provided".to_string()
        )
    );
    let r = file_post(&emu, &key, &form, &[NONE_MATCH]).await;
    assert_eq!(r.status, 200);
    let auth = r.json();
    let ct = auth["contentType"].as_str().unwrap();
    assert!(ct.starts_with("multipart/form-data; boundary=---------------------------"));
    assert_eq!(auth["uploadKey"].as_str().unwrap().len(), 32);
    assert!(auth["url"]
        .as_str()
        .unwrap()
        .ends_with("/s3/zotero-uploads/"));
    let prefix = auth["prefix"].as_str().unwrap();
    for field in [
        "key",
        "acl",
        "Content-MD5",
        "success_action_status",
        "policy",
        "x-amz-signature",
    ] {
        assert!(prefix.contains(&format!("name=\"{field}\"")), "{field}");
    }
    assert!(prefix.ends_with("name=\"file\"\r\n\r\n"));
    assert_eq!(emu.pending_uploads(), 1);

    // Registering before the upload, or with an unknown key.
    let upload_key = auth["uploadKey"].as_str().unwrap();
    let reg = format!("upload={upload_key}");
    let r = file_post(&emu, &key, &reg, &[NONE_MATCH]).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Remote file not found".to_string())
    );
    let r = file_post(
        &emu,
        &key,
        "upload=0123456789abcdef0123456789abcdef",
        &[NONE_MATCH],
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Upload key not found".to_string())
    );

    // The bucket checks the bytes against Content-MD5 and the size range.
    let mut wrong = bytes.clone();
    wrong[0] ^= 1;
    let r = upload(&emu, &auth, &wrong).await;
    assert_eq!(r.status, 400);
    assert!(r.text().contains("<Code>BadDigest</Code>"));
    assert!(r
        .text()
        .contains("The Content-MD5 you specified did not match what we received."));
    let r = upload(&emu, &auth, &bytes[1..]).await;
    assert_eq!(r.status, 400);
    assert!(r
        .text()
        .contains("Your proposed upload is smaller than the minimum allowed size"));
    let body = format!("{prefix}x{}", auth["suffix"].as_str().unwrap());
    let r = send(
        &emu,
        "POST",
        auth["url"].as_str().unwrap(),
        &[("Content-Type", "application/pdf")],
        body,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 412);
    let forged = prefix.replace(
        "name=\"acl\"\r\n\r\nprivate",
        "name=\"acl\"\r\n\r\npublic-read",
    );
    let body = [
        forged.as_bytes(),
        &bytes,
        auth["suffix"].as_str().unwrap().as_bytes(),
    ]
    .concat();
    let r = send(
        &emu,
        "POST",
        auth["url"].as_str().unwrap(),
        &[("Content-Type", ct)],
        body,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 403);
    assert!(r
        .text()
        .contains("Invalid according to Policy: Policy Condition failed"));

    let r = upload(&emu, &auth, &bytes).await;
    assert_eq!(r.status, 201);
    assert!(r.text().contains("<PostResponse>"));
    assert!(r
        .text()
        .contains(&format!("<ETag>\"{}\"</ETag>", md5_hex(&bytes))));
    assert!(emu
        .bucket_requests()
        .iter()
        .all(|r| r.header("zotero-api-key").is_none()));
    let big = emu.bucket_requests().pop().unwrap();
    let total = prefix.len() + 100_000 + auth["suffix"].as_str().unwrap().len();
    assert_eq!((big.body.len(), big.body_len), (RECORDED_BODY_LIMIT, total));

    let v_before = emu.library_version();
    let r = file_post(&emu, &key, &reg, &[]).await;
    assert_eq!(r.status, 428);
    let r = file_post(&emu, &key, &reg, &[NONE_MATCH]).await;
    assert_eq!((r.status, r.lmv()), (204, Some(v_before + 1)));
    let stored = emu.file(&key).unwrap();
    assert_eq!(stored.bytes.as_deref(), Some(bytes.as_slice()));
    assert_eq!(
        (stored.md5, stored.size, stored.filename.as_str()),
        (md5_hex(&bytes), 100_000, "paper.pdf")
    );
    assert_eq!(
        (stored.content_type.as_str(), stored.mtime),
        ("application/pdf", 1_700_000_000_000)
    );
    assert_eq!(emu.storage_usage(), usage0 + 100_000);
    assert_eq!(emu.pending_uploads(), 0);
    let item = get(&emu, &lib(&format!("items/{key}"))).await.json();
    assert_eq!(item["data"]["md5"], md5_hex(&bytes));
    assert_eq!(item["version"], v_before + 1);
    assert_eq!(item["links"]["enclosure"]["length"], 100_000);

    // The key is used up; the file now exists, so If-None-Match: * fails first.
    let r = file_post(&emu, &key, &reg, &[NONE_MATCH]).await;
    assert_eq!(
        (r.status, r.text()),
        (412, "If-None-Match: * set but file exists".to_string())
    );
    let if_match = md5_hex(&bytes);
    let r = file_post(&emu, &key, &reg, &[("If-Match", &if_match)]).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Upload key not found".to_string())
    );
    let r = file_post(
        &emu,
        &key,
        &form,
        &[("If-Match", "0123456789abcdef0123456789abcdef")],
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (
            412,
            "ETag does not match current version of file".to_string()
        )
    );

    // Download: a redirect to the bucket.
    let r = get(&emu, &lib(&format!("items/{key}/file"))).await;
    assert_eq!(r.status, 302);
    assert_eq!(r.header("zotero-file-md5"), Some(md5_hex(&bytes)));
    let r = send(
        &emu,
        "GET",
        &r.header("location").unwrap(),
        &[],
        Bytes::new(),
    )
    .await
    .unwrap();
    assert_eq!((r.status, r.body.to_vec()), (200, bytes.clone()));

    // Same bytes on another attachment: the server already has them.
    let other = new_attachment(&emu, None).await;
    let r = file_post(
        &emu,
        &other,
        &auth_form(&bytes, "copy.pdf", "application/pdf"),
        &[NONE_MATCH],
    )
    .await;
    assert_eq!(r.json(), json!({"exists": 1}));
    assert_eq!(r.lmv(), Some(emu.library_version()));
    assert_eq!(emu.file(&other).unwrap().filename, "copy.pdf");
    assert_eq!(emu.storage_usage(), usage0 + 200_000);

    // Deleting the parent deletes the attachment and frees its storage.
    let v = emu.item(&parent).unwrap()["version"].to_string();
    let r = api(
        &emu,
        "DELETE",
        &lib(&format!("items/{parent}")),
        &[("If-Unmodified-Since-Version", &v)],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(emu.file(&key).is_none());
    assert_eq!(emu.storage_usage(), usage0 + 100_000);
}

#[tokio::test]
async fn authorization_errors_and_quota() {
    let emu = Emulator::start().await;
    let key = new_attachment(&emu, None).await;
    for (form, msg) in [
        ("filename=a.pdf&filesize=3&mtime=1", "MD5 hash not provided"),
        (
            "md5=xyz&filename=a.pdf&filesize=3&mtime=1",
            "Invalid MD5 hash",
        ),
        (
            "md5=0123456789abcdef0123456789abcdef&filesize=3&mtime=1",
            "Filename not provided",
        ),
        (
            "md5=0123456789abcdef0123456789abcdef&filename=a&filesize=3",
            "File modification time not provided",
        ),
        (
            "md5=0123456789abcdef0123456789abcdef&filename=a&mtime=1",
            "File size not provided",
        ),
        (
            "md5=0123456789abcdef0123456789abcdef&filename=a&mtime=1&filesize=x",
            "Invalid file size",
        ),
    ] {
        let r = file_post(&emu, &key, form, &[NONE_MATCH]).await;
        assert_eq!((r.status, r.text()), (400, msg.to_string()), "{form}");
    }
    let r = file_post(&emu, &key, "md5=x", &[("If-None-Match", "abc")]).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Invalid value for If-None-Match header".to_string())
    );
    let r = file_post(
        &emu,
        &key,
        "md5=x",
        &[("If-Match", "0123456789abcdef0123456789abcdef")],
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (412, "If-Match set but file does not exist".to_string())
    );
    assert!(r.lmv().is_none());
    let r = file_post(&emu, "ZZZZZZZZ", "md5=x", &[NONE_MATCH]).await;
    assert_eq!(r.status, 404);
    let book = create(&emu, json!({"itemType": "book"})).await;
    let r = file_post(&emu, &book, "md5=x", &[NONE_MATCH]).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Item is not an attachment".to_string())
    );
    let r = file_post(&emu, "BERTLN93", "md5=x", &[NONE_MATCH]).await;
    assert_eq!(
        (r.status, r.text()),
        (
            400,
            "Cannot upload file for linked file/URL attachment item".to_string()
        )
    );
    assert_eq!(
        get(&emu, &lib(&format!("items/{key}/file"))).await.status,
        404
    );

    // Over quota: 413 with usage and quota in MB.
    emu.set_storage_quota(5 * 1024 * 1024);
    let usage = emu.storage_usage();
    let size = 5 * 1024 * 1024;
    let form =
        format!("md5=0123456789abcdef0123456789abcdef&filename=big.pdf&filesize={size}&mtime=1");
    let r = file_post(&emu, &key, &form, &[NONE_MATCH]).await;
    assert_eq!(r.status, 413);
    let mb = |b: u64| ((b as f64 / 1048576.0) * 10.0).round() / 10.0;
    assert_eq!(
        r.text(),
        format!("File would exceed quota ({} > 5)", mb(usage + size))
    );
    assert_eq!(r.header("zotero-storage-quota").as_deref(), Some("5"));
    assert_eq!(
        r.header("zotero-storage-usage"),
        Some(format!("{}", mb(usage)))
    );
    assert_eq!(
        r.header("zotero-storage-userid"),
        Some(zotero_emulator::USER_ID.to_string())
    );
    // The default is the free plan's 300 MB.
    emu.set_storage_quota(300 * 1024 * 1024);
    let r = file_post(&emu, &key, &form, &[NONE_MATCH]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn fault_filters_target_one_step() {
    let emu = Emulator::start().await;
    let key = new_attachment(&emu, None).await;
    let bytes = b"%PDF-1.4 tiny".to_vec();

    // Drop the registration: it is applied, the answer is lost.
    emu.inject(
        Fault::once(FaultKind::Drop)
            .method("POST")
            .path_suffix("/file")
            .body_contains("upload="),
    );
    let auth = file_post(
        &emu,
        &key,
        &auth_form(&bytes, "t.pdf", "application/pdf"),
        &[NONE_MATCH],
    )
    .await
    .json();
    assert_eq!(upload(&emu, &auth, &bytes).await.status, 201);
    let reg = format!("upload={}", auth["uploadKey"].as_str().unwrap());
    let mut h = vec![
        ("Content-Type", "application/x-www-form-urlencoded"),
        NONE_MATCH,
    ];
    h.push(("Zotero-API-Key", zotero_emulator::API_KEY));
    let r = send(
        &emu,
        "POST",
        &lib(&format!("items/{key}/file")),
        &h,
        reg.clone(),
    )
    .await;
    assert!(r.is_err(), "a dropped 204 reached the client");
    assert_eq!(emu.file(&key).unwrap().md5, md5_hex(&bytes));

    // Drop a create: the items exist, the client never hears of them.
    let n = emu.count_items();
    emu.inject(
        Fault::once(FaultKind::Drop)
            .on(&lib("items"))
            .method("POST"),
    );
    let body = json!([{"itemType": "book", "title": "Lost answer"}]).to_string();
    let h = [
        ("Zotero-API-Key", zotero_emulator::API_KEY),
        ("Content-Type", "application/json"),
    ];
    assert!(send(&emu, "POST", &lib("items"), &h, body).await.is_err());
    assert_eq!(emu.count_items(), n + 1);

    // Fail the S3 upload once, after letting one through; other paths are untouched.
    emu.inject(
        Fault::once(FaultKind::Status(500))
            .path_contains("/s3/")
            .skip(1),
    );
    let k2 = new_attachment(&emu, None).await;
    let b2 = b"second".to_vec();
    let a2 = file_post(
        &emu,
        &k2,
        &auth_form(&b2, "2.pdf", "text/plain"),
        &[NONE_MATCH],
    )
    .await
    .json();
    assert_eq!(upload(&emu, &a2, &b2).await.status, 201);
    assert_eq!(upload(&emu, &a2, &b2).await.status, 500);
    assert_eq!(upload(&emu, &a2, &b2).await.status, 201);

    // Drop the S3 answer: the object is stored anyway, registration works.
    emu.inject(Fault::once(FaultKind::Drop).path_contains("/s3/"));
    let k3 = new_attachment(&emu, None).await;
    let b3 = b"third".to_vec();
    let a3 = file_post(
        &emu,
        &k3,
        &auth_form(&b3, "3.pdf", "text/plain"),
        &[NONE_MATCH],
    )
    .await
    .json();
    let body = [
        a3["prefix"].as_str().unwrap().as_bytes(),
        &b3,
        a3["suffix"].as_str().unwrap().as_bytes(),
    ]
    .concat();
    let ct = a3["contentType"].as_str().unwrap();
    assert!(send(
        &emu,
        "POST",
        a3["url"].as_str().unwrap(),
        &[("Content-Type", ct)],
        body
    )
    .await
    .is_err());
    let r = file_post(
        &emu,
        &k3,
        &format!("upload={}", a3["uploadKey"].as_str().unwrap()),
        &[NONE_MATCH],
    )
    .await;
    assert_eq!(r.status, 204);
    // Untargeted requests were never faulted.
    assert_eq!(get(&emu, &lib("items/top")).await.status, 200);
}

/// A WebDAV user's attachment: its `md5` and `mtime` written in the item's JSON (as the
/// desktop does for WebDAV sync), no file on Zotero's storage: `/file` answers 404, as
/// `ItemsController::_handleFileRequest` does without a stored file.
#[tokio::test]
async fn a_webdav_file_is_not_on_zotero_storage() {
    let emu = Emulator::start().await;
    let mut t = template(&emu, "itemType=attachment&linkMode=imported_file").await;
    t["title"] = json!("PDF");
    t["filename"] = json!("paper.pdf");
    t["contentType"] = json!("application/pdf");
    t["md5"] = json!("0123456789abcdef0123456789abcdef");
    t["mtime"] = json!(1_767_225_600_000u64);
    let key = create(&emu, t).await;
    let item = get(&emu, &lib(&format!("items/{key}"))).await.json();
    assert_eq!(item["data"]["md5"], "0123456789abcdef0123456789abcdef");
    let r = get(&emu, &lib(&format!("items/{key}/file"))).await;
    assert_eq!(r.status, 404);
    assert!(r.header("location").is_none());
}
