//! Conformance of `zotero_update_item` and `zotero_trash_items` against the emulator: the
//! version each write names, the merge with an edit made in Zotero between the server's
//! read and its write (a field it sets → nothing written and both values named; a field it
//! does not set, or a tag → both kept), dry runs that write nothing, idempotent repeats,
//! lost answers, per-item outcomes, asking the user before trashing many, read-only
//! libraries.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, ZoteroEdit, API_KEY, USER_ID};

use crate::common::{env_for, in_process, in_process_as, writes, Backend, TestClient};

/// In the trash: the web API writes `deleted: 1`, Zotero 10 `deleted: true`.
fn trashed(d: &Value) -> bool {
    d["deleted"] == json!(1) || d["deleted"] == json!(true)
}

/// Queues a fault for the backend under test.
fn inject(emu: &Emulator, backend: Backend, fault: Fault) {
    emu.inject(backend.fault(fault));
}

fn data(emu: &Emulator, key: &str) -> Value {
    emu.item(key).unwrap()["data"].clone()
}

fn version(emu: &Emulator, key: &str) -> u64 {
    emu.item(key).unwrap()["version"].as_u64().unwrap()
}

fn tags(emu: &Emulator, key: &str) -> Vec<String> {
    data(emu, key)["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect()
}

/// The body of the one POST to the items endpoint.
fn posted(emu: &Emulator, backend: Backend) -> Vec<Value> {
    backend
        .requests(emu)
        .iter()
        .filter(|r| r.method == "POST" && r.path == format!("/users/{USER_ID}/items"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

async fn update_writes_only_what_changes_with_the_version_it_read(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let v = version(&emu, "VASWANI7");
    let before = data(&emu, "VASWANI7");
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Attention Is All You Need (v2)",
                   "fields": {"volume": "31", "pages": "1-11"},
                   "add_tags": ["read"], "remove_tags": ["nlp"],
                   "add_collections": ["ATTNDP62"]}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(d["status"], "changed");
    assert_eq!(d["dry_run"], false);
    assert_eq!(d["zotero_url"], "zotero://select/library/items/VASWANI7");
    let now = data(&emu, "VASWANI7");
    assert_eq!(now["title"], "Attention Is All You Need (v2)");
    assert_eq!(
        (&now["volume"], &now["pages"]),
        (&json!("31"), &json!("1-11"))
    );
    assert_eq!(tags(&emu, "VASWANI7"), ["transformers", "read"]);
    assert_eq!(
        now["collections"],
        json!(["RDLSTUP3", "TRNSFM52", "ATTNDP62"])
    );
    // Untouched fields stay.
    assert_eq!(now["creators"], before["creators"]);
    assert_eq!(now["date"], before["date"]);
    assert_eq!(d["version"], version(&emu, "VASWANI7"));
    // One POST of the changed fields only, naming the version read.
    let body = posted(&emu, backend);
    assert_eq!(body.len(), 1);
    let sent = body[0][0].as_object().unwrap();
    assert_eq!(sent["key"], "VASWANI7");
    assert_eq!(sent["version"], v);
    let mut fields: Vec<&str> = sent.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "collections",
            "key",
            "pages",
            "tags",
            "title",
            "version",
            "volume"
        ]
    );
    // The answer says each field before → after.
    let change = |f: &str| {
        d["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["field"] == f)
            .cloned()
            .unwrap_or_else(|| panic!("no change of {f}: {d}"))
    };
    assert_eq!(change("title")["before"], before["title"]);
    assert_eq!(change("volume")["before"], before["volume"]);
    assert_eq!(change("tags")["after"], json!(["transformers", "read"]));

    // Again: nothing to do, nothing written.
    emu.reset_counts();
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Attention Is All You Need (v2)",
                   "add_tags": ["read"], "remove_tags": ["nlp"]}),
        )
        .await;
    assert_eq!(a.expect_ok()["status"], "unchanged");
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
}

async fn a_dry_run_answers_the_change_and_writes_nothing(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let before = emu.item("BERTDV82").unwrap();
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "BERTDV82", "date": "2019-06-02", "tags": ["bert"], "dry_run": true}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(
        (d["status"].clone(), d["dry_run"].clone()),
        (json!("would_change"), json!(true))
    );
    let fields: Vec<&str> = d["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["date", "tags"]);
    assert_eq!(d["changes"][1]["after"], json!(["bert"]));
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    assert_eq!(emu.item("BERTDV82").unwrap(), before);

    // Trash too.
    let a = server
        .call(
            "zotero_trash_items",
            json!({"item_keys": ["BERTDV82", "NLPML6K7"], "dry_run": true}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(d["counts"]["would_change"], 2);
    assert_eq!(d["results"][0]["changes"][0]["after"], true);
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
}

async fn an_edit_in_zotero_of_a_field_it_sets_stops_it_and_names_both_values(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item("VASWANI7").set("title", json!("Edited in Zotero")),
        ))
        .method("POST"),
    );
    let before = data(&emu, "VASWANI7")["title"].clone();
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Mine", "fields": {"volume": "31"}}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "changed_in_zotero");
    assert_eq!(e["details"]["written"], false);
    assert_eq!(
        e["details"]["conflicts"],
        json!([{"field": "title", "before": before, "yours": "Mine", "in_zotero": "Edited in Zotero"}])
    );
    assert!(e["message"].as_str().unwrap().contains("title"), "{e}");
    // Zotero's edit stands; none of this call's change was written (all or nothing).
    let now = data(&emu, "VASWANI7");
    assert_eq!(now["title"], "Edited in Zotero");
    assert_eq!(now["volume"], "30");
}

async fn an_edit_in_zotero_of_other_fields_and_tags_is_kept_beside_the_change(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item("VASWANI7")
                .set("date", json!("2017-12"))
                .set(
                    "tags",
                    json!([{"tag": "transformers"}, {"tag": "nlp"}, {"tag": "zotero-side"}]),
                ),
        ))
        .method("POST"),
    );
    let v = version(&emu, "VASWANI7");
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Mine", "add_tags": ["mine"]}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(d["status"], "changed");
    let now = data(&emu, "VASWANI7");
    assert_eq!(
        (&now["title"], &now["date"]),
        (&json!("Mine"), &json!("2017-12"))
    );
    assert_eq!(
        tags(&emu, "VASWANI7"),
        ["transformers", "nlp", "zotero-side", "mine"]
    );
    // Two POSTs: the first named the version read and was refused, the second the newer one.
    let body = posted(&emu, backend);
    assert_eq!(body.len(), 2);
    assert_eq!(body[0][0]["version"], v);
    assert!(body[1][0]["version"].as_u64().unwrap() > v, "{body:?}");
}

async fn a_version_given_that_is_not_current_writes_nothing(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let v = version(&emu, "VASWANI7");
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Mine", "version": v - 1}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "version_changed");
    assert_eq!(e["details"]["version"], v);
    assert!(backend.writes(&emu).is_empty());
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "Mine", "version": v}),
        )
        .await;
    a.expect_ok();
    assert_eq!(data(&emu, "VASWANI7")["title"], "Mine");
}

async fn a_lost_answer_is_settled_by_reading_the_item(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(&emu, backend, Fault::once(FaultKind::Drop).method("POST"));
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "NLPML6K7", "extra": "Checked", "add_tags": ["x"]}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(d["status"], "changed");
    assert_eq!(d["version"], version(&emu, "NLPML6K7"));
    assert_eq!(data(&emu, "NLPML6K7")["extra"], "Checked");
    assert_eq!(tags(&emu, "NLPML6K7"), ["nlp", "ml", "x"]);
    let fields: Vec<&str> = d["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["extra", "tags"]);
}

async fn bad_updates_are_refused_before_anything_is_written(backend: Backend) {
    let (emu, server) = backend.setup().await;
    for (args, field, says) in [
        (
            json!({"item_key": "VASWANI7"}),
            "fields",
            "nothing to change",
        ),
        (
            json!({"item_key": "VASWANI7", "fields": {"volumen": "3"}}),
            "fields.volumen",
            "not a field of item type journalArticle",
        ),
        (
            json!({"item_key": "VASWANI7", "fields": {"tags": "x"}}),
            "fields.tags",
            "add_tags",
        ),
        (
            json!({"item_key": "VASWANI7", "title": "a", "fields": {"title": "b"}}),
            "fields.title",
            "twice",
        ),
        (
            json!({"item_key": "VASPDF23", "doi": "10.1/x"}),
            "doi",
            "has no field for 'doi'",
        ),
        (
            json!({"item_key": "PQN9TE22", "title": "x"}),
            "item_key",
            "zotero_update_note",
        ),
        (
            json!({"item_key": "VASWANI7", "tags": ["a"], "add_tags": ["b"]}),
            "tags",
            "not both",
        ),
        (
            json!({"item_key": "VASWANI7", "add_tags": ["a"], "remove_tags": ["a"]}),
            "remove_tags",
            "both",
        ),
    ] {
        let a = server.call("zotero_update_item", args.clone()).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], field, "{args}: {e}");
        assert!(e["message"].as_str().unwrap().contains(says), "{args}: {e}");
    }
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "add_collections": ["ZZZZZZZZ"]}),
        )
        .await;
    let e = a.expect_err("ZOTERO_NOT_FOUND");
    assert_eq!(e["details"]["field"], "add_collections");
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "ZZZZZZZZ", "title": "x"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    // A creator type Zotero does not know for the type: its refusal, as a validation error.
    let a = server
        .call(
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "creators": [{"creator_type": "director", "name": "X"}]}),
        )
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    // The web API refuses it; the desktop would store it as an author, so it is refused
    // before sending.
    let sent = if backend == Backend::Web { 1 } else { 0 };
    assert_eq!(
        backend.writes(&emu).len(),
        sent,
        "only the creators were sent (web): {:?}",
        backend.writes(&emu)
    );
    assert_eq!(
        data(&emu, "VASWANI7")["creators"][0]["creatorType"],
        "author"
    );
}

async fn trash_and_restore_are_idempotent_and_per_item(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let a = server
        .call(
            "zotero_trash_items",
            json!({"item_keys": ["BERTDV82", "ZZZZZZZZ", "NLPML6K7"]}),
        )
        .await;
    let d = a.expect_ok();
    let statuses: Vec<&str> = d["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["changed", "not_found", "changed"]);
    assert_eq!(
        d["counts"],
        json!({"changed": 2, "unchanged": 0, "would_change": 0, "not_written": 1})
    );
    assert!(d["results"][1]["error"]
        .as_str()
        .unwrap()
        .contains("ZZZZZZZZ"));
    for k in ["BERTDV82", "NLPML6K7"] {
        assert!(trashed(&data(&emu, k)), "{k}");
    }
    // One POST for both, each with its version.
    assert_eq!(posted(&emu, backend).len(), 1);
    assert_eq!(posted(&emu, backend)[0].as_array().unwrap().len(), 2);

    // Again: already in the trash.
    emu.reset_counts();
    let a = server
        .call("zotero_trash_items", json!({"item_keys": ["BERTDV82"]}))
        .await;
    assert_eq!(a.expect_ok()["results"][0]["status"], "unchanged");
    assert!(backend.writes(&emu).is_empty());

    // Restore.
    let a = server
        .call(
            "zotero_trash_items",
            json!({"item_keys": ["BERTDV82", "VASWANI7"], "restore": true}),
        )
        .await;
    let d = a.expect_ok();
    assert_eq!(d["results"][0]["status"], "changed");
    assert_eq!(d["results"][1]["status"], "unchanged");
    assert!(data(&emu, "BERTDV82").get("deleted").is_none());
    assert!(trashed(&data(&emu, "NLPML6K7")));
}

async fn trashing_while_the_item_is_edited_in_zotero_keeps_the_edit(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item("Z8N84QAJ").set("title", json!("Renamed in Zotero")),
        ))
        .method("POST"),
    );
    let a = server
        .call("zotero_trash_items", json!({"item_keys": ["Z8N84QAJ"]}))
        .await;
    assert_eq!(a.expect_ok()["results"][0]["status"], "changed");
    let now = data(&emu, "Z8N84QAJ");
    assert_eq!(
        (trashed(&now), &now["title"]),
        (true, &json!("Renamed in Zotero"))
    );
}

/// Twelve items of the fixture library.
const TWELVE: [&str; 12] = [
    "NM66T6EF", "PQKBRC33", "Z8N84QAJ", "PG5ZCTJT", "B2VNV5Q7", "6XDC27WD", "ICK5M93W", "Z6TE2UMT",
    "6MCAN2NC", "GIFZST3I", "CINTCPTB", "R39UWNFK",
];

#[tokio::test]
async fn trashing_many_asks_the_user_first_and_a_no_writes_nothing() {
    let emu = Emulator::start().await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let no = TestClient::confirming(false);
    let server = in_process_as(&env, no.clone()).await;
    let a = server
        .call("zotero_trash_items", json!({"item_keys": TWELVE}))
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "not_confirmed");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("nothing was written"));
    assert!(writes(&emu).is_empty());
    let asked = no.questions();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("12 items"), "{asked:?}");
    // Ten or fewer, a restore and a dry run are not asked about.
    for args in [
        json!({"item_keys": &TWELVE[..10]}),
        json!({"item_keys": TWELVE, "restore": true}),
        json!({"item_keys": TWELVE, "dry_run": true}),
    ] {
        server.call("zotero_trash_items", args).await.expect_ok();
    }
    assert_eq!(no.questions().len(), 1);

    let yes = TestClient::confirming(true);
    let server = in_process_as(&env, yes.clone()).await;
    let a = server
        .call("zotero_trash_items", json!({"item_keys": TWELVE}))
        .await;
    assert_eq!(a.expect_ok()["counts"]["changed"], 12);
    assert_eq!(yes.questions().len(), 1);
    for k in TWELVE {
        assert_eq!(data(&emu, k)["deleted"], 1, "{k}");
    }

    // A client that cannot be asked: the call goes ahead (its hints said what it does).
    let server = in_process(&env).await;
    let a = server
        .call(
            "zotero_trash_items",
            json!({"item_keys": TWELVE, "restore": true}),
        )
        .await;
    assert_eq!(a.expect_ok()["counts"]["changed"], 12);
    let a = server
        .call("zotero_trash_items", json!({"item_keys": TWELVE}))
        .await;
    assert_eq!(a.expect_ok()["counts"]["changed"], 12);
}

async fn repeated_keys_are_refused(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let a = server
        .call(
            "zotero_trash_items",
            json!({"item_keys": ["BERTDV82", "NLPML6K7", "BERTDV82"]}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "item_keys[2]");
    let a = server
        .call("zotero_trash_items", json!({"item_keys": []}))
        .await;
    a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(backend.writes(&emu).is_empty());
}

#[tokio::test]
async fn a_library_the_key_may_only_read_is_refused_with_nothing_written() {
    use zotero_emulator::{GroupSpec, KeyAccess, Library};
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(4002, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(4002, false)]));
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    for (tool, args) in [
        (
            "zotero_update_item",
            json!({"item_key": "VASWANI7", "title": "No", "library": "group:4002"}),
        ),
        (
            "zotero_trash_items",
            json!({"item_keys": ["VASWANI7"], "library": "group:4002"}),
        ),
        (
            "zotero_trash_items",
            json!({"item_keys": ["VASWANI7"], "library": "group:4002", "dry_run": true}),
        ),
    ] {
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(e["details"]["library"], "group:4002", "{tool}");
    }
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
}

crate::on_both_backends!(
    update_writes_only_what_changes_with_the_version_it_read,
    a_dry_run_answers_the_change_and_writes_nothing,
    an_edit_in_zotero_of_a_field_it_sets_stops_it_and_names_both_values,
    an_edit_in_zotero_of_other_fields_and_tags_is_kept_beside_the_change,
    a_version_given_that_is_not_current_writes_nothing,
    a_lost_answer_is_settled_by_reading_the_item,
    bad_updates_are_refused_before_anything_is_written,
    trash_and_restore_are_idempotent_and_per_item,
    trashing_while_the_item_is_edited_in_zotero_keeps_the_edit,
    repeated_keys_are_refused
);
