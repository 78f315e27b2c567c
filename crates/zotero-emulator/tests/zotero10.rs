//! The emulated Zotero 10 local API against the request → response cases of
//! `shared/zotero-api-3.md` §8 (numbered as there), over raw TCP so the wire format
//! (HTTP/1.0, no `Content-Length` on bodies, `undefined` reason phrases) is checked too.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zotero_emulator::{
    DesktopRelease, DialogAnswer, Emulator, GroupSpec, Library, LibraryId, Role,
};

struct Resp {
    status_line: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
    fn sb(&self) -> (u16, String) {
        (self.status, self.text())
    }
    fn lmv(&self) -> Option<u64> {
        self.header("last-modified-version")
            .and_then(|v| v.parse().ok())
    }
    fn has_std(&self) -> bool {
        self.header("zotero-api-version") == Some("3")
            && self.header("zotero-schema-version").is_some()
            && self.header("zotero-server-id").is_some()
    }
}

async fn zotero10() -> Emulator {
    let emu = Emulator::start().await;
    emu.set_desktop_release(DesktopRelease::Zotero10);
    emu
}

fn addr(emu: &Emulator) -> String {
    let uri = emu.local_uri();
    uri.trim_start_matches("http://")
        .trim_end_matches("/api")
        .to_string()
}

/// Sends raw bytes, reads to EOF (the server closes after each answer).
async fn send_raw(emu: &Emulator, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr(emu)).await.unwrap();
    s.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    out
}

fn parse(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap().to_string();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Resp {
        status_line,
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// A request with `Host` and, with a body, `Content-Length`.
async fn req(
    emu: &Emulator,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Resp {
    let mut head = format!("{method} /api{path} HTTP/1.1\r\nHost: {}\r\n", addr(emu));
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or(b""));
    parse(&send_raw(emu, &bytes).await)
}

/// A JSON write with the server ID, the key and extra headers.
async fn write(
    emu: &Emulator,
    method: &str,
    path: &str,
    key: &str,
    extra: &[(&str, &str)],
    body: Option<Value>,
) -> Resp {
    let sid = emu.server_id();
    let mut h = vec![("Zotero-Server-ID", sid.as_str()), ("Zotero-API-Key", key)];
    h.extend_from_slice(extra);
    let body = body.map(|b| b.to_string());
    if body.is_some() {
        h.push(("Content-Type", "application/json"));
    }
    req(emu, method, path, &h, body.as_deref().map(str::as_bytes)).await
}

async fn authorize(emu: &Emulator, app: &str) -> Resp {
    let sid = emu.server_id();
    let body = json!({"appName": app}).to_string();
    req(
        emu,
        "POST",
        "/local/authorize",
        &[
            ("Zotero-Server-ID", &sid),
            ("Content-Type", "application/json"),
        ],
        Some(body.as_bytes()),
    )
    .await
}

#[tokio::test]
async fn root_wire_format_and_server_id() {
    let emu = zotero10().await;
    let r = req(&emu, "GET", "/", &[], None).await;
    // 1: data answers carry the standard headers and the server ID; no Content-Length.
    assert_eq!(r.sb(), (200, "Nothing to see here.".into()));
    assert_eq!(r.status_line, "HTTP/1.0 200 OK");
    assert!(r.has_std());
    assert_eq!(r.header("zotero-server-id"), Some(emu.server_id().as_str()));
    assert_eq!(emu.server_id().len(), 12);
    assert_eq!(r.header("content-length"), None);
    assert_eq!(r.header("x-zotero-version"), Some("10.0.0"));
    // 2
    let r = req(&emu, "GET", "", &[], None).await;
    assert_eq!(r.sb(), (404, "No endpoint found\n".into()));
    assert!(r.header("zotero-api-version").is_none());
    // 5: a wrong ID is refused even on reads, and the answer names the real one.
    let r = req(
        &emu,
        "GET",
        "/users/0/items",
        &[("Zotero-Server-ID", "WRONG")],
        None,
    )
    .await;
    assert_eq!(
        r.sb(),
        (412, "Zotero-Server-ID does not match this server".into())
    );
    assert_eq!(r.header("zotero-server-id"), Some(emu.server_id().as_str()));
    // 6
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[("Content-Type", "application/json")],
        Some(b"[]"),
    )
    .await;
    assert_eq!(r.sb(), (428, "Zotero-Server-ID not provided".into()));
    assert_eq!(r.status_line, "HTTP/1.0 428 undefined");
    // Another database: a new ID; the old one is refused.
    let old = emu.server_id();
    let new = emu.switch_database();
    assert_ne!(old, new);
    let r = req(
        &emu,
        "GET",
        "/users/0/items",
        &[("Zotero-Server-ID", &old)],
        None,
    )
    .await;
    assert_eq!(r.status, 412);
    assert_eq!(r.header("zotero-server-id"), Some(new.as_str()));
}

#[tokio::test]
async fn local_api_turned_off() {
    let emu = zotero10().await;
    emu.set_local_enabled(false);
    // 3
    let r = req(&emu, "GET", "/users/0/items", &[], None).await;
    assert_eq!(r.sb(), (403, "Local API is not enabled".into()));
    assert!(r.has_std());
    // 4
    let r = authorize(&emu, "X").await;
    assert_eq!(r.sb(), (403, "Local API is not enabled".into()));
    assert!(emu.dialogs_shown().is_empty());
}

#[tokio::test]
async fn authorize_dialog_outcomes() {
    let emu = zotero10().await;
    // 7: no server ID, no dialog, not counted.
    let r = req(
        &emu,
        "POST",
        "/local/authorize",
        &[("Content-Type", "application/json")],
        Some(br#"{"appName":"X"}"#),
    )
    .await;
    assert_eq!(r.sb(), (428, "Zotero-Server-ID not provided".into()));
    // 8
    let r = authorize(&emu, "  ").await;
    assert_eq!(r.sb(), (400, "appName is required".into()));
    // 9
    let sid = emu.server_id();
    let r = req(
        &emu,
        "POST",
        "/local/authorize",
        &[("Zotero-Server-ID", &sid), ("Content-Type", "text/plain")],
        Some(br#"{"appName":"X"}"#),
    )
    .await;
    assert_eq!(
        r.sb(),
        (400, "Endpoint does not support content-type\n".into())
    );
    assert!(r.header("zotero-api-version").is_none());
    assert!(emu.dialogs_shown().is_empty());
    // 10
    emu.script_dialog(DialogAnswer::Allow);
    let r = authorize(&emu, "zotero-mcp").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = r.json();
    assert_eq!(v["remember"], false);
    let key = v["key"].as_str().unwrap();
    assert_eq!(key.len(), 32);
    assert!(key.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(
        r.text(),
        format!(r#"{{"key":"{key}","remember":false}}"#),
        "compact JSON"
    );
    // 11: Always Allow, and a dismissed dialog is Always Allow too.
    for a in [DialogAnswer::AlwaysAllow, DialogAnswer::Dismiss] {
        emu.script_dialog(a);
        let r = authorize(&emu, "zotero-mcp").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["remember"], true);
    }
    // 12 (that is the 4th prompt)
    emu.script_dialog(DialogAnswer::Deny);
    let r = authorize(&emu, "zotero-mcp").await;
    assert_eq!(r.sb(), (403, r#"{"denied":true}"#.into()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    // A person who takes their time: the answer waits for them (5th prompt).
    let emu = std::sync::Arc::new(emu);
    let e2 = emu.clone();
    let pending = tokio::spawn(async move { authorize(&e2, "slow").await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!pending.is_finished(), "the answer waits for the dialog");
    emu.answer_dialog(DialogAnswer::AlwaysAllow);
    assert_eq!(pending.await.unwrap().status, 200);
    // 13: the 6th prompt within 60 s.
    let r = authorize(&emu, "zotero-mcp").await;
    assert_eq!(r.sb(), (429, "Too many authorization requests".into()));
    assert_eq!(r.status_line, "HTTP/1.0 429 undefined");
    let ra: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&ra));
    assert!(r.has_std());
    assert_eq!(emu.dialogs_shown().len(), 5);
    assert_eq!(emu.local_keys().len(), 4);
}

#[tokio::test]
async fn a_delayed_answer_is_scripted() {
    let emu = zotero10().await;
    emu.script_dialog_after(DialogAnswer::AlwaysAllow, Duration::from_millis(20));
    let r = authorize(&emu, "zotero-mcp").await;
    assert_eq!(r.json()["remember"], true);
    assert_eq!(emu.local_keys()[0].1, "zotero-mcp");
}

#[tokio::test]
async fn keys_and_single_use_keys() {
    let emu = zotero10().await;
    let sid = emu.server_id();
    // 14
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[
            ("Zotero-Server-ID", &sid),
            ("Content-Type", "application/json"),
        ],
        Some(b"[]"),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            401,
            "API key required -- POST /api/local/authorize to obtain one".into()
        )
    );
    assert_eq!(r.status_line, "HTTP/1.0 401 undefined");
    assert_eq!(
        r.header("www-authenticate"),
        Some("Zotero-API-Key realm=\"Zotero Local API\"")
    );
    assert!(r.header("zotero-api-version").is_none() && r.header("zotero-server-id").is_none());
    // 15
    let r = write(&emu, "POST", "/users/0/items", "nope", &[], Some(json!([]))).await;
    assert_eq!(r.sb(), (401, "Invalid or expired API key".into()));
    // 16
    let k1 = emu.grant_local_key("t", false);
    let book = json!([{"itemType": "book"}]);
    assert_eq!(
        write(&emu, "POST", "/users/0/items", &k1, &[], Some(book.clone()))
            .await
            .status,
        200
    );
    let r = write(&emu, "POST", "/users/0/items", &k1, &[], Some(book.clone())).await;
    assert_eq!(r.sb(), (401, "Invalid or expired API key".into()));
    // 17: a failed write spends it too.
    let k1 = emu.grant_local_key("t", false);
    let v = item_version(&emu, "VASWANI7").await;
    let stale = (v - 1).to_string();
    let r = write(
        &emu,
        "PATCH",
        "/users/0/items/VASWANI7",
        &k1,
        &[("If-Unmodified-Since-Version", &stale)],
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(r.status, 412);
    let r = write(&emu, "POST", "/users/0/items", &k1, &[], Some(book)).await;
    assert_eq!(r.status, 401);
    // Bearer works; GET ignores keys.
    let k = emu.grant_local_key("t", true);
    let bearer = format!("Bearer {k}");
    let body = json!([{"itemType": "book"}]).to_string();
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[
            ("Zotero-Server-ID", &sid),
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200);
    // Clear Write Authorizations: every key goes.
    emu.clear_write_authorizations();
    assert!(emu.local_keys().is_empty());
}

async fn item_version(emu: &Emulator, key: &str) -> u64 {
    let r = req(emu, "GET", &format!("/users/0/items/{key}"), &[], None).await;
    r.json()["version"].as_u64().unwrap()
}

async fn library_version(emu: &Emulator) -> u64 {
    req(emu, "GET", "/users/0/items?limit=1", &[], None)
        .await
        .lmv()
        .unwrap()
}

#[tokio::test]
async fn batches() {
    let emu = zotero10().await;
    let k = emu.grant_local_key("t", true);
    let post = |body: Value, extra: &'static [(&'static str, &'static str)]| {
        let emu = &emu;
        let k = k.clone();
        async move { write(emu, "POST", "/users/0/items", &k, extra, Some(body)).await }
    };
    // 18
    let l = library_version(&emu).await;
    let r = post(json!([{"itemType": "book", "title": "A"}]), &[]).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["successful"]["0"]["version"], l + 1);
    assert_eq!(v["successful"]["0"]["data"]["title"], "A");
    let new = v["success"]["0"].as_str().unwrap().to_string();
    assert_eq!(v["unchanged"], json!({}));
    assert_eq!(v["failed"], json!({}));
    assert_eq!(r.lmv(), Some(l + 1));
    assert!(r.text().contains("\n    \"successful\""), "4-space JSON");
    // 19: one version per object.
    let r = post(json!([{"itemType": "book"}, {"itemType": "book"}]), &[]).await;
    let v = r.json();
    assert_eq!(v["successful"]["0"]["version"], l + 2);
    assert_eq!(v["successful"]["1"]["version"], l + 3);
    assert_eq!(r.lmv(), Some(l + 3));
    // 20
    let r = post(
        json!([{"itemType": "book"}, {"itemType": "noSuchType"}]),
        &[],
    )
    .await;
    assert_eq!(
        r.json()["failed"],
        json!({"1": {"key": "", "code": 400, "message": "Unknown itemType 'noSuchType'"}})
    );
    // 21
    let many: Vec<Value> = (0..51).map(|_| json!({"itemType": "book"})).collect();
    let r = post(json!(many), &[]).await;
    assert_eq!(
        r.sb(),
        (413, "Cannot add more than 50 items at a time".into())
    );
    assert_eq!(r.status_line, "HTTP/1.0 413 undefined");
    // 22
    assert_eq!(
        post(json!({"itemType": "book"}), &[]).await.sb(),
        (400, "Uploaded data must be a JSON array".into())
    );
    assert_eq!(
        post(json!([]), &[]).await.sb(),
        (400, "No items provided".into())
    );
    // 23
    let sid = emu.server_id();
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[("Zotero-Server-ID", &sid), ("Zotero-API-Key", &k)],
        Some(b"[]"),
    )
    .await;
    assert_eq!(r.sb(), (400, "Empty request body".into()));
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[
            ("Zotero-Server-ID", &sid),
            ("Zotero-API-Key", &k),
            ("Content-Type", "application/json"),
        ],
        Some(b"["),
    )
    .await;
    assert_eq!(r.sb(), (400, "Invalid JSON provided\n".into()));
    assert!(r.header("zotero-api-version").is_none());
    // 24
    let book = json!([{"itemType": "book"}]);
    assert_eq!(
        post(book.clone(), &[("Zotero-Write-Token", "token-one-2345")])
            .await
            .status,
        200
    );
    let r = post(book.clone(), &[("Zotero-Write-Token", "token-one-2345")]).await;
    assert_eq!(r.sb(), (412, "Write token already used".into()));
    let r = post(book.clone(), &[("Zotero-Write-Token", "abcd")]).await;
    assert_eq!(
        r.sb(),
        (400, "Write token must be 5-32 characters in length".into())
    );
    // 25
    let r = post(json!([{"key": new, "title": "x"}]), &[]).await;
    assert_eq!(
        r.json()["failed"]["0"],
        json!({"key": new, "code": 428,
        "message": "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes"})
    );
    // 26: the version must be equal, not greater.
    let vv = item_version(&emu, &new).await;
    let r = post(json!([{"key": new, "version": vv + 1, "title": "x"}]), &[]).await;
    assert_eq!(r.json()["failed"]["0"]["code"], 412);
    assert_eq!(
        r.json()["failed"]["0"]["message"],
        format!("item version mismatch: expected {}, found {vv}", vv + 1)
    );
    let r = post(json!([{"key": new, "version": vv, "title": "x"}]), &[]).await;
    assert_eq!(r.json()["success"]["0"], json!(new));
    // 27
    let r = post(
        json!([{"key": "ABCD2345", "version": 5, "itemType": "book"}]),
        &[],
    )
    .await;
    assert_eq!(
        r.json()["failed"]["0"],
        json!({"key": "ABCD2345", "code": 404,
        "message": "item doesn't exist (expected version 5; use 0 instead)"})
    );
    let r = post(
        json!([{"key": "ABCD2345", "version": 0, "itemType": "book"}]),
        &[],
    )
    .await;
    assert_eq!(r.json()["success"]["0"], "ABCD2345");
    // 28
    let l = library_version(&emu).await;
    let stale = (l - 1).to_string();
    let sid = emu.server_id();
    let body = book.to_string();
    let r = req(
        &emu,
        "POST",
        "/users/0/items",
        &[
            ("Zotero-Server-ID", &sid),
            ("Zotero-API-Key", &k),
            ("Content-Type", "application/json"),
            ("If-Unmodified-Since-Version", &stale),
        ],
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            412,
            format!(
                "Library has been modified since specified version (expected {}, found {l})",
                l - 1
            )
        )
    );
}

#[tokio::test]
async fn single_objects_deletes_and_tags() {
    let emu = zotero10().await;
    let k = emu.grant_local_key("t", true);
    // 29
    let r = write(
        &emu,
        "PATCH",
        "/users/0/items/VASWANI7",
        &k,
        &[],
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(
        r.sb(),
        (428, "If-Unmodified-Since-Version not provided".into())
    );
    // 30: the library version as header passes (≥ the object's).
    let l = library_version(&emu).await;
    let ls = l.to_string();
    let r = write(
        &emu,
        "PATCH",
        "/users/0/items/VASWANI7",
        &k,
        &[("If-Unmodified-Since-Version", &ls)],
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("content-length"), Some("0"));
    assert_eq!(r.lmv(), Some(l + 1));
    assert_eq!(item_version(&emu, "VASWANI7").await, l + 1);
    // 31
    let v = item_version(&emu, "VASWANI7").await;
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/VASWANI7",
        &k,
        &[],
        Some(json!({"itemType": "book", "version": v - 1})),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            412,
            format!("item version mismatch: expected {}, found {v}", v - 1)
        )
    );
    let stale = (v - 1).to_string();
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/VASWANI7",
        &k,
        &[("If-Unmodified-Since-Version", &stale)],
        Some(json!({"itemType": "book"})),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            412,
            format!(
                "item has been modified since specified version (expected {}, found {v})",
                v - 1
            )
        )
    );
    // The library version as body `version` fails locally.
    let l = library_version(&emu).await;
    if l != v {
        let r = write(
            &emu,
            "PATCH",
            "/users/0/items/VASWANI7",
            &k,
            &[],
            Some(json!({"version": l, "title": "y"})),
        )
        .await;
        assert_eq!(r.status, 412);
    }
    // 32
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/badkey!!",
        &k,
        &[],
        Some(json!({})),
    )
    .await;
    assert_eq!(r.sb(), (400, "Invalid key: 'badkey!!'".into()));
    // 33
    let r = write(
        &emu,
        "PATCH",
        "/users/0/items/ZZZZZZZZ",
        &k,
        &[],
        Some(json!({"itemType": "book"})),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        item_version(&emu, "ZZZZZZZZ").await,
        library_version(&emu).await
    );
    let r = write(
        &emu,
        "PATCH",
        "/users/0/items/YYYYYYYY",
        &k,
        &[],
        Some(json!({})),
    )
    .await;
    assert_eq!(r.sb(), (400, "itemType property not provided".into()));
    // 34
    let r = write(&emu, "DELETE", "/users/0/items/ZZZZZZZZ", &k, &[], None).await;
    assert_eq!(
        r.sb(),
        (428, "If-Unmodified-Since-Version not provided".into())
    );
    let l = library_version(&emu).await.to_string();
    let r = write(
        &emu,
        "DELETE",
        "/users/0/items/WWWWWWWW",
        &k,
        &[("If-Unmodified-Since-Version", &l)],
        None,
    )
    .await;
    assert_eq!(r.sb(), (404, "Not found".into()));
    let zv = item_version(&emu, "ZZZZZZZZ").await.to_string();
    let r = write(
        &emu,
        "DELETE",
        "/users/0/items/ZZZZZZZZ",
        &k,
        &[("If-Unmodified-Since-Version", &zv)],
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        req(&emu, "GET", "/users/0/items/ZZZZZZZZ", &[], None)
            .await
            .status,
        404,
        "erased, not trashed"
    );
    // 35
    let l = library_version(&emu).await.to_string();
    let r = write(
        &emu,
        "DELETE",
        "/users/0/items?itemKey=VASWANI7,ZZZZZZZZ",
        &k,
        &[("If-Unmodified-Since-Version", &l)],
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    let l = library_version(&emu).await.to_string();
    let keys: Vec<String> = (0..51)
        .map(|i| {
            format!("AAAA{:04}", 2000 + i)
                .replace('0', "2")
                .replace('1', "3")
        })
        .collect();
    let path = format!("/users/0/items?itemKey={}", keys.join(","));
    let r = write(
        &emu,
        "DELETE",
        &path,
        &k,
        &[("If-Unmodified-Since-Version", &l)],
        None,
    )
    .await;
    assert_eq!(
        r.sb(),
        (413, "Cannot delete more than 50 objects at a time".into())
    );
    let r = write(
        &emu,
        "DELETE",
        "/users/0/items",
        &k,
        &[("If-Unmodified-Since-Version", &l)],
        None,
    )
    .await;
    assert_eq!(r.sb(), (400, "'itemKey' not provided".into()));
    // 36
    let r = write(
        &emu,
        "DELETE",
        "/users/0/tags?tag=a||b",
        &k,
        &[("If-Unmodified-Since-Version", &l)],
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(r.lmv().is_some());
    let r = write(&emu, "DELETE", "/users/0/tags?tag=a||b", &k, &[], None).await;
    assert_eq!(
        r.sb(),
        (428, "If-Unmodified-Since-Version not provided".into())
    );
    // 37
    let r = write(&emu, "POST", "/users/0/items/top", &k, &[], Some(json!([]))).await;
    assert_eq!(r.sb(), (405, "Method not allowed for this path".into()));
    assert_eq!(r.status_line, "HTTP/1.0 405 undefined");
    let r = write(
        &emu,
        "POST",
        "/users/0/items/BERTDV82",
        &k,
        &[],
        Some(json!([])),
    )
    .await;
    assert_eq!(r.sb(), (400, "Endpoint does not support method\n".into()));
}

#[tokio::test]
async fn trash_is_a_patch_and_unknown_fields_go_to_extra() {
    let emu = zotero10().await;
    let k = emu.grant_local_key("t", true);
    let r = write(&emu, "POST", "/users/0/items", &k, &[],
        Some(json!([{"itemType": "book", "title": "T", "publicationTitle": "Not a book field", "madeUp": "yes",
                     "creators": [{"creatorType": "inventor", "name": "N"}]}]))).await;
    let d = r.json()["successful"]["0"]["data"].clone();
    let key = d["key"].as_str().unwrap().to_string();
    let extra = d["extra"].as_str().unwrap();
    let mut lines: Vec<&str> = extra.lines().collect();
    lines.sort();
    assert_eq!(lines, ["madeUp: yes", "publicationTitle: Not a book field"]);
    assert!(d.get("publicationTitle").is_none());
    assert_eq!(
        d["creators"][0]["creatorType"], "author",
        "an invalid creator type becomes the primary one"
    );
    let v = d["version"].as_u64().unwrap();
    let r = write(
        &emu,
        "PATCH",
        &format!("/users/0/items/{key}"),
        &k,
        &[],
        Some(json!({"deleted": 1, "version": v})),
    )
    .await;
    assert_eq!(r.status, 204);
    let r = req(&emu, "GET", &format!("/users/0/items/{key}"), &[], None).await;
    assert_eq!(r.json()["data"]["deleted"], true);
    let trash = req(&emu, "GET", "/users/0/items/trash", &[], None).await;
    assert!(trash.text().contains(&key));
}

#[tokio::test]
async fn fulltext_writes() {
    let emu = zotero10().await;
    let k = emu.grant_local_key("t", true);
    // 38
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/VASPDF23/fulltext",
        &k,
        &[],
        Some(json!({"content": "x", "indexedPages": "1"})),
    )
    .await;
    assert_eq!(r.sb(), (400, "'indexedPages' must be an integer".into()));
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/VASWANI7/fulltext",
        &k,
        &[],
        Some(json!({"content": "x"})),
    )
    .await;
    assert_eq!(r.sb(), (404, "Not found".into()));
    let r = write(
        &emu,
        "PUT",
        "/users/0/items/VASPDF23/fulltext",
        &k,
        &[],
        Some(json!({"content": "x", "indexedPages": 1, "totalPages": 1})),
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(r.lmv().is_some());
    // 39
    let r = write(
        &emu,
        "POST",
        "/users/0/fulltext",
        &k,
        &[],
        Some(json!([{"key": "VASPDF23", "content": "x"}])),
    )
    .await;
    assert_eq!(r.status, 428);
    let l = library_version(&emu).await.to_string();
    let eleven: Vec<Value> = (0..11)
        .map(|_| json!({"key": "VASPDF23", "content": "x"}))
        .collect();
    let h = [("If-Unmodified-Since-Version", l.as_str())];
    let r = write(
        &emu,
        "POST",
        "/users/0/fulltext",
        &k,
        &h,
        Some(json!(eleven)),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            413,
            "Cannot write more than 10 full-text entries at a time".into()
        )
    );
    let r = write(
        &emu,
        "POST",
        "/users/0/fulltext",
        &k,
        &h,
        Some(json!([{"content": "x"}])),
    )
    .await;
    assert_eq!(
        r.json()["failed"],
        json!({"0": {"key": "", "code": 400, "message": "'key' is required"}})
    );
}

/// A form body as the desktop decodes it (`decodeURIComponent`, `+` stays `+`).
async fn form(emu: &Emulator, path: &str, key: &str, extra: &[(&str, &str)], body: &str) -> Resp {
    let sid = emu.server_id();
    let mut h = vec![
        ("Zotero-Server-ID", sid.as_str()),
        ("Zotero-API-Key", key),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    h.extend_from_slice(extra);
    req(emu, "POST", path, &h, Some(body.as_bytes())).await
}

fn md5_hex(b: &[u8]) -> String {
    use md5::{Digest, Md5};
    format!("{:x}", Md5::digest(b))
}

#[tokio::test]
async fn three_step_upload() {
    let emu = zotero10().await;
    let k = emu.grant_local_key("t", true);
    let bytes = b"%PDF-1.4 new bytes".to_vec();
    let md5 = md5_hex(&bytes);
    let path = "/users/0/items/VASPDF23/file";
    let good = format!(
        "md5={md5}&filename=my%20paper.pdf&filesize={}&mtime=1700000000000",
        bytes.len()
    );
    // 40
    let r = form(&emu, path, &k, &[], &good).await;
    assert_eq!(
        r.sb(),
        (428, "If-Match/If-None-Match header not provided".into())
    );
    let inm = [("If-None-Match", "*")];
    let r = form(
        &emu,
        path,
        &k,
        &inm,
        &format!("md5={md5}&filename=a.pdf&filesize=3&mtime=1000"),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            400,
            "mtime must be provided in milliseconds, not seconds".into()
        )
    );
    let r = form(
        &emu,
        path,
        &k,
        &inm,
        &format!("md5={md5}&filename=../x&filesize=3&mtime=1700000000000"),
    )
    .await;
    assert_eq!(r.sb(), (400, "Invalid file name".into()));
    // 44
    let sid = emu.server_id();
    let r = req(
        &emu,
        "PATCH",
        "/users/0/items/VASPDF23/file?algorithm=xdelta&upload=foo",
        &[
            ("Zotero-Server-ID", &sid),
            ("Zotero-API-Key", &k),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(b""),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            405,
            "Partial uploads are not supported by the local API".into()
        )
    );
    // 41
    let r = form(&emu, path, &k, &inm, &good).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let u = v["uploadKey"].as_str().unwrap().to_string();
    assert_eq!(
        v["url"],
        format!("http://{}/api/local/uploads/{u}", addr(&emu))
    );
    assert_eq!(v["contentType"], "application/pdf");
    assert_eq!(v["prefix"], "");
    // 43: register before the bytes.
    let r = form(&emu, path, &k, &[], &format!("upload={u}")).await;
    assert_eq!(r.sb(), (400, "File contents were not uploaded".into()));
    // 42
    let up = format!("/local/uploads/{u}");
    let oct = ("Content-Type", "application/octet-stream");
    let r = req(
        &emu,
        "POST",
        &up,
        &[oct, ("Zotero-Server-ID", "WRONG")],
        Some(&bytes),
    )
    .await;
    assert_eq!(r.status, 412);
    let r = req(&emu, "POST", "/local/uploads/NOPE", &[oct], Some(&bytes)).await;
    assert_eq!(r.sb(), (404, "Unknown or expired upload key".into()));
    let r = req(&emu, "POST", &up, &[oct], Some(&bytes)).await;
    assert_eq!(r.status, 201, "no key, no server ID: {}", r.text());
    assert!(r.body.is_empty());
    // 43: after / again.
    let r = form(&emu, path, &k, &[], &format!("upload={u}")).await;
    assert_eq!(r.status, 204);
    assert!(r.lmv().is_some());
    let r = form(&emu, path, &k, &[], &format!("upload={u}")).await;
    assert_eq!(r.sb(), (400, "Invalid or expired upload key".into()));
    let f = emu.file("VASPDF23").unwrap();
    assert_eq!(f.md5, md5);
    assert_eq!(f.bytes.as_deref(), Some(&bytes[..]));
    assert_eq!(f.filename, "my paper.pdf", "%20 is a space");
    // 41: the file on disk has that md5 now.
    let im = [("If-Match", md5.as_str())];
    let r = form(&emu, path, &k, &im, &good).await;
    assert_eq!(r.sb(), (200, r#"{"exists":1}"#.into()));
    // 42: wrong bytes.
    let other = b"other".to_vec();
    let omd5 = md5_hex(&other);
    let body = format!("md5={omd5}&filename=b+c.pdf&filesize=5&mtime=1700000000000");
    let r = form(&emu, path, &k, &im, &body).await;
    let u = r.json()["uploadKey"].as_str().unwrap().to_string();
    let r = req(
        &emu,
        "POST",
        &format!("/local/uploads/{u}"),
        &[oct],
        Some(b"wrong"),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            400,
            format!(
                "File MD5 does not match expected (got {}, expected {omd5})",
                md5_hex(b"wrong")
            )
        )
    );
}

#[tokio::test]
async fn users_groups_versions_browsers_hosts_lengths() {
    let emu = zotero10().await;
    let mut ro = GroupSpec::new(77, "Read only");
    ro.owner = 1;
    ro.members = vec![zotero_emulator::USER_ID];
    ro.library_editing = zotero_emulator::LibraryEditing::Admins;
    let _ = Role::Member;
    emu.add_group(ro, Library::from_fixtures());
    assert_eq!(LibraryId::Group(77).path(), "groups/77");
    let k = emu.grant_local_key("t", true);
    let book = json!([{"itemType": "book"}]);
    // 45
    let r = write(
        &emu,
        "POST",
        "/users/999/items",
        &k,
        &[],
        Some(book.clone()),
    )
    .await;
    assert_eq!(
        r.sb(),
        (
            400,
            format!(
                "Only data for the logged-in user is available locally -- use userID 0 or {}",
                zotero_emulator::USER_ID
            )
        )
    );
    // 46
    let r = write(&emu, "POST", "/groups/1/items", &k, &[], Some(book.clone())).await;
    assert_eq!(r.sb(), (404, "Not found".into()));
    let k1 = emu.grant_local_key("t", false);
    let r = write(
        &emu,
        "POST",
        "/groups/77/items",
        &k1,
        &[],
        Some(book.clone()),
    )
    .await;
    assert_eq!(r.sb(), (403, "Write access denied".into()));
    assert!(
        !emu.local_keys().iter().any(|(x, _, _)| *x == k1),
        "the single-use key is spent"
    );
    // 47
    let r = write(
        &emu,
        "POST",
        "/users/0/items",
        &k,
        &[("Zotero-API-Version", "2")],
        Some(book.clone()),
    )
    .await;
    assert_eq!(r.sb(), (501, "API version not implemented: 2".into()));
    // 48
    let sid = emu.server_id();
    for h in [
        ("Origin", "http://evil"),
        ("User-Agent", "Mozilla/5.0 (X11)"),
    ] {
        let bytes = format!("GET /api/users/0/items HTTP/1.1\r\nHost: {}\r\nZotero-Server-ID: {sid}\r\n{}: {}\r\n\r\n", addr(&emu), h.0, h.1);
        assert!(
            send_raw(&emu, bytes.as_bytes()).await.is_empty(),
            "closed, zero bytes"
        );
    }
    // 49
    let raw = send_raw(&emu, b"GET /api/ HTTP/1.1\r\nHost: example.com\r\n\r\n").await;
    assert_eq!(parse(&raw).sb(), (400, "Invalid Host header\n".into()));
    // 50
    let bytes = format!(
        "POST /api/users/0/items HTTP/1.1\r\nHost: {}\r\nZotero-Server-ID: {sid}\r\nZotero-API-Key: {k}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n",
        addr(&emu)
    );
    let r = parse(&send_raw(&emu, bytes.as_bytes()).await);
    assert_eq!(r.sb(), (400, "Content-length not provided\n".into()));
}
