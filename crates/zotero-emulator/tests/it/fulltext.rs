//! The emulator's full text against the dataserver (`FullTextController.php`,
//! `FullText.inc.php`) and the desktop (`server_localAPI.js`, Zotero 8+): bodies, counts,
//! versions, 404s, `since`, access, and what each library and the desktop's copy hold.

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::{Emulator, FullText, GroupSpec, KeyAccess, Library, LibraryId};

use crate::libraries::{glib, sb, with_group, GROUP};
use zotero_emulator::testing::{api, create, get, lib, send, Resp};

async fn lget(emu: &Emulator, path: &str) -> Resp {
    let url = format!("{}{path}", emu.local_uri());
    send(emu, "GET", &url, &[], Bytes::new()).await.unwrap()
}

fn not_found() -> (u16, String) {
    (404, "Not found".into())
}

/// A text attachment of VASWANI7 without full text; its key.
async fn text_attachment(emu: &Emulator) -> String {
    create(
        emu,
        json!({"itemType": "attachment", "linkMode": "imported_file", "parentItem": "VASWANI7",
               "title": "Reviews", "contentType": "text/plain", "filename": "reviews.txt"}),
    )
    .await
}

#[tokio::test]
async fn web_api_serves_each_attachments_full_text_with_its_counts_and_version() {
    let emu = Emulator::start().await;
    let r = get(&emu, &lib("items/VASPDF23/fulltext")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.lmv(), Some(6), "the full text's own version");
    let v = r.json();
    // A PDF: pages, no characters; partially indexed.
    assert_eq!(
        (&v["indexedPages"], &v["totalPages"]),
        (&json!(11), &json!(15))
    );
    assert!(
        v.get("indexedChars").is_none() && v.get("totalChars").is_none(),
        "{v}"
    );
    let content = v["content"].as_str().unwrap();
    assert!(
        content.starts_with("Attention Is All You Need\n"),
        "{content}"
    );
    assert!(content.contains("Łukasz Kaiser") && content.contains("√dₖ"));
    // `content` first, then the counts in the dataserver's order.
    assert!(r
        .text()
        .trim_start_matches(['{', ' ', '\n'])
        .starts_with("\"content\""));

    for (key, version) in [("TM8QRS36", 3), ("SHEPUB28", 11)] {
        let r = get(&emu, &lib(&format!("items/{key}/fulltext"))).await;
        assert_eq!((r.status, r.lmv()), (200, Some(version)), "{key}");
        let v = r.json();
        let units = v["content"].as_str().unwrap().encode_utf16().count();
        assert_eq!(
            (&v["indexedChars"], &v["totalChars"]),
            (&json!(units), &json!(units))
        );
        assert!(v.get("indexedPages").is_none(), "{v}");
    }
    let epub = get(&emu, &lib("items/SHEPUB28/fulltext")).await.json();
    assert!(epub["content"]
        .as_str()
        .unwrap()
        .contains("MR. SHERLOCK HOLMES."));

    // Parents, notes, linked URLs and unknown keys have none.
    for key in ["VASWANI7", "VASNOTE4", "BERTLN93", "ZZZZZZZZ"] {
        let r = get(&emu, &lib(&format!("items/{key}/fulltext"))).await;
        assert_eq!(sb(&r), not_found(), "{key}");
    }
}

#[tokio::test]
async fn full_text_is_written_at_a_new_library_version_and_listed_since_a_version() {
    let emu = Emulator::start().await;
    let r = get(&emu, &lib("fulltext")).await;
    assert_eq!(r.lmv(), Some(emu.library_version()));
    assert_eq!(
        r.json(),
        json!({"SHEPUB28": 11, "TM8QRS36": 3, "VASPDF23": 6})
    );
    let r = get(&emu, &lib("fulltext?since=5")).await;
    assert_eq!(r.json(), json!({"SHEPUB28": 11, "VASPDF23": 6}));
    assert_eq!(get(&emu, &lib("fulltext?since=11")).await.json(), json!({}));
    let r = get(&emu, &lib("fulltext?since=abc")).await;
    assert_eq!(sb(&r), (400, "Invalid value for 'since' parameter".into()));

    // An attachment without full text, then with: the library version goes up.
    let key = text_attachment(&emu).await;
    let path = lib(&format!("items/{key}/fulltext"));
    assert_eq!(sb(&get(&emu, &path).await), not_found());
    let before = emu.library_version();
    let text = "Reviewer 2: “the ablations are convincing” — 注意力 🙂\nReviewer 3: agreed.";
    emu.set_fulltext_of(&key, FullText::document(text));
    assert_eq!(emu.library_version(), before + 1);
    let r = get(&emu, &path).await;
    assert_eq!(r.lmv(), Some(before + 1));
    let v = r.json();
    assert_eq!(v["content"], text);
    // Counted as Zotero counts: UTF-16 code units (the emoji is two).
    let units = text.chars().count() + 1;
    assert_eq!(
        (&v["indexedChars"], &v["totalChars"]),
        (&json!(units), &json!(units))
    );
    let since = (before).to_string();
    let r = get(&emu, &lib(&format!("fulltext?since={since}"))).await;
    assert_eq!(r.json(), json!({ key.clone(): before + 1 }));

    // Deleting the attachment deletes its full text.
    let version = emu.item(&key).unwrap()["version"].to_string();
    let h = [("If-Unmodified-Since-Version", version.as_str())];
    let r = api(
        &emu,
        "DELETE",
        &lib(&format!("items/{key}")),
        &h,
        Bytes::new(),
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(sb(&get(&emu, &path).await), not_found());
    assert!(get(&emu, &lib("fulltext")).await.json().get(&key).is_none());
}

#[tokio::test]
#[should_panic(expected = "cannot hold full text")]
async fn full_text_cannot_be_stored_for_a_parent_item() {
    let emu = Emulator::start().await;
    emu.set_fulltext_of("VASWANI7", FullText::document("x"));
}

#[tokio::test]
async fn each_group_has_its_own_full_text_and_refuses_a_key_without_access() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures()).await;
    // The default key may not read the group: 403, as `canAccess` refuses both endpoints
    // (a plain item would be a 404).
    assert_eq!(
        sb(&get(&emu, &glib("items/VASPDF23/fulltext")).await),
        (403, "Forbidden".into())
    );
    assert_eq!(
        sb(&get(&emu, &glib("fulltext")).await),
        (403, "Forbidden".into())
    );

    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let group = emu.library(LibraryId::Group(GROUP));
    let v0 = group.version();
    group.set_fulltext_of(
        "TM8QRS36",
        FullText::partial_document("Only the group's", 900),
    );
    assert_eq!(group.version(), v0 + 1);
    let r = get(&emu, &glib("items/TM8QRS36/fulltext")).await;
    assert_eq!(r.lmv(), Some(v0 + 1));
    assert_eq!(
        r.json(),
        json!({"content": "Only the group's", "indexedChars": 16, "totalChars": 900})
    );
    // The user library's copy is untouched.
    let user = get(&emu, &lib("items/TM8QRS36/fulltext")).await.json();
    assert!(user["content"]
        .as_str()
        .unwrap()
        .starts_with("1641 Depositions"));
    let pdf = get(&emu, &glib("items/VASPDF23/fulltext")).await;
    assert_eq!(pdf.json()["totalPages"], 15);
}

#[tokio::test]
async fn the_desktop_serves_the_full_text_it_caches() {
    let emu = Emulator::start().await;
    let r = lget(&emu, "/users/0/items/VASPDF23/fulltext").await;
    assert_eq!((r.status, r.lmv()), (200, Some(6)));
    // `JSON.stringify(…, null, 4)` with the desktop's key order: pages before characters.
    let body = r.text();
    assert!(body.starts_with("{\n    \"content\": "), "{body}");
    let pages = body.find("\"indexedPages\": 11").unwrap();
    assert!(pages < body.find("\"totalPages\": 15").unwrap());
    let web = get(&emu, &lib("items/VASPDF23/fulltext")).await.json();
    assert_eq!(r.json(), web, "the same text and counts as the web");
    let r = lget(&emu, "/users/0/items/SHEPUB28/fulltext").await;
    assert_eq!(r.json()["totalChars"], web_chars(&emu, "SHEPUB28").await);
    assert_eq!(
        sb(&lget(&emu, "/users/0/items/BERTLN93/fulltext").await),
        not_found()
    );

    // `since` is required; 0 is everything.
    let r = lget(&emu, "/users/0/fulltext").await;
    assert_eq!(sb(&r), (400, "Invalid 'since' value 'null'".into()));
    let r = lget(&emu, "/users/0/fulltext?since=0").await;
    assert_eq!(
        r.json(),
        json!({"SHEPUB28": 11, "TM8QRS36": 3, "VASPDF23": 6})
    );
    let r = lget(&emu, "/users/0/fulltext?since=6").await;
    assert_eq!(r.json(), json!({"SHEPUB28": 11}));

    // A plain-text file has full text on the web, but the desktop serves only the types it
    // caches (PDF, HTML, EPUB).
    let key = text_attachment(&emu).await;
    emu.set_fulltext_of(&key, FullText::document("plain words"));
    assert_eq!(
        get(&emu, &lib(&format!("items/{key}/fulltext")))
            .await
            .status,
        200
    );
    let path = format!("/users/0/items/{key}/fulltext");
    assert_eq!(sb(&lget(&emu, &path).await), not_found());

    // A desktop that has not synced does not have a newer full text.
    emu.set_local_lag(true);
    emu.set_fulltext_of("SHEPUB28", FullText::document("a newer text"));
    let r = lget(&emu, "/users/0/items/SHEPUB28/fulltext").await;
    assert_eq!(r.lmv(), Some(11));
    let web = get(&emu, &lib("items/SHEPUB28/fulltext")).await;
    assert_eq!(web.json()["content"], "a newer text");
    emu.set_local_lag(false);
    let r = lget(&emu, "/users/0/items/SHEPUB28/fulltext").await;
    assert_eq!(r.json()["content"], "a newer text");
}

async fn web_chars(emu: &Emulator, key: &str) -> serde_json::Value {
    get(emu, &lib(&format!("items/{key}/fulltext")))
        .await
        .json()["totalChars"]
        .clone()
}
