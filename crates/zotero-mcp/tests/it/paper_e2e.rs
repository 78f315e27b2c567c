//! Issue 36's "done when", end to end and with nothing injected: a paper added by its DOI
//! (its open-access PDF a real, generated PDF whose printed page labels 215–219 differ from
//! its page numbers) is read page 3 in the next call from its file, quoted with its printed
//! label, and highlighted on exactly those words: the stored annotation carries the label,
//! the page index and the glyph boxes the PDF placed for those words.
//!
//! The PDF is written by [`crate::pdf_fixture`].

use base64::Engine;
use serde_json::{json, Value};
use zotero_emulator::testing::{get, lib};
use zotero_emulator::{Emulator, HostedFile, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};
use crate::pdf_fixture::{add_pages, finish, head};

const DOI: &str = "10.5555/pages.2026.36";
/// The font size of every line; the test font's glyphs are half an em wide, from 0.2 em
/// below the baseline to 0.8 em above it.
const SIZE: f64 = 10.0;
const LEFT: f64 = 72.0;
/// Page 3 (index 2, printed "217"): two lines, at these baselines.
const PAGE3: [(&str, f64); 2] = [
    ("Page three reports the measured results.", 700.0),
    ("The thermometer resolves one tenth of a kelvin.", 686.0),
];
const QUOTE: &str = "resolves one tenth of a kelvin";

/// Five pages of lines in a Type 1 font whose every code is 500/1000 em wide; the catalog's
/// `/PageLabels` numbers them from 215.
fn paper() -> Vec<u8> {
    let pages: Vec<Vec<(String, f64)>> = (0..5)
        .map(|i| {
            if i == 2 {
                PAGE3.iter().map(|(t, y)| (t.to_string(), *y)).collect()
            } else {
                vec![(format!("Filler text of page number {}.", i + 1), 700.0)]
            }
        })
        .collect();
    pdf(&pages)
}

/// A PDF of `pages`, each its lines at their baselines, in the test font; the catalog's
/// `/PageLabels` numbers them from 215.
fn pdf(pages: &[Vec<(String, f64)>]) -> Vec<u8> {
    let mut objects = head(215);
    let contents: Vec<String> = pages
        .iter()
        .map(|lines| {
            lines
                .iter()
                .map(|(t, y)| format!("BT /F1 {SIZE} Tf {LEFT} {y} Td ({t}) Tj ET\n"))
                .collect()
        })
        .collect();
    add_pages(&mut objects, &contents);
    finish(&objects, 1)
}

/// The box the PDF gives characters `from..to` of a line at baseline `y`: each glyph is
/// `0.5 * SIZE` wide from `LEFT`, from `0.2 * SIZE` below the baseline to `0.8 * SIZE` above.
fn words_box(from: usize, to: usize, y: f64) -> Vec<f64> {
    let w = 0.5 * SIZE;
    vec![
        LEFT + w * from as f64,
        y - 0.2 * SIZE,
        LEFT + w * to as f64,
        y + 0.8 * SIZE,
    ]
}

/// The emulator with a DOI whose Unpaywall record points at the generated PDF, and the server
/// configured for the metadata hosts (and an index directory of its own for the cache).
async fn setup() -> (Emulator, Server, tempfile::TempDir) {
    let emu = Emulator::start().await;
    emu.add_crossref_work(zotero_emulator::crossref_article(
        DOI,
        "Thermometry at the scale of a page",
        &[("Ada", "Lovelace")],
        2026,
    ));
    emu.serve_oa(
        "pages/paper.pdf",
        HostedFile::new(paper(), "application/pdf"),
    );
    emu.add_unpaywall(json!({
        "doi": DOI, "is_oa": true, "oa_status": "gold",
        "best_oa_location": {"url": "{EMU}/oa/pages/paper.pdf",
                             "url_for_pdf": "{EMU}/oa/pages/paper.pdf",
                             "host_type": "publisher", "version": "publishedVersion",
                             "is_best": true},
        "oa_locations": [{"url": "{EMU}/oa/pages/paper.pdf",
                          "url_for_pdf": "{EMU}/oa/pages/paper.pdf",
                          "host_type": "publisher", "version": "publishedVersion",
                          "is_best": true}]
    }));
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        [
            ("ZOTERO_DOI_BASE", emu.doi_base()),
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_DATACITE_BASE", emu.datacite_base()),
            ("ZOTERO_UNPAYWALL_BASE", emu.unpaywall_base()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
            ("ZOTERO_CONTACT_EMAIL", "ada@lovelace-lab.org".to_string()),
            (
                "ZOTERO_INDEX_DIR",
                dir.path().to_string_lossy().into_owned(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    let server = in_process(&env).await;
    (emu, server, dir)
}

#[tokio::test]
async fn a_paper_added_by_doi_is_read_on_page_3_quoted_with_its_label_and_highlighted() {
    let (emu, server, _dir) = setup().await;

    // 1. Added by its DOI, with its open-access PDF.
    let added = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": [DOI], "attach_pdf": true}),
        )
        .await
        .expect_ok()
        .clone();
    let r = &added["results"][0];
    assert_eq!(r["status"], "created", "{added}");
    assert_eq!(r["pdf"], "attached", "{added}");
    let item = r["item_key"].as_str().unwrap().to_string();
    let pdf = r["pdf_attachment_key"].as_str().unwrap().to_string();

    // 2. Its page 3, read from the file in the next call: printed "217".
    let read = server
        .call(
            "zotero_get_item_fulltext",
            json!({"item_key": item, "pages": "3"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(read["source"], "file", "{read}");
    let pages = read["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 1, "{read}");
    assert_eq!(pages[0]["label"], "217", "{read}");
    assert_eq!(pages[0]["status"], "text", "{read}");
    let text = read["text"].as_str().unwrap();
    assert!(text.starts_with("=== Page 217 ===\n\n"), "{text}");
    for (line, _) in PAGE3 {
        assert!(text.contains(line), "{line:?} not in {text:?}");
    }
    assert!(!text.contains("Filler"), "{text}");

    // 3. The quotation highlighted on its printed page, the item standing for its PDF.
    let made = server
        .call(
            "zotero_create_annotation",
            json!({"attachment_key": item, "type": "highlight", "text": QUOTE,
                   "page": "217", "comment": "the resolution"}),
        )
        .await
        .expect_ok()
        .clone();
    assert_eq!(made["attachment_key"], pdf.as_str(), "{made}");
    assert_eq!(made["page_label"], "217", "{made}");
    assert_eq!(made["page_index"], 2, "{made}");
    let from = PAGE3[1].0.find(QUOTE).unwrap();
    let expected = words_box(from, from + QUOTE.len(), PAGE3[1].1);
    assert_eq!(made["rects"], json!([expected]), "{made}");
    let key = made["annotation_key"].as_str().unwrap().to_string();

    // 4. What Zotero stores and shows in the PDF.
    let stored = get(&emu, &lib(&format!("items/{key}"))).await.json();
    let data = &stored["data"];
    assert_eq!(data["parentItem"], pdf.as_str(), "{data}");
    assert_eq!(data["annotationType"], "highlight");
    assert_eq!(data["annotationText"], QUOTE);
    assert_eq!(data["annotationPageLabel"], "217");
    let position: Value =
        serde_json::from_str(data["annotationPosition"].as_str().unwrap()).unwrap();
    assert_eq!(position["pageIndex"], 2, "{position}");
    let rects: Vec<Vec<f64>> = serde_json::from_value(position["rects"].clone()).unwrap();
    assert_eq!(rects, vec![expected.clone()], "{position}");
    // Zotero's sort index: page index, character offset, distance of the top from the
    // page's top (792 - top of the glyphs), each zero-padded.
    let sort = data["annotationSortIndex"].as_str().unwrap();
    let parts: Vec<&str> = sort.split('|').collect();
    assert_eq!(parts.len(), 3, "{sort}");
    assert_eq!(parts[0], "00002", "{sort}");
    assert_eq!(parts[1].len(), 6, "{sort}");
    assert!(parts[1].bytes().all(|b| b.is_ascii_digit()), "{sort}");
    assert_eq!(
        parts[2],
        format!("{:05}", (792.0 - expected[3]) as u32),
        "{sort}"
    );

    let back = server
        .call(
            "zotero_get_annotations",
            json!({"item_key": item, "limit": 100}),
        )
        .await
        .expect_ok()
        .clone();
    let got = back["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["annotation_key"] == key.as_str())
        .unwrap_or_else(|| panic!("{key} not read back: {back}"))
        .clone();
    assert_eq!(got["attachment_key"], pdf.as_str());
    assert_eq!(got["type"], "highlight");
    assert_eq!(got["text"], QUOTE);
    assert_eq!(got["page_label"], "217");
    assert_eq!(got["sort_index"], sort);
    assert_eq!(got["comment"], "the resolution");
    server.stop().await;
}

/// A quotation of a paper whose text Zotero has not indexed is looked for in its file's
/// pages: the check gives the page's printed label and a link opening the PDF there.
#[tokio::test]
async fn a_manuscript_quoting_the_paper_gets_its_printed_page_and_a_link_to_it() {
    let (_emu, server, _dir) = setup().await;
    let added = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": [DOI], "attach_pdf": true}),
        )
        .await
        .expect_ok()
        .clone();
    let pdf = added["results"][0]["pdf_attachment_key"]
        .as_str()
        .unwrap_or_else(|| panic!("no PDF: {added}"))
        .to_string();
    let draft = format!("The instrument \"{QUOTE}\" (doi:{DOI}).");
    let checked = server
        .call("zotero_check_manuscript", json!({"text": draft}))
        .await
        .expect_ok()
        .clone();
    let q: Vec<&Value> = checked["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "quotation")
        .collect();
    assert_eq!(q.len(), 1, "{checked:#}");
    assert_eq!(q[0]["status"], "exact", "{checked:#}");
    assert_eq!(q[0]["attachment_key"], pdf.as_str());
    assert_eq!(q[0]["page"], 3, "{checked:#}");
    assert_eq!(q[0]["page_label"], "217", "{checked:#}");
    // Zotero's `open-pdf` handler reads `page` as the page's number (its index + 1), never
    // its label: "?page=217" would ask for the 217th page of a 5-page PDF.
    assert_eq!(
        q[0]["link"],
        format!("zotero://open-pdf/library/items/{pdf}?page=3")
    );
    server.stop().await;
}

/// Running headers and footers are marked in the answer's `pages`, never removed: each
/// page's `running` ranges are character ranges of the whole text that hold its running
/// head (the journal's name and the printed page number, which changes) and its footer.
#[tokio::test]
async fn running_headers_and_footers_are_marked_in_the_pages_read() {
    let (_emu, server, _dir) = setup().await;
    let pages: Vec<Vec<(String, f64)>> = (0..5)
        .map(|i| {
            vec![
                (format!("Thermometry Letters {}", 215 + i), 760.0),
                (format!("Body of page {} with its own words.", i + 1), 600.0),
                (format!("Page {} of 5", i + 1), 30.0),
            ]
        })
        .collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(pdf(&pages));
    let upload = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": "NLPML6K7", "file_bytes_base64": encoded, "filename": "letters.pdf"}),
        )
        .await
        .expect_ok()
        .clone();
    let key = upload["attachment_key"].as_str().unwrap().to_string();
    let read = server
        .call(
            "zotero_get_item_fulltext",
            json!({"item_key": key, "pages": "215-219"}),
        )
        .await
        .expect_ok()
        .clone();
    let text: Vec<char> = read["text"].as_str().unwrap().chars().collect();
    assert_eq!(read["offset"], 0, "{read}");
    let got = read["pages"].as_array().unwrap();
    assert_eq!(got.len(), 5, "{read}");
    for (i, page) in got.iter().enumerate() {
        let marked: Vec<String> = page["running"]
            .as_array()
            .unwrap_or_else(|| panic!("no running in {page}"))
            .iter()
            .map(|r| {
                let (s, e) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
                text[s as usize..e as usize].iter().collect()
            })
            .collect();
        assert_eq!(
            marked,
            [
                format!("Thermometry Letters {}", 215 + i),
                format!("Page {} of 5", i + 1)
            ],
            "{page}"
        );
        // Marked, not removed: the page's part of the text still holds them and its body.
        let (start, end) = (
            page["offset"].as_u64().unwrap(),
            page["end_offset"].as_u64().unwrap(),
        );
        let part: String = text[start as usize..end as usize].iter().collect();
        assert!(
            part.contains(&format!("Body of page {} with", i + 1)),
            "{part}"
        );
        assert!(
            part.contains(&marked[0]) && part.contains(&marked[1]),
            "{part}"
        );
    }
    server.stop().await;
}
