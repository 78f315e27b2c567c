//! An attachment's file through the Web API: the redirect is followed without the key, the
//! bytes are bounded and checked against the item's MD5, and a file zotero.org's storage
//! does not hold (404, a WebDAV user's) is named as such.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zotero_net::RetryPolicy;

use crate::config::{ApiKey, ClientConfig};
use crate::error::FileUnavailable;
use crate::file::{FileLimits, FileSource};
use crate::model::WireObject;
use crate::{LibraryRef, ZoteroClient, ZoteroError};

const KEY: &str = "ABCD2345";
const BYTES: &[u8] = b"%PDF-1.7 the file's bytes";
// md5 of BYTES.
const MD5: &str = "5c3c8b1a1a2f4f0e2a8d6c7b0f9e1d2c";

fn config(web: &MockServer) -> ClientConfig {
    ClientConfig {
        api_base: web.uri(),
        api_key: Some(ApiKey::new("secret-key")),
        user_id: Some(7),
        missing_credentials: vec![],
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            max_wait: Duration::from_secs(1),
        },
        timeout: Duration::from_secs(5),
        read_cache: None,
        local_api_base: None,
        local_writes: Default::default(),
        storage_policy: zotero_net::AddressPolicy::Any,
    }
}

fn attachment(md5: Option<&str>) -> WireObject {
    serde_json::from_value(json!({"key": KEY, "data": {
        "key": KEY, "itemType": "attachment", "linkMode": "imported_file",
        "filename": "a.pdf", "contentType": "application/pdf", "md5": md5}}))
    .unwrap()
}

fn md5_of(bytes: &[u8]) -> String {
    crate::file::md5_hex(bytes)
}

async fn servers(body: &[u8]) -> (MockServer, MockServer) {
    let (web, storage) = (MockServer::start().await, MockServer::start().await);
    Mock::given(method("GET"))
        .and(path(format!("/users/7/items/{KEY}/file")))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("location", format!("{}/bucket/obj?sig=x", storage.uri())),
        )
        .mount(&web)
        .await;
    Mock::given(method("GET"))
        .and(path("/bucket/obj"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(body.to_vec()))
        .mount(&storage)
        .await;
    (web, storage)
}

async fn read(web: &MockServer, item: &WireObject, max: u64) -> Result<Vec<u8>, ZoteroError> {
    let c = ZoteroClient::new(&config(web)).unwrap();
    let limits = FileLimits {
        max_bytes: max,
        linked_roots: vec![],
        web: true,
    };
    let f = c
        .library(LibraryRef::User)
        .unwrap()
        .attachment_file(item, &limits, &CancellationToken::new())
        .await?;
    assert_eq!(f.from, FileSource::Web);
    assert_eq!(f.md5, md5_of(&f.bytes));
    Ok(f.bytes)
}

#[tokio::test]
async fn the_key_goes_to_the_api_never_to_the_storage_host() {
    let (web, storage) = servers(BYTES).await;
    let bytes = read(&web, &attachment(Some(&md5_of(BYTES))), 1000)
        .await
        .unwrap();
    assert_eq!(bytes, BYTES);
    let to_web = web.received_requests().await.unwrap();
    assert!(to_web
        .iter()
        .all(|r| r.headers.get("zotero-api-key").map(|v| v.as_bytes()) == Some(b"secret-key")));
    let to_storage = storage.received_requests().await.unwrap();
    assert_eq!(to_storage.len(), 1);
    assert!(to_storage[0].headers.get("zotero-api-key").is_none());
    assert!(to_storage[0].headers.get("zotero-api-version").is_none());
    assert!(to_storage[0].headers.get("authorization").is_none());
}

/// A caller that does not allow downloads (the search index, unless the user opts in)
/// gets `NotDownloaded` and Zotero is not asked.
#[tokio::test]
async fn a_file_only_on_zotero_storage_is_not_downloaded_unless_allowed() {
    let (web, storage) = servers(BYTES).await;
    let c = ZoteroClient::new(&config(&web)).unwrap();
    let limits = FileLimits {
        max_bytes: 1000,
        linked_roots: vec![],
        web: false,
    };
    let e = c
        .library(LibraryRef::User)
        .unwrap()
        .attachment_file(&attachment(None), &limits, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            ZoteroError::FileUnavailable {
                why: FileUnavailable::NotDownloaded,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("ZOTERO_INDEX_DOWNLOAD_FILES"), "{e}");
    assert!(web.received_requests().await.unwrap().is_empty());
    assert!(storage.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_file_over_the_bound_is_refused() {
    let (web, _storage) = servers(&[b'x'; 4096]).await;
    let e = read(&web, &attachment(None), 4095).await.unwrap_err();
    assert!(
        matches!(
            &e,
            ZoteroError::FileUnavailable {
                why: FileUnavailable::TooLarge { limit: 4095 },
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        read(&web, &attachment(None), 4096).await.unwrap().len(),
        4096
    );
}

#[tokio::test]
async fn bytes_that_do_not_match_the_md5_are_refused() {
    let (web, _storage) = servers(BYTES).await;
    let e = read(&web, &attachment(Some(MD5)), 1000).await.unwrap_err();
    assert!(
        matches!(
            &e,
            ZoteroError::FileUnavailable {
                why: FileUnavailable::ChecksumMismatch,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("does not match its MD5"), "{e}");
}

#[tokio::test]
async fn a_file_not_on_zotero_storage_says_so() {
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/users/7/items/{KEY}/file")))
        .respond_with(ResponseTemplate::new(404).set_body_string("Not found"))
        .mount(&web)
        .await;
    let e = read(&web, &attachment(Some(MD5)), 1000).await.unwrap_err();
    assert!(
        matches!(
            &e,
            ZoteroError::FileUnavailable {
                why: FileUnavailable::NotOnZoteroStorage,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("WebDAV"), "{e}");
}

#[tokio::test]
async fn a_storage_host_the_address_guard_refuses_is_never_asked() {
    let (web, storage) = (MockServer::start().await, MockServer::start().await);
    // The storage URL on another host than the API's (`localhost`, not `127.0.0.1`), which
    // this policy treats as private.
    let port = storage.address().port();
    Mock::given(method("GET"))
        .and(path(format!("/users/7/items/{KEY}/file")))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("http://localhost:{port}/bucket/obj?sig=x"),
        ))
        .mount(&web)
        .await;
    Mock::given(method("GET"))
        .and(path("/bucket/obj"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(BYTES.to_vec()))
        .mount(&storage)
        .await;
    let mut cfg = config(&web);
    cfg.storage_policy = zotero_net::AddressPolicy::Refuse(|ip| ip.is_loopback());
    let c = ZoteroClient::new(&cfg).unwrap();
    let limits = FileLimits {
        max_bytes: 1000,
        linked_roots: vec![],
        web: true,
    };
    let e = c
        .library(LibraryRef::User)
        .unwrap()
        .attachment_file(&attachment(None), &limits, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ZoteroError::StorageAddressRefused { .. }),
        "{e:?}"
    );
    assert!(!e.to_string().contains("sig=x"), "{e}");
    assert!(storage.received_requests().await.unwrap().is_empty());
}
