//! Search by meaning end to end against the emulator: the sync into the local index (what it
//! requests, incremental after each kind of change, resumed after a failure), the three
//! tools (`zotero_update_search_database`, `zotero_semantic_search`,
//! `zotero_get_search_database_status`) with the SynonymEncoder stand-in injected through
//! the server's encoder hook, and the CLI (`update-db`, `db-status`).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, GroupSpec, Library, API_KEY, USER_ID};

use crate::common::{env_for, in_process_with_encoder, Server, BIN};
use zotero_emulator::testing::{api, create, lib};

fn env(emu: &Emulator, dir: &std::path::Path) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_INDEX_DIR".into(), dir.display().to_string()));
    env
}

async fn server(emu: &Emulator, dir: &std::path::Path, meaning: bool) -> Server {
    let encoder: Option<Arc<dyn zotero_index::Encoder>> =
        meaning.then(|| Arc::new(zotero_index::SynonymEncoder::default()) as _);
    in_process_with_encoder(&env(emu, dir), encoder).await
}

async fn update(s: &Server, args: Value) -> Value {
    s.call("zotero_update_search_database", args)
        .await
        .expect_ok()
        .clone()
}

async fn search(s: &Server, args: Value) -> Value {
    s.call("zotero_semantic_search", args)
        .await
        .expect_ok()
        .clone()
}

fn keys(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["item_key"].as_str().unwrap().to_string())
        .collect()
}

/// The item keys asked for by `itemKey=` since the counts were reset.
fn keys_read(emu: &Emulator) -> BTreeSet<String> {
    emu.requests()
        .iter()
        .filter_map(|r| r.query.iter().find(|(k, _)| k == "itemKey"))
        .flat_map(|(_, v)| v.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

#[tokio::test]
async fn finds_by_meaning_ranks_exact_titles_first_and_filters() {
    let emu = Emulator::start().await;
    let insomnia = create(
        &emu,
        json!({"itemType": "journalArticle", "title": "Insomnia impairs recall in adolescents",
               "date": "2021", "tags": [{"tag": "sleep"}]}),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), true).await;
    let report = update(&s, json!({})).await;
    assert_eq!(report["cancelled"], false, "{report}");
    assert!(report["vectors_added"].as_u64().unwrap() > 0, "{report}");

    // No word in common: found by meaning alone, first.
    let a = search(
        &s,
        json!({"query": "sleep deprivation and memory", "mode": "semantic"}),
    )
    .await;
    assert_eq!(keys(&a).first(), Some(&insomnia), "{a}");
    assert_eq!(a["semantic_used"], true);
    let hit = &a["results"][0];
    assert_eq!(
        hit["zotero_url"],
        format!("zotero://select/library/items/{insomnia}")
    );
    assert_eq!(hit["year"], 2021);
    let a = search(&s, json!({"query": "sleep deprivation and memory"})).await;
    assert!(keys(&a).contains(&insomnia), "{a}");
    let fresh = &a["index"][0];
    assert_eq!(fresh["stale"], false, "{a}");
    assert!(fresh["chunks_with_vectors"].as_u64().unwrap() > 0);

    // Keyword-shaped: the exact title first, in every mode that uses words.
    for mode in ["hybrid", "keyword"] {
        let a = search(
            &s,
            json!({"query": "Attention Is All You Need", "mode": mode}),
        )
        .await;
        assert_eq!(
            keys(&a).first().map(String::as_str),
            Some("VASWANI7"),
            "{a}"
        );
    }
    // A full-text passage says where to read on, in the attachment's own text.
    let a = search(
        &s,
        json!({"query": "encoder decoder recurrent convolutional", "mode": "keyword"}),
    )
    .await;
    let hit = a["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["item_key"] == "VASWANI7")
        .unwrap();
    let passage = hit["passages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["matched"] == "fulltext")
        .unwrap();
    assert_eq!(passage["key"], "VASPDF23");
    assert!(passage["fulltext_offset"].is_u64(), "{hit}");
    assert!(passage["text"].as_str().unwrap().chars().count() <= 400);
    // An annotation answers its paper (annotation → attachment → item).
    let a = search(
        &s,
        json!({"query": "degradation problem", "mode": "keyword"}),
    )
    .await;
    assert_eq!(
        keys(&a).first().map(String::as_str),
        Some("RESNET52"),
        "{a}"
    );
    assert!(a["results"][0]["matched"]
        .as_array()
        .unwrap()
        .contains(&json!("annotation")));

    // Filters, ours and the peer's object (also as a JSON string).
    let a = search(
        &s,
        json!({"query": "transformers", "item_type": "conferencePaper", "mode": "keyword"}),
    )
    .await;
    assert_eq!(keys(&a), vec!["BERTDV82".to_string()], "{a}");
    let a = search(
        &s,
        json!({"query": "transformers", "filters": {"item_type": "journalArticle"}, "mode": "keyword"}),
    )
    .await;
    assert_eq!(keys(&a), vec!["VASWANI7".to_string()], "{a}");
    let a = search(
        &s,
        json!({"query": "learning", "filters": "{\"tags\": \"ml\"}", "mode": "keyword"}),
    )
    .await;
    assert!(
        !keys(&a).is_empty() && keys(&a).iter().all(|k| k == "NLPML6K7" || k == "BERTDV82"),
        "{a}"
    );
    // Hybrid ranks everything by meaning too; filters still hold for every result.
    let a = search(
        &s,
        json!({"query": "transformers", "item_type": "conferencePaper"}),
    )
    .await;
    assert!(
        a["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["item_type"] == "conferencePaper"),
        "{a}"
    );
    let a = search(&s, json!({"query": "attention", "year_from": 2018})).await;
    assert!(!keys(&a).contains(&"VASWANI7".to_string()), "{a}");
    let e = s
        .call(
            "zotero_semantic_search",
            json!({"query": "x", "filters": {"venue": "y"}}),
        )
        .await;
    e.expect_err("ZOTERO_VALIDATION_ERROR");

    // The trash: left out unless asked for.
    let a = search(&s, json!({"query": "Obsolete Draft", "mode": "keyword"})).await;
    assert!(!keys(&a).contains(&"TRASHD33".to_string()), "{a}");
    let a = search(
        &s,
        json!({"query": "Obsolete Draft", "mode": "keyword", "include_trashed": true}),
    )
    .await;
    assert_eq!(
        keys(&a).first().map(String::as_str),
        Some("TRASHD33"),
        "{a}"
    );

    // The status.
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    let st = st.expect_ok();
    assert_eq!(st["initialized"], true);
    let user = &st["libraries"][0];
    assert_eq!(user["library"], "user");
    assert_eq!(user["stale"], false, "{st}");
    assert_eq!(user["fulltext_included"], true);
    assert!(user["chunks_with_vectors"].as_u64().unwrap() > 0);
    assert_eq!(user["model"]["id"], st["encoder"]["id"]);
    assert!(user["size_bytes"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn an_incremental_update_reads_exactly_what_changed() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), false).await;
    update(&s, json!({})).await;

    // Nothing changed: three small requests, no object read.
    emu.reset_counts();
    let r = update(&s, json!({})).await;
    assert_eq!(
        (r["objects_read"].as_u64(), r["fulltexts_read"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    assert_eq!(
        emu.requests().len(),
        3,
        "{:?}",
        emu.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );

    // Create, edit, trash, delete, new full text, new annotation.
    let new = create(
        &emu,
        json!({"itemType": "book", "title": "Photosynthesis in orchids"}),
    )
    .await;
    emu.edit_in_zotero(
        &zotero_emulator::ZoteroEdit::item("VASWANI7").set("title", json!("Attention Revisited")),
    );
    let v = emu.item("PG5ZCTJT").unwrap()["version"].to_string();
    let r = api(
        &emu,
        "PATCH",
        &lib("items/PG5ZCTJT"),
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"deleted": 1}"#,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    let v = emu.library_version().to_string();
    let r = api(
        &emu,
        "DELETE",
        &lib("items?itemKey=NLPML6K7"),
        &[("If-Unmodified-Since-Version", &v)],
        "",
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    emu.set_fulltext(
        "RESPDF42",
        "Residual networks ease the optimisation of very deep convolutional stacks.",
    );
    let annotation = create(
        &emu,
        json!({"itemType": "annotation", "parentItem": "RESPDF42", "annotationType": "highlight",
               "annotationText": "bottleneck architectures", "annotationComment": "",
               "annotationColor": "#ffd400", "annotationPageLabel": "5",
               "annotationSortIndex": "00004|000100|00200",
               "annotationPosition": "{\"pageIndex\":4,\"rects\":[[1,2,3,4]]}"}),
    )
    .await;

    emu.reset_counts();
    let r = update(&s, json!({})).await;
    let expected: BTreeSet<String> = [
        new.clone(),
        "VASWANI7".into(),
        "PG5ZCTJT".into(),
        annotation.clone(),
    ]
    .into_iter()
    .collect();
    assert_eq!(keys_read(&emu), expected, "{r}");
    assert_eq!(emu.count("GET", &lib("items/RESPDF42/fulltext")), 1);
    assert_eq!(r["fulltexts_read"], 1, "{r}");
    assert!(r["removed"].as_u64().unwrap() >= 1, "{r}");

    let a = search(&s, json!({"query": "photosynthesis orchids"})).await;
    assert_eq!(keys(&a).first(), Some(&new), "{a}");
    let a = search(
        &s,
        json!({"query": "Attention Revisited", "mode": "keyword"}),
    )
    .await;
    assert_eq!(
        keys(&a).first().map(String::as_str),
        Some("VASWANI7"),
        "{a}"
    );
    let a = search(
        &s,
        json!({"query": "Deep learning", "mode": "keyword", "include_trashed": true}),
    )
    .await;
    assert!(!keys(&a).contains(&"NLPML6K7".to_string()), "{a}");
    let a = search(
        &s,
        json!({"query": "The Adventures of Sherlock Holmes", "mode": "keyword"}),
    )
    .await;
    assert!(!keys(&a).contains(&"PG5ZCTJT".to_string()), "{a}");
    let a = search(
        &s,
        json!({"query": "The Adventures of Sherlock Holmes", "mode": "keyword", "include_trashed": true}),
    )
    .await;
    assert!(keys(&a).contains(&"PG5ZCTJT".to_string()), "{a}");
    for q in [
        "optimisation convolutional stacks",
        "bottleneck architectures",
    ] {
        let a = search(&s, json!({"query": q, "mode": "keyword"})).await;
        assert_eq!(
            keys(&a).first().map(String::as_str),
            Some("RESNET52"),
            "{q}: {a}"
        );
    }
    // An attachment put in the trash takes its full text and annotations with it.
    let v = emu.item("RESPDF42").unwrap()["version"].to_string();
    let r = api(
        &emu,
        "PATCH",
        &lib("items/RESPDF42"),
        &[("If-Unmodified-Since-Version", &v)],
        r#"{"deleted": 1}"#,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    emu.reset_counts();
    update(&s, json!({})).await;
    assert_eq!(
        keys_read(&emu),
        ["RESPDF42".to_string()].into_iter().collect()
    );
    for q in [
        "optimisation convolutional stacks",
        "bottleneck architectures",
    ] {
        // The paper may still match by its own metadata or notes, not by those.
        let a = search(&s, json!({"query": q, "mode": "keyword"})).await;
        let resnet = a["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["item_key"] == "RESNET52");
        let matched = resnet.map(|h| h["matched"].clone()).unwrap_or(json!([]));
        assert!(
            !matched
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m == "annotation" || m == "fulltext"),
            "{q}: {a}"
        );
        let a = search(
            &s,
            json!({"query": q, "mode": "keyword", "include_trashed": true}),
        )
        .await;
        assert_eq!(
            keys(&a).first().map(String::as_str),
            Some("RESNET52"),
            "{q}: {a}"
        );
    }
}

#[tokio::test]
async fn an_update_that_fails_midway_resumes_and_ends_like_a_full_build() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    for round in 0..2 {
        let items: Vec<Value> = (0..30)
            .map(|i| json!({"itemType": "book", "title": format!("Filler volume {round}-{i}")}))
            .collect();
        let r = zotero_emulator::testing::post_items(&emu, &Value::Array(items), &[]).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let total = emu.items().len();
    assert!(total > 100, "{total}");
    let s = server(&emu, dir.path(), true).await;
    // The versions listing and the first 50 items pass; the second batch fails every try.
    emu.inject(
        Fault::times(FaultKind::ServerError, 3)
            .on(&lib("items"))
            .skip(2),
    );
    let e = s.call("zotero_update_search_database", json!({})).await;
    e.expect_err("ZOTERO_UPSTREAM_ERROR");
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    let partial = st.expect_ok()["libraries"][0].clone();
    assert_eq!(partial["initialized"], true, "{st:?}");
    assert_eq!(partial["stale"], true, "{partial}");
    // What was committed is searchable meanwhile.
    assert!(partial["documents"].as_u64().unwrap() > 0);

    emu.reset_counts();
    let r = update(&s, json!({})).await;
    // Only the rest is read again: not the 50 committed before the failure.
    // (The three full texts' attachments are looked up again: the failed run learnt them.)
    assert!(keys_read(&emu).len() <= total - 50 + 3, "{r}");
    let done = s
        .call("zotero_get_search_database_status", json!({}))
        .await
        .expect_ok()["libraries"][0]
        .clone();
    assert_eq!(done["stale"], false, "{done}");

    let fresh = tempfile::tempdir().unwrap();
    let s2 = server(&emu, fresh.path(), true).await;
    update(&s2, json!({})).await;
    let full = s2
        .call("zotero_get_search_database_status", json!({}))
        .await
        .expect_ok()["libraries"][0]
        .clone();
    for k in [
        "items",
        "documents",
        "chunks",
        "chunks_with_vectors",
        "indexed_version",
    ] {
        assert_eq!(done[k], full[k], "{k}: {done} vs {full}");
    }
}

#[tokio::test]
async fn search_during_an_update_sees_the_last_commit_and_a_second_update_is_refused() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), false).await;
    update(&s, json!({})).await;
    let before = search(&s, json!({"query": "Sherlock Holmes", "mode": "keyword"})).await;

    create(
        &emu,
        json!({"itemType": "book", "title": "Sherlock Holmes and the slow update"}),
    )
    .await;
    // The update's first request (the versions of what changed) is answered late: the update
    // holds its lock from before that request until it ends. The test waits for the request
    // (an event) rather than for a time, and the answer is late enough (8 s) that the calls
    // below, which take milliseconds, all happen while it is pending.
    emu.reset_counts();
    emu.inject(
        Fault::once(FaultKind::Slow(std::time::Duration::from_secs(8))).path_contains("/items"),
    );
    let env = env(&emu, dir.path());
    let updating = tokio::spawn(async move {
        let s = in_process_with_encoder(&env, None).await;
        s.call("zotero_update_search_database", json!({})).await
    });
    while emu.faults_pending() > 0 {
        assert!(
            !updating.is_finished(),
            "the update ended before its request"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The update holds the lock: a second one is refused at once, saying why.
    let e = s.call("zotero_update_search_database", json!({})).await;
    let err = e.expect_err("ZOTERO_RATE_LIMITED");
    assert!(
        err["message"].as_str().unwrap().contains("another update"),
        "{err}"
    );
    let during = search(&s, json!({"query": "Sherlock Holmes", "mode": "keyword"})).await;
    assert_eq!(keys(&during), keys(&before));
    assert!(
        !updating.is_finished(),
        "the update ended before the checks"
    );
    let done = updating.await.unwrap();
    assert!(done.ok(), "{:?}", done.data());
    let after = search(
        &s,
        json!({"query": "Sherlock Holmes slow update", "mode": "keyword"}),
    )
    .await;
    assert_ne!(keys(&after), keys(&before));
}

#[tokio::test]
async fn a_missing_or_damaged_index_says_which_command_fixes_it() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), false).await;
    let e = s
        .call("zotero_semantic_search", json!({"query": "attention"}))
        .await;
    let err = e.expect_err("ZOTERO_NOT_FOUND");
    let msg = err["message"].as_str().unwrap();
    assert!(
        msg.contains("`zotero-mcp update-db`") && msg.contains("zotero_update_search_database"),
        "{msg}"
    );
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    let st = st.expect_ok();
    assert_eq!(st["initialized"], false);
    assert_eq!(st["command"], "zotero-mcp update-db");
    // Asking never creates the file.
    assert!(!dir.path().join("user.sqlite").exists());

    std::fs::write(
        dir.path().join("user.sqlite"),
        b"this is not a database at all, sorry",
    )
    .unwrap();
    let e = s
        .call("zotero_semantic_search", json!({"query": "attention"}))
        .await;
    let err = e.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("zotero-mcp update-db --full"),
        "{err}"
    );
    let e = s.call("zotero_update_search_database", json!({})).await;
    e.expect_err("ZOTERO_VALIDATION_ERROR");
    let r = update(&s, json!({"full": true})).await;
    assert_eq!(r["full"], true);
    let a = search(&s, json!({"query": "attention"})).await;
    assert_eq!(keys(&a).first().map(String::as_str), Some("VASWANI7"));
}

#[tokio::test]
async fn without_a_model_search_is_by_words_and_says_so() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), false).await;
    let r = update(&s, json!({"include_fulltext": false})).await;
    assert!(
        r["note"].as_str().unwrap().contains("no sentence model"),
        "{r}"
    );
    assert_eq!(emu.count("GET", &lib("fulltext")), 0);
    let a = search(&s, json!({"query": "Attention Is All You Need"})).await;
    assert_eq!(a["semantic_used"], false);
    assert!(a["note"].as_str().unwrap().contains("by words"), "{a}");
    assert_eq!(keys(&a).first().map(String::as_str), Some("VASWANI7"));
    let e = s
        .call(
            "zotero_semantic_search",
            json!({"query": "attention", "mode": "semantic"}),
        )
        .await;
    let err = e.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("keyword or hybrid"),
        "{err}"
    );
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    assert_eq!(st.expect_ok()["libraries"][0]["fulltext_included"], false);

    // Full text included later: all of it is read then; left out again, it goes.
    let r = update(&s, json!({})).await;
    assert_eq!(r["fulltexts_read"], 3, "{r}");
    let q = json!({"query": "encoder decoder recurrent convolutional", "mode": "keyword"});
    let a = search(&s, q.clone()).await;
    assert!(
        a["results"][0]["matched"]
            .as_array()
            .unwrap()
            .contains(&json!("fulltext")),
        "{a}"
    );
    let r = update(&s, json!({"include_fulltext": false})).await;
    assert_eq!(r["removed"], 3, "{r}");
    let a = search(&s, q).await;
    assert!(
        a["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| !h["matched"]
                .as_array()
                .unwrap()
                .contains(&json!("fulltext"))),
        "{a}"
    );
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    assert_eq!(st.expect_ok()["libraries"][0]["stale"], false);
}

#[tokio::test]
async fn group_libraries_have_their_own_index_and_all_searches_every_one() {
    let emu = Emulator::start().await;
    let mut group = Library::empty();
    group.items.push(json!({
        "key": "GRPITEM2", "version": 1,
        "data": {"key": "GRPITEM2", "version": 1, "itemType": "book",
                 "title": "Myocardial infarction outcomes", "creators": [], "tags": [],
                 "collections": [], "relations": {}, "dateAdded": "2024-01-01T00:00:00Z",
                 "dateModified": "2024-01-01T00:00:00Z"}
    }));
    emu.add_group(GroupSpec::new(4001, "Lab"), group);
    emu.set_key_access(zotero_emulator::KeyAccess::groups(&[(4001, false)]));
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), true).await;
    update(&s, json!({})).await;
    update(&s, json!({"library": "group:4001"})).await;
    assert!(dir.path().join("group-4001.sqlite").exists());
    let a = search(
        &s,
        json!({"query": "heart attack", "library": "group:4001", "mode": "semantic"}),
    )
    .await;
    assert_eq!(keys(&a), vec!["GRPITEM2".to_string()], "{a}");
    assert_eq!(a["results"][0]["library"], "group:4001");
    assert_eq!(
        a["results"][0]["zotero_url"],
        "zotero://select/groups/4001/items/GRPITEM2"
    );
    let a = search(
        &s,
        json!({"query": "heart attack attention", "library": "all"}),
    )
    .await;
    let libs: BTreeSet<&str> = a["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["library"].as_str().unwrap())
        .collect();
    assert_eq!(libs, ["group:4001", "user"].into_iter().collect(), "{a}");
    assert_eq!(a["index"].as_array().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_builds_and_reports_the_index() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.env_clear().args(args);
        for (k, v) in env(&emu, dir.path()) {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = tokio::task::block_in_place(|| run(&["db-status"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("zotero-mcp update-db"));

    let out = tokio::task::block_in_place(|| run(&["update-db"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("items") && err.contains("done"), "{err}");
    // The summary (objects, requests, seconds): the figures of the fixture library.
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(dir.path().join("user.sqlite").exists());

    let out = tokio::task::block_in_place(|| run(&["db-status", "--json"]));
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["initialized"], true);
    assert_eq!(v["libraries"][0]["stale"], false, "{v}");

    let out = tokio::task::block_in_place(|| run(&["update-db", "--library", "nope"]));
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn the_desktop_local_api_alone_builds_and_updates_the_index() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let env: Vec<(String, String)> = [
        ("ZOTERO_LOCAL", "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE", emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "1".to_string()),
        ("ZOTERO_INDEX_DIR", dir.path().display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let s = in_process_with_encoder(&env, None).await;
    let r = update(&s, json!({})).await;
    assert!(r["objects_read"].as_u64().unwrap() > 40, "{r}");
    assert!(r["fulltexts_read"].as_u64().unwrap() >= 3, "{r}");
    let a = search(&s, json!({"query": "Attention Is All You Need"})).await;
    assert_eq!(
        keys(&a).first().map(String::as_str),
        Some("VASWANI7"),
        "{a}"
    );

    // The local API has no /deleted: a deletion is found by comparing keys.
    let v = emu.library_version().to_string();
    let r = api(
        &emu,
        "DELETE",
        &lib("items?itemKey=NLPML6K7"),
        &[("If-Unmodified-Since-Version", &v)],
        "",
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.text());
    emu.reset_counts();
    let r = update(&s, json!({})).await;
    assert!(r["removed"].as_u64().unwrap() >= 1, "{r}");
    let deleted_asked = emu
        .local_requests()
        .iter()
        .filter(|q| q.path.ends_with("/deleted"))
        .count();
    assert_eq!(deleted_asked, 1);
    let a = search(&s, json!({"query": "Deep learning", "mode": "keyword"})).await;
    assert!(!keys(&a).contains(&"NLPML6K7".to_string()), "{a}");
    assert!(emu.requests().is_empty(), "the web API was asked");
    let st = s.call("zotero_get_search_database_status", json!({})).await;
    assert_eq!(st.expect_ok()["libraries"][0]["stale"], false, "{st:?}");
}

/// `update-db` stopped by Ctrl-C (SIGINT), then killed outright (SIGKILL), then run again:
/// each stop leaves the last commit, and the last run ends where a build in one go ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_db_stopped_or_killed_resumes_to_the_same_index() {
    let emu = Emulator::start().await;
    for round in 0..3 {
        let items: Vec<Value> = (0..40)
            .map(|i| json!({"itemType": "book", "title": format!("Filler volume {round}-{i}")}))
            .collect();
        let r = zotero_emulator::testing::post_items(&emu, &Value::Array(items), &[]).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let dir = tempfile::tempdir().unwrap();
    let command = |dir: &std::path::Path, args: &[&str]| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.env_clear().args(args);
        for (k, v) in env(&emu, dir) {
            cmd.env(k, v);
        }
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    };
    let status = |dir: &std::path::Path| -> Value {
        let out = command(dir, &["db-status", "--json"]).output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["libraries"][0].clone()
    };
    emu.set_latency(std::time::Duration::from_millis(150));
    for signal in ["-INT", "-KILL"] {
        emu.reset_counts();
        let child = command(dir.path(), &["update-db"]).spawn().unwrap();
        // Signalled mid-sync, once it asked for objects (an event: a loaded machine may take
        // long to start it), with most of the update still to come at 150 ms an answer.
        while !emu
            .requests()
            .iter()
            .any(|r| r.query.iter().any(|(k, _)| k == "itemKey"))
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let killed = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = tokio::task::block_in_place(|| child.wait_with_output().unwrap());
        let err = String::from_utf8_lossy(&out.stderr);
        if signal == "-INT" {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("stopping"), "{err}");
        } else {
            assert_eq!(out.status.code(), None, "{err}");
        }
        let st = tokio::task::block_in_place(|| status(dir.path()));
        assert_eq!(st["stale"], true, "{signal}: {st}");
    }
    emu.set_latency(std::time::Duration::ZERO);
    let out = tokio::task::block_in_place(|| command(dir.path(), &["update-db"]).output().unwrap());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let resumed = tokio::task::block_in_place(|| status(dir.path()));
    assert_eq!(resumed["stale"], false, "{resumed}");

    let fresh = tempfile::tempdir().unwrap();
    let out =
        tokio::task::block_in_place(|| command(fresh.path(), &["update-db"]).output().unwrap());
    assert_eq!(out.status.code(), Some(0));
    let full = tokio::task::block_in_place(|| status(fresh.path()));
    for k in ["items", "documents", "chunks", "indexed_version"] {
        assert_eq!(resumed[k], full[k], "{k}: {resumed} vs {full}");
    }
}

/// (progress, total) of each notification, in arrival order.
type Seen = Arc<std::sync::Mutex<Vec<(f64, Option<f64>)>>>;

#[derive(Clone, Default)]
struct ProgressLog(Seen);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push((params.progress, params.total));
    }
}

#[tokio::test]
async fn the_update_tool_reports_progress_that_only_grows() {
    use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.env_clear();
    for (k, v) in env(&emu, dir.path()) {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = ProgressLog::default();
    let client = log.clone().serve(transport).await.unwrap();
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("idx-1".into())));
    let mut params = CallToolRequestParams::new("zotero_update_search_database")
        .with_arguments(crate::common::obj(json!({})));
    params.meta = Some(meta);
    let answer = crate::common::to_answer(client.call_tool(params).await.unwrap());
    answer.expect_ok();
    for _ in 0..100 {
        let seen = log.0.lock().unwrap().clone();
        if seen.last().is_some_and(|p| Some(p.0) == p.1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = log.0.lock().unwrap().clone();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "grows: {seen:?}");
    let last = seen.last().unwrap();
    assert_eq!(Some(last.0), last.1, "{seen:?}");
    let _ = client.cancel().await;
}

/// Another model: searches fall back to words (never compare vectors of two models), and
/// the next update drops the old vectors and computes the new model's.
#[tokio::test]
async fn another_model_recomputes_the_vectors_and_never_mixes_them() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), true).await;
    update(&s, json!({"include_fulltext": false})).await;
    let other: Arc<dyn zotero_index::Encoder> = Arc::new(zotero_index::SynonymEncoder::new(
        64,
        zotero_index::encoder::DEFAULT_SYNONYMS,
    ));
    let s2 = in_process_with_encoder(&env(&emu, dir.path()), Some(other)).await;
    let a = search(&s2, json!({"query": "Attention Is All You Need"})).await;
    assert_eq!(a["semantic_used"], false, "{a}");
    assert!(
        a["note"].as_str().unwrap().contains("update-db --full"),
        "{a}"
    );
    let e = s2
        .call(
            "zotero_semantic_search",
            json!({"query": "attention", "mode": "semantic"}),
        )
        .await;
    e.expect_err("ZOTERO_VALIDATION_ERROR");
    let r = update(&s2, json!({"include_fulltext": false})).await;
    assert_eq!(r["vectors_reset"], true, "{r}");
    let st = s2
        .call("zotero_get_search_database_status", json!({}))
        .await;
    let user = st.expect_ok()["libraries"][0].clone();
    assert_eq!(user["model"]["dims"], 64, "{user}");
    assert_eq!(user["chunks_with_vectors"], user["chunks"], "{user}");
    let a = search(
        &s2,
        json!({"query": "sleep deprivation", "mode": "semantic"}),
    )
    .await;
    assert_eq!(a["semantic_used"], true);
}

/// The configured model (here the tiny test BERT, served by the emulator's Hugging Face
/// host): the first update builds the keyword index, downloads the model into a
/// huggingface_hub cache and adds vectors made by it; searches use it; the status names it
/// by its commit. Offline with an empty cache, the index is keyword-only and says why.
#[tokio::test]
async fn the_configured_model_is_downloaded_once_and_makes_the_vectors() {
    const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";
    let emu = Emulator::start().await;
    let model = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/models/tiny-bert");
    emu.add_hf_model_dir("zotero-mcp/tiny-bert", COMMIT, &model);
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let with_model = |offline: bool| {
        let mut env = env(&emu, dir.path());
        env.retain(|(k, _)| k != "ZOTERO_EMBEDDING_MODEL");
        env.extend([
            (
                "ZOTERO_EMBEDDING_MODEL".into(),
                "zotero-mcp/tiny-bert".into(),
            ),
            ("HF_ENDPOINT".into(), emu.hf_endpoint()),
            ("HF_HUB_CACHE".into(), cache.path().display().to_string()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()),
        ]);
        if offline {
            env.push(("HF_HUB_OFFLINE".into(), "1".into()));
        }
        env
    };

    // Offline, nothing cached: words only, and the answers say why.
    let s = in_process_with_encoder(&with_model(true), None).await;
    let r = update(&s, json!({"include_fulltext": false})).await;
    assert_eq!(r["vectors_added"], 0, "{r}");
    assert!(
        r["note"].as_str().unwrap().contains("HF_HUB_OFFLINE"),
        "{r}"
    );
    let a = search(&s, json!({"query": "Attention Is All You Need"})).await;
    assert_eq!(a["semantic_used"], false);
    assert!(
        a["note"].as_str().unwrap().contains("no sentence model"),
        "{a}"
    );
    assert!(emu.hf_requests().is_empty(), "offline: no request");
    drop(s);

    // Online: the update downloads the model, then adds its vectors.
    let s = in_process_with_encoder(&with_model(false), None).await;
    let r = update(&s, json!({"include_fulltext": false})).await;
    assert!(r["vectors_added"].as_u64().unwrap() > 0, "{r}");
    assert!(r.get("note").is_none(), "{r}");
    let fetched = emu.hf_requests().len();
    assert!(fetched > 0);
    assert!(cache
        .path()
        .join("models--zotero-mcp--tiny-bert/snapshots")
        .join(COMMIT)
        .join("model.safetensors")
        .exists());
    let a = search(
        &s,
        json!({"query": "Attention Is All You Need", "mode": "semantic"}),
    )
    .await;
    assert_eq!(a["semantic_used"], true, "{a}");
    assert_eq!(keys(&a).first().map(String::as_str), Some("VASWANI7"));
    let st = s
        .call("zotero_get_search_database_status", json!({}))
        .await
        .expect_ok()
        .clone();
    assert_eq!(st["encoder"]["id"], "zotero-mcp/tiny-bert", "{st}");
    assert_eq!(st["encoder"]["revision"], COMMIT);
    assert_eq!(st["libraries"][0]["model"]["revision"], COMMIT, "{st}");
    drop(s);

    // A new process finds the model in the cache: a search loads it with no download.
    let s = in_process_with_encoder(&with_model(true), None).await;
    let a = search(
        &s,
        json!({"query": "Attention Is All You Need", "mode": "semantic"}),
    )
    .await;
    assert_eq!(a["semantic_used"], true, "{a}");
    assert_eq!(emu.hf_requests().len(), fetched, "nothing fetched again");
}

/// The user the permission cases run as: `nobody` when the tests run as root (the superuser
/// reads and writes whatever the modes say), else the tests' own user.
fn unprivileged(probe: &std::path::Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    (std::fs::metadata(probe).unwrap().uid() == 0).then_some(65534)
}

/// Gives `path` and everything below it to `uid` (what the server, run as `uid`, must own).
fn chown_all(path: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

/// A valid, empty index of the user library in `dir`, closed (its WAL folded into the file).
fn empty_index(dir: &std::path::Path) -> std::path::PathBuf {
    drop(zotero_index::Index::open(dir, &zotero_index::LibraryId::User).unwrap());
    dir.join("user.sqlite")
}

/// Writes `value` (big-endian) at `offset` of the file's SQLite header.
fn patch_header(file: &std::path::Path, offset: usize, value: u32) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[offset..offset + 4].copy_from_slice(&value.to_be_bytes());
    std::fs::write(file, bytes).unwrap();
}

/// What a tool answers for one case: the code, and what the message says.
type Expect = (&'static str, &'static [&'static str]);

struct Case {
    name: &'static str,
    /// Makes the case under `base` (a directory of the test's own); answers ZOTERO_INDEX_DIR.
    prepare: fn(&std::path::Path) -> std::path::PathBuf,
    search: Expect,
    update: Expect,
    /// What `details` carries: ("variable", "ZOTERO_INDEX_DIR") or ("command", …).
    detail: Option<(&'static str, &'static str)>,
    /// `zotero-mcp update-db`'s exit code: 2 for configuration, 1 for a failed run.
    cli_exit: i32,
}

const DIR: &str = "ZOTERO_INDEX_DIR";
const FULL: &str = "zotero-mcp update-db --full";
const VALIDATION: &str = "ZOTERO_VALIDATION_ERROR";

/// Every way the index directory or file can be unusable answers a code that says who acts
/// (never ZOTERO_INTERNAL_ERROR, which is for the server's defects) and a message that says
/// what to do; `update-db` exits 2 when the configuration must change, 1 otherwise. The
/// server runs as a process of its own (as `nobody` when the tests run as root, so that
/// permissions apply). A full disk cannot be made here: `zotero-index`'s unit tests map it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_index_directory_or_file_says_what_to_do() {
    let cases = [
        Case {
            name: "the directory is a file",
            prepare: |base| {
                let f = base.join("index");
                std::fs::write(&f, b"not a directory").unwrap();
                f
            },
            search: (VALIDATION, &[DIR, "not a directory"]),
            update: (VALIDATION, &[DIR, "cannot create the index directory"]),
            detail: Some(("variable", DIR)),
            cli_exit: 2,
        },
        Case {
            name: "the parent of the directory is a file",
            prepare: |base| {
                std::fs::write(base.join("file"), b"").unwrap();
                base.join("file/index")
            },
            search: (VALIDATION, &[DIR, "cannot use the index directory"]),
            update: (VALIDATION, &[DIR, "cannot create the index directory"]),
            detail: Some(("variable", DIR)),
            cli_exit: 2,
        },
        Case {
            name: "the parent cannot be written (/, another user's)",
            prepare: |_| {
                std::path::PathBuf::from(format!("/zotero-mcp-test-{}/index", std::process::id()))
            },
            search: ("ZOTERO_NOT_FOUND", &["update-db"]),
            update: (
                VALIDATION,
                &[DIR, "cannot create the index directory", "ermission denied"],
            ),
            detail: Some(("variable", DIR)),
            cli_exit: 2,
        },
        Case {
            name: "the directory is another user's (/): not writable",
            prepare: |_| std::path::PathBuf::from("/"),
            search: ("ZOTERO_NOT_FOUND", &["update-db"]),
            update: (VALIDATION, &[DIR, "cannot restrict the permissions of"]),
            detail: Some(("variable", DIR)),
            cli_exit: 2,
        },
        Case {
            name: "the index file is a directory",
            prepare: |base| {
                let dir = base.join("index");
                std::fs::create_dir_all(dir.join("user.sqlite")).unwrap();
                dir
            },
            search: (VALIDATION, &["user.sqlite", "move it away"]),
            update: (VALIDATION, &["user.sqlite", "move it away"]),
            detail: None,
            cli_exit: 1,
        },
        Case {
            name: "the index file cannot be read",
            prepare: |base| {
                use std::os::unix::fs::PermissionsExt;
                let dir = base.join("index");
                let file = empty_index(&dir);
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o000)).unwrap();
                dir
            },
            search: (
                VALIDATION,
                &["ermission denied", "read and write access", FULL],
            ),
            update: (
                VALIDATION,
                &["ermission denied", "read and write access", FULL],
            ),
            detail: Some(("command", FULL)),
            cli_exit: 1,
        },
        Case {
            name: "the file is not a database",
            prepare: |base| {
                let dir = base.join("index");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("user.sqlite"), b"not a database; ".repeat(10)).unwrap();
                dir
            },
            search: (VALIDATION, &["not an SQLite database", FULL]),
            update: (VALIDATION, &["not an SQLite database", FULL]),
            detail: Some(("command", FULL)),
            cli_exit: 1,
        },
        Case {
            name: "another application's database",
            prepare: |base| {
                let dir = base.join("index");
                patch_header(&empty_index(&dir), 68, 0x4750_4b47);
                dir
            },
            search: (VALIDATION, &["another application", FULL]),
            update: (VALIDATION, &["another application", FULL]),
            detail: Some(("command", FULL)),
            cli_exit: 1,
        },
        Case {
            name: "another schema version",
            prepare: |base| {
                let dir = base.join("index");
                patch_header(&empty_index(&dir), 60, 999);
                dir
            },
            search: (VALIDATION, &["schema version 999", FULL]),
            update: (VALIDATION, &["schema version 999", FULL]),
            detail: Some(("command", FULL)),
            cli_exit: 1,
        },
        Case {
            name: "a truncated file",
            prepare: |base| {
                let dir = base.join("index");
                let file = empty_index(&dir);
                let len = std::fs::metadata(&file).unwrap().len();
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .unwrap()
                    .set_len(len - 100)
                    .unwrap();
                dir
            },
            search: (VALIDATION, &["truncated", FULL]),
            update: (VALIDATION, &["truncated", FULL]),
            detail: Some(("command", FULL)),
            cli_exit: 1,
        },
    ];
    let emu = Emulator::start().await;
    for case in &cases {
        let base = tempfile::tempdir().unwrap();
        let user = unprivileged(base.path());
        let dir = (case.prepare)(base.path());
        if let Some(uid) = user {
            chown_all(base.path(), uid);
        }
        let env = env(&emu, &dir);
        let s = crate::common::spawn_as(&env, user).await;
        for (tool, args, (code, says)) in [
            (
                "zotero_semantic_search",
                json!({"query": "attention"}),
                case.search,
            ),
            ("zotero_update_search_database", json!({}), case.update),
        ] {
            let answer = s.call(tool, args).await;
            let err = answer.expect_err(code);
            let msg = err["message"].as_str().unwrap();
            for said in says {
                assert!(
                    msg.contains(said),
                    "{}: {tool}: {said:?} not in {msg}",
                    case.name
                );
            }
            if let (Some((key, value)), true) = (case.detail, code == VALIDATION) {
                assert_eq!(err["details"][key], value, "{}: {tool}: {err}", case.name);
            }
        }
        s.stop().await;
        let out = tokio::task::block_in_place(|| {
            use std::os::unix::process::CommandExt;
            let mut cmd = std::process::Command::new(BIN);
            cmd.env_clear().arg("update-db").envs(env.iter().cloned());
            if let Some(uid) = user {
                cmd.uid(uid).gid(uid);
            }
            cmd.output().unwrap()
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(case.cli_exit),
            "{}: {stderr}",
            case.name
        );
        assert!(stderr.contains(case.update.1[0]), "{}: {stderr}", case.name);
    }
}

/// An index held by another updater (here, this process holds its lock) refuses an update
/// with ZOTERO_RATE_LIMITED saying so, and `update-db` exits 1; searches go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_held_by_another_update_refuses_an_update_and_serves_searches() {
    let emu = Emulator::start().await;
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("index");
    empty_index(&dir);
    let _lock = zotero_index::Index::lock(&dir, &zotero_index::LibraryId::User).unwrap();
    let s = server(&emu, &dir, false).await;
    let answer = s.call("zotero_update_search_database", json!({})).await;
    let err = answer.expect_err("ZOTERO_RATE_LIMITED");
    assert!(
        err["message"].as_str().unwrap().contains("another update"),
        "{err}"
    );
    search(&s, json!({"query": "attention", "mode": "keyword"})).await;
    let out = tokio::task::block_in_place(|| {
        std::process::Command::new(BIN)
            .env_clear()
            .arg("update-db")
            .envs(env(&emu, &dir))
            .output()
            .unwrap()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("another update"), "{stderr}");
}

/// A page of results says where the next starts, and reading on gives the rest: no hit twice,
/// none left out, the last page without `next_start`.
#[tokio::test]
async fn results_come_in_pages_that_read_on_with_next_start() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server(&emu, dir.path(), true).await;
    update(&s, json!({"include_fulltext": false})).await;
    // A word most items hold, so that there are several pages of one.
    let all = search(&s, json!({"query": "the", "mode": "keyword", "limit": 100})).await;
    let every = keys(&all);
    assert!(every.len() >= 3, "{all}");
    assert!(all.get("next_start").is_none(), "{all}");
    let mut read = Vec::new();
    let mut start = 0u64;
    for _ in 0..every.len() + 1 {
        let page = search(
            &s,
            json!({"query": "the", "mode": "keyword", "limit": 1, "start": start}),
        )
        .await;
        read.extend(keys(&page));
        match page["next_start"].as_u64() {
            Some(next) => {
                assert_eq!(next, start + 1, "{page}");
                start = next;
            }
            None => break,
        }
    }
    assert_eq!(
        read, every,
        "pages read on in the same order, nothing twice or missing"
    );
}
