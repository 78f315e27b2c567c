//! `zotero_get_item_metadata` against the emulator: every field by its Zotero name, typed
//! tags, collections with names, relations, links (`zotero_url`, `web_url`) in the user
//! library, a group and the desktop's local API; Markdown and Zotero's BibTeX; the peer's
//! parameter names; answers bounded.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, GroupSpec, Library, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

const GROUP: u64 = 5150;

async fn setup() -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, s)
}

/// A server on the desktop's local API alone.
async fn local_only(emu: &Emulator) -> Server {
    let env: Vec<(String, String)> = [
        ("ZOTERO_LOCAL", "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE", emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    in_process(&env).await
}

async fn metadata(s: &Server, args: Value) -> Value {
    s.call("zotero_get_item_metadata", args)
        .await
        .expect_ok()
        .clone()
}

fn check_vaswani(item: &Value) {
    let fields = &item["fields"];
    assert_eq!(fields["title"], "Attention Is All You Need");
    assert_eq!(fields["DOI"], "10.48550/arXiv.1706.03762");
    assert_eq!(
        fields["publicationTitle"],
        "Advances in Neural Information Processing Systems"
    );
    assert_eq!(fields["pages"], "5998-6008");
    assert_eq!(fields["accessDate"], "2024-01-15T10:00:00Z");
    assert!(fields["abstractNote"]
        .as_str()
        .unwrap()
        .starts_with("The dominant sequence"));
    // Empty fields are left out, and what has a place of its own is not a field.
    for absent in [
        "ISSN",
        "series",
        "creators",
        "tags",
        "collections",
        "key",
        "itemType",
    ] {
        assert!(fields.get(absent).is_none(), "{absent} in {fields}");
    }
    assert_eq!(item["item_type"], "journalArticle");
    assert_eq!(item["title"], "Attention Is All You Need");
    assert_eq!(item["creators"].as_array().unwrap().len(), 8);
    assert_eq!(item["creators"][6]["first_name"], "Łukasz");
    assert!(item["tags"]
        .as_array()
        .unwrap()
        .contains(&json!({"tag": "transformers", "type": 0})));
    assert_eq!(item["num_children"], 2);
    assert!(item["date_added"].is_string());
}

#[tokio::test]
async fn every_field_with_collections_tags_and_links_in_the_user_library() {
    let (emu, s) = setup().await;
    let data = metadata(&s, json!({"item_key": "VASWANI7"})).await;
    assert_eq!(data["format"], "json");
    assert_eq!(data["zotero_url"], "zotero://select/library/items/VASWANI7");
    // links.alternate, as the web API writes it: the user's page on zotero.org.
    assert_eq!(
        data["web_url"],
        "https://www.zotero.org/z_public_library/items/VASWANI7"
    );
    let item = &data["item"];
    check_vaswani(item);
    assert_eq!(
        item["collections"],
        json!([
            {"collection_key": "RDLSTUP3", "name": "Reading List"},
            {"collection_key": "TRNSFM52", "name": "Transformers"}
        ])
    );
    // One read of the item, one of each collection's name.
    assert_eq!(emu.count("GET", &format!("/users/{USER_ID}/items")), 1);
    assert_eq!(
        emu.count("GET", &format!("/users/{USER_ID}/collections")),
        2
    );

    // A child: its parent, no collections; automatic tags carry type 1.
    let note = metadata(&s, json!({"item_key": "PQN9TE22"})).await;
    assert_eq!(note["item"]["parent_item_key"], "PQKBRC33");
    assert!(note["item"]["fields"]["note"].is_string());
    let book = metadata(&s, json!({"item_key": "X42A7DEE"})).await;
    assert!(book["item"]["tags"]
        .as_array()
        .unwrap()
        .contains(&json!({"tag": "Analysis", "type": 1})));
    assert_eq!(
        book["item"]["creators"][0]["name"],
        "Institute of Physics (Great Britain)"
    );
    // In the trash: said so.
    let trashed = metadata(&s, json!({"item_key": "TRASHD33"})).await;
    assert_eq!(trashed["item"]["in_trash"], true);

    let missing = s
        .call("zotero_get_item_metadata", json!({"item_key": "ZZZZZZZZ"}))
        .await;
    missing.expect_err("ZOTERO_NOT_FOUND");
    let bad = s
        .call("zotero_get_item_metadata", json!({"item_key": "nope"}))
        .await;
    assert_eq!(
        bad.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_key"
    );
}

#[tokio::test]
async fn the_peers_parameters_markdown_and_bibtex() {
    let (emu, s) = setup().await;
    let md = metadata(
        &s,
        json!({"item_key": "VASWANI7", "format": "markdown", "include_abstract": true}),
    )
    .await;
    assert!(md.get("item").is_none());
    let text = md["markdown"].as_str().unwrap();
    assert!(text.starts_with("# Attention Is All You Need\n"), "{text}");
    for part in [
        "- **Item Type:** Journal Article",
        "- **Authors:** Ashish Vaswani; Noam Shazeer;",
        "- **DOI:** 10.48550/arXiv.1706.03762",
        "- **Publication:** Advances in Neural Information Processing Systems",
        "`transformers`",
        "Reading List (RDLSTUP3)",
        "[Open in Zotero](zotero://select/library/items/VASWANI7)",
        "[zotero.org](https://www.zotero.org/z_public_library/items/VASWANI7)",
        "## Abstract\n\nThe dominant sequence",
    ] {
        assert!(text.contains(part), "{part} not in:\n{text}");
    }
    let short = metadata(
        &s,
        json!({"item_key": "VASWANI7", "format": "markdown", "include_abstract": false}),
    )
    .await;
    assert!(!short["markdown"].as_str().unwrap().contains("Abstract"));
    let json_short = metadata(
        &s,
        json!({"item_key": "VASWANI7", "include_abstract": false}),
    )
    .await;
    assert!(json_short["item"]["fields"].get("abstractNote").is_none());
    // null counts as not given.
    let defaults = metadata(
        &s,
        json!({"item_key": "VASWANI7", "format": null, "include_abstract": null}),
    )
    .await;
    assert!(defaults["item"]["fields"]["abstractNote"].is_string());

    emu.reset_counts();
    let bib = metadata(&s, json!({"item_key": "VASWANI7", "format": "bibtex"})).await;
    let text = bib["bibtex"].as_str().unwrap();
    // Zotero's own export, as its translator wrote it.
    assert!(
        text.starts_with("\n@article{vaswani_attention_2017,\n"),
        "{text}"
    );
    assert!(
        text.contains("\tdoi = {10.48550/arXiv.1706.03762},\n"),
        "{text}"
    );
    assert!(bib["web_url"].is_string());
    let reads: Vec<String> = emu
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/items/VASWANI7"))
        .map(|r| format!("{:?}", r.query))
        .collect();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads[0].contains("data,bibtex"), "{reads:?}");
    let wrong = s
        .call(
            "zotero_get_item_metadata",
            json!({"item_key": "VASWANI7", "format": "yaml"}),
        )
        .await;
    assert_eq!(
        wrong.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "format"
    );
}

#[tokio::test]
async fn a_group_item_has_the_groups_links() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures());
    emu.set_key_access(zotero_emulator::KeyAccess::groups(&[(GROUP, false)]));
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    let library = format!("group:{GROUP}");
    let data = metadata(&s, json!({"item_key": "VASWANI7", "library": library})).await;
    assert_eq!(
        data["zotero_url"],
        format!("zotero://select/groups/{GROUP}/items/VASWANI7")
    );
    let web = data["web_url"].as_str().unwrap();
    assert!(
        web.starts_with("https://www.zotero.org/groups/") && web.ends_with("/items/VASWANI7"),
        "{web}"
    );
    check_vaswani(&data["item"]);
    assert_eq!(data["item"]["collections"][0]["name"], "Reading List");
    assert!(emu
        .requests()
        .iter()
        .all(|r| r.path.starts_with(&format!("/groups/{GROUP}/"))));
    let md = metadata(
        &s,
        json!({"item_key": "VASWANI7", "library": library, "format": "markdown"}),
    )
    .await;
    assert!(md["markdown"]
        .as_str()
        .unwrap()
        .contains(&format!("zotero://select/groups/{GROUP}/items/VASWANI7")));
}

#[tokio::test]
async fn the_local_api_answers_every_format() {
    let emu = Emulator::start().await;
    let s = local_only(&emu).await;
    let data = metadata(&s, json!({"item_key": "VASWANI7"})).await;
    check_vaswani(&data["item"]);
    assert_eq!(data["zotero_url"], "zotero://select/library/items/VASWANI7");
    // The desktop's alternate link: zotero.org by the user's id.
    assert_eq!(
        data["web_url"],
        format!("https://www.zotero.org/users/{USER_ID}/items/VASWANI7")
    );
    let bib = metadata(&s, json!({"item_key": "VASWANI7", "format": "bibtex"})).await;
    assert!(bib["bibtex"]
        .as_str()
        .unwrap()
        .contains("@article{vaswani_attention_2017,"));
    let md = metadata(&s, json!({"item_key": "X42A7DEE", "format": "markdown"})).await;
    let text = md["markdown"].as_str().unwrap();
    assert!(
        text.contains(
            "- **Author:** Institute of Physics (Great Britain)\n- **Contributors:** A. J Craven;"
        ),
        "{text}"
    );
    assert!(emu.requests().is_empty(), "the web API was asked");
    assert!(emu
        .local_requests()
        .iter()
        .any(|r| r.path == "/api/users/0/items/VASWANI7"));
}

#[tokio::test]
async fn a_huge_note_is_cut_and_says_where_to_read_it() {
    let mut lib = Library::from_fixtures();
    let mut note = lib
        .items
        .iter()
        .find(|i| i["key"] == "VASNOTE4")
        .unwrap()
        .clone();
    note["key"] = json!("BGN7TE22");
    note["data"]["key"] = json!("BGN7TE22");
    let html = format!("<p>{}</p>", "é".repeat(300_000));
    note["data"]["note"] = json!(html);
    lib.items.push(note);
    // An item with a thousand long tags and five hundred creators.
    let mut crowded = lib
        .items
        .iter()
        .find(|i| i["key"] == "VASWANI7")
        .unwrap()
        .clone();
    crowded["key"] = json!("CRWD7D22");
    crowded["data"]["key"] = json!("CRWD7D22");
    crowded["data"]["tags"] = (0..1000)
        .map(|i| json!({"tag": format!("{i:04}-{}", "ü".repeat(120))}))
        .collect();
    crowded["data"]["creators"] = (0..500)
        .map(|i| json!({"creatorType": "author", "firstName": "Å".repeat(100), "lastName": format!("N{i}")}))
        .collect();
    lib.items.push(crowded);
    let emu = Emulator::with_library(lib).await;
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    for format in ["json", "markdown"] {
        let a = s
            .call(
                "zotero_get_item_metadata",
                json!({"item_key": "BGN7TE22", "format": format}),
            )
            .await;
        let data = a.expect_ok();
        assert!(a.text.len() < 100_000, "{format}: {} bytes", a.text.len());
        let cut = data["truncated"][0].as_str().unwrap();
        assert!(cut.starts_with("fields.note"), "{cut}");
        assert!(cut.contains("zotero_get_notes"), "{cut}");
        let a = s
            .call(
                "zotero_get_item_metadata",
                json!({"item_key": "CRWD7D22", "format": format}),
            )
            .await;
        let data = a.expect_ok();
        assert!(a.text.len() < 100_000, "{format}: {} bytes", a.text.len());
        let cuts = data["truncated"].to_string();
        assert!(cuts.contains("creators: the first"), "{cuts}");
        assert!(cuts.contains("of 1000"), "{cuts}");
    }
}
