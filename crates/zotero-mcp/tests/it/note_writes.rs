//! Conformance of `zotero_create_note` and `zotero_update_note` against the emulator: notes
//! stored sanitized (what was removed is answered), child and standalone notes, exactly once
//! when an answer is lost, parents that cannot take notes, dry runs that write nothing,
//! updates version-checked through the edit engine (a concurrent edit of the text is a
//! conflict with both texts, bounded; one of the tags is merged; a stale `version` is
//! refused), libraries the key may not write, bad input, and Markdown that reads back as it
//! was written.

use serde_json::{json, Value};
use zotero_emulator::{
    Emulator, Fault, FaultKind, GroupSpec, KeyAccess, Library, UserAccess, ZoteroEdit, API_KEY,
    USER_ID,
};

use crate::common::{env_for, in_process, setup, writes, Backend};

/// Queues a fault for the backend under test.
fn inject(emu: &Emulator, backend: Backend, fault: Fault) {
    emu.inject(backend.fault(fault));
}

const ITEMS: &str = "/users/475425/items";
/// A journal article with a PDF (`PDF`).
const PAPER: &str = "VASWANI7";
const PDF: &str = "VASPDF23";
/// A child note of the recorded `NOTE_PARENT`.
const NOTE: &str = "PQN9TE22";
const NOTE_PARENT: &str = "PQKBRC33";
/// A highlight on `RESPDF42`, the PDF of `RESNET52`.
const ANNOTATION: &str = "RESAN2HL";
const TRASHED: &str = "TRASHD33";
const COLLECTION: &str = "RDLSTUP3";

/// The bodies of the POSTs to the items endpoint, as JSON.
fn posts(emu: &Emulator, backend: Backend) -> Vec<Value> {
    backend
        .requests(emu)
        .iter()
        .filter(|r| r.method == "POST" && r.path == ITEMS)
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

fn notes_of(emu: &Emulator, parent: &str) -> Vec<Value> {
    emu.children(parent)
        .into_iter()
        .filter(|c| c["data"]["itemType"] == "note")
        .collect()
}

fn version_of(emu: &Emulator, key: &str) -> u64 {
    emu.item(key).unwrap()["version"].as_u64().unwrap()
}

fn note_of(emu: &Emulator, key: &str) -> String {
    emu.item(key).unwrap()["data"]["note"]
        .as_str()
        .unwrap()
        .to_string()
}

fn removed(data: &Value, kind: &str, name: &str) -> bool {
    data["removed"]
        .as_array()
        .is_some_and(|r| r.iter().any(|x| x["kind"] == kind && x["name"] == name))
}

async fn a_child_note_is_stored_sanitized_with_its_parent_and_tags(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let before = notes_of(&emu, PAPER).len();
    let a = server
        .call(
            "zotero_create_note",
            json!({
                "parent_key": PAPER,
                "format": "html",
                "content": "<h2>Summary</h2><p onclick=\"steal()\">Attention <b>only</b>.</p>\
                            <script>alert('x')</script>",
                "tags": ["summary", "ai", "summary"]
            }),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(data["dry_run"], false);
    let key = data["note_key"].as_str().unwrap().to_string();
    assert_eq!(data["parent_key"], PAPER);
    assert!(removed(&data, "element", "script"), "{data}");
    assert!(removed(&data, "attribute", "onclick"), "{data}");
    assert!(data.get("html").is_none(), "{data}");
    assert_eq!(
        data["zotero_url"],
        format!("zotero://select/library/items/{key}")
    );

    // Zotero has exactly the sanitized note, under the parent, with the tags once each.
    assert_eq!(notes_of(&emu, PAPER).len(), before + 1);
    let stored = emu.item(&key).unwrap();
    let d = &stored["data"];
    assert_eq!(d["itemType"], "note");
    assert_eq!(d["parentItem"], PAPER);
    assert_eq!(d["tags"], json!([{"tag": "summary"}, {"tag": "ai"}]));
    let html = d["note"].as_str().unwrap();
    assert_eq!(
        html,
        "<div data-schema-version=\"9\"><h2>Summary</h2><p>Attention <b>only</b>.</p></div>"
    );
    assert_eq!(data["html_chars"], html.chars().count() as u64);
    assert_eq!(data["version"], stored["version"]);

    // One POST, under a key of our own, as a new object, with a write token.
    let sent = posts(&emu, backend);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0][0]["key"], key.as_str());
    assert_eq!(sent[0][0]["version"], 0);
    assert_eq!(sent[0][0]["collections"], json!([]));
    let post = backend
        .requests(&emu)
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("zotero-write-token").map(str::len), Some(32));
    server.stop().await;
}

async fn a_standalone_note_goes_into_its_collection(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let a = server
        .call(
            "zotero_create_note",
            json!({"content": "Reading plan for *next week*", "collection_key": COLLECTION}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert!(data.get("parent_key").is_none(), "{data}");
    assert_eq!(data["collection_key"], COLLECTION);
    assert!(data.get("removed").is_none(), "{data}");
    let d = emu.item(data["note_key"].as_str().unwrap()).unwrap()["data"].clone();
    assert!(d.get("parentItem").is_none(), "{d}");
    assert_eq!(d["collections"], json!([COLLECTION]));
    assert_eq!(
        d["note"],
        "<div data-schema-version=\"9\"><p>Reading plan for <em>next week</em></p>\n</div>"
    );

    // A collection that does not exist is said before anything is written.
    emu.reset_counts();
    let a = server
        .call(
            "zotero_create_note",
            json!({"content": "x", "collection_key": "ZZZZZZZZ"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_NOT_FOUND");
    assert_eq!(e["details"]["field"], "collection_key");
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    server.stop().await;
}

async fn a_create_whose_answer_is_lost_leaves_exactly_one_note(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let before = notes_of(&emu, PAPER).len();
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::Drop).on(ITEMS).method("POST"),
    );
    let a = server
        .call(
            "zotero_create_note",
            json!({"parent_key": PAPER, "content": "Lost once"}),
        )
        .await;
    let data = a.expect_ok().clone();
    let notes = notes_of(&emu, PAPER);
    assert_eq!(notes.len(), before + 1, "exactly one note");
    let made: Vec<&Value> = notes
        .iter()
        .filter(|n| n["data"]["note"].as_str().unwrap().contains("Lost once"))
        .collect();
    assert_eq!(made.len(), 1);
    assert_eq!(made[0]["key"], data["note_key"]);
    assert_eq!(made[0]["version"], data["version"]);
    let sent = posts(&emu, backend);
    if backend == Backend::Web {
        // The repeat carried the same key and token.
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0][0]["key"], sent[1][0]["key"]);
    } else {
        // Never sent again: reading the key back found the note.
        assert_eq!(sent.len(), 1);
    }
    server.stop().await;
}

#[tokio::test]
async fn parents_that_cannot_take_notes_are_refused_and_nothing_is_written() {
    let (emu, server) = setup().await;
    let call = |parent: &str| {
        server.call(
            "zotero_create_note",
            json!({"parent_key": parent, "content": "A note"}),
        )
    };
    let a = call("ZZZZZZZZ").await;
    let e = a.expect_err("ZOTERO_NOT_FOUND");
    assert_eq!(e["details"]["field"], "parent_key");
    assert!(e["message"].as_str().unwrap().contains("ZZZZZZZZ"), "{e}");

    // An attachment, a note and an annotation: each named, with the item to use instead.
    for (key, item_type, suggested) in [
        (PDF, "attachment", PAPER),
        (NOTE, "note", NOTE_PARENT),
        (ANNOTATION, "annotation", "RESNET52"),
    ] {
        let a = call(key).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], "parent_key", "{e}");
        assert_eq!(e["details"]["item_type"], item_type, "{e}");
        assert_eq!(e["details"]["suggested_parent_key"], suggested, "{e}");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains(item_type) && message.contains(suggested),
            "{message}"
        );
    }

    // A parent in the trash: refused, saying how to restore it.
    let a = call(TRASHED).await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "parent_in_trash");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("zotero_trash_items"),
        "{e}"
    );

    // A collection with a parent: Zotero files no child item in a collection.
    let a = server
        .call(
            "zotero_create_note",
            json!({"parent_key": PAPER, "collection_key": COLLECTION, "content": "x"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "collection_key");
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    assert!(notes_of(&emu, TRASHED).is_empty());
    server.stop().await;
}

async fn dry_runs_answer_what_would_be_written_and_write_nothing(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let items_before = emu.items().len();
    let a = server
        .call(
            "zotero_create_note",
            json!({
                "parent_key": PAPER,
                "content": "Fine <img src=\"https://tracker.example/p.gif\"> text",
                "dry_run": true
            }),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(data["dry_run"], true);
    assert!(data.get("note_key").is_none() && data.get("version").is_none());
    assert_eq!(
        data["html"],
        "<div data-schema-version=\"9\"><p>Fine  text</p>\n</div>"
    );
    assert!(removed(&data, "attribute", "src"), "{data}");

    let note_before = note_of(&emu, NOTE);
    let v = version_of(&emu, NOTE);
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "Replaced", "dry_run": true}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(data["dry_run"], true);
    let r = &data["result"];
    assert_eq!(r["status"], "would_change");
    assert_eq!(r["version"], v);
    assert_eq!(r["changes"][0]["field"], "note");
    assert_eq!(r["changes"][0]["before"], note_before.as_str());
    assert_eq!(
        r["changes"][0]["after"],
        "<div data-schema-version=\"9\"><p>Replaced</p>\n</div>"
    );

    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    assert_eq!(emu.items().len(), items_before);
    assert_eq!(note_of(&emu, NOTE), note_before);
    assert_eq!(version_of(&emu, NOTE), v);
    server.stop().await;
}

async fn an_update_replaces_the_text_sending_the_version_read_and_a_repeat_changes_nothing(
    backend: Backend,
) {
    let (emu, server) = backend.setup().await;
    let v = version_of(&emu, NOTE);
    let before = note_of(&emu, NOTE);
    let args =
        json!({"note_key": NOTE, "content": "## Key idea\n\nSelf-attention, **no** recurrence."});
    let a = server.call("zotero_update_note", args.clone()).await;
    let data = a.expect_ok().clone();
    let want = "<div data-schema-version=\"9\"><h2>Key idea</h2>\n<p>Self-attention, \
                <strong>no</strong> recurrence.</p>\n</div>";
    assert_eq!(note_of(&emu, NOTE), want);
    let r = &data["result"];
    assert_eq!(r["key"], NOTE);
    assert_eq!(r["status"], "changed");
    assert_eq!(r["version"], version_of(&emu, NOTE));
    assert!(version_of(&emu, NOTE) > v);
    assert_eq!(
        r["changes"],
        json!([{"field": "note", "before": before, "after": want}])
    );
    assert_eq!(data["html_chars"], want.chars().count() as u64);
    assert_eq!(
        data["zotero_url"],
        format!("zotero://select/library/items/{NOTE}")
    );
    // One POST: only the note's text, with the version it was read at.
    let sent = posts(&emu, backend);
    assert_eq!(
        sent,
        vec![json!([{"key": NOTE, "version": v, "note": want}])]
    );

    // The same call again: nothing to write.
    let a = server.call("zotero_update_note", args).await;
    let data = a.expect_ok().clone();
    assert_eq!(data["result"]["status"], "unchanged");
    assert!(data["result"].get("changes").is_none(), "{data}");
    assert_eq!(posts(&emu, backend).len(), 1);
    server.stop().await;
}

async fn a_concurrent_edit_of_the_text_is_a_conflict_with_both_texts_and_nothing_written(
    backend: Backend,
) {
    let (emu, server) = backend.setup().await;
    let before = note_of(&emu, NOTE);
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item(NOTE).set("note", json!("<p>Edited in Zotero</p>")),
        ))
        .on(ITEMS)
        .method("POST"),
    );
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "Mine"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "changed_in_zotero");
    assert_eq!(e["details"]["written"], false);
    let c = &e["details"]["conflicts"][0];
    assert_eq!(c["field"], "note");
    assert_eq!(c["before"], before.as_str());
    assert_eq!(
        c["yours"],
        "<div data-schema-version=\"9\"><p>Mine</p>\n</div>"
    );
    assert_eq!(c["in_zotero"], "<p>Edited in Zotero</p>");
    assert!(e["message"].as_str().unwrap().contains("note"), "{e}");
    // Zotero's text stays; the one write was refused.
    assert_eq!(note_of(&emu, NOTE), "<p>Edited in Zotero</p>");
    assert_eq!(posts(&emu, backend).len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_conflict_on_a_long_note_shows_where_the_texts_differ_within_bounds() {
    let (emu, server) = setup().await;
    let body = "Attention is all you need. ".repeat(800);
    let long = format!("<p>{body}</p><p>Original ending.</p>");
    emu.edit_in_zotero(&ZoteroEdit::item(NOTE).set("note", json!(long)));
    let theirs = format!("<p>{body}</p><p>Ending changed in Zotero.</p>");
    emu.inject(
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item(NOTE).set("note", json!(theirs)),
        ))
        .on(ITEMS)
        .method("POST"),
    );
    let mine = format!("<p>{body}</p><p>My ending.</p>");
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": mine, "format": "html"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    let c = &e["details"]["conflicts"][0];
    for (field, part) in [
        ("before", "Original ending."),
        ("yours", "My ending."),
        ("in_zotero", "Ending changed in Zotero."),
    ] {
        let v = c[field].as_str().unwrap();
        assert!(v.contains(part), "{field}: {v}");
        assert!(v.starts_with("[… "), "{field}: {v}");
        assert!(
            v.chars().count() < 1_000,
            "{field}: {} chars",
            v.chars().count()
        );
    }
    assert_eq!(note_of(&emu, NOTE), theirs);
    server.stop().await;
}

async fn a_concurrent_edit_of_the_tags_is_kept_with_the_new_text(backend: Backend) {
    let (emu, server) = backend.setup().await;
    inject(
        &emu,
        backend,
        Fault::once(FaultKind::EditedElsewhereWith(
            ZoteroEdit::item(NOTE).set("tags", json!([{"tag": "from-zotero"}])),
        ))
        .on(ITEMS)
        .method("POST"),
    );
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "Mine"}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(data["result"]["status"], "changed");
    let d = emu.item(NOTE).unwrap()["data"].clone();
    assert_eq!(
        d["note"],
        "<div data-schema-version=\"9\"><p>Mine</p>\n</div>"
    );
    assert_eq!(d["tags"], json!([{"tag": "from-zotero"}]));
    assert_eq!(data["result"]["version"], version_of(&emu, NOTE));
    // Refused once (412), then written at the version read again.
    let sent = posts(&emu, backend);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[1][0]["version"].as_u64().unwrap(),
        version_of(&emu, NOTE) - 1
    );
    assert!(sent[1][0].get("tags").is_none(), "{}", sent[1]);
    server.stop().await;
}

async fn a_version_older_than_the_notes_is_refused(backend: Backend) {
    let (emu, server) = backend.setup().await;
    let v = version_of(&emu, NOTE);
    let before = note_of(&emu, NOTE);
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "Mine", "version": v - 1}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["reason"], "version_changed");
    assert_eq!(e["details"]["version"], v);
    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    assert_eq!(note_of(&emu, NOTE), before);
    // The version read: written.
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "Mine", "version": v}),
        )
        .await;
    assert_eq!(a.expect_ok()["result"]["status"], "changed");
    server.stop().await;
}

#[tokio::test]
async fn only_notes_are_updated() {
    let (emu, server) = setup().await;
    for (key, item_type) in [(PAPER, "journalArticle"), (PDF, "attachment")] {
        let a = server
            .call(
                "zotero_update_note",
                json!({"note_key": key, "content": "x"}),
            )
            .await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], "note_key");
        assert_eq!(e["details"]["item_type"], item_type);
    }
    let a = server
        .call(
            "zotero_update_note",
            json!({"note_key": "ZZZZZZZZ", "content": "x"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    server.stop().await;
}

#[tokio::test]
async fn libraries_the_key_may_not_write_are_refused_with_nothing_written() {
    const READERS: u64 = 4301;
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(READERS, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(READERS, false)]));
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let group = format!("group:{READERS}");
    for (tool, args) in [
        (
            "zotero_create_note",
            json!({"parent_key": PAPER, "content": "x", "library": group}),
        ),
        (
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "x", "library": group}),
        ),
        (
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "x", "library": group, "dry_run": true}),
        ),
    ] {
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_AUTH_ERROR");
        assert_eq!(e["details"]["library"], group, "{tool}");
    }
    server.stop().await;
    // The user library, read-only.
    emu.set_key_access(KeyAccess {
        user: UserAccess::READ_ONLY,
        ..KeyAccess::default()
    });
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let a = server
        .call(
            "zotero_create_note",
            json!({"content": "x", "parent_key": PAPER}),
        )
        .await;
    a.expect_err("ZOTERO_AUTH_ERROR");
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    // Nothing was read either: the key's rights are asked first.
    assert!(
        emu.requests().iter().all(|r| r.path == "/keys/current"),
        "{:?}",
        emu.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_argument_before_any_request() {
    let (emu, server) = setup().await;
    let too_long = "a".repeat(500_001);
    for (tool, args, field) in [
        ("zotero_create_note", json!({"content": " "}), "content"),
        (
            "zotero_create_note",
            json!({"content": too_long}),
            "content",
        ),
        (
            "zotero_create_note",
            json!({"content": "x", "format": "rtf"}),
            "format",
        ),
        (
            "zotero_create_note",
            json!({"content": "x", "parent_key": "paper"}),
            "parent_key",
        ),
        (
            "zotero_create_note",
            json!({"content": "x", "tags": [""]}),
            "tags[0]",
        ),
        (
            "zotero_create_note",
            json!({"content": "<b>".repeat(20_000), "format": "html"}),
            "content",
        ),
        ("zotero_update_note", json!({"content": "x"}), "note_key"),
        (
            "zotero_update_note",
            json!({"note_key": NOTE, "content": "x", "version": -1}),
            "version",
        ),
        (
            "zotero_update_note",
            json!({"note_key": NOTE, "content": ""}),
            "content",
        ),
    ] {
        let a = server.call(tool, args).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], field, "{tool}: {e}");
        assert!(
            e["message"].as_str().unwrap().chars().count() < 2_100,
            "{e}"
        );
    }
    assert!(emu.requests().is_empty(), "{:?}", writes(&emu));
    server.stop().await;
}

#[tokio::test]
async fn markdown_written_reads_back_the_same_through_get_notes() {
    let (_emu, server) = setup().await;
    let markdown = "# Findings\n\n\
                    The *model* uses **attention** only.\n\n\
                    *   parallel\n*   fast\n\n\
                    1.  encode\n2.  decode\n\n\
                    See [the paper](https://arxiv.org/abs/1706.03762).";
    let a = server
        .call(
            "zotero_create_note",
            json!({"parent_key": PAPER, "content": markdown}),
        )
        .await;
    let key = a.expect_ok()["note_key"].as_str().unwrap().to_string();
    let a = server
        .call("zotero_get_notes", json!({"item_key": key}))
        .await;
    let data = a.expect_ok().clone();
    assert_eq!(data["notes"][0]["parent_key"], PAPER);
    assert_eq!(
        data["notes"][0]["markdown"].as_str().unwrap().trim(),
        markdown
    );
    assert_eq!(data["notes"][0]["title"], "Findings");
    server.stop().await;
}

crate::on_both_backends!(
    a_child_note_is_stored_sanitized_with_its_parent_and_tags,
    a_standalone_note_goes_into_its_collection,
    a_create_whose_answer_is_lost_leaves_exactly_one_note,
    dry_runs_answer_what_would_be_written_and_write_nothing,
    an_update_replaces_the_text_sending_the_version_read_and_a_repeat_changes_nothing,
    a_concurrent_edit_of_the_text_is_a_conflict_with_both_texts_and_nothing_written,
    a_concurrent_edit_of_the_tags_is_kept_with_the_new_text,
    a_version_older_than_the_notes_is_refused
);
