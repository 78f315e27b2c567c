//! The lag switch: the desktop serves the libraries as they were when it stopped syncing,
//! while the web API moves on; a version-checked write must take its version from the web.

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::{Emulator, GroupSpec, KeyAccess, Library, LibraryId};

use super::{book, created_key, get, glib, post_item, with_group, GROUP};
use zotero_emulator::testing::{api, lib, send, Resp};

async fn lget(emu: &Emulator, path: &str) -> Resp {
    let url = format!("{}{path}", emu.local_uri());
    send(emu, "GET", &url, &[], Bytes::new()).await.unwrap()
}

async fn patch_title(emu: &Emulator, path: &str, version: u64, title: &str) -> Resp {
    let v = version.to_string();
    let h = [("If-Unmodified-Since-Version", v.as_str())];
    api(emu, "PATCH", path, &h, json!({"title": title}).to_string()).await
}

#[tokio::test]
async fn a_lagging_desktop_serves_old_versions_while_the_web_moves_on() {
    let emu = Emulator::start().await;
    let local_v = lget(&emu, "/users/0/items/VASWANI7").await.json()["version"]
        .as_u64()
        .unwrap();
    emu.set_local_lag(true);

    let r = patch_title(&emu, &lib("items/VASWANI7"), local_v, "Edited on the web").await;
    assert_eq!(r.status, 204, "{}", r.text());
    let web_v = r.lmv().unwrap();
    assert!(web_v > local_v);

    // The desktop still has the old item, version and library version.
    let r = lget(&emu, "/users/0/items/VASWANI7").await;
    assert_eq!(r.json()["version"], local_v);
    assert_eq!(r.json()["data"]["title"], "Attention Is All You Need");
    assert_eq!(r.lmv(), Some(local_v));
    let r = lget(&emu, "/users/0/items?format=versions").await;
    assert_eq!(r.json()["VASWANI7"], local_v);
    assert!(r.lmv().unwrap() < web_v);

    // A write with the desktop's version fails; with the web's it succeeds.
    let r = patch_title(&emu, &lib("items/VASWANI7"), local_v, "Stale").await;
    assert_eq!(r.status, 412, "{}", r.text());
    let web = get(&emu, &lib("items/VASWANI7")).await.json()["version"]
        .as_u64()
        .unwrap();
    assert_eq!(web, web_v);
    let r = patch_title(&emu, &lib("items/VASWANI7"), web, "Fresh").await;
    assert_eq!(r.status, 204);

    // Lagging again changes nothing; catching up shows the web's state.
    emu.set_local_lag(true);
    assert_eq!(
        lget(&emu, "/users/0/items/VASWANI7").await.json()["version"],
        local_v
    );
    emu.set_local_lag(false);
    let v = lget(&emu, "/users/0/items/VASWANI7").await.json();
    assert_eq!(v["data"]["title"], "Fresh");
    assert_eq!(v["version"], emu.library_version());
}

#[tokio::test]
async fn the_lag_freezes_groups_and_new_items_too() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::empty()).await;
    emu.set_key_access(KeyAccess::all_groups(true));
    emu.set_local_lag(true);
    let key = created_key(&post_item(&emu, &format!("/groups/{GROUP}"), &book("New")).await);
    emu.update_group(GROUP, |g| g.name = "Renamed".into());
    let later = GroupSpec::new(GROUP + 1, "Joined later");
    emu.add_group(later, Library::empty());

    let r = lget(&emu, &glib("items")).await;
    assert_eq!(r.json(), json!([]));
    assert_eq!(r.lmv(), Some(0));
    let v = lget(&emu, &format!("/groups/{GROUP}")).await.json();
    assert_eq!(
        (&v["data"]["name"], &v["version"]),
        (&json!("Lab"), &json!(1))
    );
    let r = lget(&emu, &format!("/groups/{}/items", GROUP + 1)).await;
    assert_eq!(r.status, 404, "the desktop has not synced this group yet");

    emu.set_local_lag(false);
    assert_eq!(lget(&emu, &glib("items")).await.keys(), vec![key]);
    let group = emu.library(LibraryId::Group(GROUP));
    assert_eq!(
        lget(&emu, &glib("items")).await.lmv(),
        Some(group.version())
    );
    assert_eq!(
        lget(&emu, &format!("/groups/{}/items", GROUP + 1))
            .await
            .status,
        200
    );
}
