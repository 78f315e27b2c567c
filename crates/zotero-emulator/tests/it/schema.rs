//! Self-test of the emulator's schema endpoints: `/items/new` templates, `/itemTypes`, and
//! `drop_field` (an older schema on one emulator), with a plain hyper client.

use bytes::Bytes;
use serde_json::{json, Value};
use zotero_emulator::testing::{api, create, get, lib, post_items, send, template};
use zotero_emulator::Emulator;

#[tokio::test]
async fn templates_follow_the_schema() {
    let emu = Emulator::start().await;
    // No key needed; keys keep the real server's order.
    let r = send(&emu, "GET", "/items/new?itemType=book", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let text = r.text();
    let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    assert!(pos("itemType") < pos("title") && pos("title") < pos("creators"));
    assert!(pos("creators") < pos("abstractNote") && pos("extra") < pos("tags"));
    let book = r.json();
    assert_eq!(
        book["creators"],
        json!([{"creatorType": "author", "firstName": "", "lastName": ""}])
    );
    assert_eq!(
        (book["tags"].clone(), book["collections"].clone()),
        (json!([]), json!([]))
    );
    assert_eq!(book["relations"], json!({}));
    assert_eq!(book["numPages"], "");
    assert!(book.get("publicationTitle").is_none());

    // Primary creator types and first fields differ per type.
    let case = template(&emu, "itemType=case").await;
    assert_eq!(case["creators"][0]["creatorType"], "author");
    assert!(case.get("caseName").is_some() && case.get("title").is_none());
    let film = template(&emu, "itemType=film").await;
    assert_eq!(film["creators"][0]["creatorType"], "director");
    let note = template(&emu, "itemType=note").await;
    assert_eq!(
        note,
        json!({"itemType": "note", "note": "", "tags": [], "collections": [], "relations": {}})
    );

    let file = template(&emu, "itemType=attachment&linkMode=imported_file").await;
    let keys: Vec<&str> = file
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected: Vec<&str> = "itemType linkMode title accessDate note tags collections \
         relations contentType charset filename md5 mtime"
        .split_whitespace()
        .collect();
    expected.sort();
    assert_eq!(keys, expected);
    assert_eq!(
        (file["md5"].clone(), file["mtime"].clone()),
        (Value::Null, Value::Null)
    );
    let url = template(&emu, "itemType=attachment&linkMode=imported_url").await;
    assert_eq!(url["url"], "");
    let linked = template(&emu, "itemType=attachment&linkMode=linked_file").await;
    assert!(
        linked.get("path").is_some() && linked.get("url").is_none() && linked.get("md5").is_none()
    );
    let link = template(&emu, "itemType=attachment&linkMode=linked_url").await;
    assert!(link.get("url").is_some() && link.get("filename").is_none());

    for (q, msg) in [
        ("itemType=nonsense", "Invalid item type 'nonsense'"),
        ("", "'itemType' not provided"),
        (
            "itemType=attachment",
            "linkMode required for itemType=attachment",
        ),
        (
            "itemType=attachment&linkMode=imported",
            "Invalid linkMode 'imported'",
        ),
    ] {
        let r = get(&emu, &format!("/items/new?{q}")).await;
        assert_eq!((r.status, r.text()), (400, msg.to_string()), "{q}");
    }
}

#[tokio::test]
async fn item_types_list_the_schema_in_server_order() {
    let emu = Emulator::start().await;
    let r = get(&emu, "/itemTypes").await;
    assert_eq!(r.status, 200);
    let rows = r.json();
    let rows = rows.as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|t| t["itemType"].as_str().unwrap())
        .collect();
    let label = |n: &str| rows.iter().find(|t| t["itemType"] == n).unwrap()["localized"].clone();
    // Every type but attachment and annotation (`Zotero_ItemTypes::getAll`), and each one has
    // a template.
    assert_eq!(names.len(), 38);
    for t in [
        "preprint",
        "dataset",
        "standard",
        "note",
        "book",
        "tvBroadcast",
    ] {
        assert!(names.contains(&t), "{t}");
    }
    assert!(!names.contains(&"attachment") && !names.contains(&"annotation"));
    for t in &names {
        template(&emu, &format!("itemType={t}")).await;
    }
    // en-US names of the current schema, sorted with strcmp.
    assert_eq!(
        (
            label("book"),
            label("tvBroadcast"),
            label("computerProgram")
        ),
        (json!("Book"), json!("TV Broadcast"), json!("Software"))
    );
    assert_eq!(label("preprint"), "Preprint");
    let labels: Vec<&str> = rows
        .iter()
        .map(|t| t["localized"].as_str().unwrap())
        .collect();
    assert!(labels.windows(2).all(|w| w[0] < w[1]), "{labels:?}");
    assert_eq!(&names[..3], ["artwork", "audioRecording", "bill"]);
    let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(pos("report") < pos("computerProgram") && pos("tvBroadcast") < pos("thesis"));
    // The new types pass `itemType` filters too.
    assert_eq!(get(&emu, &lib("items?itemType=preprint")).await.status, 200);
}

#[tokio::test]
async fn drop_field_models_an_older_schema_on_one_emulator() {
    let (emu, other) = (Emulator::start().await, Emulator::start().await);
    let before = create(&emu, json!({"itemType": "book", "DOI": "10.1/old"})).await;
    emu.drop_field("book", "DOI");
    assert!(emu.item(&before).unwrap()["data"].get("DOI").is_none());
    assert!(template(&emu, "itemType=book").await.get("DOI").is_none());
    assert_eq!(template(&emu, "itemType=journalArticle").await["DOI"], "");
    assert_eq!(template(&other, "itemType=book").await["DOI"], "");

    let msg = "'DOI' is not a valid field for type 'book'";
    let body = json!([{"itemType": "book", "DOI": "10.1/x"}, {"itemType": "book", "DOI": ""}]);
    let v = post_items(&emu, &body, &[]).await.json();
    assert_eq!(v["failed"]["0"], json!({"code": 400, "message": msg}));
    let empty = v["success"]["1"].as_str().unwrap();
    assert!(emu.item(empty).unwrap()["data"].get("DOI").is_none());
    assert_eq!(
        post_items(&other, &body, &[]).await.json()["failed"],
        json!({})
    );

    let key = create(&emu, json!({"itemType": "book", "title": "T"})).await;
    let path = lib(&format!("items/{key}"));
    let data = emu.item(&key).unwrap()["data"].clone();
    let v = data["version"].to_string();
    let r = api(
        &emu,
        "PATCH",
        &path,
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"DOI": "10.1/x"}"#,
    )
    .await;
    assert_eq!((r.status, r.text()), (400, msg.to_string()));
    let mut full = data;
    full["DOI"] = json!("10.1/x");
    let r = api(&emu, "PUT", &path, &[], full.to_string()).await;
    assert_eq!((r.status, r.text()), (400, msg.to_string()));

    // DOI is still a field (other types have it) until every type has lost it.
    let has_doi = |r: &zotero_emulator::testing::Resp| {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["field"] == "DOI")
    };
    assert!(has_doi(&get(&emu, "/itemFields").await));
    let types = get(&emu, "/itemTypes").await.json();
    for t in types.as_array().unwrap() {
        let t = t["itemType"].as_str().unwrap();
        if t != "book"
            && template(&emu, &format!("itemType={t}"))
                .await
                .get("DOI")
                .is_some()
        {
            emu.drop_field(t, "DOI");
        }
    }
    assert!(!has_doi(&get(&emu, "/itemFields").await));
    assert!(has_doi(&get(&other, "/itemFields").await));
    let body = json!([{"itemType": "journalArticle", "DOI": "10.1/x"}]);
    let v = post_items(&emu, &body, &[]).await.json();
    assert_eq!(v["failed"]["0"]["message"], "Invalid property 'DOI'");
}
