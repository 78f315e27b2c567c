//! The desktop's local API (Zotero 7–9): no key, user 0, no default limit, the rules of its
//! HTTP server (Host, browser requests, methods), read-only, and its own request log.

use bytes::Bytes;
use serde_json::json;
use zotero_emulator::{
    DesktopRelease, Emulator, Fault, FaultKind, GroupSpec, Library, LOCAL_DATA_DIR, USER_ID,
};

use super::{get, glib, sb, with_group, GROUP};
use zotero_emulator::testing::{send, Resp};

/// A request to the local API (`path` below `/api`).
async fn local(emu: &Emulator, method: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
    let url = format!("{}{path}", emu.local_uri());
    send(emu, method, &url, headers, Bytes::new())
        .await
        .unwrap()
}

async fn lget(emu: &Emulator, path: &str) -> Resp {
    local(emu, "GET", path, &[]).await
}

#[tokio::test]
async fn local_api_serves_the_user_and_groups_without_a_key() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures()).await;
    assert!(emu.local_uri().ends_with("/api"));
    assert_ne!(emu.local_uri(), format!("{}/api", emu.uri()));

    let r = lget(&emu, "/users/0/items/top").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("zotero-api-version").as_deref(), Some("3"));
    let web = get(&emu, &format!("/users/{USER_ID}/items/top?limit=100")).await;
    let mut a = r.keys();
    let mut b = web.keys();
    a.sort();
    b.sort();
    assert_eq!(a, b, "the same items as the web API");
    assert_eq!(r.lmv(), Some(emu.library_version()));

    // The real user id works too; a key is ignored, even a wrong one.
    let path = format!("/users/{USER_ID}/items/VASWANI7");
    let r = local(&emu, "GET", &path, &[("Zotero-API-Key", "WrongKey")]).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["key"], "VASWANI7");
    assert_eq!(v["library"]["name"], "My Library");
    let port = emu.local_uri();
    let port = port.trim_end_matches("/api").rsplit(':').next().unwrap();
    assert_eq!(
        v["links"]["self"]["href"],
        format!("http://localhost:{port}/api/users/{USER_ID}/items/VASWANI7"),
        "the desktop writes its links on localhost"
    );
    assert_eq!(
        r.lmv(),
        v["version"].as_u64(),
        "a single object's own version"
    );
    let r = lget(&emu, "/users/12345/items").await;
    assert_eq!(
        sb(&r),
        (
            400,
            format!(
                "Only data for the logged-in user is available locally -- use userID 0 or {USER_ID}"
            )
        )
    );

    // Groups: no key access needed on the desktop.
    let r = lget(&emu, &glib("items/top")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()[0]["library"]["id"], GROUP);
    assert_eq!(
        sb(&lget(&emu, "/groups/999/items").await),
        (404, "Not found".into())
    );
    let r = lget(&emu, "/users/0/groups").await;
    let g = &r.json()[0];
    assert_eq!(
        (&g["id"], &g["data"]["name"], &g["meta"]["numItems"]),
        (
            &json!(GROUP),
            &json!("Lab"),
            &json!(Library::from_fixtures().items.len())
        )
    );
    assert!(g["data"]["owner"].is_null(), "the desktop's short form");
    assert_eq!(lget(&emu, &format!("/groups/{GROUP}")).await.status, 200);

    // Files are local paths.
    let r = lget(&emu, "/users/0/items/VASPDF23/file").await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.header("location").unwrap(),
        format!(
            "file://{LOCAL_DATA_DIR}/storage/VASPDF23/Vaswani%20et%20al.%20-%202017%20-%20Attention%20Is%20All%20You%20Need.pdf"
        )
    );
    let r = lget(&emu, "/users/0/items/VASPDF23/file/view/url").await;
    assert!(r.text().starts_with("file:///"), "{}", r.text());
    let r = lget(&emu, "/users/0/items/BERTLN93/file").await;
    assert_eq!(sb(&r), (400, "Not a file attachment: BERTLN93".into()));

    // The web API saw none of this.
    assert!(emu.requests().iter().all(|r| !r.path.starts_with("/api")));
    assert!(emu.local_requests().len() >= 10);
    assert!(emu
        .local_requests()
        .iter()
        .any(|r| r.path == "/api/users/0/items/top"));
}

#[tokio::test]
async fn local_api_has_no_default_limit_and_its_own_links() {
    let emu = Emulator::with_library(Library::synthetic(130, 7)).await;
    let r = lget(&emu, "/users/0/items").await;
    assert_eq!(r.json().as_array().unwrap().len(), 130);
    assert_eq!(r.header("total-results").as_deref(), Some("130"));
    let r = lget(&emu, "/users/0/items?limit=200").await;
    assert_eq!(r.json().as_array().unwrap().len(), 130, "no cap at 100");
    let r = lget(&emu, "/users/0/items?format=keys").await;
    assert_eq!(r.text().lines().count(), 130);
    assert!(!r.text().ends_with('\n'));

    let r = lget(&emu, "/users/0/items?limit=50&start=50&q=").await;
    assert_eq!(r.json().as_array().unwrap().len(), 50);
    let host = emu
        .local_uri()
        .trim_end_matches("/api")
        .replace("http://", "");
    let base = format!("http://{host}/api/users/0/items");
    assert_eq!(r.link("first").unwrap(), format!("{base}?limit=50&q="));
    assert_eq!(r.link("prev").unwrap(), format!("{base}?limit=50&q="));
    assert_eq!(
        r.link("next").unwrap(),
        format!("{base}?limit=50&start=100&q=")
    );
    assert_eq!(
        r.link("last").unwrap(),
        format!("{base}?limit=50&start=100&q=")
    );
    assert_eq!(
        r.link("alternate").unwrap(),
        format!("https://www.zotero.org/users/{USER_ID}/items")
    );

    let r = lget(&emu, "/users/0/items?sort=relevance").await;
    assert_eq!(sb(&r), (400, "Invalid 'sort' value 'relevance'".into()));
    let r = lget(&emu, "/users/0/items?format=atom").await;
    assert_eq!(
        sb(&r),
        (501, "Local API does not support Atom output".into())
    );
    let v = emu.library_version().to_string();
    let r = local(
        &emu,
        "GET",
        "/users/0/items",
        &[("If-Modified-Since-Version", &v)],
    )
    .await;
    assert_eq!(r.status, 304);
}

#[tokio::test]
async fn local_api_server_rules() {
    let emu = Emulator::start().await;
    let n_items = emu.count_items();
    for path in [
        "/keys/current",
        "/items/new?itemType=book",
        "/users/0/deleted?since=0",
    ] {
        let r = lget(&emu, path).await;
        assert_eq!(sb(&r), (404, "No endpoint found\n".into()), "{path}");
        assert!(
            r.header("zotero-api-version").is_none(),
            "the server's own answer"
        );
    }
    assert_eq!(
        sb(&lget(&emu, "/users/0/items/new").await),
        (404, "Not found".into())
    );

    let r = local(
        &emu,
        "GET",
        "/users/0/items",
        &[("Zotero-API-Version", "2")],
    )
    .await;
    assert_eq!(sb(&r), (501, "API version not implemented: 2".into()));
    assert_eq!(lget(&emu, "/users/0/items?v=3").await.status, 200);
    assert_eq!(
        lget(&emu, "/?v=1").await.status,
        200,
        "the root ignores the version"
    );

    for host in ["evil.example", "localhost.evil.example:23119", "127.0.0.2"] {
        let r = local(&emu, "GET", "/users/0/items", &[("Host", host)]).await;
        assert_eq!(sb(&r), (400, "Invalid Host header\n".into()), "{host}");
    }
    let r = local(
        &emu,
        "GET",
        "/users/0/items",
        &[("Host", "LOCALHOST:23119")],
    )
    .await;
    assert_eq!(r.status, 200);

    // Browser requests are dropped: the connection closes without an answer.
    let url = format!("{}/users/0/items", emu.local_uri());
    let ua = [("User-Agent", "Mozilla/5.0 (X11; Linux x86_64)")];
    assert!(send(&emu, "GET", &url, &ua, Bytes::new()).await.is_err());
    let origin = [("Origin", "https://evil.example")];
    assert!(send(&emu, "GET", &url, &origin, Bytes::new())
        .await
        .is_err());
    let allowed = [
        ("Origin", "https://evil.example"),
        ("Zotero-Allowed-Request", "1"),
    ];
    assert_eq!(
        local(&emu, "GET", "/users/0/items", &allowed).await.status,
        200
    );
    assert_eq!(
        emu.local_requests()
            .iter()
            .filter(|r| r.header("origin").is_some() || r.header("user-agent") == Some(ua[0].1))
            .count(),
        3,
        "dropped requests are recorded too"
    );

    // Read-only in Zotero 7-9.
    let url_items = format!("{}/users/0/items", emu.local_uri());
    let h = [("Content-Type", "application/json")];
    let r = send(&emu, "POST", &url_items, &h, "[]").await.unwrap();
    assert_eq!(sb(&r), (400, "Endpoint does not support method\n".into()));
    let r = local(&emu, "POST", "/users/0/items", &h).await;
    assert_eq!(sb(&r), (400, "Content-length not provided\n".into()));
    for m in ["PUT", "PATCH", "DELETE"] {
        let r = local(&emu, m, "/users/0/items/VASWANI7", &[]).await;
        assert_eq!(sb(&r), (501, "Method not implemented\n".into()), "{m}");
    }
    assert_eq!(
        sb(&local(&emu, "POST", "/keys/current", &[]).await),
        (404, "No endpoint found\n".into())
    );
    assert_eq!(emu.count_items(), n_items, "nothing was written");
    assert!(emu.requests().is_empty(), "the web API saw nothing");

    emu.set_local_enabled(false);
    let r = lget(&emu, "/users/0/items").await;
    assert_eq!(sb(&r), (403, "Local API is not enabled".into()));
    emu.set_local_enabled(true);

    // Faults reach the local API only when aimed at it; no latency either.
    emu.inject(Fault::once(FaultKind::ServerError));
    assert_eq!(lget(&emu, "/users/0/items").await.status, 200);
    assert_eq!(emu.faults_pending(), 1);
    emu.inject(
        Fault::once(FaultKind::Status(503))
            .local()
            .on("/api/users/0/items"),
    );
    assert_eq!(
        get(&emu, "/keys/current").await.status,
        500,
        "the web fault"
    );
    assert_eq!(lget(&emu, "/users/0/items").await.status, 503);
    assert_eq!(emu.faults_pending(), 0);

    // Before 9.0.2: no Host check, and browser requests are refused instead of dropped.
    emu.set_desktop_release(DesktopRelease::Zotero7);
    let r = local(&emu, "GET", "/users/0/items", &[("Host", "evil.example")]).await;
    assert_eq!(r.status, 200);
    let r = local(&emu, "GET", "/users/0/items", &origin).await;
    assert_eq!(sb(&r), (403, "Request not allowed\n".into()));
    assert_eq!(
        local(&emu, "GET", "/users/0/items", &allowed).await.status,
        200
    );
    emu.set_desktop_release(DesktopRelease::Zotero9);

    // Quitting the app: connection refused.
    emu.close_local();
    assert!(send(&emu, "GET", &url, &[], Bytes::new()).await.is_err());
}

#[tokio::test]
async fn local_api_collections_tags_groups_and_since() {
    let emu = with_group(GroupSpec::new(GROUP, "Lab"), Library::empty()).await;
    let r = lget(&emu, "/users/0/collections").await;
    let all = r.keys();
    assert_eq!(r.header("total-results").unwrap(), all.len().to_string());
    let top = lget(&emu, "/users/0/collections/top").await.keys();
    assert!(
        top.len() < all.len(),
        "nested collections only in /collections"
    );
    let sub = lget(&emu, "/users/0/collections/RDLSTUP3/collections").await;
    assert_eq!(sub.keys(), vec!["TRNSFM52"]);
    let r = lget(&emu, "/users/0/collections/NOPE2345/collections").await;
    assert_eq!((r.status, r.body.len()), (500, 0), "the desktop throws");
    let r = lget(&emu, "/users/0/collections/TRNSFM52").await;
    assert_eq!(r.json()["data"]["name"], "Transformers");

    // Tags: of the library, of some items, one tag.
    let r = lget(&emu, "/users/0/tags").await;
    let names: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"transformers".to_string()));
    let r = lget(
        &emu,
        "/users/0/items/top/tags?itemQ=Deep&q=m&qmode=startsWith",
    )
    .await;
    let v = r.json();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["tag"], "ml");
    assert_eq!(v[0]["meta"]["numItems"], 2, "counted in the whole library");
    let r = lget(&emu, "/users/0/tags/no%20such+tag").await;
    assert_eq!(r.json()[0]["tag"], "no such tag");
    assert_eq!(r.json()[0]["meta"]["numItems"], 0);

    // Groups have no key: the desktop calls every one "undefined".
    let r = lget(&emu, "/users/0/groups?format=versions").await;
    assert_eq!(r.json(), json!({"undefined": 1}));
    assert_eq!(
        r.lmv(),
        Some(emu.library_version()),
        "the user library's version"
    );

    // since: newer objects only; tags have no version.
    let v = emu.library_version();
    let r = lget(&emu, &format!("/users/0/items?since={}", v - 1)).await;
    assert!(r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["version"] == v));
    assert_eq!(lget(&emu, "/users/0/tags?since=1").await.json(), json!([]));
    let r = lget(&emu, "/users/0/items?since=x").await;
    assert_eq!(sb(&r), (400, "Invalid 'since' value 'x'".into()));

    // HEAD is answered by the server itself.
    let r = local(&emu, "HEAD", "/users/0/items", &[]).await;
    assert_eq!(r.status, 200);
    assert!(r.header("zotero-api-version").is_none());
}
