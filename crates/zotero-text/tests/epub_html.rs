//! EPUB, HTML snapshots and plain text: spine order, chapter text without scripts or
//! styles, bounded zips, deep DOMs, encodings; and the sniffing of a file's kind.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::ZipWriter;
use zotero_text::{extract, sniff, DocumentKind, Limits, PageStatus, TextError};

/// An EPUB of `files` (path, content), the `mimetype` entry first as the format requires.
fn epub(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/epub+zip").unwrap();
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (path, content) in files {
        zip.start_file(*path, deflated).unwrap();
        zip.write_all(content).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

const CONTAINER: &[u8] = br#"<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"#;

const OPF: &[u8] = br#"<?xml version="1.0" encoding="UTF-8"?>
<opf:package xmlns:opf="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <opf:metadata><dc:title xmlns:dc="http://purl.org/dc/elements/1.1/">A Book</dc:title></opf:metadata>
  <opf:manifest>
    <opf:item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <opf:item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>
    <opf:item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <opf:item id="gone" href="text/missing.xhtml" media-type="application/xhtml+xml"/>
  </opf:manifest>
  <opf:spine><opf:itemref idref="c2"/><opf:itemref idref="c1"/><opf:itemref idref="gone"/></opf:spine>
</opf:package>"#;

fn chapter(body: &str) -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title>
<style>p {{ color: red }}</style></head><body>{body}<script>var hidden = 1;</script></body></html>"#
    )
    .into_bytes()
}

#[test]
fn epub_pages_follow_the_spine() {
    let one = chapter("<h1>Chapter One</h1><p>The <em>first</em> words.</p>");
    let two = chapter("<h1>Chapter Two</h1><p>Second\n   chapter.</p>");
    let bytes = epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("OEBPS/content.opf", OPF),
        ("OEBPS/text/chapter 1.xhtml", &one),
        ("OEBPS/text/two.xhtml", &two),
        (
            "OEBPS/nav.xhtml",
            b"<html><body><nav>contents</nav></body></html>",
        ),
    ]);
    assert_eq!(sniff(&bytes), Some(DocumentKind::Epub));
    let doc = extract(&bytes, DocumentKind::Epub, &Limits::default()).unwrap();
    let got: Vec<_> = doc
        .pages
        .iter()
        .map(|p| (p.index, p.label.as_str(), p.status, p.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (0, "1", PageStatus::Text, "Chapter Two\nSecond chapter."),
            (1, "2", PageStatus::Text, "Chapter One\nThe first words."),
            (2, "3", PageStatus::Damaged, ""),
        ]
    );
}

#[test]
fn an_epub_bomb_is_refused() {
    let big = vec![b'a'; 4 * 1024 * 1024];
    let bytes = epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("OEBPS/content.opf", OPF),
        ("OEBPS/text/two.xhtml", &big),
    ]);
    let limits = Limits {
        max_decoded_bytes: 1024 * 1024,
        ..Limits::default()
    };
    let err = extract(&bytes, DocumentKind::Epub, &limits).unwrap_err();
    assert!(matches!(err, TextError::DecodedTooLarge { .. }), "{err:?}");
}

#[test]
fn not_an_epub_is_damaged() {
    let err = extract(
        b"PK\x03\x04 nothing",
        DocumentKind::Epub,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TextError::Damaged { .. }), "{err:?}");
    let no_container = epub(&[("OEBPS/content.opf", OPF)]);
    let err = extract(&no_container, DocumentKind::Epub, &Limits::default()).unwrap_err();
    assert!(matches!(err, TextError::Damaged { .. }), "{err:?}");
}

#[test]
fn html_text_without_scripts_styles_or_head() {
    let html = r##"<!DOCTYPE html><html><head><title>Head title</title><style>.x{}</style>
<script>alert("no")</script></head><body><header>Site</header>
<article><h1>A &amp; B</h1><p>Some <b>bold</b>text and a <a href="#">link</a>.</p>
<pre>  kept
    as is</pre><ul><li>one</li><li>two</li></ul><p>efﬁcient</p><noscript>nope</noscript></article></body></html>"##;
    let html = html.as_bytes();
    assert_eq!(sniff(html), Some(DocumentKind::Html));
    let doc = extract(html, DocumentKind::Html, &Limits::default()).unwrap();
    assert_eq!(doc.pages.len(), 1);
    assert_eq!(
        doc.pages[0].text,
        "Site\nA & B\nSome boldtext and a link.\n  kept\n    as is\none\ntwo\nefficient"
    );
}

#[test]
fn a_deeply_nested_page_does_not_exhaust_the_stack() {
    let depth = 5_000;
    let html = format!(
        "<html><body>{}deep{}</body></html>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    let doc = extract(html.as_bytes(), DocumentKind::Html, &Limits::default()).unwrap();
    assert_eq!(doc.pages[0].text, "deep");
}

#[test]
fn plain_text_is_one_page_as_written() {
    let doc = extract(
        b"\xef\xbb\xbf# Title\r\n\r\nA line with \xff a bad byte.\n",
        DocumentKind::Text,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(doc.pages.len(), 1);
    assert_eq!(
        doc.pages[0].text,
        "# Title\n\nA line with \u{fffd} a bad byte.\n"
    );
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain("hé".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let doc = extract(&utf16, DocumentKind::Text, &Limits::default()).unwrap();
    assert_eq!(doc.pages[0].text, "hé");
    assert_eq!(sniff(b"just words"), None);
    assert_eq!(sniff(b"%PDF-1.7\n"), Some(DocumentKind::Pdf));
}
