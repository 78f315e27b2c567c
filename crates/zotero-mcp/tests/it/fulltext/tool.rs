//! `zotero_get_item_fulltext` on the user library, a group and the desktop's local API: a
//! parent's attachments in reading order under headers, an attachment's own text, partial
//! indexes, paging by characters, nothing indexed and not an item as `ZOTERO_NOT_FOUND`,
//! and how many requests it costs.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, FullText, Library, LibraryId, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};
use crate::libraries::{server, with_groups, HIDDEN, LAB, READERS};

const TOOL: &str = "zotero_get_item_fulltext";

/// The header a parent's section starts with.
const VASPDF23_HEADER: &str = "=== PDF: Full Text PDF [VASPDF23], 11 of 15 pages indexed ===\n\n";

/// An attachment item of `parent` as the fixtures store them.
pub fn attachment(key: &str, parent: &str, content_type: &str, added: &str) -> Value {
    let link_mode = if content_type == "text/html" {
        "imported_url"
    } else {
        "imported_file"
    };
    json!({"key": key, "version": 1, "meta": {}, "links": {},
           "data": {"key": key, "version": 1, "itemType": "attachment", "parentItem": parent,
                    "linkMode": link_mode, "title": format!("File {key}"),
                    "contentType": content_type, "filename": format!("{key}.bin"),
                    "tags": [], "relations": {}, "dateAdded": added, "dateModified": added}})
}

async fn web(emu: &Emulator) -> Server {
    in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await
}

/// A server with only the desktop's local API (read-only, no key).
async fn local_only(emu: &Emulator) -> Server {
    let env = vec![
        ("ZOTERO_LOCAL".to_string(), "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE".to_string(), emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS".to_string(), "1".to_string()),
    ];
    in_process(&env).await
}

fn stored(emu: &Emulator, lib: LibraryId, key: &str) -> String {
    emu.library(lib).fulltext(key).unwrap().content
}

/// The characters of `s` in `range`.
fn chars(s: &str, from: u64, to: u64) -> String {
    s.chars()
        .skip(from as usize)
        .take((to - from) as usize)
        .collect()
}

/// Checks a parent's answer for VASWANI7 (its PDF, partially indexed) in `lib`.
fn check_vaswani(data: &Value, pdf: &str, library: &str) {
    assert_eq!(data["item_key"], "VASWANI7");
    assert_eq!(data["item_type"], "journalArticle");
    assert_eq!(data["title"], "Attention Is All You Need");
    assert_eq!(
        data["zotero_url"],
        format!("zotero://select/{library}/items/VASWANI7")
    );
    let expected = format!("{VASPDF23_HEADER}{pdf}");
    assert_eq!(data["text"], expected.as_str());
    let total = expected.chars().count() as u64;
    assert_eq!(data["total_chars"], total);
    assert_eq!(data["offset"], 0);
    assert!(data.get("next_offset").is_none(), "one page: {data}");
    let s = &data["sections"];
    assert_eq!(s.as_array().unwrap().len(), 1, "{s}");
    assert_eq!(
        s[0],
        json!({"attachment_key": "VASPDF23", "title": "Full Text PDF",
               "content_type": "application/pdf", "kind": "pdf", "offset": 0,
               "end_offset": total, "indexed_pages": 11, "total_pages": 15, "partial": true})
    );
    assert!(data.get("not_indexed").is_none());
}

#[tokio::test]
async fn a_parent_gives_its_pdf_under_a_header_and_says_the_index_is_partial() {
    let emu = Emulator::start().await;
    let s = web(&emu).await;
    let a = s.call(TOOL, json!({"item_key": "VASWANI7"})).await;
    let pdf = stored(&emu, LibraryId::USER, "VASPDF23");
    check_vaswani(a.expect_ok(), &pdf, "library");
    // The item (a listing of one key), its attachments, the PDF's text: nothing else.
    let paths: Vec<String> = emu.requests().iter().map(|r| r.path.clone()).collect();
    let prefix = format!("/users/{USER_ID}/items");
    assert_eq!(
        paths,
        [
            prefix.clone(),
            format!("{prefix}/VASWANI7/children"),
            format!("{prefix}/VASPDF23/fulltext"),
        ]
    );
    s.stop().await;
}

#[tokio::test]
async fn an_attachment_key_gives_exactly_its_text() {
    let emu = Emulator::start().await;
    let s = web(&emu).await;
    for (key, kind) in [("SHEPUB28", "epub"), ("TM8QRS36", "html")] {
        let a = s.call(TOOL, json!({"item_key": key})).await;
        let data = a.expect_ok();
        let content = stored(&emu, LibraryId::USER, key);
        assert_eq!(
            data["text"],
            content.as_str(),
            "no header for one attachment"
        );
        let n = content.chars().count() as u64;
        let units = content.encode_utf16().count() as u64;
        assert_eq!(data["total_chars"], n);
        assert_eq!(data["item_type"], "attachment");
        let sec = &data["sections"][0];
        assert_eq!(
            (&sec["kind"], &sec["offset"], &sec["end_offset"]),
            (&json!(kind), &json!(0), &json!(n))
        );
        // Zotero's counts, as Zotero made them (UTF-16 code units), and complete.
        assert_eq!(
            (&sec["indexed_chars"], &sec["total_chars"], &sec["partial"]),
            (&json!(units), &json!(units), &json!(false))
        );
        assert!(sec.get("indexed_pages").is_none());
    }
    // The item, then its text.
    assert_eq!(emu.requests().len(), 4);
    s.stop().await;
}

#[tokio::test]
async fn a_parents_attachments_come_pdf_epub_html_text_oldest_first() {
    let mut lib = Library::from_fixtures();
    let parent = "NLPML6K7";
    for (key, ct, added) in [
        ("HTMLAAA2", "text/html", "2024-02-11T00:00:00Z"),
        ("TEXTAAA2", "text/plain", "2024-02-10T00:00:00Z"),
        ("PDFBBBB3", "application/pdf", "2024-02-12T00:00:00Z"),
        ("EPUBAAA2", "application/epub+zip", "2024-02-13T00:00:00Z"),
        ("PDFAAAA2", "application/pdf", "2024-02-10T00:00:00Z"),
        ("PDFNNNN4", "application/pdf", "2024-02-09T00:00:00Z"),
        ("PNGAAAA2", "image/png", "2024-02-08T00:00:00Z"),
    ] {
        lib.items.push(attachment(key, parent, ct, added));
    }
    let emu = Emulator::with_library(lib).await;
    let texts = [
        ("HTMLAAA2", FullText::document("<html> snapshot text")),
        ("TEXTAAA2", FullText::partial_document("plain", 50)),
        ("PDFBBBB3", FullText::pdf("newer PDF ünïcödé", 3, 3)),
        ("EPUBAAA2", FullText::document("EPUB — 電子書籍")),
        ("PDFAAAA2", FullText::pdf("older PDF", 2, 2)),
    ];
    for (key, ft) in texts.clone() {
        emu.set_fulltext_of(key, ft);
    }
    let s = web(&emu).await;
    let a = s.call(TOOL, json!({"item_key": parent})).await;
    let data = a.expect_ok();
    let sections = data["sections"].as_array().unwrap();
    let order: Vec<&str> = sections
        .iter()
        .map(|s| s["attachment_key"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["PDFAAAA2", "PDFBBBB3", "EPUBAAA2", "HTMLAAA2", "TEXTAAA2"]
    );
    // Each section is its header and its text; sections are apart by a blank line.
    let text = data["text"].as_str().unwrap();
    let mut expected = String::new();
    for (i, sec) in sections.iter().enumerate() {
        let key = sec["attachment_key"].as_str().unwrap();
        let part = chars(
            text,
            sec["offset"].as_u64().unwrap(),
            sec["end_offset"].as_u64().unwrap(),
        );
        let content = &texts.iter().find(|(k, _)| *k == key).unwrap().1.content;
        assert!(part.starts_with("=== "), "{part}");
        assert!(part.contains(&format!("[{key}]")), "{part}");
        assert!(part.ends_with(content.as_str()), "{part}");
        if i > 0 {
            expected.push_str("\n\n");
        }
        expected.push_str(&part);
    }
    assert_eq!(text, expected);
    assert!(text.contains("=== HTML snapshot: File HTMLAAA2 [HTMLAAA2] ===\n\n<html>"));
    assert!(text.contains("=== Text: File TEXTAAA2 [TEXTAAA2], 5 of 50 characters indexed ==="));
    assert_eq!(sections[4]["partial"], true);
    // The PDF without text is named; the image is not read at all.
    assert_eq!(
        data["not_indexed"],
        json!([{"attachment_key": "PDFNNNN4", "title": "File PDFNNNN4",
                "content_type": "application/pdf", "kind": "pdf"}])
    );
    assert_eq!(
        emu.count("GET", &format!("/users/{USER_ID}/items/PNGAAAA2")),
        0
    );
    s.stop().await;
}

#[tokio::test]
async fn pages_follow_next_offset_by_characters_and_never_split_one() {
    let emu = Emulator::start().await;
    // 120,000 characters of 1 to 4 bytes each.
    let unit = "Attention é 注意力 🙂 ";
    let long: String = unit.repeat(120_000 / unit.chars().count());
    emu.set_fulltext_of("VASPDF23", FullText::pdf(&long, 15, 15));
    let s = web(&emu).await;
    let header = "=== PDF: Full Text PDF [VASPDF23] ===\n\n";
    let whole = format!("{header}{long}");
    let total = whole.chars().count() as u64;

    // Default pages: 16,000 characters unless their UTF-8 passes 24,000 bytes.
    let first = s.call(TOOL, json!({"item_key": "VASWANI7"})).await;
    let d = first.expect_ok();
    let page = d["text"].as_str().unwrap();
    assert!(
        page.len() <= 24_000 && page.len() > 23_990,
        "{}",
        page.len()
    );
    assert_eq!(d["next_offset"], page.chars().count() as u64);
    assert_eq!(d["total_chars"], total);

    let mut read = String::new();
    let mut offset = 0u64;
    let mut calls = 0;
    loop {
        let a = s
            .call(
                TOOL,
                json!({"item_key": "VASWANI7", "offset": offset, "max_chars": 30_000}),
            )
            .await;
        let d = a.expect_ok().clone();
        calls += 1;
        let text = d["text"].as_str().unwrap();
        assert_eq!(d["offset"], offset);
        assert_eq!(d["total_chars"], total);
        assert!(text.chars().count() <= 30_000 && text.len() <= 45_000);
        read.push_str(text);
        match d.get("next_offset") {
            Some(n) => {
                let n = n.as_u64().unwrap();
                assert_eq!(
                    n,
                    offset + text.chars().count() as u64,
                    "no gap, no overlap"
                );
                offset = n;
            }
            None => break,
        }
    }
    assert_eq!(read, whole);
    assert!(calls >= 4, "{calls} pages");

    // Asking past the end is refused, naming the field; the end itself is an empty page.
    let a = s
        .call(TOOL, json!({"item_key": "VASWANI7", "offset": total + 1}))
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "offset");
    assert_eq!(e["details"]["total_chars"], total);
    let a = s
        .call(TOOL, json!({"item_key": "VASWANI7", "offset": total}))
        .await;
    let d = a.expect_ok();
    assert_eq!((d["text"].as_str(), d.get("next_offset")), (Some(""), None));
    s.stop().await;
}

#[tokio::test]
async fn nothing_to_read_is_not_found_saying_why_and_what_to_do() {
    let mut lib = Library::from_fixtures();
    lib.items.push(attachment(
        "PDFNNNN4",
        "NLPML6K7",
        "application/pdf",
        "2024-02-09T00:00:00Z",
    ));
    let emu = Emulator::with_library(lib).await;
    let s = web(&emu).await;
    let not_found = |a: &crate::common::Answer| a.expect_err("ZOTERO_NOT_FOUND").clone();

    // Attachments without indexed text: the message says what the user can do.
    for key in ["NLPML6K7", "PDFNNNN4"] {
        let e = not_found(&s.call(TOOL, json!({"item_key": key})).await);
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains("Reindex Item") && m.contains("Sync full-text content"),
            "{m}"
        );
        assert_eq!(e["details"]["reason"], "not_indexed");
        assert_eq!(e["details"]["attachments_not_indexed"], json!(["PDFNNNN4"]));
        assert_eq!(e["details"]["item_key"], key);
    }
    // A link to a URL (alone, or a parent's only attachment), no attachment (in the trash
    // too), a note.
    let cases = [
        ("BERTLN93", "link_only"),
        ("BERTDV82", "no_documents"),
        ("X42A7DEE", "no_documents"),
        ("TRASHD33", "no_documents"),
        ("PQN9TE22", "not_a_document"),
    ];
    for (key, reason) in cases {
        let e = not_found(&s.call(TOOL, json!({"item_key": key})).await);
        assert_eq!(e["details"]["reason"], reason, "{key}: {e}");
    }
    // Not an item: an unknown key, a collection's key.
    for key in ["ZZZZZZZZ", "RDLSTUP3"] {
        let e = not_found(&s.call(TOOL, json!({"item_key": key})).await);
        assert!(
            e["message"].as_str().unwrap().contains("no item with key"),
            "{e}"
        );
    }
    // Bad arguments never reach Zotero.
    let before = emu.requests().len();
    for args in [
        json!({"item_key": "VASWANI7", "max_chars": 0}),
        json!({"item_key": "VASWANI7", "max_chars": 100_001}),
        json!({"item_key": "VASWANI7", "offset": -1}),
        json!({"item_key": "vaswani7"}),
        json!({"item_key": "VASWANI7", "format": "markdown"}),
    ] {
        s.call(TOOL, args)
            .await
            .expect_err("ZOTERO_VALIDATION_ERROR");
    }
    assert_eq!(emu.requests().len(), before);
    s.stop().await;
}

#[tokio::test]
async fn a_group_library_is_read_by_naming_it() {
    let emu = with_groups().await;
    let readers = LibraryId::Group(READERS);
    emu.library(readers)
        .set_fulltext_of("VASPDF23", FullText::pdf("The group's own copy.", 11, 15));
    let s = server(&emu, &[]).await;
    let group = format!("group:{READERS}");
    let a = s
        .call(TOOL, json!({"item_key": "VASWANI7", "library": group}))
        .await;
    check_vaswani(
        a.expect_ok(),
        "The group's own copy.",
        &format!("groups/{READERS}"),
    );
    assert!(emu
        .requests()
        .iter()
        .all(|r| r.path.starts_with(&format!("/groups/{READERS}/"))));
    // The user library has its own text.
    let a = s.call(TOOL, json!({"item_key": "VASPDF23"})).await;
    assert_eq!(
        a.expect_ok()["text"],
        stored(&emu, LibraryId::USER, "VASPDF23").as_str()
    );
    // A group the key cannot read; a group without the item.
    let a = s
        .call(
            TOOL,
            json!({"item_key": "VASWANI7", "library": format!("group:{HIDDEN}")}),
        )
        .await;
    let e = a.expect_err("ZOTERO_AUTH_ERROR");
    assert_eq!(e["details"]["library"], format!("group:{HIDDEN}"));
    let a = s
        .call(
            TOOL,
            json!({"item_key": "VASWANI7", "library": format!("group:{LAB}")}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    s.stop().await;
}

#[tokio::test]
async fn the_local_api_alone_serves_the_same_text() {
    let emu = Emulator::start().await;
    let s = local_only(&emu).await;
    let a = s.call(TOOL, json!({"item_key": "VASWANI7"})).await;
    check_vaswani(
        a.expect_ok(),
        &stored(&emu, LibraryId::USER, "VASPDF23"),
        "library",
    );
    let a = s
        .call(
            TOOL,
            json!({"item_key": "SHEPUB28", "offset": 10, "max_chars": 25}),
        )
        .await;
    let d = a.expect_ok();
    let epub = stored(&emu, LibraryId::USER, "SHEPUB28");
    assert_eq!(d["text"], chars(&epub, 10, 35).as_str());
    assert_eq!(d["next_offset"], 35);
    assert!(emu.requests().is_empty(), "the web API was not asked");
    let local: Vec<String> = emu
        .local_requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        local.contains(&"/api/users/0/items/VASPDF23/fulltext".to_string()),
        "{local:?}"
    );

    // A text file the desktop does not serve full text for: not indexed, as far as it
    // knows. With the web API too, the web answers what the desktop cannot.
    let key = "TEXTAAA2";
    let mut lib = Library::from_fixtures();
    lib.items.push(attachment(
        key,
        "NLPML6K7",
        "text/plain",
        "2024-02-10T00:00:00Z",
    ));
    let emu = Emulator::with_library(lib).await;
    emu.set_fulltext_of(key, FullText::document("plain words"));
    let s = local_only(&emu).await;
    let a = s.call(TOOL, json!({"item_key": key})).await;
    assert_eq!(
        a.expect_err("ZOTERO_NOT_FOUND")["details"]["reason"],
        "not_indexed"
    );
    let local = emu.local_uri();
    let both = server(
        &emu,
        &[("ZOTERO_LOCAL", "1"), ("ZOTERO_LOCAL_API_BASE", &local)],
    )
    .await;
    let a = both.call(TOOL, json!({"item_key": "NLPML6K7"})).await;
    let d = a.expect_ok();
    assert!(d["text"].as_str().unwrap().ends_with("plain words"), "{d}");
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.path == format!("/users/{USER_ID}/items/{key}/fulltext")));
    s.stop().await;
    both.stop().await;
}
