//! Property: every Markdown the server writes is inert, whatever the library holds. Hostile
//! strings (HTML tags, entities that decode to tags, `[x](javascript:…)`, `<javascript:…>`
//! autolinks, images, reference-style links and their definitions, URLs with odd schemes,
//! backticks, line breaks, heading, quote and list markers) are put in every field of an item
//! that reaches Markdown — title, every other field, the abstract, creators, tags, its
//! collection's name, relations, its notes (first line and body) and its annotations (text,
//! comment, page label, colour, tags) — and every Markdown output is read through the server
//! and the emulator:
//!
//! - `zotero_get_item_metadata` with `format: "markdown"`;
//! - the resources `notes.md` and `annotations.md`;
//! - `zotero_get_notes`, read on in pieces of 200 characters (a cut can fall anywhere);
//! - `zotero_cite` with `format: "markdown"` (bibliography and citations).
//!
//! Each is parsed with pulldown-cmark (CommonMark, and with GFM tables and strikethrough) and
//! must hold no raw HTML (`Html`/`InlineHtml`), no image, and no link but to the allowed
//! schemes: http, https, mailto, zotero (`zotero_mcp::notes::markdown::LINK_SCHEMES`, written out
//! here so widening it is a decision this test sees). The item's title and the notes' titles
//! must also read back as written: escaping hides markup, not text.
//!
//! The JSON outputs (`zotero_get_item_metadata` as JSON, children, annotations, collections)
//! are not Markdown; the prompts carry no library data (keys are validated, the research
//! question is the caller's own words).

use proptest::prelude::*;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{json, Value};
use zotero_emulator::Library;

use crate::common::Server;
use crate::prop_support::{config, runtime, start};

const ALLOWED_SCHEMES: [&str; 4] = ["http", "https", "mailto", "zotero"];

/// Pieces of hostile text; a string is a few of them run together.
const PIECES: &[&str] = &[
    "<img src=x onerror=alert(1)>",
    "&lt;img src=x onerror=alert(1)&gt;",
    "&#60;script&#62;",
    "&#x3C;b&#x3E;",
    "<script>alert(1)</script>",
    "<b>bold</b>",
    "</p>",
    "<!-- c -->",
    "<![CDATA[x]]>",
    "<?pi x?>",
    "<a href=\"javascript:alert(1)\">a</a>",
    "[click me](javascript:alert(1))",
    "[ok](https://example.org/ok)",
    "<javascript:alert(1)>",
    "<https://example.org>",
    "<mailto:a@b.c>",
    "<data:text/html,x>",
    "![img](https://t.example/p.gif)",
    "![x](javascript:alert(1))",
    "[ref]",
    "[ref][r]",
    "[r]: javascript:alert(1)",
    "[ref]: data:text/html,x",
    "javascript:alert(1)",
    "vbscript:msgbox",
    "data:text/html;base64,PHNjcmlwdD4=",
    "file:///etc/passwd",
    "www.example.org",
    "`",
    "``",
    "```",
    "~~~",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\n    indented <b>",
    "\t",
    "# ",
    "## ",
    "#",
    "> ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "---",
    "===",
    "***",
    "|",
    "| a | b |\n|---|---|\n",
    "\\",
    "&",
    "&amp;",
    "<",
    ">",
    "*",
    "_",
    "[",
    "]",
    "(",
    ")",
    "!",
    "~~",
    "word",
    "Zotero",
    " ",
    "ü",
    "日本語",
];

fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 1..7)
        .prop_map(|p| p.concat())
}

/// How a reader of `text` sees it on one line: what escaping must keep.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What the CommonMark reading of `md` shows that it must not.
fn problems(md: &str) -> Vec<String> {
    let mut found = Vec::new();
    for options in [
        Options::empty(),
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    ] {
        for event in Parser::new_ext(md, options) {
            match event {
                Event::Html(h) | Event::InlineHtml(h) => found.push(format!("raw HTML {h:?}")),
                Event::Start(Tag::Image { dest_url, .. }) => {
                    found.push(format!("image {dest_url:?}"))
                }
                Event::Start(Tag::Link { dest_url, .. }) => {
                    let scheme = dest_url
                        .split_once(':')
                        .map(|(s, _)| s.to_ascii_lowercase());
                    if !ALLOWED_SCHEMES.contains(&scheme.as_deref().unwrap_or("")) {
                        found.push(format!("link to {dest_url:?}"));
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The text of each heading of `level` in `md`, as a reader sees it.
fn headings(md: &str, level: HeadingLevel) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(md) {
        match event {
            Event::Start(Tag::Heading { level: l, .. }) if l == level => {
                current = Some(String::new())
            }
            Event::End(TagEnd::Heading(l)) if l == level => out.extend(current.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = current.as_mut() {
                    c.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

async fn read(s: &Server, uri: &str) -> String {
    let r = s
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e}"));
    match r.contents.into_iter().next().unwrap() {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("{uri}: not text: {other:?}"),
    }
}

fn item<'a>(lib: &'a mut Library, key: &str) -> &'a mut Value {
    lib.items.iter_mut().find(|i| i["key"] == key).unwrap()
}

/// The fixture library with `h` (16 hostile strings) in every field that reaches Markdown.
fn hostile_library(h: &[String], filler: usize) -> Library {
    let mut lib = Library::from_fixtures();
    let paper = &mut item(&mut lib, "RESNET52")["data"];
    paper["title"] = json!(h[0]);
    paper["abstractNote"] = json!(h[1]);
    paper["proceedingsTitle"] = json!(h[2]);
    paper["publisher"] = json!(h[3]);
    paper["extra"] = json!(h[4]);
    paper["url"] = json!(h[5]);
    paper["place"] = json!(h[6]);
    paper["creators"] = json!([
        {"creatorType": "author", "firstName": h[7], "lastName": h[8]},
        {"creatorType": "editor", "name": h[9]},
    ]);
    paper["tags"] = json!([{"tag": h[10], "type": 1}, {"tag": h[11]}]);
    paper["collections"] = json!(["N7W92H48"]);
    paper["relations"] = json!({"dc:relation": [h[12]]});
    let coll = lib
        .collections
        .iter_mut()
        .find(|c| c["key"] == "N7W92H48")
        .unwrap();
    coll["data"]["name"] = json!(h[13]);
    // The first line of one note is the hostile text (as the editor writes text); the body
    // has filler before a code span of it and a tag, so some cut of 200 characters falls
    // inside the span, which a cut must not open.
    item(&mut lib, "RESNTS52")["data"]["note"] = json!(format!(
        "<div data-schema-version=\"9\"><p>{}</p><p>{}</p><p><code>{}&lt;img src=x \
         onerror=alert(1)&gt;{}</code> {}</p></div>",
        html_escaped(&h[0]),
        "lorem ".repeat(filler),
        html_escaped(&h[14]),
        html_escaped(&h[14]),
        html_escaped(&h[15]),
    ));
    // The other holds it as HTML.
    item(&mut lib, "RESCLP53")["data"]["note"] =
        json!(format!("<p>{}</p><pre>{}</pre>{}", h[15], h[14], h[1]));
    let highlight = &mut item(&mut lib, "RESAN2HL")["data"];
    highlight["annotationText"] = json!(h[2]);
    highlight["annotationComment"] = json!(h[3]);
    highlight["annotationPageLabel"] = json!(h[4]);
    highlight["tags"] = json!([{"tag": h[10]}]);
    let underline = &mut item(&mut lib, "RESAN3UL")["data"];
    underline["annotationColor"] = json!(h[5]);
    underline["annotationComment"] = json!(h[6]);
    lib
}

/// Every Markdown output for the hostile library, each named.
async fn outputs(s: &Server) -> (Vec<(String, String)>, Vec<String>) {
    let mut out = Vec::new();
    let meta = s
        .call(
            "zotero_get_item_metadata",
            json!({"item_key": "RESNET52", "format": "markdown"}),
        )
        .await;
    out.push((
        "metadata".to_string(),
        meta.expect_ok()["markdown"].as_str().unwrap().to_string(),
    ));
    for view in ["notes.md", "annotations.md"] {
        let uri = format!("zotero://user/items/RESNET52/{view}");
        out.push((view.to_string(), read(s, &uri).await));
    }
    // Every note read on in pieces of 200 characters, starting every 37.
    let mut offset = 0u64;
    let mut titles = Vec::new();
    for _ in 0..60 {
        let a = s
            .call(
                "zotero_get_notes",
                json!({"item_key": "RESNET52", "max_chars": 200, "offset": offset}),
            )
            .await;
        let notes = a.expect_ok()["notes"].as_array().unwrap().clone();
        if offset == 0 {
            titles = notes
                .iter()
                .map(|n| n["title"].as_str().unwrap().to_string())
                .collect();
        }
        for n in &notes {
            out.push((
                format!("zotero_get_notes {} at {offset}", n["note_key"]),
                n["markdown"].as_str().unwrap().to_string(),
            ));
        }
        match notes.iter().filter_map(|n| n["next_offset"].as_u64()).min() {
            Some(_) => offset += 37,
            None => break,
        }
    }
    for mode in ["bibliography", "citation"] {
        let cite = s
            .call(
                "zotero_cite",
                json!({"item_keys": ["RESNET52"], "format": "markdown", "mode": mode}),
            )
            .await;
        let data = cite.expect_ok();
        if let Some(b) = data["bibliography"].as_str() {
            out.push(("cite bibliography".to_string(), b.to_string()));
        }
        for c in data["citations"].as_array().into_iter().flatten() {
            out.push((
                "cite citation".to_string(),
                c["citation"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    (out, titles)
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn every_markdown_output_is_inert(
        h in proptest::collection::vec(hostile(), 16),
        filler in 0usize..40,
    ) {
        runtime().block_on(async {
            let (_emu, server) = start(hostile_library(&h, filler), &[]).await;
            let (outputs, titles) = outputs(&server).await;
            server.stop().await;
            for (name, md) in &outputs {
                let found = problems(md);
                prop_assert!(found.is_empty(), "{name}: {found:?}\nMarkdown:\n{md}\nStrings: {h:?}");
            }
            let metadata = &outputs[0].1;
            prop_assert_eq!(
                headings(metadata, HeadingLevel::H1),
                vec![one_line(&h[0])],
                "the title reads as written:\n{}", metadata
            );
            let notes = &outputs[1].1;
            let want: Vec<String> = titles.iter().map(|t| one_line(t)).collect();
            prop_assert_eq!(
                headings(notes, HeadingLevel::H2),
                want,
                "the note titles read as written:\n{}", notes
            );
            Ok(())
        })?;
    }
}

/// The two cases of the issue, exactly.
#[test]
fn the_reported_note_titles_and_abstract_are_inert() {
    runtime().block_on(async {
        let mut lib = Library::from_fixtures();
        item(&mut lib, "RESNTS52")["data"]["note"] =
            json!("<p>[click me](javascript:alert(1))</p><p>body</p>");
        item(&mut lib, "RESCLP53")["data"]["note"] =
            json!("<p>&lt;img src=x onerror=alert(1)&gt;</p><p>body</p>");
        item(&mut lib, "RESNET52")["data"]["abstractNote"] =
            json!("<img src=x onerror=alert(1)> [x](javascript:alert(1)) <javascript:alert(1)>");
        let (_emu, s) = start(lib, &[]).await;
        let notes = read(&s, "zotero://user/items/RESNET52/notes.md").await;
        assert!(problems(&notes).is_empty(), "{notes}");
        assert!(
            notes.contains("## \\[click me\\](javascript:alert(1))"),
            "{notes}"
        );
        assert!(
            notes.contains("## \\<img src=x onerror=alert(1)\\>"),
            "{notes}"
        );
        let meta = s
            .call(
                "zotero_get_item_metadata",
                json!({"item_key": "RESNET52", "format": "markdown"}),
            )
            .await;
        let md = meta.expect_ok()["markdown"].as_str().unwrap().to_string();
        assert!(problems(&md).is_empty(), "{md}");
        assert!(md.contains(
            "## Abstract\n\n\\<img src=x onerror=alert(1)\\> \\[x\\](javascript:alert(1)) \
             \\<javascript:alert(1)\\>\n"
        ));
        s.stop().await;
    });
}

/// A note cut inside its code (at 8,000 characters in `notes.md`) leaves the next note's
/// heading a heading, not more code.
#[test]
fn a_note_cut_inside_its_code_does_not_swallow_the_next() {
    runtime().block_on(async {
        let mut lib = Library::from_fixtures();
        item(&mut lib, "RESNTS52")["data"]["note"] = json!(format!(
            "<h1>Code</h1><pre>{}</pre>",
            "let x = 1;\n".repeat(3_000)
        ));
        let (_emu, s) = start(lib, &[]).await;
        let notes = read(&s, "zotero://user/items/RESNET52/notes.md").await;
        s.stop().await;
        assert!(notes.contains("offset 8000 reads on"), "the note is cut");
        // The second note's title, then its own heading of the same words.
        assert_eq!(
            headings(&notes, HeadingLevel::H2),
            ["Code", "Clipped from the web", "Clipped from the web"],
            "{}",
            &notes[notes.len() - 500..]
        );
        assert!(problems(&notes).is_empty());
    });
}
