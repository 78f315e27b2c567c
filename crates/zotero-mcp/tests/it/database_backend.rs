//! The read tools against Zotero's own database (`ZOTERO_DATA_DIR`) and against the web API,
//! over the same library: the emulator's library is written into a `zotero.sqlite` built
//! from Zotero's schema, and every answer of one server must equal the other's. Also: with
//! the database alone the server is read-only and says so, and reads reach no API.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

pub(crate) struct Pair {
    pub(crate) emu: Emulator,
    pub(crate) web: Server,
    pub(crate) db: Server,
    _dir: tempfile::TempDir,
}

impl Pair {
    /// The data directory the database server reads.
    pub(crate) fn data_dir(&self) -> &std::path::Path {
        self._dir.path()
    }
}

/// The emulator's user library written into a fixture database, with its full texts.
pub(crate) fn mirror(emu: &Emulator) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let b = zotero_db::fixture::Builder::create(dir.path()).unwrap();
    let items = emu.items();
    b.mirror(1, &items, &emu.collections()).unwrap();
    b.set_library_version(1, emu.library_version()).unwrap();
    // The account Zotero synced with: the web's item links name it.
    let www = items
        .iter()
        .find_map(|i| i["links"]["alternate"]["href"].as_str())
        .unwrap();
    let username = www
        .trim_start_matches("https://www.zotero.org/")
        .split('/')
        .next()
        .unwrap();
    b.set_account(USER_ID, username).unwrap();
    let user = emu.library(zotero_emulator::LibraryId::USER);
    for item in &items {
        let key = item["key"].as_str().unwrap_or_default();
        if let Some(ft) = user.fulltext(key) {
            let pages = ft.indexed_pages.zip(ft.total_pages);
            b.set_fulltext(1, key, &ft.content, pages).unwrap();
        }
        // The stored file, its size as the emulator keeps it (the bytes do not matter).
        if let Some(file) = user.file(key) {
            let folder = dir.path().join("storage").join(key);
            std::fs::create_dir_all(&folder).unwrap();
            let f = std::fs::File::create(folder.join(&file.filename)).unwrap();
            f.set_len(file.size).unwrap();
        }
    }
    dir
}

pub(crate) async fn pair() -> Pair {
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let web = in_process(&env).await;
    let dir = mirror(&emu);
    let mut db_env = env.clone();
    db_env.push((
        "ZOTERO_DATA_DIR".into(),
        dir.path().to_string_lossy().into_owned(),
    ));
    let db = in_process(&db_env).await;
    Pair {
        emu,
        web,
        db,
        _dir: dir,
    }
}

/// The same call on both servers answers the same (the envelope's data, or its error code).
pub(crate) async fn same(p: &Pair, tool: &str, args: Value) -> Value {
    let w = p.web.call(tool, args.clone()).await;
    let d = p.db.call(tool, args.clone()).await;
    assert_eq!(
        w.ok(),
        d.ok(),
        "{tool} {args}: web {} / db {}",
        w.envelope,
        d.envelope
    );
    if w.ok() {
        p.db.check_output(tool, &d).await;
        if let (Some(wi), Some(di)) = (w.data()["items"].as_array(), d.data()["items"].as_array()) {
            let keys = |v: &Vec<Value>| -> Vec<String> {
                v.iter().map(|i| i["item_key"].to_string()).collect()
            };
            assert_eq!(keys(wi), keys(di), "{tool} {args}: the items, in order");
            for (a, b) in wi.iter().zip(di) {
                assert_eq!(a, b, "{tool} {args}");
            }
        }
        let rest = |v: &Value| {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("items");
            }
            v
        };
        assert_eq!(rest(w.data()), rest(d.data()), "{tool} {args}");
        assert_eq!(w.data(), d.data(), "{tool} {args}");
        w.data().clone()
    } else {
        assert_eq!(w.code(), d.code(), "{tool} {args}");
        Value::Null
    }
}

#[tokio::test]
async fn read_tools_answer_the_same_from_the_database_as_from_the_web_api() {
    let p = pair().await;
    let items = p.emu.items();
    let mut parents = Vec::new();
    for item in &items {
        let key = item["key"].as_str().unwrap();
        same(&p, "zotero_get_item", json!({"item_key": key})).await;
        if let Some(parent) = item["data"]["parentItem"].as_str() {
            parents.push(parent.to_string());
        }
    }
    parents.sort();
    parents.dedup();
    for parent in &parents {
        same(
            &p,
            "zotero_get_item_children",
            json!({"item_key": parent, "limit": 100}),
        )
        .await;
        same(
            &p,
            "zotero_get_notes",
            json!({"item_key": parent, "limit": 25}),
        )
        .await;
        same(
            &p,
            "zotero_get_annotations",
            json!({"item_key": parent, "limit": 100}),
        )
        .await;
        same(&p, "zotero_get_item_fulltext", json!({"item_key": parent})).await;
    }
    for args in [
        json!({"limit": 100, "top_only": true}),
        json!({"limit": 100, "top_only": false}),
        json!({"limit": 100, "trashed": true}),
        json!({"limit": 5, "start": 5, "sort": "title", "direction": "asc"}),
        json!({"limit": 100, "item_type": "book || thesis"}),
    ] {
        same(&p, "zotero_list_items", args).await;
    }
    for args in [
        json!({"limit": 100}),
        json!({"top_only": true}),
        json!({"tree": true}),
    ] {
        same(&p, "zotero_list_collections", args).await;
    }
    same(&p, "zotero_list_tags", json!({"limit": 100})).await;
    // Citations and exports the database cannot make are asked of the API.
    for format in ["bibtex"] {
        same(
            &p,
            "zotero_get_item_metadata",
            json!({"item_key": "VASWANI7", "format": format}),
        )
        .await;
    }
    same(&p, "zotero_cite", json!({"item_keys": ["VASWANI7"]})).await;
    p.web.stop().await;
    p.db.stop().await;
}

#[tokio::test]
async fn searches_answer_the_same_from_the_database_as_from_the_web_api() {
    let p = pair().await;
    for query in [
        "attention",
        "vaswani",
        "2017",
        "learning deep",
        "zzzz-nothing",
    ] {
        same(
            &p,
            "zotero_search_items",
            json!({"query": query, "sort": "title", "limit": 100}),
        )
        .await;
    }
    // The default sort ('relevance', which Zotero refuses): both fall back alike.
    let data = same(&p, "zotero_search_items", json!({"query": "attention"})).await;
    assert_eq!(data["sort_used"], "dateModified");
    p.web.stop().await;
    p.db.stop().await;
}

#[tokio::test]
async fn reads_that_may_lag_reach_no_api_and_the_database_alone_is_read_only() {
    let emu = Emulator::start().await;
    let dir = mirror(&emu);
    let server = in_process(&[
        (
            "ZOTERO_DATA_DIR".to_string(),
            dir.path().to_string_lossy().into_owned(),
        ),
        ("ZOTERO_API_BASE".to_string(), emu.uri()),
    ])
    .await;
    let found = server
        .call(
            "zotero_search_items",
            json!({"query": "attention", "sort": "title"}),
        )
        .await;
    let data = found.expect_ok();
    assert!(!data["items"].as_array().unwrap().is_empty(), "{data}");
    assert!(emu.requests().is_empty(), "{:?}", emu.requests().len());
    let refused = server
        .call(
            "zotero_create_note",
            json!({"note": "hello", "parent_key": "VASWANI7"}),
        )
        .await;
    let e = refused.expect_err("ZOTERO_AUTH_ERROR");
    assert!(
        e["message"].as_str().unwrap().contains("ZOTERO_DATA_DIR"),
        "{e}"
    );
    server.stop().await;
}

#[test]
fn check_reports_the_database_its_schema_its_items_and_whether_zotero_has_it_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(zotero_db::fixture::standard(dir.path()).unwrap());
    let out = std::process::Command::new(crate::common::BIN)
        .arg("check")
        .env_clear()
        .env("ZOTERO_DATA_DIR", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{text}{err}");
    assert!(text.contains("schema 129 (Zotero 10)"), "{text}");
    assert!(text.contains("8 items outside the trash"), "{text}");
    assert!(text.contains("2 group libraries"), "{text}");
    assert!(text.contains("Zotero does not have it open"), "{text}");
    // A file that is not Zotero's: check fails and says what to set.
    let foreign = tempfile::tempdir().unwrap();
    std::fs::write(
        foreign.path().join("zotero.sqlite"),
        b"not a database, not at all",
    )
    .unwrap();
    let out = std::process::Command::new(crate::common::BIN)
        .arg("check")
        .env_clear()
        .env("ZOTERO_DATA_DIR", foreign.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ZOTERO_DATA_DIR"), "{err}");
}

#[tokio::test]
async fn a_write_reads_what_it_depends_on_from_the_web_api_not_the_database() {
    let p = pair().await;
    let item_path = format!("/users/{USER_ID}/items/BERTDV82");
    // A read that may lag: answered by the database, nothing reaches the web.
    same(&p, "zotero_get_item", json!({"item_key": "BERTDV82"})).await;
    let reads_before = p.emu.count("GET", &item_path);
    let a =
        p.db.call(
            "zotero_add_item_to_collection",
            json!({"item_key": "BERTDV82", "collection_key": "ATTNDP62"}),
        )
        .await;
    a.expect_ok();
    // The version-checked write read the item from the web API (the database copy lags).
    assert!(p.emu.count("GET", &item_path) > reads_before);
    assert!(p.emu.item("BERTDV82").unwrap()["data"]["collections"]
        .as_array()
        .unwrap()
        .contains(&json!("ATTNDP62")));
    p.web.stop().await;
    p.db.stop().await;
}
