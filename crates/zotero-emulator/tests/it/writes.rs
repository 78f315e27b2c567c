//! Self-test of the emulator's write side (crates/zotero-emulator/): creating items (per-object
//! failures, versions, write tokens), PATCH/PUT/DELETE with version checks, with a
//! plain hyper client. Templates and item types: schema.rs; file uploads,
//! faults and the fake hosts: files.rs.

use bytes::Bytes;
use serde_json::{json, Value};
use zotero_emulator::testing::{api, create, get, lib, post_items, send, template};
use zotero_emulator::Emulator;

#[tokio::test]
async fn create_items_reports_each_object() {
    let emu = Emulator::start().await;
    let v0 = emu.library_version();
    let mut a = template(&emu, "itemType=journalArticle").await;
    a["title"] = json!("Created");
    a["creators"] = json!([{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}]);
    a["date"] = json!("Sept 18, 2012");
    a["collections"] = json!(["RDLSTUP3"]);
    let mut b = template(&emu, "itemType=book").await;
    b["title"] = json!("Second");
    let bad_type = json!({"itemType": "nonsense"});
    let bad_field = json!({"itemType": "book", "publicationTitle": "x"});
    let bad_creator =
        json!({"itemType": "book", "creators": [{"creatorType": "director", "name": "X"}]});
    let no_last =
        json!({"itemType": "book", "creators": [{"creatorType": "author", "firstName": "A"}]});
    let orphan = json!({"itemType": "note", "note": "n", "parentItem": "ZZZZZZZZ"});
    let bad_key = json!({"itemType": "book", "key": "abc", "version": 0});
    let keyed = json!({"itemType": "book", "key": "KEYED234"});
    let no_coll = json!({"itemType": "book", "collections": ["ZZZZZZZZ"]});
    let unknown_prop = json!({"itemType": "book", "foo": "bar"});
    let body = json!([
        a,
        b,
        bad_type,
        bad_field,
        bad_creator,
        no_last,
        orphan,
        bad_key,
        keyed,
        no_coll,
        unknown_prop,
        5
    ]);
    let r = post_items(&emu, &body, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let failed = &v["failed"];
    let expect = |i: &str, code: u64, msg: &str| {
        assert_eq!(failed[i]["code"], code, "{i}: {}", failed[i]);
        assert_eq!(failed[i]["message"], msg, "{i}");
    };
    expect("2", 400, "'nonsense' is not a valid itemType");
    expect(
        "3",
        400,
        "'publicationTitle' is not a valid field for type 'book'",
    );
    expect(
        "4",
        400,
        "'director' is not a valid creator type for item type 'book'",
    );
    expect(
        "5",
        400,
        "'lastName' creator field must be set if 'firstName' is set",
    );
    expect("6", 409, "Parent item ZZZZZZZZ not found");
    assert_eq!(failed["6"]["data"], json!({"parentItem": "ZZZZZZZZ"}));
    expect("7", 400, "'abc' is not a valid item key");
    assert_eq!(failed["7"]["key"], "abc");
    expect("8", 428, "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes");
    expect("9", 409, "Collection ZZZZZZZZ not found");
    expect("10", 400, "Invalid property 'foo'");
    expect(
        "11",
        400,
        "Invalid value for index 11 in uploaded data; expected JSON item object",
    );
    assert!(failed["2"].get("key").is_none());

    // Each successful object gets its own version; the header is the last one.
    let (s0, s1) = (&v["successful"]["0"], &v["successful"]["1"]);
    assert_eq!(
        (s0["version"].as_u64(), s1["version"].as_u64()),
        (Some(v0 + 1), Some(v0 + 2))
    );
    assert_eq!(r.lmv(), Some(v0 + 2));
    assert_eq!(emu.library_version(), v0 + 2);
    assert_eq!(v["success"]["0"], s0["key"]);
    assert_eq!(v["unchanged"], json!({}));
    assert_eq!(s0["meta"]["creatorSummary"], "Lovelace");
    assert_eq!(s0["meta"]["parsedDate"], "2012-09-18");
    assert_eq!(s0["data"]["collections"], json!(["RDLSTUP3"]));
    assert!(s0["data"]["dateAdded"].as_str().unwrap().ends_with('Z'));
    // The empty template creator is dropped; GET answers the same item.
    assert_eq!(s1["data"]["creators"], json!([]));
    let key = s0["key"].as_str().unwrap();
    let g = get(&emu, &lib(&format!("items/{key}"))).await;
    assert_eq!(g.json(), *s0);
    assert!(emu.item(key).is_some());

    // A client key needs `version: 0`; with it the object is created under that key.
    let r = post_items(
        &emu,
        &json!([{"itemType": "book", "key": "KEYED234", "version": 0}]),
        &[],
    )
    .await;
    assert_eq!(r.json()["success"]["0"], "KEYED234");
    // The same key again with a stale version: 412 for that object.
    let r = post_items(
        &emu,
        &json!([{"itemType": "book", "key": "KEYED234", "version": 0}]),
        &[],
    )
    .await;
    let f = &r.json()["failed"]["0"];
    assert_eq!(f["code"], 412);
    assert!(f["message"]
        .as_str()
        .unwrap()
        .starts_with("Item has been modified since specified version (expected 0, found"));
    // With its current version and nothing new it is unchanged.
    let ver = emu.item("KEYED234").unwrap()["version"].clone();
    let r = post_items(&emu, &json!([{"key": "KEYED234", "version": ver}]), &[]).await;
    assert_eq!(r.json()["unchanged"]["0"], "KEYED234");

    // Whole-request errors.
    let many: Vec<Value> = (0..51).map(|_| json!({"itemType": "book"})).collect();
    let r = post_items(&emu, &Value::Array(many), &[]).await;
    assert_eq!(
        (r.status, r.text()),
        (413, "Cannot add more than 50 items at a time".to_string())
    );
    let r = api(&emu, "POST", &lib("items"), &[], "{\"itemType\": \"book\"}").await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Uploaded data must be a JSON array".to_string())
    );
    let r = api(&emu, "POST", &lib("items"), &[], "[{").await;
    assert_eq!(
        (r.status, r.text()),
        (400, "JSON Error: Syntax error, malformed JSON".to_string())
    );
    let stale = (emu.library_version() - 1).to_string();
    let r = post_items(
        &emu,
        &json!([{"itemType": "book"}]),
        &[("If-Unmodified-Since-Version", &stale)],
    )
    .await;
    assert_eq!(r.status, 412);
    assert!(r
        .text()
        .starts_with("Library has been modified since specified version"));
    // Writes need a key.
    let r = send(&emu, "POST", &lib("items"), &[], "[]").await.unwrap();
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn children_parents_and_attachments() {
    let emu = Emulator::start().await;
    let parent = create(&emu, json!({"itemType": "book", "title": "P"})).await;
    let mut att = template(&emu, "itemType=attachment&linkMode=imported_file").await;
    att["parentItem"] = json!(parent);
    att.as_object_mut().unwrap().remove("collections");
    att["filename"] = json!("a.pdf");
    let child = create(&emu, att.clone()).await;
    assert_eq!(emu.children(&parent).len(), 1);
    let data = emu.item(&child).unwrap()["data"].clone();
    assert_eq!(
        (data["md5"].clone(), data["linkMode"].clone()),
        (Value::Null, json!("imported_file"))
    );
    assert!(data.get("collections").is_none());
    let g = get(&emu, &lib(&format!("items/{parent}"))).await.json();
    assert_eq!(g["meta"]["numChildren"], 1);

    let cases = [
        (json!({"itemType": "book", "parentItem": parent}), 400, "Child item must be note, attachment, or annotation"),
        (json!({"itemType": "note", "note": "x", "parentItem": child}), 409, "Parent item cannot be a note or attachment"),
        (json!({"itemType": "note", "note": "x", "parentItem": parent, "collections": ["RDLSTUP3"]}), 400, "Child items cannot be assigned to collections"),
        (json!({"itemType": "attachment", "linkMode": "linked_url", "md5": "c7487a750a97722ae1878ed46b215ebe"}), 400, "'md5' is valid only for imported and embedded-image attachments"),
        (json!({"itemType": "attachment", "title": "x"}), 400, "'linkMode' property not provided"),
        (json!({"itemType": "attachment", "linkMode": "imported_file", "filename": "C:\\x\\a.pdf"}), 400, "Stored-file filename 'C:\\x\\a.pdf' cannot contain a directory path"),
        (json!({"itemType": "book", "contentType": "text/html"}), 400, "'contentType' is valid only for attachment items"),
        (json!({"itemType": "book", "accessDate": "February 1, 2014"}), 400, "'accessDate' must be in ISO 8601 or UTC 'YYYY-MM-DD[ hh:mm:ss]' format or 'CURRENT_TIMESTAMP' (February 1, 2014)"),
    ];
    for (obj, code, msg) in cases {
        let r = post_items(&emu, &json!([obj]), &[]).await.json();
        assert_eq!(r["failed"]["0"]["code"], code, "{obj}");
        assert_eq!(r["failed"]["0"]["message"], msg, "{obj}");
    }
    // 'author' is accepted for any type and stored as the type's primary creator type.
    let k = create(
        &emu,
        json!({"itemType": "presentation", "creators": [{"creatorType": "author", "name": "Foo"}]}),
    )
    .await;
    assert_eq!(
        emu.item(&k).unwrap()["data"]["creators"][0]["creatorType"],
        "presenter"
    );
}

#[tokio::test]
async fn write_tokens_are_single_use() {
    let emu = Emulator::start().await;
    let token = "0123456789abcdef0123456789abcdef";
    let body = json!([{"itemType": "book", "title": "Once"}]);
    let r = post_items(&emu, &body, &[("Zotero-Write-Token", token)]).await;
    assert_eq!(r.status, 200);
    let n = emu.count_items();
    let r = post_items(&emu, &body, &[("Zotero-Write-Token", token)]).await;
    assert_eq!(
        (r.status, r.text()),
        (412, "Write token already used".to_string())
    );
    assert_eq!(emu.count_items(), n);
    assert_eq!(emu.write_tokens_used(), 1);
    let r = post_items(&emu, &body, &[("Zotero-Write-Token", "abc")]).await;
    assert_eq!(
        (r.status, r.text()),
        (
            400,
            "Write token must be 5-32 characters in length".to_string()
        )
    );
    // A request that failed as a whole does not use up its token.
    let t2 = "fedcba9876543210fedcba9876543210";
    let r = api(
        &emu,
        "POST",
        &lib("items"),
        &[("Zotero-Write-Token", t2)],
        "nope",
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        post_items(&emu, &body, &[("Zotero-Write-Token", t2)])
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn patch_put_and_delete_check_versions() {
    let emu = Emulator::start().await;
    let key = create(
        &emu,
        json!({"itemType": "book", "title": "T", "place": "Paris"}),
    )
    .await;
    let path = lib(&format!("items/{key}"));
    let ver = emu.item(&key).unwrap()["version"].as_u64().unwrap();
    let v = ver.to_string();

    let r = api(&emu, "PATCH", &path, &[], r#"{"title": "New"}"#).await;
    assert_eq!(r.status, 428);
    assert_eq!(r.text(), "Either If-Unmodified-Since-Version or object version property must be provided for key-based writes");
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", "1")],
        r#"{"title": "New"}"#,
    )
    .await;
    assert_eq!((r.status, r.lmv()), (412, Some(ver)));
    assert_eq!(
        r.text(),
        format!("Item has been modified since specified version (expected 1, found {ver})")
    );
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"DOIX": "1"}"#,
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Invalid property 'DOIX'".to_string())
    );
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"collections": ["ZZZZZZZZ"]}"#,
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (409, "Collection ZZZZZZZZ not found".to_string())
    );
    assert_eq!(
        emu.library_version(),
        ver,
        "failed writes leave the version alone"
    );

    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"title": "New", "tags": [{"tag": "x"}]}"#,
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(ver + 1)));
    let item = emu.item(&key).unwrap();
    assert_eq!(
        (item["data"]["title"].clone(), item["data"]["place"].clone()),
        (json!("New"), json!("Paris"))
    );
    assert_eq!(item["version"], ver + 1);
    // The version may come in the body instead.
    let body = json!({"version": ver + 1, "collections": ["RDLSTUP3"]}).to_string();
    assert_eq!(api(&emu, "PATCH", &path, &[], body).await.status, 204);
    let data = emu.item(&key).unwrap()["data"].clone();
    // PUT replaces the object: fields left out are emptied.
    let mut full = data.clone();
    full["title"] = json!("Put");
    full.as_object_mut().unwrap().remove("place");
    let r = api(&emu, "PUT", &path, &[], full.to_string()).await;
    assert_eq!(r.status, 204, "{}", r.text());
    let data = emu.item(&key).unwrap()["data"].clone();
    assert_eq!(
        (data["title"].clone(), data["place"].clone()),
        (json!("Put"), json!(""))
    );

    let missing = lib("items/ZZZZZZZZ");
    let r = api(&emu, "PATCH", &missing, &[], r#"{"title": "x"}"#).await;
    assert_eq!(r.status, 404);
    let r = api(
        &emu,
        "DELETE",
        &missing,
        &[("If-Unmodified-Since-Version", "5")],
        Bytes::new(),
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (412, "Item not found (expected version 5)".to_string())
    );

    // DELETE: 428 without a version, 412 when stale, then 204 and the children go too.
    let child = create(
        &emu,
        json!({"itemType": "note", "note": "<p>n</p>", "parentItem": key}),
    )
    .await;
    let r = api(&emu, "DELETE", &path, &[], Bytes::new()).await;
    assert_eq!(
        (r.status, r.text()),
        (
            428,
            "If-Unmodified-Since-Version must be provided for delete requests".to_string()
        )
    );
    let r = api(
        &emu,
        "DELETE",
        &path,
        &[("If-Unmodified-Since-Version", &v)],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 412);
    let cur = emu.item(&key).unwrap()["version"].to_string();
    let r = api(
        &emu,
        "DELETE",
        &path,
        &[("If-Unmodified-Since-Version", &cur)],
        Bytes::new(),
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(emu.library_version())));
    assert!(emu.item(&key).is_none() && emu.item(&child).is_none());
    assert_eq!(get(&emu, &path).await.status, 404);

    // The old way to file items in a collection.
    let k = create(&emu, json!({"itemType": "book"})).await;
    let r = api(
        &emu,
        "POST",
        &lib("collections/TRNSFM52/items"),
        &[],
        k.clone(),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        emu.item(&k).unwrap()["data"]["collections"],
        json!(["TRNSFM52"])
    );
}
