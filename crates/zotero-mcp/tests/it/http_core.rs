//! The HTTP core used directly (no MCP): a write through the client empties the read cache,
//! and error details keep Zotero's request id.

use std::collections::HashMap;

use bytes::Bytes;
use hyper::Method;
use tokio_util::sync::CancellationToken;
use zotero_api::http::{ApiRequest, HttpClient};
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_mcp::config::Config;

fn config(emu: &Emulator) -> zotero_api::ClientConfig {
    let env: HashMap<String, String> = [
        ("ZOTERO_API_BASE", emu.uri()),
        ("ZOTERO_USER_ID", USER_ID.to_string()),
        ("ZOTERO_API_KEY", API_KEY.to_string()),
        ("ZOTERO_READ_CACHE", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Config::from_map(&env).unwrap().client()
}

/// A write that is not safe to repeat (what the emulator answers does not matter here).
fn post_collections() -> ApiRequest {
    ApiRequest::with_body(
        Method::POST,
        format!("/users/{USER_ID}/collections"),
        "application/json",
        Bytes::from_static(b"[]"),
    )
}

#[tokio::test]
async fn any_write_empties_the_read_cache() {
    let emu = Emulator::start().await;
    let http = HttpClient::new(&config(&emu)).unwrap();
    let cancel = CancellationToken::new();
    let get = ApiRequest::get(format!("/users/{USER_ID}/collections"));
    assert_eq!(http.send(&get, &cancel).await.unwrap().status, 200);
    assert_eq!(http.send(&get, &cancel).await.unwrap().status, 200);
    assert_eq!(emu.count("GET", "/users/475425/collections"), 1);

    // Whatever the write answers, it may have changed what the cache holds.
    let write = post_collections();
    http.send(&write, &cancel).await.unwrap();
    assert_eq!(http.send(&get, &cancel).await.unwrap().status, 200);
    assert_eq!(emu.count("GET", "/users/475425/collections"), 2);
}

#[tokio::test]
async fn a_write_is_not_retried_unless_marked_repeatable() {
    let emu = Emulator::start().await;
    let http = HttpClient::new(&config(&emu)).unwrap();
    emu.inject(zotero_emulator::Fault::times(
        zotero_emulator::FaultKind::ServerError,
        3,
    ));
    let write = post_collections();
    let resp = http.send(&write, &CancellationToken::new()).await.unwrap();
    assert_eq!(resp.status, 500);
    assert_eq!(emu.count("POST", "/users/475425/collections"), 1);
}
