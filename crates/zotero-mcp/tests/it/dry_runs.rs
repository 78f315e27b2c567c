//! `dry_run` on the four seed write tools (`zotero_create_item`,
//! `zotero_add_item_to_collection`, `zotero_upload_attachment`, `zotero_attach_arxiv_pdf`):
//! a dry run makes every check the call makes and answers what it would write, while the
//! emulator sees no write (no request but GETs, nothing in the bucket); the same call without
//! `dry_run` then writes exactly that. A dry run is refused where the call is: a library the
//! key may not write, a file over the size limit, an arXiv answer that is not a PDF.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, KeyAccess, UserAccess, API_KEY, USER_ID};

use crate::common::{env_for, in_process, writes};
use crate::upload_support::{attachments_of, bytes, env, md5_hex, setup, temp_file, PARENT};

/// Nothing was written: no request but reads, none to the bucket, no upload authorized.
fn assert_nothing_written(emu: &Emulator) {
    assert!(writes(emu).is_empty(), "{:?}", writes(emu));
    assert!(emu.bucket_requests().is_empty());
    assert!(emu.upload_keys().is_empty());
}

/// The answer without what only exists once written.
fn without(data: &Value, keys: &[&str]) -> Value {
    let mut data = data.clone();
    for k in keys {
        data.as_object_mut().unwrap().remove(*k);
    }
    data
}

#[tokio::test]
async fn create_item_answers_the_item_it_would_create_then_creates_exactly_that() {
    let emu = Emulator::start().await;
    // A field the type lacks goes into extra in a dry run too.
    emu.drop_field("book", "DOI");
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let args = json!({
        "item_type": "book",
        "title": "Deep Learning",
        "creators": [
            {"creator_type": "author", "first_name": "Ian", "last_name": "Goodfellow"},
            {"creator_type": "author", "name": "MIT Press authors"}
        ],
        "date": "2016",
        "doi": "10.5555/dl.2016",
        "url": "https://www.deeplearningbook.org",
        "tags": ["deep learning", "textbook", "deep learning"],
        "extra": "Original Date: 2016"
    });
    let items_before = emu.items().len();
    let mut dry_args = args.clone();
    dry_args["dry_run"] = json!(true);
    let dry = server.call("zotero_create_item", dry_args).await;
    let dry = dry.expect_ok().clone();
    assert_eq!(dry["dry_run"], true);
    // No key and no version yet: the seed requires both, so "" and 0.
    assert_eq!((&dry["item_key"], &dry["version"]), (&json!(""), &json!(0)));
    assert_eq!(dry["moved_to_extra"], json!(["doi"]));
    let item = &dry["item"];
    assert_eq!(item["item_type"], "book");
    assert_eq!(item["title"], "Deep Learning");
    assert_eq!(item["extra"], "Original Date: 2016\nDOI: 10.5555/dl.2016");
    assert_eq!(item["tags"], json!(["deep learning", "textbook"]));
    assert_eq!(item["creators"][1]["name"], "MIT Press authors");
    assert!(item.get("zotero_url").is_none(), "{item}");
    let fields = dry["fields"].as_object().unwrap();
    assert_eq!(fields["title"], "Deep Learning");
    assert_eq!(fields["date"], "2016");
    assert_eq!(fields["url"], "https://www.deeplearningbook.org");
    assert!(!fields.contains_key("DOI") && !fields.contains_key("itemType"));
    assert_nothing_written(&emu);
    assert_eq!(emu.items().len(), items_before);

    // The call writes exactly what the dry run said.
    let real = server.call("zotero_create_item", args).await;
    let real = real.expect_ok().clone();
    assert!(real.get("dry_run").is_none() && real.get("fields").is_none());
    assert_eq!(real["moved_to_extra"], dry["moved_to_extra"]);
    let key = real["item_key"].as_str().unwrap();
    assert_eq!(
        without(&real["item"], &["item_key", "version", "zotero_url"]),
        without(&dry["item"], &["item_key", "version"])
    );
    let stored = emu.item(key).unwrap();
    for (field, value) in fields {
        assert_eq!(&stored["data"][field], value, "{field}");
    }
    assert_eq!(
        stored["data"]["tags"],
        json!([{"tag": "deep learning"}, {"tag": "textbook"}])
    );
    assert_eq!(emu.items().len(), items_before + 1);
    server.stop().await;
}

#[tokio::test]
async fn add_to_collection_answers_the_collections_before_and_after_then_sets_them() {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let before = emu.item("BERTDV82").unwrap();
    let collections = before["data"]["collections"].clone();
    let mut after = collections.as_array().unwrap().clone();
    after.push(json!("ATTNDP62"));
    let by_name = json!({
        "item_key": "BERTDV82", "collection_name": "ATTENTION mechanisms", "dry_run": true
    });
    let dry = server
        .call("zotero_add_item_to_collection", by_name.clone())
        .await;
    let dry = dry.expect_ok().clone();
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["collection_key"], "ATTNDP62");
    assert_eq!(dry["already_member"], false);
    assert_eq!(dry["status"], "would_change");
    assert_eq!(
        dry["changes"],
        json!([{"field": "collections", "before": collections, "after": after}])
    );
    assert_nothing_written(&emu);
    assert_eq!(emu.item("BERTDV82").unwrap(), before);

    let real = server
        .call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_name": "ATTENTION mechanisms"}),
        )
        .await;
    let real = real.expect_ok().clone();
    assert_eq!(
        real,
        json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62", "already_member": false})
    );
    assert_eq!(
        emu.item("BERTDV82").unwrap()["data"]["collections"],
        json!(after)
    );

    // Now a member: the dry run says so, and nothing would change.
    emu.reset_counts();
    let dry = server.call("zotero_add_item_to_collection", by_name).await;
    let dry = dry.expect_ok();
    assert_eq!(
        (&dry["already_member"], &dry["status"], &dry["dry_run"]),
        (&json!(true), &json!("unchanged"), &json!(true))
    );
    assert!(dry.get("changes").is_none(), "{dry}");
    assert_eq!(emu.count("PATCH", "/"), 0);
    server.stop().await;
}

#[tokio::test]
async fn upload_answers_the_attachment_it_would_create_then_uploads_exactly_that() {
    let (emu, server) = setup().await;
    let content = bytes(300_000, 17);
    let path = temp_file("sparse-notes.pdf", &content);
    let args = json!({"item_key": PARENT, "file_path": path, "title": "Sparse notes"});
    let attached_before = attachments_of(&emu, PARENT).len();
    let mut dry_args = args.clone();
    dry_args["dry_run"] = json!(true);
    let dry = server
        .call("zotero_upload_attachment", dry_args.clone())
        .await;
    let dry = dry.expect_ok().clone();
    assert_eq!(
        dry,
        json!({
            "attachment_key": "", "version": 0, "parent_item_key": PARENT,
            "title": "Sparse notes", "filename": "sparse-notes.pdf",
            "content_type": "application/pdf", "size": content.len(),
            "md5": md5_hex(&content), "dry_run": true
        })
    );
    assert_nothing_written(&emu);
    assert_eq!(attachments_of(&emu, PARENT).len(), attached_before);

    let real = server.call("zotero_upload_attachment", args).await;
    let real = real.expect_ok().clone();
    assert_eq!(
        without(&real, &["attachment_key", "version"]),
        without(&dry, &["attachment_key", "version", "dry_run"])
    );
    let key = real["attachment_key"].as_str().unwrap();
    let stored = emu.item(key).unwrap();
    assert_eq!(stored["data"]["filename"], dry["filename"]);
    assert_eq!(stored["data"]["md5"], dry["md5"]);
    assert_eq!(stored["data"]["title"], dry["title"]);
    assert_eq!(stored["data"]["contentType"], dry["content_type"]);
    assert_eq!(emu.file(key).unwrap().size, content.len() as u64);

    // The same file again: the dry run answers the attachment that is there.
    let writes_before = writes(&emu).len();
    let dry = server.call("zotero_upload_attachment", dry_args).await;
    let dry = dry.expect_ok();
    assert_eq!(dry["already_attached"], true);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["attachment_key"], key);
    assert_eq!(dry["version"], stored["version"]);
    assert_eq!(writes(&emu).len(), writes_before);
    server.stop().await;
}

#[tokio::test]
async fn attach_arxiv_answers_the_pdf_it_would_attach_then_attaches_exactly_that() {
    let (emu, server) = setup().await;
    let mut pdf = b"%PDF-1.5\n".to_vec();
    pdf.extend(bytes(40_000, 5));
    emu.add_arxiv("2106.09685v2", pdf.clone());
    let args = json!({"item_key": PARENT, "arxiv_id": "arXiv:2106.09685v2"});
    let mut dry_args = args.clone();
    dry_args["dry_run"] = json!(true);
    let dry = server.call("zotero_attach_arxiv_pdf", dry_args).await;
    let dry = dry.expect_ok().clone();
    assert_eq!(
        dry,
        json!({
            "attachment_key": "", "version": 0, "parent_item_key": PARENT,
            "title": "2106.09685v2.pdf", "filename": "2106.09685v2.pdf",
            "content_type": "application/pdf", "size": pdf.len(), "md5": md5_hex(&pdf),
            "arxiv_id": "2106.09685v2",
            "pdf_url": format!("{}/pdf/2106.09685v2", emu.arxiv_base()),
            "dry_run": true
        })
    );
    // The PDF was fetched (and checked), nothing written.
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.path.ends_with("/pdf/2106.09685v2")));
    assert_nothing_written(&emu);
    assert!(attachments_of(&emu, PARENT).is_empty());

    let real = server.call("zotero_attach_arxiv_pdf", args).await;
    let real = real.expect_ok().clone();
    assert_eq!(
        without(&real, &["attachment_key", "version"]),
        without(&dry, &["attachment_key", "version", "dry_run"])
    );
    let key = real["attachment_key"].as_str().unwrap();
    assert_eq!(emu.item(key).unwrap()["data"]["md5"], md5_hex(&pdf));
    assert_eq!(emu.file(key).unwrap().bytes.as_deref(), Some(&pdf[..]));

    // What is not a PDF is refused in a dry run as in the call.
    emu.add_arxiv_page("2101.00001", "<html><body>Just a moment…</body></html>");
    let writes_before = writes(&emu).len();
    for dry_run in [true, false] {
        let a = server
            .call(
                "zotero_attach_arxiv_pdf",
                json!({"item_key": PARENT, "arxiv_id": "2101.00001", "dry_run": dry_run}),
            )
            .await;
        let e = a.expect_err("ZOTERO_UPSTREAM_ERROR");
        assert_eq!(e["details"]["content_type"], "text/html", "{dry_run}");
    }
    assert_eq!(writes(&emu).len(), writes_before);
    server.stop().await;
}

/// Each of the four tools as a dry run, with a file that exists.
fn dry_calls(file: &impl serde::Serialize) -> Vec<(&'static str, Value)> {
    vec![
        (
            "zotero_create_item",
            json!({"item_type": "book", "title": "x", "dry_run": true}),
        ),
        (
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62", "dry_run": true}),
        ),
        (
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": file, "dry_run": true}),
        ),
        (
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "2106.09685v2", "dry_run": true}),
        ),
    ]
}

#[tokio::test]
async fn a_dry_run_on_a_library_the_key_may_not_write_is_refused_like_the_call() {
    let emu = Emulator::start().await;
    let mut pdf = b"%PDF-1.5\n".to_vec();
    pdf.extend(bytes(1_000, 3));
    emu.add_arxiv("2106.09685v2", pdf);
    emu.set_key_access(KeyAccess {
        user: UserAccess::READ_ONLY,
        ..KeyAccess::default()
    });
    let server = in_process(&env(&emu, &[])).await;
    let file = temp_file("notes.txt", b"some notes");
    for (tool, args) in dry_calls(&file) {
        let mut real = args.clone();
        real["dry_run"] = json!(false);
        let refused = server.call(tool, real).await;
        let refused = refused.expect_err("ZOTERO_AUTH_ERROR").clone();
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(e["message"], refused["message"], "{tool}");
    }
    assert_nothing_written(&emu);
    // Refused before anything is read or fetched: the key's rights are asked first.
    let paths: Vec<String> = emu.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().all(|p| p == "/keys/current"), "{paths:?}");
    server.stop().await;
}

#[tokio::test]
async fn a_dry_run_of_an_upload_over_the_size_limit_is_refused_like_the_call() {
    let emu = Emulator::start().await;
    let server = in_process(&env(&emu, &[("ZOTERO_UPLOAD_MAX_BYTES", "1000")])).await;
    let mut pdf = b"%PDF-1.5\n".to_vec();
    pdf.extend(bytes(5_000, 9));
    emu.add_arxiv("2106.09685v2", pdf);
    let file = temp_file("big.bin", &bytes(5_000, 1));
    for (tool, args) in dry_calls(&file).into_iter().skip(2) {
        let mut real = args.clone();
        real["dry_run"] = json!(false);
        let refused = server.call(tool, real).await;
        let refused = refused.expect_err("ZOTERO_VALIDATION_ERROR").clone();
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["message"], refused["message"], "{tool}");
        assert_eq!(e["details"]["field"], refused["details"]["field"], "{tool}");
        assert!(e["message"].as_str().unwrap().contains("1000"), "{e}");
    }
    assert_nothing_written(&emu);
    assert!(attachments_of(&emu, PARENT).is_empty());
    server.stop().await;
}
