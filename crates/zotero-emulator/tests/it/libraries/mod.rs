//! Self-test of the emulator's libraries: groups with their own state and versions, what the
//! API key may do in each (the dataserver's statuses and messages), `/users/{id}/groups`,
//! `/keys/current`, and the desktop's local API with its rules and its lag.

mod access;
mod groups;
mod local;
mod local_lag;

use bytes::Bytes;
use serde_json::{json, Value};
use zotero_emulator::{Emulator, GroupSpec, Library, LibraryId};

use zotero_emulator::testing::{api, send, Resp};

/// The group most tests use: private, owned by the emulator's user.
pub const GROUP: u64 = 4711;

/// `/groups/{GROUP}/{path}`
pub fn glib(path: &str) -> String {
    format!("/groups/{GROUP}/{path}")
}

/// An emulator with the default user library and group [`GROUP`] (empty, or `lib`).
pub async fn with_group(spec: GroupSpec, lib: Library) -> Emulator {
    let emu = Emulator::start().await;
    assert_eq!(emu.add_group(spec, lib), LibraryId::Group(GROUP));
    emu
}

/// A GET with the key.
pub async fn get(emu: &Emulator, path: &str) -> Resp {
    api(emu, "GET", path, &[], Bytes::new()).await
}

/// A GET without a key.
pub async fn get_anonymous(emu: &Emulator, path: &str) -> Resp {
    send(
        emu,
        "GET",
        path,
        &[("Zotero-API-Version", "3")],
        Bytes::new(),
    )
    .await
    .unwrap()
}

/// `POST {prefix}/items` of one object into the library at `prefix` (`/groups/ID`).
pub async fn post_item(emu: &Emulator, prefix: &str, item: &Value) -> Resp {
    let h = [("Content-Type", "application/json")];
    let body = Value::Array(vec![item.clone()]).to_string();
    api(emu, "POST", &format!("{prefix}/items"), &h, body).await
}

/// A minimal book.
pub fn book(title: &str) -> Value {
    json!({"itemType": "book", "title": title})
}

/// (status, body) of an answer, for exact comparisons.
pub fn sb(r: &Resp) -> (u16, String) {
    (r.status, r.text())
}

/// The key of the first created object of a write answer.
pub fn created_key(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["failed"], json!({}), "{v}");
    v["success"]["0"].as_str().unwrap().to_string()
}
