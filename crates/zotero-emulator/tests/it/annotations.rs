//! Self-test of annotation items on the web API's write path: what the dataserver accepts
//! (`tests/remote/tests/3/annotation.test.js`) and refuses, with its messages
//! (`Zotero_Items::validateJSONItem`, `Zotero_Item::setAnnotationField` and `save`).

use serde_json::{json, Value};
use zotero_emulator::testing::{get, lib, post_items};
use zotero_emulator::Emulator;

/// The fixture's PDF attachment (`fixtures/library/reading.json`), its EPUB, and the regular
/// item both belong to.
const PDF: &str = "RESPDF42";
const EPUB: &str = "RESEPB43";
const PAPER: &str = "RESNET52";
/// A linked URL: an attachment, but not a file.
const LINKED_URL: &str = "BERTLN93";

fn highlight() -> Value {
    json!({
        "itemType": "annotation",
        "parentItem": PDF,
        "annotationType": "highlight",
        "annotationText": "This is highlighted text.",
        "annotationComment": "why it matters",
        "annotationColor": "#ff8c19",
        "annotationPageLabel": "10",
        "annotationSortIndex": "00015|002431|00000",
        "annotationPosition": "{\"pageIndex\":15,\"rects\":[[314.4,412.8,556.2,609.6]]}",
    })
}

/// Posts one object; answers its failure (code, message), or `None` when it was saved.
async fn post_one(emu: &Emulator, obj: Value) -> Option<(u64, String)> {
    let r = post_items(emu, &json!([obj]), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let f = &v["failed"]["0"];
    if f.is_null() {
        assert!(v["successful"]["0"].is_object(), "{v}");
        return None;
    }
    Some((
        f["code"].as_u64().unwrap_or(0),
        f["message"].as_str().unwrap_or("").to_string(),
    ))
}

#[tokio::test]
async fn a_valid_highlight_is_stored_field_for_field() {
    let emu = Emulator::start().await;
    let r = post_items(&emu, &json!([highlight()]), &[]).await;
    let v = r.json();
    let key = v["successful"]["0"]["key"]
        .as_str()
        .expect("saved")
        .to_string();
    let stored = get(&emu, &lib(&format!("items/{key}"))).await.json();
    let d = &stored["data"];
    for (k, want) in highlight().as_object().expect("object") {
        assert_eq!(&d[k], want, "{k}");
    }
    // A colour left out is Zotero's yellow.
    let mut plain = highlight();
    plain
        .as_object_mut()
        .expect("object")
        .remove("annotationColor");
    let r = post_items(&emu, &json!([plain]), &[]).await.json();
    assert_eq!(r["successful"]["0"]["data"]["annotationColor"], "#ffd400");
    // A note on the EPUB, with the EPUB's sort index form.
    let note = json!({"itemType": "annotation", "parentItem": EPUB, "annotationType": "note",
        "annotationComment": "c", "annotationSortIndex": "00002|00000010",
        "annotationPosition": "{}"});
    assert_eq!(post_one(&emu, note).await, None);
}

#[tokio::test]
async fn bad_annotations_are_refused_with_the_servers_messages() {
    let emu = Emulator::start().await;
    let before = emu.library_version();
    let with = |k: &str, v: Value| {
        let mut o = highlight();
        o[k] = v;
        o
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            with("annotationColor", json!("ff8c19")),
            "annotationColor must be a hex color (e.g., '#FF0000')",
        ),
        (
            with("annotationColor", json!("#FF8C19")),
            "annotationColor must be a hex color (e.g., '#FF0000')",
        ),
        (
            with("annotationType", json!("note")),
            "'annotationText' can only be set for highlight and underline annotations",
        ),
        (
            // Without text: validateJSONItem would refuse the text before the type.
            json!({"itemType": "annotation", "parentItem": PDF, "annotationType": "circle"}),
            "annotationType must be 'highlight', 'note', 'image', 'text', or 'ink'",
        ),
        (
            with("annotationType", json!("circle")),
            "'annotationText' can only be set for highlight and underline annotations",
        ),
        (
            with("parentItem", json!(PAPER)),
            "Parent item 475425/RESNET52 of annotation must be a file attachment",
        ),
        (
            with("parentItem", json!(LINKED_URL)),
            "Parent item 475425/BERTLN93 of annotation must be a file attachment",
        ),
        (
            with("annotationSortIndex", json!("0000")),
            "Invalid sortIndex '0000'",
        ),
        (
            with("annotationPageLabel", json!("x".repeat(51))),
            "Annotation page label is too long for attachment RESPDF42",
        ),
        (
            with(
                "annotationPosition",
                json!(format!(
                    "{{\"pageIndex\":1,\"rects\":[[{}]]}}",
                    "1,".repeat(33_000)
                )),
            ),
            "Annotation position is too long for attachment RESPDF42",
        ),
        (
            with("annotationPosition", json!({"pageIndex": 1, "rects": []})),
            "annotationPosition must be a string",
        ),
        (
            {
                let mut o = highlight();
                o.as_object_mut().expect("object").remove("parentItem");
                o
            },
            "Annotation item must have a parent item",
        ),
        (
            json!({"itemType": "annotation", "parentItem": EPUB, "annotationType": "image",
                   "annotationSortIndex": "00002|00000010", "annotationPosition": "{}"}),
            "Parent attachment 475425/RESEPB43 of image annotation must be a PDF",
        ),
    ];
    for (obj, message) in cases {
        assert_eq!(
            post_one(&emu, obj).await,
            Some((400, message.to_string())),
            "{message}"
        );
    }
    // An empty annotationText is refused on a note too (the key alone is enough).
    let mut note = highlight();
    note["annotationType"] = json!("note");
    note["annotationText"] = json!("");
    assert!(post_one(&emu, note).await.is_some());
    assert_eq!(emu.library_version(), before, "nothing was written");
}

#[tokio::test]
async fn long_text_is_cut_at_7500_characters() {
    let emu = Emulator::start().await;
    let mut o = highlight();
    o["annotationText"] = json!("这是一个测试。".repeat(5000));
    let r = post_items(&emu, &json!([o]), &[]).await.json();
    let text = r["successful"]["0"]["data"]["annotationText"]
        .as_str()
        .expect("saved");
    assert_eq!(text.chars().count(), 7500);
}
