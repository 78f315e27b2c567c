//! What the API key may do: refusals with the dataserver's statuses and messages, and the
//! shapes of `/keys/current`.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::{
    Emulator, FileEditing, GroupAccess, GroupSpec, GroupType, GroupsAccess, KeyAccess, Library,
    LibraryEditing, LibraryReading, UserAccess, USER_ID,
};

use super::{book, created_key, get, get_anonymous, glib, post_item, sb, with_group, GROUP};
use zotero_emulator::testing::{api, auth_form, lib};

fn forbidden() -> (u16, String) {
    (403, "Forbidden".into())
}

fn write_denied() -> (u16, String) {
    (403, "Write access denied".into())
}

fn not_found() -> (u16, String) {
    (404, "Not found".into())
}

#[tokio::test]
async fn group_access_is_refused_as_the_dataserver_does() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures()).await;
    let prefix = format!("/groups/{GROUP}");

    // The default key has no group access: the private group cannot be read or seen.
    for path in [
        "items",
        "items/top",
        "collections",
        "tags",
        "items/VASWANI7/children",
    ] {
        assert_eq!(sb(&get(&emu, &glib(path)).await), forbidden(), "{path}");
    }
    assert_eq!(sb(&get(&emu, &glib("items/VASWANI7")).await), not_found());
    assert_eq!(
        sb(&get(&emu, &glib("items/VASPDF23/file")).await),
        not_found()
    );
    assert_eq!(
        sb(&get(&emu, &format!("/groups/{GROUP}")).await),
        not_found()
    );
    assert_eq!(
        sb(&post_item(&emu, &prefix, &book("x")).await),
        write_denied()
    );
    assert_eq!(sb(&get_anonymous(&emu, &glib("items")).await), forbidden());
    assert_eq!(sb(&get(&emu, "/groups/999/items").await), not_found());
    assert_eq!(
        sb(&get(&emu, "/groups/0/items").await),
        (400, "Invalid group ID".into())
    );

    // Read-only access to this group.
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    assert_eq!(get(&emu, &glib("items")).await.status, 200);
    assert_eq!(get(&emu, &format!("/groups/{GROUP}")).await.status, 200);
    assert_eq!(
        sb(&post_item(&emu, &prefix, &book("x")).await),
        write_denied()
    );
    let h = [("If-Unmodified-Since-Version", "100")];
    let r = api(&emu, "DELETE", &glib("items/VASWANI7"), &h, Bytes::new()).await;
    assert_eq!(sb(&r), write_denied());
    let h = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("If-None-Match", "*"),
    ];
    let form = auth_form(b"x", "x.pdf", "application/pdf");
    let r = api(&emu, "POST", &glib("items/VASPDF23/file"), &h, form.clone()).await;
    assert_eq!(sb(&r), write_denied(), "uploads are writes");

    // "All groups" with write, but members may not edit this group's library.
    emu.update_group(GROUP, |g| {
        g.owner = 99;
        g.members = vec![USER_ID];
        g.library_editing = LibraryEditing::Admins;
        g.file_editing = FileEditing::Admins;
    });
    emu.set_key_access(KeyAccess::all_groups(true));
    assert_eq!(get(&emu, &glib("items")).await.status, 200);
    assert_eq!(
        sb(&post_item(&emu, &prefix, &book("x")).await),
        write_denied()
    );
    emu.update_group(GROUP, |g| g.library_editing = LibraryEditing::Members);
    let att = {
        let mut t = get(
            &emu,
            "/items/new?itemType=attachment&linkMode=imported_file",
        )
        .await
        .json();
        t["parentItem"] = json!("VASWANI7");
        t.as_object_mut().unwrap().remove("collections");
        created_key(&post_item(&emu, &prefix, &t).await)
    };
    let r = api(&emu, "POST", &glib(&format!("items/{att}/file")), &h, form).await;
    assert_eq!(sb(&r), (403, "You do not have file editing access".into()));
}

#[tokio::test]
async fn public_groups_are_read_by_anyone_and_files_need_membership() {
    let emu = Emulator::start().await;
    let spec = GroupSpec {
        group_type: GroupType::PublicClosed,
        library_reading: LibraryReading::All,
        owner: 99,
        ..GroupSpec::new(GROUP, "Open Reading")
    };
    emu.add_group(spec, Library::from_fixtures());
    let r = get_anonymous(&emu, &glib("items/top")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = get_anonymous(&emu, &glib("items/VASWANI7")).await.json();
    assert!(v["links"]["attachment"].is_null(), "no file access: {v}");
    let v = get(&emu, &glib("items/VASPDF23")).await.json();
    assert!(v["links"]["enclosure"].is_null(), "no file access: {v}");
    assert_eq!(
        v["library"]["links"]["alternate"]["href"], "https://www.zotero.org/groups/open_reading",
        "public groups have a slug"
    );
    // PublicClosed hides files from non-members.
    assert_eq!(
        sb(&get(&emu, &glib("items/VASPDF23/file")).await),
        not_found()
    );
    assert_eq!(get(&emu, &format!("/groups/{GROUP}")).await.status, 200);
    let r = post_item(&emu, &format!("/groups/{GROUP}"), &book("x")).await;
    assert_eq!(sb(&r), write_denied());

    // "All groups" gives files only to members.
    emu.set_key_access(KeyAccess::all_groups(true));
    let v = get(&emu, &glib("items/VASPDF23")).await.json();
    assert!(v["links"]["enclosure"].is_null());
    let r = post_item(&emu, &format!("/groups/{GROUP}"), &book("x")).await;
    assert_eq!(sb(&r), write_denied(), "not a member: cannot edit");
    emu.update_group(GROUP, |g| g.members = vec![USER_ID]);
    let v = get(&emu, &glib("items/VASPDF23")).await.json();
    assert!(v["links"]["enclosure"].is_object());
    assert_eq!(get(&emu, &glib("items/VASPDF23/file")).await.status, 302);
    assert_eq!(
        post_item(&emu, &format!("/groups/{GROUP}"), &book("x"))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn user_library_flags_are_enforced() {
    let emu = Emulator::start().await;
    emu.set_key_access(KeyAccess {
        user: UserAccess::READ_ONLY,
        ..KeyAccess::default()
    });
    assert_eq!(get(&emu, &lib("items")).await.status, 200);
    let r = post_item(&emu, &format!("/users/{USER_ID}"), &book("x")).await;
    assert_eq!(sb(&r), write_denied());
    let h = [("If-Unmodified-Since-Version", "100")];
    let r = api(&emu, "DELETE", &lib("items/VASWANI7"), &h, Bytes::new()).await;
    assert_eq!(sb(&r), write_denied());

    // Without note access notes are neither listed nor counted.
    emu.set_key_access(KeyAccess {
        user: UserAccess {
            notes: false,
            ..UserAccess::FULL
        },
        ..KeyAccess::default()
    });
    let keys = get(&emu, &lib("items?limit=100")).await.keys();
    assert!(!keys.contains(&"VASNOTE4".to_string()));
    assert!(keys.contains(&"VASPDF23".to_string()));
    assert_eq!(sb(&get(&emu, &lib("items/VASNOTE4")).await), not_found());
    let v = get(&emu, &lib("items/VASWANI7")).await.json();
    assert_eq!(v["meta"]["numChildren"], 1, "the PDF, not the note");

    emu.set_key_access(KeyAccess {
        user: UserAccess::NONE,
        ..KeyAccess::all_groups(false)
    });
    assert_eq!(sb(&get(&emu, &lib("items")).await), forbidden());
    assert_eq!(sb(&get(&emu, &lib("collections")).await), forbidden());
    assert_eq!(sb(&get(&emu, &lib("items/VASWANI7")).await), not_found());
    let r = post_item(&emu, &format!("/users/{USER_ID}"), &book("x")).await;
    assert_eq!(sb(&r), write_denied());
}

#[tokio::test]
async fn keys_current_shows_the_access_shapes() {
    let emu = Emulator::start().await;
    assert_eq!(
        access(&emu).await,
        json!({"user": {"library": true, "files": true, "notes": true, "write": true}})
    );
    emu.set_key_access(KeyAccess::all_groups(false));
    assert_eq!(
        access(&emu).await["groups"],
        json!({"all": {"library": true, "write": false}})
    );
    emu.set_key_access(KeyAccess {
        user: UserAccess::READ_ONLY,
        groups: GroupsAccess::PerGroup(BTreeMap::from([
            (
                12,
                GroupAccess {
                    library: true,
                    write: true,
                },
            ),
            (
                13,
                GroupAccess {
                    library: true,
                    write: false,
                },
            ),
        ])),
    });
    assert_eq!(
        access(&emu).await,
        json!({
            "user": {"library": true, "files": true, "notes": true},
            "groups": {"12": {"library": true, "write": true},
                       "13": {"library": true, "write": false}},
        })
    );
    emu.set_key_access(KeyAccess {
        user: UserAccess::NONE,
        groups: GroupsAccess::None,
    });
    let v = get(&emu, "/keys/current").await.json();
    assert!(v.get("access").is_none(), "{v}");
    assert_eq!(v["userID"], USER_ID);
    assert_eq!(emu.key_access().user, UserAccess::NONE);
}

async fn access(emu: &Emulator) -> serde_json::Value {
    get(emu, "/keys/current").await.json()["access"].clone()
}
