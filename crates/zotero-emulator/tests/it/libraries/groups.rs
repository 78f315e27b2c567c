//! Group libraries: every route under `/groups/{id}/…`, their own versions, the group
//! listing `/users/{id}/groups` and `GET /groups/{id}`.

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::{
    Emulator, GroupSpec, GroupType, KeyAccess, Library, LibraryId, LibraryReading, USER_ID,
};

use super::{book, created_key, get, glib, post_item, sb, with_group, GROUP};
use zotero_emulator::testing::{api, auth_form, lib, upload};

#[tokio::test]
async fn group_libraries_have_their_own_objects_and_versions() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::empty()).await;
    emu.set_key_access(KeyAccess::all_groups(true));
    let user_version = emu.library_version();

    let r = get(&emu, &glib("items")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), json!([]));
    assert_eq!(r.header("total-results").as_deref(), Some("0"));
    assert_eq!(r.lmv(), Some(0));

    let key = created_key(&post_item(&emu, &format!("/groups/{GROUP}"), &book("Group book")).await);
    let group = emu.library(LibraryId::Group(GROUP));
    assert_eq!(group.version(), 1);
    assert_eq!(
        emu.library_version(),
        user_version,
        "the user library did not change"
    );
    assert!(emu.item(&key).is_none(), "the item is in the group only");

    let r = get(&emu, &glib(&format!("items/{key}"))).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["library"]["type"], "group");
    assert_eq!(v["library"]["id"], GROUP);
    assert_eq!(v["library"]["name"], "Lab");
    assert_eq!(
        v["links"]["self"]["href"],
        format!("{}/groups/{GROUP}/items/{key}", emu.uri())
    );
    assert_eq!(
        v["links"]["alternate"]["href"],
        format!("https://www.zotero.org/groups/{GROUP}/items/{key}"),
        "a private group's page has its id, not a slug"
    );
    let r = get(&emu, &format!("/users/{USER_ID}/items/{key}")).await;
    assert_eq!(sb(&r), (404, "Not found".into()));

    // Version checks use the group library's version.
    let path = glib(&format!("items/{key}"));
    let patch = |v: &'static str| {
        let emu = &emu;
        let path = path.clone();
        async move {
            let h = [("If-Unmodified-Since-Version", v)];
            api(emu, "PATCH", &path, &h, json!({"title": "New"}).to_string()).await
        }
    };
    let r = patch("0").await;
    assert_eq!(
        sb(&r),
        (
            412,
            "Item has been modified since specified version (expected 0, found 1)".into()
        )
    );
    let r = patch("1").await;
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(r.lmv(), Some(2));
    assert_eq!(group.item(&key).unwrap()["data"]["title"], "New");

    let h = [("If-Unmodified-Since-Version", "1")];
    let r = api(&emu, "POST", &glib("items"), &h, "[]").await;
    assert_eq!(
        sb(&r),
        (
            412,
            "Library has been modified since specified version (expected 1, found 2)".into()
        )
    );
    for path in [
        "items/top",
        "collections",
        "collections/top",
        "tags",
        "items/trash",
    ] {
        let r = get(&emu, &glib(path)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.lmv(), Some(2), "{path}");
    }
}

#[tokio::test]
async fn a_group_from_the_fixtures_is_rehomed_and_uploads_work() {
    let emu = with_group(GroupSpec::new(GROUP, "Fixtures"), Library::from_fixtures()).await;
    emu.set_key_access(KeyAccess::groups(&[(GROUP, true)]));
    let r = get(&emu, &glib("items/top?limit=100")).await;
    let user = get(&emu, &lib("items/top?limit=100")).await;
    assert_eq!(r.keys(), user.keys(), "the same items in the same order");
    for item in r.json().as_array().unwrap() {
        assert_eq!(item["library"]["id"], GROUP);
        let href = item["links"]["self"]["href"].as_str().unwrap();
        assert!(href.contains(&format!("/groups/{GROUP}/items/")), "{href}");
    }
    let v = get(&emu, &glib("items/VASWANI7")).await.json();
    assert_eq!(
        v["links"]["attachment"]["href"],
        format!("{}/groups/{GROUP}/items/VASPDF23", emu.uri())
    );
    let r = get(&emu, &glib("collections/TRNSFM52/items")).await;
    assert_eq!(r.status, 200);
    assert!(r.keys().contains(&"VASWANI7".to_string()));

    // The file upload protocol, in the group.
    let att = {
        let mut t = get(
            &emu,
            "/items/new?itemType=attachment&linkMode=imported_file",
        )
        .await
        .json();
        t["parentItem"] = json!("VASWANI7");
        t.as_object_mut().unwrap().remove("collections");
        created_key(&post_item(&emu, &format!("/groups/{GROUP}"), &t).await)
    };
    let bytes = b"%PDF-1.4 group file".to_vec();
    let form = auth_form(&bytes, "g.pdf", "application/pdf");
    let h = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("If-None-Match", "*"),
    ];
    let path = glib(&format!("items/{att}/file"));
    let auth = api(&emu, "POST", &path, &h, form).await;
    assert_eq!(auth.status, 200, "{}", auth.text());
    let auth = auth.json();
    assert_eq!(upload(&emu, &auth, &bytes).await.status, 201);
    let reg = format!("upload={}", auth["uploadKey"].as_str().unwrap());
    let r = api(&emu, "POST", &path, &h, reg).await;
    assert_eq!(r.status, 204, "{}", r.text());
    let group = emu.library(LibraryId::Group(GROUP));
    assert_eq!(r.lmv(), Some(group.version()));
    assert_eq!(group.file(&att).unwrap().bytes, Some(bytes));
    assert!(emu.file(&att).is_none(), "not in the user library");
    let r = get(&emu, &path).await;
    assert_eq!(r.status, 302);
    let v = get(&emu, &glib(&format!("items/{att}"))).await.json();
    let href = v["links"]["enclosure"]["href"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        href,
        format!("{}/groups/{GROUP}/items/{att}/file/view", emu.uri())
    );
    // The group's files count against its owner, the emulator's user.
    assert!(emu.storage_usage() >= 19);
}

#[tokio::test]
async fn users_groups_lists_what_the_key_may_see() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(10, "Private A"), Library::empty());
    let public = GroupSpec {
        group_type: GroupType::PublicOpen,
        library_reading: LibraryReading::All,
        owner: 99,
        members: vec![USER_ID],
        description: "Open to all".into(),
        url: "https://example.org".into(),
        ..GroupSpec::new(20, "Public B")
    };
    emu.add_group(public, Library::synthetic(3, 1));
    // A group the user is not in: never listed.
    let outsider = GroupSpec {
        group_type: GroupType::PublicOpen,
        owner: 99,
        ..GroupSpec::new(30, "Other people")
    };
    emu.add_group(outsider, Library::empty());

    // Without group access only public groups can be seen.
    let r = get(&emu, &lib("groups")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("total-results").as_deref(), Some("1"));
    assert_eq!(r.json()[0]["id"], 20);
    assert!(r.header("last-modified-version").is_none());

    emu.set_key_access(KeyAccess::all_groups(false));
    let r = get(&emu, &lib("groups")).await;
    let v = r.json();
    let ids: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(r.header("total-results").as_deref(), Some("2"));
    let b = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == 20)
        .unwrap();
    assert_eq!(b["version"], 1);
    assert_eq!(
        b["links"]["self"]["href"],
        format!("{}/groups/20", emu.uri())
    );
    assert_eq!(
        b["links"]["alternate"]["href"],
        "https://www.zotero.org/groups/public_b"
    );
    assert_eq!(b["meta"]["numItems"], 3);
    assert_eq!(b["meta"]["isAdmin"], false);
    assert!(b["meta"]["created"].as_str().unwrap().ends_with('Z'));
    assert!(b["meta"]["lastModified"].is_string());
    let d = &b["data"];
    assert_eq!(
        (&d["id"], &d["version"], &d["name"], &d["owner"], &d["type"]),
        (
            &json!(20),
            &json!(1),
            &json!("Public B"),
            &json!(99),
            &json!("PublicOpen")
        )
    );
    assert_eq!(
        (&d["description"], &d["url"]),
        (&json!("Open to all"), &json!("https://example.org"))
    );
    assert_eq!(
        (
            &d["libraryEditing"],
            &d["libraryReading"],
            &d["fileEditing"]
        ),
        (&json!("members"), &json!("all"), &json!("members"))
    );
    assert_eq!(d["members"], json!([USER_ID]));
    let a = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == 10)
        .unwrap();
    assert_eq!(a["meta"]["isAdmin"], true, "the owner");
    assert_eq!(a["data"]["description"], "", "empty values are included");

    emu.update_group(10, |g| g.name = "Private A2".into());
    let r = get(&emu, &lib("groups?format=versions")).await;
    assert_eq!(r.json(), json!({"10": 2, "20": 1}));
    assert_eq!(r.header("total-results").as_deref(), Some("2"));
    let r = get(&emu, &lib("groups?limit=1")).await;
    assert_eq!(r.json().as_array().unwrap().len(), 1);
    assert!(r.link("next").is_some());
    let r = get(&emu, &lib("groups?format=keys")).await;
    assert_eq!(sb(&r), (400, "Invalid 'format' value 'keys'".into()));

    // One group.
    let r = get(&emu, "/groups/10").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.lmv(), Some(2), "the group's own version");
    assert_eq!(r.json()["data"]["name"], "Private A2");
    let r = get(&emu, &format!("/groups/10/items/{}", "ABCD2345")).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        sb(&get(&emu, "/groups/999").await),
        (404, "Not found".into())
    );
    let r = api(&emu, "DELETE", "/groups/10", &[], Bytes::new()).await;
    assert_eq!(sb(&r), (403, "Forbidden".into()));
}
