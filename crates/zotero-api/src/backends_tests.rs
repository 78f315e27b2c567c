//! Which backend answers which request: reads that may lag go to the desktop app's local
//! API when it is configured, and every read a write depends on, and every write, to the
//! Web API; the user library is `/users/0` locally; access is checked before a write.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zotero_net::RetryPolicy;

use crate::client::SearchQuery;
use crate::config::{ApiKey, ClientConfig};
use crate::{LibraryRef, ObjectKey, ZoteroClient, ZoteroError};

fn config(web: Option<&MockServer>, local: Option<&MockServer>) -> ClientConfig {
    let missing = if web.is_some() {
        vec![]
    } else {
        vec!["ZOTERO_API_KEY", "ZOTERO_USER_ID"]
    };
    ClientConfig {
        api_base: web.map_or("http://127.0.0.1:9".into(), |w| w.uri()),
        api_key: web.map(|_| ApiKey::new("k")),
        user_id: web.map(|_| 7),
        missing_credentials: missing,
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            max_wait: Duration::from_secs(1),
        },
        timeout: Duration::from_secs(5),
        read_cache: None,
        local_api_base: local.map(|l| format!("{}/api", l.uri())),
        local_writes: Default::default(),
        storage_policy: zotero_net::AddressPolicy::Any,
    }
}

fn key(k: &str) -> ObjectKey {
    ObjectKey::parse(k).unwrap()
}

fn query() -> SearchQuery {
    SearchQuery {
        exclude_tags: Vec::new(),
        query: "x".into(),
        tags: vec![],
        limit: 5,
        start: 0,
        sort: "dateModified".into(),
        ..SearchQuery::default()
    }
}

fn item(key: &str, version: u64) -> serde_json::Value {
    json!({"key": key, "version": version, "data": {"key": key, "version": version, "itemType": "book", "title": "T"}})
}

async fn keys(web: &MockServer, write: bool) {
    Mock::given(method("GET"))
        .and(path("/keys/current"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "userID": 7, "username": "u",
            "access": {"user": {"library": true, "files": true, "write": write},
                       "groups": {"42": {"library": true, "write": false}}}
        })))
        .mount(web)
        .await;
}

#[tokio::test]
async fn reads_that_may_lag_go_local_under_the_keys_user_id() {
    let (web, local) = (MockServer::start().await, MockServer::start().await);
    Mock::given(method("GET"))
        .and(path("/api/users/7/items/top"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([item("AAAAAAAA", 3)])))
        .expect(1)
        .mount(&local)
        .await;
    let c = ZoteroClient::new(&config(Some(&web), Some(&local))).unwrap();
    let cancel = CancellationToken::new();
    let r = c
        .library(LibraryRef::User)
        .unwrap()
        .search_items(&query(), &cancel)
        .await
        .unwrap();
    assert_eq!(r.page.items.len(), 1);
    assert!(web.received_requests().await.unwrap().is_empty());
    // A group keeps its real ID on both backends.
    Mock::given(method("GET"))
        .and(path("/api/groups/42/items/top"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&local)
        .await;
    c.library(LibraryRef::Group(42))
        .unwrap()
        .search_items(&query(), &cancel)
        .await
        .unwrap();
}

#[tokio::test]
async fn reads_a_write_depends_on_go_to_the_web() {
    let (web, local) = (MockServer::start().await, MockServer::start().await);
    keys(&web, true).await;
    Mock::given(method("GET"))
        .and(path("/users/7/items/BBBBBBBB"))
        .respond_with(ResponseTemplate::new(200).set_body_json(item("BBBBBBBB", 9)))
        .mount(&web)
        .await;
    Mock::given(method("GET"))
        .and(path("/users/7/items/BBBBBBBB/children"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&web)
        .await;
    let c = ZoteroClient::new(&config(Some(&web), Some(&local))).unwrap();
    let cancel = CancellationToken::new();
    // The parent check before an upload reads the item as it is now: from the web.
    c.library(LibraryRef::User)
        .unwrap()
        .check_parent(&key("BBBBBBBB"), &cancel)
        .await
        .unwrap();
    assert!(local.received_requests().await.unwrap().is_empty());
    let paths: Vec<String> = web
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(paths, ["/keys/current", "/users/7/items/BBBBBBBB"]);
}

#[tokio::test]
async fn without_the_web_api_reads_go_local_and_writes_are_refused_unsent() {
    let local = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex("^/api/users/0/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(item("CCCCCCCC", 1)))
        .mount(&local)
        .await;
    let c = ZoteroClient::new(&config(None, Some(&local))).unwrap();
    let cancel = CancellationToken::new();
    let lib = c.library(LibraryRef::User).unwrap();
    // A read a write would depend on still has only the local copy to go to.
    lib.fetch_item(&key("CCCCCCCC"), &cancel).await.unwrap();
    let err = lib
        .check_parent(&key("CCCCCCCC"), &cancel)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ZoteroError::MissingCredentials { .. }),
        "{err:?}"
    );
    let err = c.template("book", None, &cancel).await.unwrap_err();
    assert!(
        matches!(err, ZoteroError::MissingCredentials { .. }),
        "{err:?}"
    );
    assert_eq!(local.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_write_the_key_may_not_make_is_refused_before_anything_is_sent() {
    let web = MockServer::start().await;
    keys(&web, false).await;
    let c = ZoteroClient::new(&config(Some(&web), None)).unwrap();
    let cancel = CancellationToken::new();
    for (lib, name) in [
        (LibraryRef::User, "user"),
        (LibraryRef::Group(42), "group:42"),
        (LibraryRef::Group(5), "group:5"),
    ] {
        let err = c
            .library(lib)
            .unwrap()
            .check_parent(&key("DDDDDDDD"), &cancel)
            .await
            .unwrap_err();
        match err {
            ZoteroError::LibraryAccess { library, .. } => assert_eq!(library, name),
            other => panic!("{other:?}"),
        }
    }
    // Only the key's rights were asked: once for the process, and again before each
    // refusal (they may just have been changed); nothing was written.
    let reqs = web.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 4);
    assert!(reqs.iter().all(|r| r.url.path() == "/keys/current"));
}

#[tokio::test]
async fn a_group_the_key_cannot_read_is_named_in_the_error() {
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/groups/5/items/top"))
        .respond_with(ResponseTemplate::new(403).set_body_string("Forbidden"))
        .mount(&web)
        .await;
    let c = ZoteroClient::new(&config(Some(&web), None)).unwrap();
    let err = c
        .library(LibraryRef::Group(5))
        .unwrap()
        .search_items(&query(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("group:5"), "{err}");
    assert!(matches!(
        err,
        ZoteroError::LibraryAccess { need: "read", .. }
    ));
}

#[tokio::test]
async fn the_local_api_switched_off_says_how_to_turn_it_on() {
    let local = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(403).set_body_string("Local API is not enabled"))
        .mount(&local)
        .await;
    let c = ZoteroClient::new(&config(None, Some(&local))).unwrap();
    let err = c
        .library(LibraryRef::User)
        .unwrap()
        .search_items(&query(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ZoteroError::LocalApiOff), "{err:?}");
    assert!(
        err.to_string().contains("Allow other applications"),
        "{err}"
    );
}

#[tokio::test]
async fn no_backend_names_the_variables() {
    let c = ZoteroClient::new(&config(None, None)).unwrap();
    assert!(matches!(
        c.library(LibraryRef::User),
        Err(ZoteroError::MissingCredentials { .. })
    ));
}

#[tokio::test]
async fn what_the_desktop_cannot_serve_is_asked_of_the_web() {
    let (web, local) = (MockServer::start().await, MockServer::start().await);
    // Not synced to the desktop yet.
    Mock::given(method("GET"))
        .and(path("/api/users/7/items/EEEEEEEE"))
        .respond_with(ResponseTemplate::new(404).set_body_string("Not found"))
        .expect(1)
        .mount(&local)
        .await;
    for p in [
        "/users/7/items/EEEEEEEE",
        "/users/7/items/EEEEEEEE/children",
    ] {
        let body = if p.ends_with("children") {
            json!([])
        } else {
            item("EEEEEEEE", 4)
        };
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&web)
            .await;
    }
    let c = ZoteroClient::new(&config(Some(&web), Some(&local))).unwrap();
    let cancel = CancellationToken::new();
    let lib = c.library(LibraryRef::User).unwrap();
    let got = lib.get_item(&key("EEEEEEEE"), &cancel).await.unwrap();
    assert_eq!(got.version, 4);
    // The desktop closed: the web answers.
    let mut cfg = config(Some(&web), Some(&local));
    cfg.local_api_base = Some("http://127.0.0.1:9/api".into());
    let c = ZoteroClient::new(&cfg).unwrap();
    let got = c
        .library(LibraryRef::User)
        .unwrap()
        .get_item(&key("EEEEEEEE"), &cancel)
        .await
        .unwrap();
    assert_eq!(got.version, 4);
}

#[tokio::test]
async fn a_refusal_names_the_library_and_what_was_refused() {
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/users/7/items/top"))
        .respond_with(ResponseTemplate::new(403).set_body_string("Forbidden"))
        .mount(&web)
        .await;
    Mock::given(method("GET"))
        .and(path("/groups/8/items/top"))
        .respond_with(ResponseTemplate::new(403).set_body_string("Invalid key"))
        .mount(&web)
        .await;
    let c = ZoteroClient::new(&config(Some(&web), None)).unwrap();
    let cancel = CancellationToken::new();
    let err = c
        .library(LibraryRef::User)
        .unwrap()
        .search_items(&query(), &cancel)
        .await
        .unwrap_err();
    match err {
        ZoteroError::LibraryAccess { library, need, .. } => {
            assert_eq!((library.as_str(), need), ("user", "read"))
        }
        other => panic!("{other:?}"),
    }
    // A key Zotero does not know is a key problem, not the library's.
    let err = c
        .library(LibraryRef::Group(8))
        .unwrap()
        .search_items(&query(), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, ZoteroError::Status { .. }), "{err:?}");
}

#[tokio::test]
async fn write_to_all_groups_reaches_only_where_the_group_lets_the_user_edit() {
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/keys/current"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "userID": 7, "access": {"user": {"library": true, "write": true},
                                    "groups": {"all": {"library": true, "write": true}}}
        })))
        .mount(&web)
        .await;
    // Group 11: only admins edit, and the user is a member. Group 12: members edit, no
    // files for anyone.
    for (g, editing, files) in [(11, "admins", "admins"), (12, "members", "none")] {
        Mock::given(method("GET"))
            .and(path(format!("/groups/{g}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "id": g, "data": {"id": g, "name": "G", "owner": 99, "members": [7],
                                  "libraryEditing": editing, "fileEditing": files}
            })))
            .mount(&web)
            .await;
    }
    let c = ZoteroClient::new(&config(Some(&web), None)).unwrap();
    let cancel = CancellationToken::new();
    let g11 = c.library(LibraryRef::Group(11)).unwrap();
    let err = g11.require_write(false, &cancel).await.unwrap_err();
    assert!(
        matches!(
            err,
            ZoteroError::LibraryAccess {
                need: "write to",
                ..
            }
        ),
        "{err:?}"
    );
    let g12 = c.library(LibraryRef::Group(12)).unwrap();
    g12.require_write(false, &cancel).await.unwrap();
    let err = g12.require_write(true, &cancel).await.unwrap_err();
    assert!(
        matches!(
            err,
            ZoteroError::LibraryAccess {
                need: "upload files to",
                ..
            }
        ),
        "{err:?}"
    );
    // The settings were read once per group, not once per check.
    let reads = |g: u64| {
        let p = format!("/groups/{g}");
        move |r: &wiremock::Request| r.url.path() == p
    };
    let got = web.received_requests().await.unwrap();
    assert_eq!(
        got.iter().filter(|r| reads(11)(r)).count(),
        2,
        "read, then again before refusing"
    );
    assert_eq!(
        got.iter().filter(|r| reads(12)(r)).count(),
        2,
        "once for the write, again before refusing files"
    );
    let writes = web
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .count();
    assert_eq!(writes, 0);
}
