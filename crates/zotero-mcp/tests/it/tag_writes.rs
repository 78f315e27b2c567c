//! Conformance of `zotero_manage_tags` (rename or delete a tag across the library) and
//! `zotero_remove_item_from_collection`, in process against the emulator: batches of 50 with
//! each item's version, edits made in Zotero meanwhile kept, exact names only, trashed and
//! child items included, the tag delete checked against the library version, confirmation,
//! dry runs, cancellation between batches, refusals with nothing written.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_emulator::{
    Emulator, Fault, FaultKind, GroupSpec, KeyAccess, Library, Recorded, ZoteroEdit, API_KEY,
    USER_ID,
};

use crate::common::{env_for, in_process, in_process_as, Backend, Server, TestClient};
use zotero_emulator::testing::{get, lib, post_items};

const ITEMS: &str = "/users/475425/items";

async fn setup(backend: Backend) -> (Emulator, Server) {
    backend.setup().await
}

/// Queues a fault for the backend under test.
fn inject(emu: &Emulator, backend: Backend, fault: zotero_emulator::Fault) {
    emu.inject(backend.fault(fault));
}

/// How many requests with this method had a path starting with `prefix` (web names).
fn count(emu: &Emulator, backend: Backend, method: &str, prefix: &str) -> usize {
    backend
        .requests(emu)
        .iter()
        .filter(|r| r.method.eq_ignore_ascii_case(method) && r.path.starts_with(prefix))
        .count()
}

/// Every request that could change something.
fn writes(emu: &Emulator, backend: Backend) -> Vec<Recorded> {
    backend
        .requests(emu)
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect()
}

fn tags_of(emu: &Emulator, key: &str) -> Value {
    emu.item(key).unwrap()["data"]["tags"].clone()
}

fn version_of(emu: &Emulator, key: &str) -> u64 {
    emu.item(key).unwrap()["version"].as_u64().unwrap()
}

fn collections_of(emu: &Emulator, key: &str) -> Value {
    emu.item(key).unwrap()["data"]["collections"].clone()
}

/// Creates `n` books with these tags, 50 a request; their keys in order.
async fn books(emu: &Emulator, n: usize, tags: Value) -> Vec<String> {
    let mut keys = Vec::new();
    let all: Vec<Value> = (0..n)
        .map(|i| json!({"itemType": "book", "title": format!("Book {i}"), "tags": tags}))
        .collect();
    for chunk in all.chunks(50) {
        let r = post_items(emu, &Value::Array(chunk.to_vec()), &[]).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        for i in 0..chunk.len() {
            keys.push(v["success"][i.to_string()].as_str().unwrap().to_string());
        }
    }
    keys
}

/// The objects of each `POST` to the items: (key, version, fields sent).
fn posted(emu: &Emulator, backend: Backend) -> Vec<Vec<(String, u64, Vec<String>)>> {
    writes(emu, backend)
        .iter()
        .filter(|r| r.method == "POST" && r.path == ITEMS)
        .map(|r| {
            let body: Vec<Value> = serde_json::from_slice(&r.body).unwrap();
            body.iter()
                .map(|o| {
                    let fields = o.as_object().unwrap().keys().cloned().collect();
                    (
                        o["key"].as_str().unwrap().to_string(),
                        o["version"].as_u64().unwrap(),
                        fields,
                    )
                })
                .collect()
        })
        .collect()
}

fn sorted(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

// --- zotero_manage_tags: rename -------------------------------------------------------

async fn rename_over_120_items_writes_50_a_request_with_each_items_version(backend: Backend) {
    let (emu, server) = setup(backend).await;
    let keys = books(
        &emu,
        120,
        json!([{"tag": "queue", "type": 1}, {"tag": "other"}]),
    )
    .await;
    let before: BTreeMap<String, u64> = keys
        .iter()
        .map(|k| (k.clone(), version_of(&emu, k)))
        .collect();
    emu.reset_counts();
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "queue", "action": "rename", "new_name": "to-read"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["dry_run"], false);
    assert_eq!(data["items_carrying"], 120);
    assert_eq!(data["counts"]["changed"], 120);
    assert_eq!(data["counts"]["not_written"], 0);
    assert_eq!(data["item_keys"].as_array().unwrap().len(), 100);
    assert_eq!(data["item_keys_omitted"], 20);
    assert_eq!(data["tag_remains"], false);
    assert!(data.get("not_written").is_none(), "{data}");

    // Three POSTs of at most 50, each object with the version it was read at, only its tags.
    let batches = posted(&emu, backend);
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(sizes, [50, 50, 20]);
    let mut seen = Vec::new();
    for (key, version, fields) in batches.into_iter().flatten() {
        assert_eq!(Some(&version), before.get(&key), "{key}");
        assert_eq!(fields, ["key", "tags", "version"]);
        seen.push(key);
    }
    seen.sort();
    assert_eq!(seen, before.keys().cloned().collect::<Vec<_>>());
    // Every item renamed, as a manual tag (what Zotero's rename does); the other tag kept.
    for k in &keys {
        assert_eq!(
            tags_of(&emu, k),
            json!([{"tag": "other"}, {"tag": "to-read"}]),
            "{k}"
        );
    }
    // The old tag is gone from the library by itself: no item carries it.
    let listed = get(&emu, &lib("tags?tag=queue")).await.json();
    assert_eq!(listed, json!([]));
    let a = server
        .call("zotero_list_tags", json!({"query": "queue"}))
        .await;
    assert_eq!(a.expect_ok()["tags"], json!([]));

    // Again: nothing carries it any more, nothing is written.
    emu.reset_counts();
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "queue", "action": "rename", "new_name": "to-read"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["items_carrying"], 0);
    assert_eq!(data["item_keys"], json!([]));
    assert!(
        writes(&emu, backend).is_empty(),
        "{:?}",
        writes(&emu, backend)
    );
    server.stop().await;
}

async fn a_tag_added_in_zotero_meanwhile_is_kept_by_a_rename(backend: Backend) {
    let (emu, server) = setup(backend).await;
    let keys = books(&emu, 3, json!([{"tag": "queue"}])).await;
    let edited = keys[1].clone();
    // Between the server's read and its write, Zotero adds a tag to one of the items.
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item(&edited).set("tags", json!([{"tag": "queue"}, {"tag": "urgent"}])),
        ))
        .method("POST")
        .on(ITEMS),
    );
    emu.reset_counts();
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "queue", "action": "rename", "new_name": "to-read"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["counts"]["changed"], 3);
    assert_eq!(data["tag_remains"], false);
    assert_eq!(
        tags_of(&emu, &edited),
        json!([{"tag": "urgent"}, {"tag": "to-read"}])
    );
    for k in [&keys[0], &keys[2]] {
        assert_eq!(tags_of(&emu, k), json!([{"tag": "to-read"}]));
    }
    // The first POST was refused for that item (412); it was read again and written with
    // the version Zotero gave it.
    let batches = posted(&emu, backend);
    assert_eq!(batches.len(), 2, "{batches:?}");
    assert_eq!(batches[1].len(), 1);
    assert_eq!(batches[1][0].0, edited);
    let first = batches[0].iter().find(|o| o.0 == edited).unwrap().1;
    let second = batches[1][0].1;
    assert!(
        first < second && second < version_of(&emu, &edited),
        "read at {first}, edited in Zotero to {second}, written after"
    );
    server.stop().await;
}

async fn a_rename_touches_the_exact_name_only_and_never_duplicates_the_new_one(backend: Backend) {
    let (emu, server) = setup(backend).await;
    let plain = books(&emu, 1, json!([{"tag": "queue"}])).await.remove(0);
    let has_new = books(&emu, 1, json!([{"tag": "to-read"}, {"tag": "queue"}]))
        .await
        .remove(0);
    let has_new_auto = books(
        &emu,
        1,
        json!([{"tag": "queue"}, {"tag": "to-read", "type": 1}]),
    )
    .await
    .remove(0);
    // Zotero's tag filter matches any case: "Queue" is found, but it is another tag.
    let other_case = books(&emu, 1, json!([{"tag": "Queue"}])).await.remove(0);
    let v_other = version_of(&emu, &other_case);
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "queue", "action": "rename", "new_name": "to-read"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["items_carrying"], 3);
    assert_eq!(data["counts"]["changed"], 3);
    assert_eq!(sorted(&data["item_keys"]), {
        let mut k = vec![plain.clone(), has_new.clone(), has_new_auto.clone()];
        k.sort();
        k
    });
    assert_eq!(tags_of(&emu, &plain), json!([{"tag": "to-read"}]));
    assert_eq!(tags_of(&emu, &has_new), json!([{"tag": "to-read"}]));
    assert_eq!(tags_of(&emu, &has_new_auto), json!([{"tag": "to-read"}]));
    assert_eq!(tags_of(&emu, &other_case), json!([{"tag": "Queue"}]));
    assert_eq!(version_of(&emu, &other_case), v_other);
    server.stop().await;
}

async fn trashed_items_and_child_items_are_renamed_too(backend: Backend) {
    let (emu, server) = setup(backend).await;
    // TRASHD33 is in the trash; PQN9TE22 is a child note; two annotations carry key-claim.
    for (tag, new, keys) in [
        ("draft", "wip", vec!["TRASHD33"]),
        ("math", "maths", vec!["PQN9TE22"]),
        ("key-claim", "claim", vec!["RESAN2HL", "RESAN8HL"]),
    ] {
        let a = server
            .call(
                "zotero_manage_tags",
                json!({"tag": tag, "action": "rename", "new_name": new}),
            )
            .await;
        let data = a.expect_ok();
        assert_eq!(data["items_carrying"], keys.len(), "{tag}");
        assert_eq!(sorted(&data["item_keys"]), keys, "{tag}");
        for k in keys {
            let names: Vec<String> = tags_of(&emu, k)
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["tag"].as_str().unwrap().to_string())
                .collect();
            assert!(
                names.iter().any(|n| n == new) && !names.iter().any(|n| n == tag),
                "{k}: {names:?}"
            );
        }
    }
    // Still in the trash.
    let deleted = &emu.item("TRASHD33").unwrap()["data"]["deleted"];
    assert!(*deleted == json!(1) || *deleted == json!(true), "{deleted}");
    server.stop().await;
}

// --- zotero_manage_tags: delete -------------------------------------------------------

async fn delete_is_one_request_checked_against_the_library_version(backend: Backend) {
    let (emu, server) = setup(backend).await;
    let v = emu.library_version();
    emu.reset_counts();
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "delete"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["items_carrying"], 3);
    assert_eq!(data["counts"]["changed"], 3);
    assert_eq!(data["tag_remains"], false);
    assert_eq!(
        sorted(&data["item_keys"]),
        ["BERTDV82", "NLPML6K7", "VASWANI7"]
    );
    let w = writes(&emu, backend);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        (w[0].method.as_str(), w[0].path.as_str()),
        ("DELETE", "/users/475425/tags")
    );
    assert_eq!(w[0].query, [("tag".to_string(), "nlp".to_string())]);
    assert_eq!(
        w[0].header("if-unmodified-since-version"),
        Some(v.to_string().as_str())
    );
    // Gone from every item, which each got the library's new version.
    assert_eq!(tags_of(&emu, "VASWANI7"), json!([{"tag": "transformers"}]));
    assert_eq!(tags_of(&emu, "NLPML6K7"), json!([{"tag": "ml"}]));
    assert_eq!(
        tags_of(&emu, "BERTDV82"),
        json!([{"tag": "transformers"}, {"tag": "ml"}])
    );
    for k in ["VASWANI7", "NLPML6K7", "BERTDV82"] {
        assert_eq!(version_of(&emu, k), v + 1);
    }
    assert_eq!(
        emu.deleted_since(zotero_emulator::LibraryId::USER, v),
        [("tags".to_string(), "nlp".to_string())]
    );

    // Again, and a tag that never existed: nothing to do, nothing sent.
    emu.reset_counts();
    for tag in ["nlp", "no-such-tag"] {
        let a = server
            .call(
                "zotero_manage_tags",
                json!({"tag": tag, "action": "delete"}),
            )
            .await;
        let data = a.expect_ok();
        assert_eq!(data["items_carrying"], 0);
        assert_eq!(data["counts"]["changed"], 0);
    }
    assert!(
        writes(&emu, backend).is_empty(),
        "{:?}",
        writes(&emu, backend)
    );
    server.stop().await;
}

async fn a_library_changed_before_the_delete_is_read_again(backend: Backend) {
    let (emu, server) = setup(backend).await;
    // Between the count and the delete, Zotero tags another item with it.
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item("RESNET52").set("tags", json!([{"tag": "resnet"}, {"tag": "nlp"}])),
        ))
        .method("DELETE"),
    );
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "delete"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["items_carrying"], 4);
    assert_eq!(data["counts"]["changed"], 4);
    let deletes: Vec<Recorded> = writes(&emu, backend)
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .collect();
    assert_eq!(deletes.len(), 2);
    let sent: Vec<u64> = deletes
        .iter()
        .map(|r| {
            r.header("if-unmodified-since-version")
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(
        sent[1],
        sent[0] + 1,
        "the second names the version after Zotero's edit"
    );
    assert_eq!(tags_of(&emu, "RESNET52"), json!([{"tag": "resnet"}]));
    server.stop().await;
}

async fn a_delete_whose_answer_was_lost_is_settled_by_reading_again(backend: Backend) {
    let (emu, server) = setup(backend).await;
    // The delete is done, then the connection is cut before the answer arrives.
    inject(&emu, backend, Fault::once(FaultKind::Drop).method("DELETE"));
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "delete"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["items_carrying"], 3);
    assert_eq!(data["counts"]["changed"], 3);
    assert_eq!(data["tag_remains"], false);
    for k in ["VASWANI7", "NLPML6K7", "BERTDV82"] {
        let tags = tags_of(&emu, k);
        assert!(
            !tags.as_array().unwrap().contains(&json!({"tag": "nlp"})),
            "{k}"
        );
    }
    // Web: the repeat met the newer library version (412); reading again showed the tag
    // gone. Local: never sent again; reading again showed it gone.
    let sent = if backend == Backend::Web { 2 } else { 1 };
    assert_eq!(count(&emu, backend, "DELETE", "/users/475425/tags"), sent);
    server.stop().await;
}

// --- confirmation, dry run, cancellation, refusals ------------------------------------

#[tokio::test]
async fn the_user_is_asked_first_and_a_refusal_writes_nothing() {
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let declining = TestClient::confirming(false);
    let server = in_process_as(&env, declining.clone()).await;
    for args in [
        json!({"tag": "nlp", "action": "rename", "new_name": "NLP"}),
        json!({"tag": "nlp", "action": "delete"}),
    ] {
        let a = server.call("zotero_manage_tags", args).await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["reason"], "not_confirmed");
        assert_eq!(err["details"]["written"], false);
    }
    assert!(
        writes(&emu, Backend::Web).is_empty(),
        "{:?}",
        writes(&emu, Backend::Web)
    );
    let q = declining.questions();
    assert_eq!(q.len(), 2);
    assert!(
        q[0].contains("'nlp' to 'NLP'") && q[0].contains("3 items"),
        "{q:?}"
    );
    assert!(
        q[1].contains("Delete the tag 'nlp'") && q[1].contains("3 items"),
        "{q:?}"
    );
    // A dry run or a tag no item carries asks nothing.
    for args in [
        json!({"tag": "nlp", "action": "delete", "dry_run": true}),
        json!({"tag": "no-such-tag", "action": "delete"}),
    ] {
        server.call("zotero_manage_tags", args).await.expect_ok();
    }
    assert_eq!(declining.questions().len(), 2);
    server.stop().await;

    let confirming = TestClient::confirming(true);
    let server = in_process_as(&env, confirming.clone()).await;
    let a = server
        .call(
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "rename", "new_name": "NLP"}),
        )
        .await;
    assert_eq!(a.expect_ok()["counts"]["changed"], 3);
    assert_eq!(confirming.questions().len(), 1);
    assert_eq!(
        tags_of(&emu, "NLPML6K7"),
        json!([{"tag": "ml"}, {"tag": "NLP"}])
    );
    server.stop().await;
}

async fn a_dry_run_answers_what_would_change_and_writes_nothing(backend: Backend) {
    let (emu, server) = setup(backend).await;
    let before: Vec<Value> = ["VASWANI7", "NLPML6K7", "BERTDV82"]
        .iter()
        .map(|k| emu.item(k).unwrap())
        .collect();
    for args in [
        json!({"tag": "nlp", "action": "rename", "new_name": "NLP", "dry_run": true}),
        json!({"tag": "nlp", "action": "delete", "dry_run": true}),
    ] {
        let a = server.call("zotero_manage_tags", args).await;
        let data = a.expect_ok();
        assert_eq!(data["dry_run"], true);
        assert_eq!(data["items_carrying"], 3);
        assert_eq!(data["counts"]["would_change"], 3);
        assert_eq!(data["counts"]["changed"], 0);
        assert!(data.get("tag_remains").is_none());
        assert_eq!(
            sorted(&data["item_keys"]),
            ["BERTDV82", "NLPML6K7", "VASWANI7"]
        );
    }
    assert!(
        writes(&emu, backend).is_empty(),
        "{:?}",
        writes(&emu, backend)
    );
    for b in before {
        assert_eq!(emu.item(b["key"].as_str().unwrap()).unwrap(), b);
    }
    server.stop().await;
}

#[tokio::test]
async fn cancelled_between_batches_the_answer_says_what_was_done() {
    use zotero_mcp::tools::{ToolContext, ToolName};
    let emu = Emulator::start().await;
    let keys = books(&emu, 120, json!([{"tag": "queue"}])).await;
    emu.reset_counts();
    let env: std::collections::HashMap<String, String> =
        env_for(&emu.uri(), USER_ID, API_KEY).into_iter().collect();
    let config = zotero_mcp::config::Config::from_map(&env).unwrap();
    let svc = zotero_mcp::service::ZoteroService::new(&config).unwrap();
    let cancel = CancellationToken::new();
    // The client cancels once the first 50 are reported done.
    let stop = cancel.clone();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let ctx = ToolContext {
        svc: Arc::new(svc),
        cancel,
        progress: Some(Arc::new(move |done, total| {
            log.lock().unwrap().push((done, total));
            if done >= 50 {
                stop.cancel();
            }
        })),
        confirm: None,
    };
    let tool = ToolName::from_name("zotero_manage_tags").unwrap();
    let args = json!({"tag": "queue", "action": "rename", "new_name": "to-read"});
    let data = tool
        .call(&ctx, args.as_object().cloned())
        .await
        .expect("an answer");
    assert_eq!(data["items_carrying"], 120);
    assert_eq!(data["counts"]["changed"], 50);
    assert_eq!(data["counts"]["not_written"], 70);
    assert_eq!(data["tag_remains"], true);
    assert_eq!(data["not_written"].as_array().unwrap().len(), 50);
    assert_eq!(data["not_written_omitted"], 20);
    assert!(data["not_written"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "not_attempted"));
    // No false success: exactly the items answered as changed were renamed.
    let changed: Vec<String> = sorted(&data["item_keys"]);
    assert_eq!(changed.len(), 50);
    let renamed: Vec<String> = {
        let mut r: Vec<String> = keys
            .iter()
            .filter(|k| tags_of(&emu, k) == json!([{"tag": "to-read"}]))
            .cloned()
            .collect();
        r.sort();
        r
    };
    assert_eq!(renamed, changed);
    for r in data["not_written"].as_array().unwrap() {
        assert_eq!(
            tags_of(&emu, r["key"].as_str().unwrap()),
            json!([{"tag": "queue"}])
        );
    }
    assert_eq!(
        count(&emu, Backend::Web, "POST", ITEMS),
        1,
        "one batch was sent"
    );
    let seen = seen.lock().unwrap().clone();
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert!(seen.iter().all(|p| p.1 == 120));
}

#[tokio::test]
async fn a_library_the_key_may_only_read_is_refused_with_nothing_written() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(4002, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(4002, false)]));
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    for (tool, args) in [
        (
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "delete", "library": "group:4002"}),
        ),
        (
            "zotero_manage_tags",
            json!({"tag": "nlp", "action": "rename", "new_name": "x", "library": "group:4002", "dry_run": true}),
        ),
        (
            "zotero_remove_item_from_collection",
            json!({"item_key": "VASWANI7", "collection_key": "TRNSFM52", "library": "group:4002"}),
        ),
    ] {
        let a = server.call(tool, args).await;
        let err = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(err["details"]["library"], "group:4002", "{tool}");
    }
    assert!(
        writes(&emu, Backend::Web).is_empty(),
        "{:?}",
        writes(&emu, Backend::Web)
    );
    let paths: Vec<String> = Backend::Web
        .requests(&emu)
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(paths.iter().all(|p| p == "/keys/current"), "{paths:?}");
    server.stop().await;
}

#[tokio::test]
async fn bad_arguments_name_the_argument_to_change() {
    let (emu, server) = setup(Backend::Web).await;
    let long = "x".repeat(256);
    for (args, field) in [
        (json!({"tag": "nlp", "action": "rename"}), "new_name"),
        (
            json!({"tag": "nlp", "action": "delete", "new_name": "x"}),
            "new_name",
        ),
        (
            json!({"tag": "nlp", "action": "rename", "new_name": " nlp "}),
            "new_name",
        ),
        (
            json!({"tag": "nlp", "action": "rename", "new_name": "  "}),
            "new_name",
        ),
        (json!({"tag": "a || b", "action": "delete"}), "tag"),
        (json!({"tag": "\\-x", "action": "delete"}), "tag"),
        (json!({"tag": "", "action": "delete"}), "tag"),
        (json!({"tag": "   ", "action": "delete"}), "tag"),
        (json!({"tag": long, "action": "delete"}), "tag"),
        (json!({"tag": "nlp", "action": "merge"}), "action"),
        (json!({"tag": "nlp"}), "action"),
    ] {
        let a = server.call("zotero_manage_tags", args.clone()).await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], field, "{args}: {err}");
    }
    for (args, field) in [
        (json!({"item_key": "VASWANI7"}), "collection_key"),
        (
            json!({"item_key": "VASWANI7", "collection_key": "TRNSFM52", "collection_name": "x"}),
            "collection_key",
        ),
        (
            json!({"item_key": "nope", "collection_key": "TRNSFM52"}),
            "item_key",
        ),
        (
            json!({"item_key": "VASWANI7", "collection_key": "TRNSFM52", "dry_run": "yes"}),
            "dry_run",
        ),
    ] {
        let a = server
            .call("zotero_remove_item_from_collection", args.clone())
            .await;
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], field, "{args}: {err}");
    }
    assert!(
        Backend::Web.requests(&emu).is_empty(),
        "{:?}",
        Backend::Web.requests(&emu)
    );
    server.stop().await;
}

// --- zotero_remove_item_from_collection ---------------------------------------------------

async fn remove_takes_the_item_out_of_that_collection_only_and_a_repeat_changes_nothing(
    backend: Backend,
) {
    let (emu, server) = setup(backend).await;
    let v = version_of(&emu, "VASWANI7");
    emu.reset_counts();
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "VASWANI7", "collection_key": "TRNSFM52"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["item_key"], "VASWANI7");
    assert_eq!(data["collection_key"], "TRNSFM52");
    assert_eq!(data["was_member"], true);
    assert_eq!(data["status"], "changed");
    assert_eq!(data["dry_run"], false);
    assert_eq!(
        data["changes"],
        json!([{"field": "collections", "before": ["RDLSTUP3", "TRNSFM52"], "after": ["RDLSTUP3"]}])
    );
    assert_eq!(data["version"], version_of(&emu, "VASWANI7"));
    // One POST, with the item's version, of its collections only; the item stays.
    assert_eq!(
        posted(&emu, backend),
        [vec![(
            "VASWANI7".to_string(),
            v,
            vec!["collections".to_string(), "key".into(), "version".into()]
        )]]
    );
    assert_eq!(collections_of(&emu, "VASWANI7"), json!(["RDLSTUP3"]));
    assert_eq!(
        emu.item("VASWANI7").unwrap()["data"]["deleted"],
        Value::Null
    );

    emu.reset_counts();
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "VASWANI7", "collection_key": "TRNSFM52"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["was_member"], false);
    assert_eq!(data["status"], "unchanged");
    assert!(
        writes(&emu, backend).is_empty(),
        "{:?}",
        writes(&emu, backend)
    );
    server.stop().await;
}

async fn remove_keeps_a_collection_added_in_zotero_meanwhile(backend: Backend) {
    let (emu, server) = setup(backend).await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item("VASWANI7")
                .set("collections", json!(["RDLSTUP3", "TRNSFM52", "ATTNDP62"])),
        ))
        .method("POST")
        .on(ITEMS),
    );
    emu.reset_counts();
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "VASWANI7", "collection_name": "transformers"}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["was_member"], true);
    assert_eq!(
        collections_of(&emu, "VASWANI7"),
        json!(["RDLSTUP3", "ATTNDP62"])
    );
    let batches = posted(&emu, backend);
    assert_eq!(
        batches.len(),
        2,
        "refused once (412), then written: {batches:?}"
    );
    assert_eq!(data["version"], version_of(&emu, "VASWANI7"));
    server.stop().await;
}

#[tokio::test]
async fn remove_by_name_and_dry_run() {
    let (emu, server) = setup(Backend::Web).await;
    let before = emu.item("BERTDV82").unwrap();
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "BERTDV82", "collection_name": "TRANSFORMERS", "dry_run": true}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["collection_key"], "TRNSFM52");
    assert_eq!(
        (data["dry_run"].clone(), data["status"].clone()),
        (json!(true), json!("would_change"))
    );
    assert_eq!(data["was_member"], true);
    assert_eq!(data["changes"][0]["after"], json!(["RDLSTLW4"]));
    assert!(
        writes(&emu, Backend::Web).is_empty(),
        "{:?}",
        writes(&emu, Backend::Web)
    );
    assert_eq!(emu.item("BERTDV82").unwrap(), before);
    // An ambiguous name is refused with both keys; an unknown item is not found.
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "BERTDV82", "collection_name": "reading list"}),
        )
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    let a = server
        .call(
            "zotero_remove_item_from_collection",
            json!({"item_key": "ZZZZZZZZ", "collection_key": "TRNSFM52"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    assert!(
        writes(&emu, Backend::Web).is_empty(),
        "{:?}",
        writes(&emu, Backend::Web)
    );
    server.stop().await;
}

crate::on_both_backends!(
    rename_over_120_items_writes_50_a_request_with_each_items_version,
    a_tag_added_in_zotero_meanwhile_is_kept_by_a_rename,
    a_rename_touches_the_exact_name_only_and_never_duplicates_the_new_one,
    trashed_items_and_child_items_are_renamed_too,
    delete_is_one_request_checked_against_the_library_version,
    a_library_changed_before_the_delete_is_read_again,
    a_delete_whose_answer_was_lost_is_settled_by_reading_again,
    a_dry_run_answers_what_would_change_and_writes_nothing,
    remove_takes_the_item_out_of_that_collection_only_and_a_repeat_changes_nothing,
    remove_keeps_a_collection_added_in_zotero_meanwhile
);
