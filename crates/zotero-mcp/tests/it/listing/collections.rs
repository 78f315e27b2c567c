//! `zotero_list_collections`' extensions: the top level, one collection's subcollections,
//! and the tree nested in one answer, bounded and saying when it was cut.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, Library, LibraryId, API_KEY, USER_ID};

use super::{keys, sorted, Setup, Where, EVERYWHERE};
use crate::common::{env_for, in_process};
use zotero_emulator::testing::{api, lib};

fn collection_keys(d: &Value) -> Vec<String> {
    d["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["collection_key"].as_str().unwrap().to_string())
        .collect()
}

/// Every node of a tree, depth first.
fn flatten<'a>(nodes: &'a Value, out: &mut Vec<&'a Value>) {
    for n in nodes.as_array().unwrap() {
        out.push(n);
        if let Some(children) = n.get("children") {
            flatten(children, out);
        }
    }
}

/// The tree as `name(child child(grandchild))`, siblings as answered.
fn shape(nodes: &Value) -> String {
    nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| match n.get("children") {
            Some(c) => format!("{}({})", n["name"].as_str().unwrap(), shape(c)),
            None => n["name"].as_str().unwrap().to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn the_top_level_and_the_subcollections_of_one() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let d = s
            .data(
                "zotero_list_collections",
                json!({"top_only": true, "limit": 100}),
            )
            .await;
        let names: Vec<String> = d["collections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert!(c.get("parent_key").is_none(), "{at:?}: {c}");
                c["name"].as_str().unwrap().to_lowercase()
            })
            .collect();
        let mut by_name = names.clone();
        by_name.sort();
        assert_eq!(names, by_name, "{at:?}: by name");
        assert_eq!(names.len(), 15, "{at:?}");
        assert_eq!(d["total"], 15);
        let d = s
            .data("zotero_list_collections", json!({"parent_key": "RDLSTUP3"}))
            .await;
        assert_eq!(collection_keys(&d), ["TRNSFM52"], "{at:?}");
        assert_eq!(d["collections"][0]["parent_key"], "RDLSTUP3");
        let d = s
            .data("zotero_list_collections", json!({"parent_key": "9KH9TNSJ"}))
            .await;
        assert_eq!(d["total"], 0, "{at:?}: no subcollections");
        // Paged like the seed's listing.
        let d = s
            .data(
                "zotero_list_collections",
                json!({"top_only": true, "limit": 10}),
            )
            .await;
        assert_eq!(d["next_start"], 10, "{at:?}");
        let a = s
            .call("zotero_list_collections", json!({"parent_key": "ZZZZ2345"}))
            .await;
        let e = a.expect_err("ZOTERO_NOT_FOUND");
        assert!(e["message"].as_str().unwrap().contains("ZZZZ2345"), "{e}");
        let before = s.requests().len();
        for (args, field) in [
            (
                json!({"top_only": true, "parent_key": "RDLSTUP3"}),
                "top_only",
            ),
            (json!({"tree": true, "top_only": true}), "top_only"),
            (json!({"tree": true, "start": 5}), "start"),
            (json!({"parent_key": "nope"}), "parent_key"),
        ] {
            let a = s.call("zotero_list_collections", args.clone()).await;
            let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
            assert_eq!(e["details"]["field"], field, "{args}");
        }
        assert_eq!(s.requests().len(), before);
    }
}

#[tokio::test]
async fn the_tree_comes_nested_in_one_answer() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let d = s
            .data("zotero_list_collections", json!({"tree": true}))
            .await;
        let mut nodes = Vec::new();
        flatten(&d["collections"], &mut nodes);
        assert_eq!(nodes.len(), 19, "{at:?}: every collection");
        assert_eq!(d["total"], 19);
        assert!(d.get("omitted").is_none() && d.get("next_start").is_none());
        let tree = shape(&d["collections"]);
        assert!(
            tree.contains("Reading List(Transformers(Attention Mechanisms))"),
            "{at:?}: {tree}"
        );
        assert!(tree.contains("Non-English items(sherlock films)"), "{tree}");
        assert!(
            tree.starts_with("Humanities LoC(Digital Newspaper project)"),
            "{tree}"
        );
        // Nested, a collection's parent goes without saying.
        let transformers = nodes.iter().find(|n| n["name"] == "Transformers").unwrap();
        assert!(transformers.get("parent_key").is_none());
        let keys: Vec<String> = nodes
            .iter()
            .map(|n| n["collection_key"].as_str().unwrap().to_string())
            .collect();
        let stored: Vec<String> = sorted(
            Library::from_fixtures()
                .collections
                .iter()
                .map(|c| c["key"].as_str().unwrap()),
        );
        assert_eq!(sorted(&keys), stored, "{at:?}");

        // A branch: what is under one collection.
        let d = s
            .data(
                "zotero_list_collections",
                json!({"tree": true, "parent_key": "RDLSTUP3"}),
            )
            .await;
        assert_eq!(
            shape(&d["collections"]),
            "Transformers(Attention Mechanisms)",
            "{at:?}"
        );
        assert_eq!(d["total"], 2);
        assert_eq!(d["collections"][0]["parent_key"], "RDLSTUP3");
        let a = s
            .call(
                "zotero_list_collections",
                json!({"tree": true, "parent_key": "ZZZZ2345"}),
            )
            .await;
        a.expect_err("ZOTERO_NOT_FOUND");
    }
}

/// A key for collection `i` (8 characters of Zotero's alphabet).
fn key(i: usize) -> String {
    const ALPHABET: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";
    let mut n = i;
    let mut out = Vec::new();
    for _ in 0..8 {
        out.push(ALPHABET[n % ALPHABET.len()]);
        n /= ALPHABET.len();
    }
    String::from_utf8(out).unwrap()
}

fn collection(i: usize, parent: Option<usize>) -> Value {
    let k = key(i);
    let parent = parent.map_or(json!(false), |p| json!(key(p)));
    json!({"key": k, "version": i + 1,
           "data": {"key": k, "version": i + 1, "name": format!("C{i:04}"),
                    "parentCollection": parent, "relations": {}}})
}

#[tokio::test]
async fn a_big_tree_is_cut_at_500_and_says_how_many_were_left_out() {
    // 620 collections, each under the one half its number (older than it).
    let mut lib = Library::empty();
    lib.collections = (0..620)
        .map(|i| collection(i, (i > 0).then(|| (i - 1) / 2)))
        .collect();
    for at in [Where::User, Where::Local] {
        let s = Setup::with_library(at, lib.clone()).await;
        let a = s
            .call("zotero_list_collections", json!({"tree": true}))
            .await;
        let d = a.expect_ok();
        let mut nodes = Vec::new();
        flatten(&d["collections"], &mut nodes);
        assert_eq!(nodes.len(), 500, "{at:?}");
        assert_eq!(d["total"], 500);
        assert_eq!(d["omitted"], 120, "{at:?}");
        assert!(a.text.len() < 100_000, "{at:?}: {} bytes", a.text.len());
        if at == Where::User {
            // Oldest first: every parent was read, so nothing hangs loose.
            assert_eq!(
                shape(&d["collections"]).split(' ').next(),
                Some("C0000(C0001(C0003(C0007(C0015(C0031(C0063(C0127(C0255")
            );
            assert_eq!(d["collections"].as_array().unwrap().len(), 1);
            let pages = s
                .requests()
                .iter()
                .filter(|r| r.path.ends_with("/collections"))
                .count();
            assert_eq!(pages, 5, "{at:?}: five pages of 100");
        }
    }
}

#[tokio::test]
async fn a_deep_branch_is_cut_after_25_requests() {
    // A chain 40 deep under C0000.
    let mut lib = Library::empty();
    lib.collections = (0..41)
        .map(|i| collection(i, (i > 0).then(|| i - 1)))
        .collect();
    for at in EVERYWHERE {
        let s = Setup::with_library(at, lib.clone()).await;
        let before = s.requests().len();
        let d = s
            .data(
                "zotero_list_collections",
                json!({"tree": true, "parent_key": key(0)}),
            )
            .await;
        let mut nodes = Vec::new();
        flatten(&d["collections"], &mut nodes);
        assert_eq!(nodes.len(), 25, "{at:?}: one level per request");
        assert!(d["omitted"].as_u64().unwrap() >= 1, "{at:?}: {d}");
        let sent = s.requests().len() - before;
        assert_eq!(sent, 25, "{at:?}");
    }
}

#[tokio::test]
async fn a_collection_the_lagging_desktop_lacks_is_read_from_the_web() {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_LOCAL".into(), "1".into()));
    env.push(("ZOTERO_LOCAL_API_BASE".into(), emu.local_uri()));
    let server = in_process(&env).await;
    emu.set_local_lag(true);
    // Made on the web, not synced to the desktop yet, with one item in it.
    let user = emu.library(LibraryId::USER);
    user.add_collection("FRESHC23", "Fresh", Some("RDLSTUP3"));
    let version = user.item("VASWANI7").unwrap()["version"].to_string();
    let r = api(
        &emu,
        "PATCH",
        &lib("items/VASWANI7"),
        &[("If-Unmodified-Since-Version", version.as_str())],
        json!({"collections": ["RDLSTUP3", "TRNSFM52", "FRESHC23"]}).to_string(),
    )
    .await;
    assert_eq!(r.status, 204);

    // The desktop would answer its whole library for a collection it does not have.
    let a = server
        .call("zotero_list_items", json!({"collection_key": "FRESHC23"}))
        .await;
    assert_eq!(keys(a.expect_ok()), ["VASWANI7"]);
    let a = server
        .call("zotero_list_tags", json!({"collection_key": "FRESHC23"}))
        .await;
    let tags: Vec<&str> = a.expect_ok()["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["nlp", "transformers"]);
    // The desktop throws on a parent it does not have: the web answers.
    let a = server
        .call("zotero_list_collections", json!({"parent_key": "FRESHC23"}))
        .await;
    assert_eq!(a.expect_ok()["total"], 0);
    // A collection neither has is still unknown.
    let a = server
        .call("zotero_list_items", json!({"collection_key": "ZZZZ2345"}))
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    // What the desktop has, it answers (lagging: without the new subcollection).
    let local_before = emu.local_requests().len();
    let a = server
        .call("zotero_list_collections", json!({"parent_key": "RDLSTUP3"}))
        .await;
    assert_eq!(collection_keys(a.expect_ok()), ["TRNSFM52"]);
    assert!(emu.local_requests().len() > local_before);
}
