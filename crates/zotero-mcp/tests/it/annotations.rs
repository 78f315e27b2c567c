//! `zotero_create_annotation` against the emulator on both write backends: a highlight placed
//! on the glyphs of a document the test lays out (standing in for the PDF's text layer, read
//! through the service's `DocumentSource`), written once with Zotero's position, sort index
//! and page label, read back with `zotero_get_annotations`; a lost answer that does not
//! duplicate it; quotes not found or found twice refused with the closest passages and
//! nothing written.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::{Library, ObjectKey};
use zotero_emulator::testing::{get, lib};
use zotero_emulator::{Emulator, Fault, FaultKind};
use zotero_mcp::error::ToolError;
use zotero_mcp::service::annotations::{DocumentFuture, DocumentSource};
use zotero_text::{Document, DocumentKind, Glyph, Page, PageStatus};

use crate::common::{in_process_with_documents, Backend, Server};

const ITEMS: &str = "/users/475425/items";
/// The fixture's PDF (`fixtures/library/reading.json`) and the paper it belongs to, which
/// has one PDF and one EPUB.
const PDF: &str = "RESPDF42";
const PAPER: &str = "RESNET52";

/// Documents by attachment key; any other key has no file.
struct Documents(HashMap<String, Document>);

impl DocumentSource for Documents {
    fn document<'a>(
        &'a self,
        _lib: &'a Library<'a>,
        attachment: &'a ObjectKey,
        _cancel: &'a CancellationToken,
    ) -> DocumentFuture<'a> {
        let found = self.0.get(attachment.as_str()).cloned();
        Box::pin(async move { found.ok_or_else(|| ToolError::not_found("no file in this test")) })
    }
}

/// A page whose lines are laid out 5 points a character (spaces without a glyph).
fn page(index: u32, label: &str, lines: &[(&str, f64, f64)]) -> Page {
    let mut text = String::new();
    let mut glyphs = Vec::new();
    for (n, (line, x0, y)) in lines.iter().enumerate() {
        if n > 0 {
            text.push('\n');
        }
        for (i, c) in line.chars().enumerate() {
            let start = text.len() as u32;
            text.push(c);
            if c != ' ' {
                let x = x0 + 5.0 * i as f64;
                glyphs.push(Glyph {
                    start,
                    end: text.len() as u32,
                    rect: [x, *y, x + 5.0, y + 10.0],
                });
            }
        }
    }
    Page {
        index,
        label: label.into(),
        status: PageStatus::Text,
        text,
        glyphs,
        view_box: [0.0, 0.0, 612.0, 792.0],
        rotation: 0,
    }
}

/// The PDF: two pages labelled 217 and 218; "attention is all" is on both.
fn pdf() -> Document {
    Document {
        kind: DocumentKind::Pdf,
        pages: vec![
            page(0, "217", &[("we show that attention is all", 72.0, 700.0)]),
            page(
                1,
                "218",
                &[
                    ("the model relies on attention is all", 72.0, 700.0),
                    ("you need for sequence transduction", 72.0, 686.0),
                ],
            ),
        ],
    }
}

async fn start(backend: Backend) -> (Emulator, Server) {
    let (emu, env) = backend.start().await;
    let docs = Documents(HashMap::from([(PDF.to_string(), pdf())]));
    let server = in_process_with_documents(&env, Arc::new(docs)).await;
    (emu, server)
}

/// The annotations of the PDF as the emulator stores them.
async fn stored(emu: &Emulator) -> Vec<Value> {
    get(
        emu,
        &lib(&format!(
            "items/{PDF}/children?itemType=annotation&limit=100"
        )),
    )
    .await
    .json()
    .as_array()
    .cloned()
    .unwrap_or_default()
}

async fn a_highlight_is_written_once_and_reads_back_field_for_field(backend: Backend) {
    let (emu, server) = start(backend).await;
    let a = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PDF, "type": "highlight",
                   "text": "attention is all\nyou need", "page": "218",
                   "comment": "the title", "color": "Blue", "tags": ["key idea"]}),
        )
        .await;
    let d = a.expect_ok().clone();
    let key = d["annotation_key"].as_str().expect("a key").to_string();
    // "attention" starts at character 20 of the first line (x = 72 + 20*5); "all" ends at
    // character 36 (72 + 36*5); "you need" is characters 0..8 of the second line.
    assert_eq!(
        d["rects"],
        json!([[172.0, 700.0, 252.0, 710.0], [72.0, 686.0, 112.0, 696.0]])
    );
    assert_eq!(d["page_label"], "218");
    assert_eq!(d["page_index"], 1);
    // The rect reaching furthest right is the first; the glyph touching it first is the "a"
    // of attention, glyph 16 (spaces have none); 792 - 710 = 82 points from the top.
    assert_eq!(d["sort_index"], "00001|000016|00082");
    assert_eq!(d["text"], "attention is all you need");
    assert_eq!(d["color"], "#2ea8e5");
    assert_eq!(
        d["zotero_url"],
        // The page NUMBER (index 1 + 1): Zotero reads `page` as an integer, not a label.
        format!("zotero://open-pdf/library/items/{PDF}?page=2&annotation={key}")
    );

    let notes = stored(&emu).await;
    let mine: Vec<&Value> = notes.iter().filter(|n| n["key"] == key.as_str()).collect();
    assert_eq!(mine.len(), 1);
    let s = &mine[0]["data"];
    assert_eq!(s["parentItem"], PDF);
    assert_eq!(s["annotationType"], "highlight");
    assert_eq!(
        s["annotationPosition"],
        r#"{"pageIndex":1,"rects":[[172,700,252,710],[72,686,112,696]]}"#
    );
    assert_eq!(d["version"], mine[0]["version"]);

    let back = server
        .call(
            "zotero_get_annotations",
            json!({"item_key": PDF, "limit": 100}),
        )
        .await;
    let list = back.expect_ok()["annotations"]
        .as_array()
        .expect("a list")
        .clone();
    let got = list
        .iter()
        .find(|x| x["annotation_key"] == key.as_str())
        .expect("read back");
    assert_eq!(got["type"], "highlight");
    assert_eq!(got["attachment_key"], PDF);
    assert_eq!(got["text"], "attention is all you need");
    assert_eq!(got["comment"], "the title");
    assert_eq!(got["color"], "#2ea8e5");
    assert_eq!(got["color_name"], "Blue");
    assert_eq!(got["page_label"], "218");
    assert_eq!(got["sort_index"], "00001|000016|00082");
    assert_eq!(got["tags"], json!(["key idea"]));
    assert_eq!(got["version"], d["version"]);
    server.stop().await;
}

async fn a_lost_answer_leaves_exactly_one_annotation(backend: Backend) {
    let (emu, server) = start(backend).await;
    let before = stored(&emu).await.len();
    emu.inject(backend.fault(Fault::once(FaultKind::Drop).on(ITEMS).method("POST")));
    // A regular item with one PDF stands for that PDF.
    let a = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PAPER, "type": "underline",
                   "text": "sequence transduction"}),
        )
        .await;
    let d = a.expect_ok().clone();
    assert_eq!(d["attachment_key"], PDF);
    assert_eq!(d["color"], "#ffd400");
    let after = stored(&emu).await;
    assert_eq!(after.len(), before + 1, "exactly one annotation");
    let made: Vec<&Value> = after
        .iter()
        .filter(|n| n["data"]["annotationText"] == "sequence transduction")
        .collect();
    assert_eq!(made.len(), 1);
    assert_eq!(made[0]["key"], d["annotation_key"]);
    assert_eq!(made[0]["data"]["annotationType"], "underline");
    server.stop().await;
}

async fn quotes_not_found_or_found_twice_are_refused_and_nothing_is_written(backend: Backend) {
    let (emu, server) = start(backend).await;
    let version = emu.library_version();
    let a = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PDF, "type": "highlight",
                   "text": "the model relies upon attention"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "text");
    let closest = e["details"]["closest"]
        .as_array()
        .expect("closest passages");
    assert_eq!(closest[0]["page_label"], "218");
    assert!(closest[0]["excerpt"]
        .as_str()
        .is_some_and(|x| x.contains("relies on attention")));

    let twice = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PDF, "type": "highlight", "text": "attention is all"}),
        )
        .await;
    let e = twice.expect_err("ZOTERO_VALIDATION_ERROR");
    let places: Vec<&str> = e["details"]["places"]
        .as_array()
        .expect("places")
        .iter()
        .filter_map(|p| p["page_label"].as_str())
        .collect();
    assert_eq!(places, vec!["217", "218"]);

    let note_without_page = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PDF, "type": "note", "comment": "c"}),
        )
        .await;
    assert_eq!(
        note_without_page.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "page"
    );

    assert!(
        backend.writes(&emu).is_empty(),
        "{:?}",
        backend.writes(&emu)
    );
    assert_eq!(emu.library_version(), version);
    server.stop().await;
}

async fn a_note_is_pinned_at_the_page_centre(backend: Backend) {
    let (emu, server) = start(backend).await;
    let a = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": PDF, "type": "note", "page": "217", "comment": "see"}),
        )
        .await;
    let d = a.expect_ok().clone();
    assert_eq!(d["rects"], json!([[295.0, 385.0, 317.0, 407.0]]));
    assert!(d.get("text").is_none());
    let key = d["annotation_key"].as_str().expect("key");
    let item = get(&emu, &lib(&format!("items/{key}"))).await.json();
    assert_eq!(item["data"]["annotationType"], "note");
    assert_eq!(item["data"]["annotationComment"], "see");
    assert_eq!(item["data"]["annotationPageLabel"], "217");
    assert!(item["data"].get("annotationText").is_none());
    server.stop().await;
}

crate::on_both_backends!(
    a_highlight_is_written_once_and_reads_back_field_for_field,
    a_lost_answer_leaves_exactly_one_annotation,
    quotes_not_found_or_found_twice_are_refused_and_nothing_is_written,
    a_note_is_pinned_at_the_page_centre,
);
