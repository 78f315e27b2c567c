//! Self-test of the emulator's changes to existing objects (crates/zotero-emulator/), checked
//! against zotero/dataserver: multi-object updates with per-object versions, trash and
//! restore, multi-key deletes with the delete log (`GET /deleted`), collection writes with
//! the subcollection cascade, tag deletion, and edits made "in Zotero" between a read and a
//! write (`FaultKind::EditedElsewhereWith`).

use bytes::Bytes;
use serde_json::{json, Value};
use zotero_emulator::testing::{api, create, get, lib, post_items};
use zotero_emulator::{Emulator, Fault, FaultKind, LibraryId, ZoteroEdit};

fn isv(v: u64) -> String {
    v.to_string()
}

async fn collection(emu: &Emulator, key: &str) -> Option<Value> {
    let r = get(emu, &lib(&format!("collections/{key}"))).await;
    (r.status == 200).then(|| r.json())
}

async fn post_collections(emu: &Emulator, body: &Value, headers: &[(&str, &str)]) -> Value {
    let mut h = vec![("Content-Type", "application/json")];
    h.extend_from_slice(headers);
    let r = api(emu, "POST", &lib("collections"), &h, body.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

#[tokio::test]
async fn multi_object_updates_report_each_object_with_its_version() {
    let emu = Emulator::start().await;
    let a = create(&emu, json!({"itemType": "book", "title": "A"})).await;
    let b = create(&emu, json!({"itemType": "book", "title": "B"})).await;
    let va = emu.item(&a).unwrap()["version"].as_u64().unwrap();
    let vb = emu.item(&b).unwrap()["version"].as_u64().unwrap();
    let v0 = emu.library_version();
    let body = json!([
        {"key": a, "version": va, "title": "A2"},           // partial update
        {"key": b, "version": vb, "title": "B"},            // nothing changes
        {"key": b, "version": vb - 1, "title": "stale"},    // stale object version
        {"key": a, "title": "no version"},                  // key without version
        {"itemType": "book", "title": "New"},               // create
        {"key": "ZZZZZZZZ", "version": 3, "title": "gone"}, // version of a missing item
    ]);
    let r = post_items(&emu, &body, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["success"]["0"], json!(a));
    assert_eq!(v["unchanged"]["1"], json!(b));
    assert_eq!(v["failed"]["2"]["code"], 412);
    assert_eq!(
        v["failed"]["2"]["message"],
        format!(
            "Item has been modified since specified version (expected {}, found {vb})",
            vb - 1
        )
    );
    assert_eq!(v["failed"]["3"]["code"], 428);
    assert_eq!(v["failed"]["3"]["key"], json!(a));
    assert!(v["success"]["4"].is_string());
    assert_eq!(v["failed"]["5"]["code"], 404);
    assert_eq!(
        v["failed"]["5"]["message"],
        "Item doesn't exist (expected version 3; use 0 instead)"
    );
    // `updateMultipleFromJSON`: every object commits its own library version (unchanged ones
    // too; failed ones roll theirs back).
    let item_a = emu.item(&a).unwrap();
    assert_eq!(item_a["version"], v0 + 1);
    assert_eq!(item_a["data"]["title"], "A2");
    assert_eq!(
        emu.item(&b).unwrap()["version"],
        vb,
        "unchanged keeps its version"
    );
    assert_eq!(v["successful"]["4"]["version"], v0 + 3);
    assert_eq!(emu.library_version(), v0 + 3);
    assert_eq!(r.lmv(), Some(v0 + 3));

    // A stale library version refuses the whole request; over 50 objects: 413.
    let stale = isv(v0);
    let r = post_items(
        &emu,
        &json!([{"itemType": "book"}]),
        &[("If-Unmodified-Since-Version", &stale)],
    )
    .await;
    assert_eq!(r.status, 412);
    assert_eq!(
        r.text(),
        format!(
            "Library has been modified since specified version (expected {v0}, found {})",
            v0 + 3
        )
    );
    let many = Value::Array(vec![json!({"itemType": "book"}); 51]);
    let r = post_items(&emu, &many, &[]).await;
    assert_eq!(
        (r.status, r.text()),
        (413, "Cannot add more than 50 items at a time".to_string())
    );
}

#[tokio::test]
async fn trash_restore_multi_delete_and_the_delete_log() {
    let emu = Emulator::start().await;
    let a = create(&emu, json!({"itemType": "book", "title": "A"})).await;
    let child = create(
        &emu,
        json!({"itemType": "note", "note": "<p>n</p>", "parentItem": a}),
    )
    .await;
    let b = create(&emu, json!({"itemType": "book", "title": "B"})).await;
    let va = isv(emu.item(&a).unwrap()["version"].as_u64().unwrap());
    let path = lib(&format!("items/{a}"));
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &va)],
        r#"{"deleted": 1}"#,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(emu.item(&a).unwrap()["data"]["deleted"], 1);
    let trash = get(&emu, &lib("items/trash?format=keys")).await.text();
    assert!(trash.lines().any(|k| k == a), "{trash}");
    let va = isv(emu.item(&a).unwrap()["version"].as_u64().unwrap());
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &va)],
        r#"{"deleted": 0}"#,
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(emu.item(&a).unwrap()["data"].get("deleted").is_none());

    // `GET /deleted` needs `since`.
    let r = get(&emu, &lib("deleted")).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "'since' parameter must be provided".to_string())
    );
    let r = get(&emu, &lib("deleted?since=x")).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "Invalid value for 'since' parameter".to_string())
    );

    // Multi-key delete: a stale library version is refused; the children go too.
    let before = emu.library_version();
    let del = lib(&format!("items?itemKey={a},{b},"));
    let stale = isv(before - 1);
    let r = api(
        &emu,
        "DELETE",
        &del,
        &[("If-Unmodified-Since-Version", &stale)],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 412);
    let cur = isv(before);
    let r = api(
        &emu,
        "DELETE",
        &del,
        &[("If-Unmodified-Since-Version", &cur)],
        Bytes::new(),
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(before + 1)));
    assert!(emu.item(&a).is_none() && emu.item(&b).is_none() && emu.item(&child).is_none());
    let r = get(&emu, &lib(&format!("deleted?since={before}"))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.lmv(), Some(before + 1));
    let d = r.json();
    let mut items: Vec<String> = serde_json::from_value(d["items"].clone()).unwrap();
    items.sort();
    let mut want = vec![a.clone(), b.clone(), child.clone()];
    want.sort();
    assert_eq!(items, want);
    assert_eq!(
        (
            d["collections"].clone(),
            d["searches"].clone(),
            d["tags"].clone(),
            d["settings"].clone()
        ),
        (json!([]), json!([]), json!([]), json!([]))
    );
    let d = get(&emu, &lib(&format!("deleted?since={}", before + 1)))
        .await
        .json();
    assert_eq!(d["items"], json!([]));
    // Written again under its key: out of the delete log.
    let r = post_items(
        &emu,
        &json!([{"itemType": "book", "key": b, "version": 0}]),
        &[],
    )
    .await;
    assert_eq!(r.json()["success"]["0"], json!(b), "{}", r.text());
    let d = get(&emu, &lib(&format!("deleted?since={before}")))
        .await
        .json();
    assert!(!d["items"].as_array().unwrap().contains(&json!(b)), "{d}");
}

#[tokio::test]
async fn collections_are_written_version_checked_and_deleted_with_their_subcollections() {
    let emu = Emulator::start().await;
    let v0 = emu.library_version();
    let r = post_collections(
        &emu,
        &json!([
            {"name": "Top"},
            {"name": ""},
            {"name": "Orphan", "parentCollection": "ZZZZZZZZ"},
            {"title": "x"},
            {"key": "RDLSTUP3", "version": 0, "name": "Renamed"},
        ]),
        &[],
    )
    .await;
    let top = r["success"]["0"].as_str().unwrap().to_string();
    assert_eq!(r["successful"]["0"]["data"]["name"], "Top");
    assert_eq!(r["successful"]["0"]["data"]["parentCollection"], false);
    assert_eq!(r["successful"]["0"]["version"], v0 + 1);
    assert_eq!(
        (
            r["failed"]["1"]["code"].clone(),
            r["failed"]["1"]["message"].clone()
        ),
        (json!(400), json!("Collection name cannot be empty"))
    );
    assert_eq!(
        (
            r["failed"]["2"]["code"].clone(),
            r["failed"]["2"]["message"].clone()
        ),
        (json!(409), json!("Parent collection ZZZZZZZZ not found"))
    );
    assert_eq!(r["failed"]["3"]["message"], "'name' property not provided");
    assert_eq!(r["failed"]["4"]["code"], 412);
    let vr = collection(&emu, "RDLSTUP3").await.unwrap()["version"]
        .as_u64()
        .unwrap();
    assert_eq!(
        r["failed"]["4"]["message"],
        format!("Collection has been modified since specified version (expected 0, found {vr})")
    );
    let sub = post_collections(
        &emu,
        &json!([{"name": "Sub", "parentCollection": top}]),
        &[],
    )
    .await["success"]["0"]
        .as_str()
        .unwrap()
        .to_string();
    let subsub = post_collections(
        &emu,
        &json!([{"name": "SubSub", "parentCollection": sub}]),
        &[],
    )
    .await["success"]["0"]
        .as_str()
        .unwrap()
        .to_string();
    let item = create(
        &emu,
        json!({"itemType": "book", "collections": [subsub, "RDLSTUP3"]}),
    )
    .await;
    let item_v = emu.item(&item).unwrap()["version"].clone();

    // Single-object writes: 428 without a version, 412 stale, PATCH keeps other fields.
    let path = lib(&format!("collections/{top}"));
    let r = api(&emu, "PATCH", &path, &[], r#"{"name": "T2"}"#).await;
    assert_eq!(r.status, 428);
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", "1")],
        r#"{"name": "T2"}"#,
    )
    .await;
    assert_eq!(r.status, 412);
    assert!(
        r.text().starts_with(
            "Collection has been modified since specified version (expected 1, found "
        ),
        "{}",
        r.text()
    );
    let vt = collection(&emu, &top).await.unwrap()["version"]
        .as_u64()
        .unwrap();
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &isv(vt))],
        r#"{"name": "T2"}"#,
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(emu.library_version())));
    let c = collection(&emu, &top).await.unwrap();
    assert_eq!(
        (c["data"]["name"].clone(), c["version"].as_u64()),
        (json!("T2"), Some(emu.library_version()))
    );
    // Sending back the same name changes nothing: the version before the request.
    let vt = c["version"].as_u64().unwrap();
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &isv(vt))],
        r#"{"name": "T2"}"#,
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(vt)));
    // PUT needs the name.
    let r = api(
        &emu,
        "PUT",
        &path,
        &[("If-Unmodified-Since-Version", &isv(vt))],
        r#"{"parentCollection": false}"#,
    )
    .await;
    assert_eq!(
        (r.status, r.text()),
        (400, "'name' property not provided".to_string())
    );
    let r = api(&emu, "DELETE", &path, &[], Bytes::new()).await;
    assert_eq!(r.status, 428);

    // DELETE cascades to subcollections; the items stay, minus the membership.
    let before = emu.library_version();
    let r = api(
        &emu,
        "DELETE",
        &path,
        &[("If-Unmodified-Since-Version", &isv(vt))],
        Bytes::new(),
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(before + 1)));
    for k in [&top, &sub, &subsub] {
        assert!(collection(&emu, k).await.is_none(), "{k}");
    }
    let it = emu.item(&item).unwrap();
    assert_eq!(it["data"]["collections"], json!(["RDLSTUP3"]));
    assert_eq!(
        it["version"], item_v,
        "the cascade leaves item versions alone"
    );
    let d = get(&emu, &lib(&format!("deleted?since={before}")))
        .await
        .json();
    assert_eq!(d["collections"], json!([top]));

    // Multi-key delete.
    let cur = isv(emu.library_version());
    let r = api(
        &emu,
        "DELETE",
        &lib("collections?collectionKey=RDLSTLW4,PMJDJ4D8"),
        &[("If-Unmodified-Since-Version", &cur)],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(
        collection(&emu, "RDLSTLW4").await.is_none()
            && collection(&emu, "PMJDJ4D8").await.is_none()
    );
    let r = api(
        &emu,
        "DELETE",
        &lib("collections?collectionKey=RDLSTUP3"),
        &[("If-Unmodified-Since-Version", &cur)],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 412);
}

#[tokio::test]
async fn deleting_tags_removes_them_from_every_item() {
    let emu = Emulator::start().await;
    let a = create(
        &emu,
        json!({"itemType": "book", "tags": [{"tag": "a"}, {"tag": "aa"}, {"tag": "b"}]}),
    )
    .await;
    let b = create(
        &emu,
        json!({"itemType": "book", "tags": [{"tag": "b", "type": 1}, {"tag": "c"}]}),
    )
    .await;
    let c = create(&emu, json!({"itemType": "book", "tags": [{"tag": "Foo"}]})).await;
    let vc = emu.item(&c).unwrap()["version"].clone();
    let v = emu.library_version();
    let path = lib("tags?tag=a%20||%20b%20||%20nope");
    let r = api(&emu, "DELETE", &path, &[], Bytes::new()).await;
    assert_eq!(
        (r.status, r.text()),
        (428, "If-Unmodified-Since-Version not provided".to_string())
    );
    let r = api(
        &emu,
        "DELETE",
        &path,
        &[("If-Unmodified-Since-Version", &isv(v - 1))],
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 412);
    let r = api(
        &emu,
        "DELETE",
        &path,
        &[("If-Unmodified-Since-Version", &isv(v))],
        Bytes::new(),
    )
    .await;
    assert_eq!((r.status, r.lmv()), (204, Some(v + 1)));
    let ia = emu.item(&a).unwrap();
    assert_eq!(ia["data"]["tags"], json!([{"tag": "aa"}]));
    assert_eq!(ia["version"], v + 1);
    assert_eq!(emu.item(&b).unwrap()["data"]["tags"], json!([{"tag": "c"}]));
    assert_eq!(
        emu.item(&c).unwrap()["version"],
        vc,
        "items without the tags keep their version"
    );
    let since = get(&emu, &lib(&format!("items?since={v}&format=keys")))
        .await
        .text();
    let mut since: Vec<&str> = since.lines().collect();
    since.sort();
    let mut want = vec![a.as_str(), b.as_str()];
    want.sort();
    assert_eq!(since, want);
    let d = get(&emu, &lib(&format!("deleted?since={v}"))).await.json();
    assert_eq!(d["tags"], json!(["a", "b"]));
    assert_eq!(
        emu.deleted_since(LibraryId::USER, v),
        vec![
            ("tags".to_string(), "a".to_string()),
            ("tags".to_string(), "b".to_string())
        ]
    );
}

#[tokio::test]
async fn an_edit_in_zotero_between_read_and_write_makes_the_write_stale() {
    let emu = Emulator::start().await;
    let key = create(
        &emu,
        json!({"itemType": "book", "title": "T", "place": "Paris"}),
    )
    .await;
    let read_v = emu.item(&key).unwrap()["version"].as_u64().unwrap();
    emu.inject(
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item(&key)
                .set("place", json!("Berlin"))
                .set("tags", json!([{"tag": "z"}])),
        ))
        .method("PATCH"),
    );
    let path = lib(&format!("items/{key}"));
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &isv(read_v))],
        r#"{"title": "Mine"}"#,
    )
    .await;
    assert_eq!(r.status, 412);
    let item = emu.item(&key).unwrap();
    let now = item["version"].as_u64().unwrap();
    assert_eq!((now, emu.library_version()), (read_v + 1, read_v + 1));
    assert_eq!(r.lmv(), Some(now));
    assert_eq!(
        (
            item["data"]["place"].clone(),
            item["data"]["title"].clone(),
            item["data"]["tags"].clone()
        ),
        (json!("Berlin"), json!("T"), json!([{"tag": "z"}]))
    );
    // The re-read version is accepted.
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &isv(now))],
        r#"{"title": "Mine"}"#,
    )
    .await;
    assert_eq!(r.status, 204);

    // Collections, and a multi-object POST that names the object's version.
    let vc = collection(&emu, "RDLSTUP3").await.unwrap()["version"]
        .as_u64()
        .unwrap();
    emu.inject(
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::collection("RDLSTUP3").set("name", json!("Renamed in Zotero")),
        ))
        .method("POST")
        .path_suffix("/collections"),
    );
    let r = post_collections(
        &emu,
        &json!([{"key": "RDLSTUP3", "version": vc, "name": "Mine"}]),
        &[],
    )
    .await;
    assert_eq!(r["failed"]["0"]["code"], 412, "{r}");
    assert_eq!(
        collection(&emu, "RDLSTUP3").await.unwrap()["data"]["name"],
        "Renamed in Zotero"
    );
    // Directly, too.
    let v = emu
        .edit_in_zotero(&ZoteroEdit::item(&key).set("place", json!(null)))
        .unwrap();
    let item = emu.item(&key).unwrap();
    assert_eq!(
        (item["version"].as_u64(), item["data"].get("place")),
        (Some(v), None)
    );
    assert_eq!(emu.edit_in_zotero(&ZoteroEdit::item("ZZZZZZZZ")), None);
}
