//! Conformance of `zotero_get_item_children`, `zotero_get_notes` and `zotero_get_annotations`
//! on the emulator's `RESNET52` (fixtures/library/reading.json): summaries in order, notes as
//! safe Markdown, long notes bounded and read on by offset, annotations in reading order with
//! colour names, filters and `zotero://` links; on the user library, a group and the desktop's
//! local API.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, GroupSpec, KeyAccess, Library, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

const PAPER: &str = "RESNET52";
const PDF: &str = "RESPDF42";
const EPUB: &str = "RESEPB43";
const NOTES: &str = "RESNTS52";
const CLIP: &str = "RESCLP53";
const GROUP: u64 = 4101;

/// The PDF's annotations in reading order (sort index), then the EPUB's.
const READING_ORDER: [&str; 11] = [
    "RESAN2HL", "RESAN6MG", "RESAN3UL", "RESANACU", "RESAN4NT", "RESAN5TX", "RESAN7NK", "RESAN8HL",
    "RESAN9GY", "RESANCEN", "RESANBEH",
];

async fn setup() -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    (emu, server)
}

fn keys(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|v| v[field].as_str().unwrap().to_string())
        .collect()
}

/// Every page of `tool`'s `list`, following next_start.
async fn walk(s: &Server, tool: &str, mut args: Value, list: &str) -> (Vec<Value>, u64) {
    let (mut all, mut start, mut total) = (Vec::new(), 0u64, None);
    for _ in 0..50 {
        args["start"] = json!(start);
        let a = s.call(tool, args.clone()).await;
        let data = a.expect_ok().clone();
        let t = data["total"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(t), t, "total is stable");
        all.extend(data[list].as_array().unwrap().iter().cloned());
        match data["next_start"].as_u64() {
            Some(next) => {
                assert_eq!(next, all.len() as u64, "no gap, no overlap");
                start = next;
            }
            None => return (all, t),
        }
    }
    panic!("more than 50 pages");
}

/// What the three tools promise on one library, whichever backend answers.
async fn check_library(s: &Server, library: &str, url_lib: &str) {
    // Children: attachments and notes oldest first, then the annotations in reading order.
    let (children, total) = walk(
        s,
        "zotero_get_item_children",
        json!({"item_key": PAPER, "library": library, "limit": 4}),
        "children",
    )
    .await;
    let mut want = vec![PDF, EPUB, NOTES, CLIP];
    want.extend(READING_ORDER);
    assert_eq!(keys(&json!(children), "key"), want);
    assert_eq!(total, 15);
    let by_key = |k: &str| children.iter().find(|c| c["key"] == k).unwrap().clone();
    let pdf = by_key(PDF);
    assert_eq!(
        (
            &pdf["kind"],
            &pdf["title"],
            &pdf["content_type"],
            &pdf["link_mode"]
        ),
        (
            &json!("attachment"),
            &json!("Full Text PDF"),
            &json!("application/pdf"),
            &json!("imported_file")
        )
    );
    assert_eq!(
        pdf["zotero_url"],
        format!("zotero://select/{url_lib}/items/{PDF}")
    );
    let note = by_key(NOTES);
    assert_eq!(note["kind"], "note");
    assert_eq!(note["title"], "Residual learning: reading notes");
    assert_eq!(note["parent_key"], PAPER);
    let hl = by_key("RESAN2HL");
    assert_eq!(
        (
            &hl["kind"],
            &hl["annotation_type"],
            &hl["color"],
            &hl["page_label"]
        ),
        (
            &json!("annotation"),
            &json!("highlight"),
            &json!("Yellow"),
            &json!("770")
        )
    );
    assert_eq!(hl["parent_key"], PDF);
    assert!(hl["title"]
        .as_str()
        .unwrap()
        .starts_with("We explicitly reformulate"));
    assert_eq!(by_key("RESAN7NK")["title"], "[ink]");
    assert_eq!(by_key("RESANACU")["color"], "#009980");
    assert_eq!(
        by_key("RESAN4NT")["title"],
        "Compare with highway networks."
    );

    // Kinds, and an attachment's children (its annotations).
    let notes_only = s
        .call(
            "zotero_get_item_children",
            json!({"item_key": PAPER, "library": library, "kinds": ["note"]}),
        )
        .await;
    assert_eq!(
        keys(&notes_only.expect_ok()["children"], "key"),
        [NOTES, CLIP]
    );
    let of_pdf = s
        .call(
            "zotero_get_item_children",
            json!({"item_key": PDF, "library": library}),
        )
        .await;
    assert_eq!(
        keys(&of_pdf.expect_ok()["children"], "key"),
        READING_ORDER[..9].to_vec()
    );

    // Notes as Markdown.
    let a = s
        .call(
            "zotero_get_notes",
            json!({"item_key": PAPER, "library": library}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["total"], 2);
    assert_eq!(keys(&data["notes"], "note_key"), [NOTES, CLIP]);
    let n = &data["notes"][0];
    assert_eq!(n["parent_key"], PAPER);
    assert_eq!(n["title"], "Residual learning: reading notes");
    assert_eq!(n["tags"], json!(["reading-notes"]));
    assert_eq!(
        n["zotero_url"],
        format!("zotero://select/{url_lib}/items/{NOTES}")
    );
    assert!(n.get("truncated").is_none(), "{n}");
    let md = n["markdown"].as_str().unwrap();
    for want in [
        "# Residual learning: reading notes",
        "## Key claims",
        "**deeper**",
        "*worse*",
        "*   Identity shortcuts add no parameters.",
        "    *   bottleneck blocks for depth ≥ 50",
        "| Model      | Top-5 error (%) |\n| ---------- | --------------- |",
        "| ResNet-152 | 3.57            |",
        "1.  Train 18- and 34-layer plain nets",
        "> Deeper neural networks are more difficult to train.",
        "```\ny = F(x, {W_i}) + x\n```",
        "“We explicitly reformulate the layers as learning residual functions",
        "[(He et al., 2016, p. 770)](zotero://select/library/items/RESNET52)",
        "`torchvision.models.resnet50`",
        "[arXiv](https://arxiv.org/abs/1512.03385)",
        "[open](zotero://select/library/items/RESNET52)",
    ] {
        assert!(md.contains(want), "{want:?} not in:\n{md}");
    }
    assert_eq!(n["total_chars"], md.chars().count());
    // The hostile clip keeps its text and loses everything active.
    let clip = data["notes"][1]["markdown"].as_str().unwrap();
    for gone in [
        "document.cookie",
        "evil.example",
        "background",
        "javascript",
        "alert(document",
        "clicked",
        "alert(2)",
        "alert(3)",
        "alert(4)",
        "onclick",
        "steal",
        "tracker.example",
        "secret",
        "<",
    ] {
        let allowed = gone == "<" && clip.matches('<').count() == clip.matches("\\<").count();
        assert!(allowed || !clip.contains(gone), "{gone:?} in:\n{clip}");
    }
    for kept in [
        "## Clipped from the web",
        "Hover over this paragraph.",
        "a harmless-looking link and an encoded one and [Wikipedia](https://en.wikipedia.org/wiki/Residual_neural_network).",
        "\\[image: tracking pixel\\]",
        "Escaped markup stays text: \\<script>",
    ] {
        assert!(clip.contains(kept), "{kept:?} not in:\n{clip}");
    }

    // One note by its key; an annotation is refused, naming the field.
    let one = s
        .call(
            "zotero_get_notes",
            json!({"item_key": CLIP, "library": library}),
        )
        .await;
    assert_eq!(keys(&one.expect_ok()["notes"], "note_key"), [CLIP]);
    let e = s
        .call(
            "zotero_get_notes",
            json!({"item_key": "RESAN2HL", "library": library}),
        )
        .await;
    assert_eq!(
        e.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_key"
    );

    // Annotations in reading order, every field.
    let (anns, total) = walk(
        s,
        "zotero_get_annotations",
        json!({"item_key": PAPER, "library": library, "limit": 3}),
        "annotations",
    )
    .await;
    assert_eq!(total, 11);
    assert_eq!(keys(&json!(anns), "annotation_key"), READING_ORDER);
    let hl = &anns[0];
    assert_eq!(
        hl,
        &json!({
            "annotation_key": "RESAN2HL", "attachment_key": PDF, "type": "highlight",
            "text": "We explicitly reformulate the layers as learning residual functions with reference to the layer inputs",
            "comment": "The core idea.", "color": "#ffd400", "color_name": "Yellow",
            "page_label": "770", "sort_index": "00000|000412|00210", "tags": ["key-claim"],
            "date_added": "2024-02-01T09:00:00Z", "date_modified": "2024-02-01T09:00:00Z",
            "version": 12,
            "zotero_url": format!("zotero://open-pdf/{url_lib}/items/{PDF}?annotation=RESAN2HL"),
        })
    );
    let names: Vec<(String, Value)> = anns
        .iter()
        .map(|a| {
            (
                a["annotation_key"].as_str().unwrap().to_string(),
                a["color_name"].clone(),
            )
        })
        .collect();
    for (key, name) in [
        ("RESAN3UL", json!("Red")),
        ("RESAN4NT", json!("Green")),
        ("RESAN5TX", json!("Blue")),
        ("RESAN6MG", json!("Purple")),
        ("RESAN7NK", json!("Magenta")),
        ("RESAN8HL", json!("Orange")),
        ("RESAN9GY", json!("Gray")),
        ("RESANACU", Value::Null),
    ] {
        assert!(
            names.contains(&(key.to_string(), name.clone())),
            "{key} {name}"
        );
    }
    let custom = anns
        .iter()
        .find(|a| a["annotation_key"] == "RESANACU")
        .unwrap();
    assert_eq!(custom["author"], "Kaiming H.");
    let ink = anns
        .iter()
        .find(|a| a["annotation_key"] == "RESAN7NK")
        .unwrap();
    assert!(
        ink.get("text").is_none() && ink.get("comment").is_none(),
        "{ink}"
    );
    let epub = anns
        .iter()
        .find(|a| a["annotation_key"] == "RESANBEH")
        .unwrap();
    assert_eq!(epub["attachment_key"], EPUB);
    assert!(epub.get("page_label").is_none(), "{epub}");

    // Filters: any of the types, any of the colours (hex or name), all of the tags.
    for (filter, want) in [
        (
            json!({"types": ["highlight"]}),
            vec!["RESAN2HL", "RESANACU", "RESAN8HL", "RESAN9GY", "RESANBEH"],
        ),
        (
            json!({"types": ["image", "ink"]}),
            vec!["RESAN6MG", "RESAN7NK"],
        ),
        (json!({"colors": ["yellow"]}), vec!["RESAN2HL", "RESANBEH"]),
        (
            json!({"colors": ["#FF6666", "Gray"]}),
            vec!["RESAN3UL", "RESAN9GY"],
        ),
        (json!({"colors": ["#009980"]}), vec!["RESANACU"]),
        (json!({"tags": ["KEY-CLAIM"]}), vec!["RESAN2HL", "RESAN8HL"]),
        (json!({"tags": ["key-claim", "results"]}), vec!["RESAN8HL"]),
        (
            json!({"types": ["highlight"], "colors": ["Yellow"], "tags": ["key-claim"]}),
            vec!["RESAN2HL"],
        ),
        (
            json!({"types": ["underline"], "colors": ["yellow"]}),
            vec![],
        ),
    ] {
        let mut args = filter.clone();
        args["item_key"] = json!(PAPER);
        args["library"] = json!(library);
        let a = s.call("zotero_get_annotations", args).await;
        let data = a.expect_ok();
        assert_eq!(
            keys(&data["annotations"], "annotation_key"),
            want,
            "{filter}"
        );
        assert_eq!(data["total"], want.len(), "{filter}");
    }
    // One attachment's, one annotation by its key; a note has none.
    let a = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": EPUB, "library": library}),
        )
        .await;
    assert_eq!(
        keys(&a.expect_ok()["annotations"], "annotation_key"),
        ["RESANCEN", "RESANBEH"]
    );
    let a = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": "RESAN8HL", "library": library}),
        )
        .await;
    assert_eq!(a.expect_ok()["annotations"][0]["text"], "152 layers");
    let e = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": NOTES, "library": library}),
        )
        .await;
    assert_eq!(
        e.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_key"
    );
    // Text and comment are cut at max_chars, and say so.
    let a = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": PDF, "library": library, "limit": 1, "max_chars": 50}),
        )
        .await;
    let first = &a.expect_ok()["annotations"][0];
    assert_eq!(first["text"].as_str().unwrap().chars().count(), 50);
    assert_eq!(first["truncated"], true);
    assert_eq!(a.expect_ok()["next_start"], 1);
}

#[tokio::test]
async fn the_user_library() {
    let (_emu, s) = setup().await;
    check_library(&s, "user", "library").await;
    // Unknown keys and bad filters.
    let a = s
        .call("zotero_get_notes", json!({"item_key": "ZZZZZZZZ"}))
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    let a = s
        .call(
            "zotero_get_annotations",
            json!({"item_key": PAPER, "colors": ["teal"]}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "colors[0]");
    assert!(e["message"].as_str().unwrap().contains("Magenta"), "{e}");
    let a = s
        .call(
            "zotero_get_item_children",
            json!({"item_key": PAPER, "kinds": ["collection"]}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "kinds[0]"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_group_library() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    check_library(&s, &format!("group:{GROUP}"), &format!("groups/{GROUP}")).await;
    assert!(emu
        .requests()
        .iter()
        .filter(|r| r.path.contains("/items"))
        .all(|r| r.path.starts_with(&format!("/groups/{GROUP}/"))));
    s.stop().await;
}

#[tokio::test]
async fn the_desktop_local_api() {
    let emu = Emulator::start().await;
    let env: Vec<(String, String)> = [
        ("ZOTERO_LOCAL", "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE", emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let s = in_process(&env).await;
    check_library(&s, "user", "library").await;
    assert!(emu.requests().is_empty(), "the web API was asked");
    assert!(emu
        .local_requests()
        .iter()
        .any(|r| r.path == format!("/api/users/0/items/{PDF}/children")));
    s.stop().await;
}

/// A library with `n` long notes under the paper, each of `chars` characters of text.
pub(crate) fn with_long_notes(n: usize, chars: usize) -> Library {
    let mut lib = Library::from_fixtures();
    let template = lib
        .items
        .iter()
        .find(|i| i["key"] == NOTES)
        .unwrap()
        .clone();
    for i in 0..n {
        let key = format!("LNGNTS{}2", char::from(b'A' + i as u8));
        let body: String = (0..chars / 10)
            .map(|j| format!("é{:08}·", j % 100_000_000))
            .collect();
        let mut note = template.clone();
        note["key"] = json!(key);
        note["data"]["key"] = json!(key);
        note["data"]["note"] = json!(format!("<h1>Long {i}</h1><p>{body}</p>"));
        note["data"]["dateAdded"] = json!(format!("2025-01-01T00:00:{:02}Z", i));
        lib.items.push(note);
    }
    lib
}

#[tokio::test]
async fn long_notes_are_bounded_and_read_on_by_offset() {
    let emu = Emulator::with_library(with_long_notes(6, 40_000)).await;
    let s = in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await;
    // Defaults: up to 5 notes a page, 8,000 characters each, as many as fit in the budget
    // of 20,000 characters; next_start says where the others start.
    let a = s.call("zotero_get_notes", json!({"item_key": PAPER})).await;
    let data = a.expect_ok();
    assert_eq!(data["total"], 8);
    let shown = data["notes"].as_array().unwrap().len();
    assert!((1..5).contains(&shown), "{shown}");
    assert_eq!(data["next_start"], shown);
    let size = a.text.chars().count();
    assert!(size <= 20_000, "{size} characters");
    let long = data["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["title"] == "Long 0")
        .unwrap()
        .clone();
    assert_eq!(long["truncated"], true);
    assert_eq!(long["markdown"].as_str().unwrap().chars().count(), 8_000);
    assert_eq!(long["next_offset"], 8_000);

    // Reading on by offset gives back the whole note, with no gap and no overlap.
    let key = long["note_key"].as_str().unwrap();
    let total = long["total_chars"].as_u64().unwrap();
    assert!(total > 40_000, "{total}");
    let (mut text, mut offset) = (String::new(), 0u64);
    for _ in 0..10 {
        let a = s
            .call(
                "zotero_get_notes",
                json!({"item_key": key, "offset": offset, "max_chars": 10_000}),
            )
            .await;
        let n = a.expect_ok()["notes"][0].clone();
        text.push_str(n["markdown"].as_str().unwrap());
        match n["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(text.chars().count() as u64, total);
    assert!(
        text.starts_with("# Long 0\n\né00000000·é00000001·"),
        "{}",
        &text[..40]
    );
    assert!(text.ends_with("é00003999·"), "the end is read");
    s.stop().await;
}
