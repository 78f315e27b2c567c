//! PDF extraction against files the tests write: text per page in reading order, labels,
//! glyph boxes equal to where the fixture put each glyph, rotation, scans, encryption and
//! hostile files (broken cross-references, decompression bombs, page-tree cycles, limits).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod support;

use std::time::Duration;

use support::{document, glyph_box, text_at, PageSpec, Pdf};
use zotero_text::{extract, DocumentKind, Limits, PageStatus, TextError};

fn read(bytes: &[u8]) -> zotero_text::Document {
    extract(bytes, DocumentKind::Pdf, &Limits::default()).unwrap()
}

fn one_page(content: String) -> zotero_text::Document {
    read(&document(&[PageSpec::text(content)], ""))
}

#[test]
fn text_per_page_with_index_and_default_labels() {
    let doc = read(&document(
        &[
            PageSpec::text(text_at(72.0, 700.0, 12.0, "First page")),
            PageSpec::text(text_at(72.0, 700.0, 12.0, "Second page")),
        ],
        "",
    ));
    assert_eq!(doc.pages.len(), 2);
    let texts: Vec<_> = doc
        .pages
        .iter()
        .map(|p| (p.index, p.label.as_str(), p.text.as_str(), p.status))
        .collect();
    assert_eq!(
        texts,
        [
            (0, "1", "First page", PageStatus::Text),
            (1, "2", "Second page", PageStatus::Text)
        ]
    );
    assert_eq!(doc.pages[0].view_box, [0.0, 0.0, 612.0, 792.0]);
}

#[test]
fn two_columns_drawn_line_by_line_read_column_by_column() {
    // The stream alternates between the columns, as some producers write them.
    let mut content = String::new();
    for (i, (left, right)) in [
        ("left one", "right one"),
        ("left two", "right two"),
        ("left three", "right three"),
    ]
    .iter()
    .enumerate()
    {
        let y = 700.0 - 12.0 * i as f64;
        content += &text_at(50.0, y, 10.0, left);
        content += &text_at(320.0, y, 10.0, right);
    }
    content += &text_at(
        50.0,
        760.0,
        14.0,
        "A title across the page, over both of the columns",
    );
    let doc = one_page(content);
    assert_eq!(
        doc.pages[0].text,
        "A title across the page, over both of the columns\nleft one\nleft two\nleft three\nright one\nright two\nright three"
    );
}

#[test]
fn a_running_header_comes_before_the_text_below_it() {
    // The header sits right, the heading left: a vertical band separates them too, but the
    // blank line under the header is cut first.
    let content = text_at(400.0, 760.0, 10.0, "Running header")
        + &text_at(50.0, 730.0, 10.0, "1. Heading")
        + &text_at(50.0, 718.0, 10.0, "Body text of the section");
    assert_eq!(
        one_page(content).pages[0].text,
        "Running header\n1. Heading\nBody text of the section"
    );
}

#[test]
fn text_already_in_reading_order_keeps_the_streams_order() {
    // A header drawn last stays last, as pdf.js (Zotero's reader) reads it.
    let content = text_at(50.0, 700.0, 10.0, "First line of the body")
        + &text_at(50.0, 688.0, 10.0, "Second line of the body")
        + &text_at(400.0, 760.0, 10.0, "Header drawn last");
    assert_eq!(
        one_page(content).pages[0].text,
        "First line of the body\nSecond line of the body\nHeader drawn last"
    );
}

#[test]
fn words_spaced_by_position_lines_broken_hyphens_joined_ligatures_folded() {
    // "data" then a gap of 1 em: a space; a line ending in "exam-" continues with "ple".
    let content = "BT /F1 10 Tf 100 700 Td [(data) -1000 (set)] Tj ET\n".replace("Tj", "TJ")
        + &text_at(100.0, 688.0, 10.0, "an exam-")
        + &text_at(100.0, 676.0, 10.0, "ple of \x01nd and \x02ow")
        + &text_at(100.0, 664.0, 10.0, "Well-Known");
    let page = &one_page(content).pages[0];
    assert_eq!(
        page.text,
        "data set\nan example of find and flow\nWell-Known"
    );
}

#[test]
fn glyph_boxes_are_where_the_file_put_them() {
    let content =
        text_at(100.0, 700.0, 10.0, "AB") + "BT /F1 20 Tf 200 500 Td [(C) -500 (D)] TJ ET\n";
    let page = &one_page(content).pages[0];
    assert_eq!(page.text, "AB\nC D");
    let got: Vec<_> = page
        .glyphs
        .iter()
        .map(|g| (&page.text[g.start as usize..g.end as usize], g.rect))
        .collect();
    // D follows C's 10-unit advance and a 500/1000 em kerning of 10 units.
    let d = glyph_box(200.0, 500.0, 20.0, 0);
    assert_eq!(
        got,
        [
            ("A", glyph_box(100.0, 700.0, 10.0, 0)),
            ("B", glyph_box(100.0, 700.0, 10.0, 1)),
            ("C", glyph_box(200.0, 500.0, 20.0, 0)),
            ("D", [d[0] + 20.0, d[1], d[2] + 20.0, d[3]]),
        ]
    );
}

#[test]
fn a_ligature_is_one_glyph_over_its_letters_and_a_joined_hyphen_has_none() {
    let content = text_at(100.0, 700.0, 10.0, "\x01x")
        + &text_at(100.0, 688.0, 10.0, "ab-")
        + &text_at(100.0, 676.0, 10.0, "cd");
    let page = &one_page(content).pages[0];
    assert_eq!(page.text, "fix\nabcd");
    let spans: Vec<_> = page.glyphs.iter().map(|g| (g.start, g.end)).collect();
    assert_eq!(spans, [(0, 2), (2, 3), (4, 5), (5, 6), (6, 7), (7, 8)]);
    assert_eq!(page.glyphs[0].rect, glyph_box(100.0, 700.0, 10.0, 0));
    assert_eq!(page.glyphs[4].rect, glyph_box(100.0, 676.0, 10.0, 0));
}

#[test]
fn transformed_text_has_transformed_boxes() {
    // The CTM doubles everything and moves the origin.
    let content = format!("q 2 0 0 2 10 20 cm {}Q\n", text_at(50.0, 100.0, 10.0, "X"));
    let page = &one_page(content).pages[0];
    let b = glyph_box(50.0, 100.0, 10.0, 0);
    assert_eq!(
        page.glyphs[0].rect,
        [
            b[0] * 2.0 + 10.0,
            b[1] * 2.0 + 20.0,
            b[2] * 2.0 + 10.0,
            b[3] * 2.0 + 20.0
        ]
    );
}

#[test]
fn a_rotated_page_reads_as_displayed() {
    // /Rotate 90 turns the page clockwise: text running up the page reads left to right,
    // and each next line is further right in user space.
    let content = "BT /F1 10 Tf 12 TL 0 1 -1 0 100 100 Tm (line one) Tj T* (line two) Tj ET\n";
    let page = PageSpec {
        content: content.into(),
        extra: "/Rotate 90".into(),
        ..PageSpec::default()
    };
    let doc = read(&document(&[page], ""));
    let page = &doc.pages[0];
    assert_eq!(page.rotation, 90);
    assert_eq!(page.text, "line one\nline two");
    // The first glyph runs up from (100, 100): 5 units tall, 10 wide (ascent + descent).
    assert_eq!(page.glyphs[0].rect, [92.0, 100.0, 102.0, 105.0]);
}

#[test]
fn page_labels_follow_the_number_tree() {
    let pages: Vec<_> = (0..7)
        .map(|i| PageSpec::text(text_at(72.0, 700.0, 12.0, &format!("page {i}"))))
        .collect();
    let labels = "/PageLabels << /Nums [0 << /S /r >> 2 << /S /D /St 217 >> 4 << /P (A-) /S /A >> 6 << /P (Cover) >>] >>";
    let doc = read(&document(&pages, labels));
    let got: Vec<_> = doc.pages.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(got, ["i", "ii", "217", "218", "A-A", "A-B", "Cover"]);
}

#[test]
fn page_labels_in_kids_of_the_tree() {
    let pages: Vec<_> = (0..3)
        .map(|_| PageSpec::text(text_at(72.0, 700.0, 12.0, "x")))
        .collect();
    let labels =
        "/PageLabels << /Kids [<< /Nums [0 << /S /R /St 4 >>] >> << /Nums [2 << /S /a >>] >>] >>";
    let doc = read(&document(&pages, labels));
    let got: Vec<_> = doc.pages.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(got, ["IV", "V", "a"]);
}

#[test]
fn a_scanned_page_has_no_text_layer() {
    let mut pdf = Pdf::default();
    let image = Pdf::stream(
        "/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8",
        &[0, 255, 255, 0],
    );
    let image = pdf.add(image);
    let scan = PageSpec {
        content: b"q 612 0 0 792 0 0 cm /Im1 Do Q\n".to_vec(),
        xobjects: format!("/Im1 {image} 0 R"),
        ..PageSpec::default()
    };
    let doc = read(&support::document_in(
        pdf,
        &[scan, PageSpec::text(text_at(72.0, 700.0, 12.0, "typed"))],
        "",
    ));
    assert_eq!(doc.pages[0].status, PageStatus::NoTextLayer);
    assert_eq!(doc.pages[0].text, "");
    assert_eq!(doc.pages[1].status, PageStatus::Text);
}

#[test]
fn text_inside_a_form_xobject_is_read_with_the_forms_matrix() {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let form_content = text_at(0.0, 0.0, 10.0, "in form");
    let form = pdf.add(Pdf::stream(
        &format!("/Type /XObject /Subtype /Form /BBox [0 0 500 500] /Matrix [1 0 0 1 100 300] /Resources << /Font << /F1 {font} 0 R >> >>"),
        form_content.as_bytes(),
    ));
    // The form also draws itself: a cycle that must be cut.
    let content = pdf.add(Pdf::stream("", b"/Fm1 Do\n"));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R /Resources << /XObject << /Fm1 {form} 0 R >> >> >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    let doc = read(&pdf.finish(catalog, ""));
    assert_eq!(doc.pages[0].text, "in form");
    assert_eq!(
        doc.pages[0].glyphs[0].rect,
        glyph_box(100.0, 300.0, 10.0, 0)
    );
}

#[test]
fn a_kids_cycle_gives_each_page_once() {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let inner = pdf.reserve();
    let font = pdf.font();
    let content = pdf.add(Pdf::stream(
        "",
        text_at(72.0, 700.0, 12.0, "only page").as_bytes(),
    ));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {inner} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    // The inner node lists the root and itself among its kids; the root's parent is the inner
    // node (a /Parent loop too).
    pdf.set(inner, format!("<< /Type /Pages /Parent {tree} 0 R /Kids [{page} 0 R {tree} 0 R {inner} 0 R] /Count 1 >>"));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Parent {inner} 0 R /Kids [{inner} 0 R {inner} 0 R] /Count 3 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    let doc = read(&pdf.finish(catalog, ""));
    let texts: Vec<_> = doc.pages.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["only page"]);
}

#[test]
fn a_broken_cross_reference_table_is_rebuilt() {
    let bytes = document(
        &[PageSpec::text(text_at(72.0, 700.0, 12.0, "still here"))],
        "",
    );
    // Every offset in the table now points 7 bytes off, and startxref too.
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let at = text.find("xref\n").unwrap();
    let (head, tail) = text.split_at(at);
    let tail = tail.replace("0000000", "0000123");
    let broken = format!("{head}{}", tail.replace("startxref\n", "startxref\n9"));
    assert_ne!(broken.as_bytes(), bytes.as_slice());
    let doc = read(broken.as_bytes());
    assert_eq!(doc.pages[0].text, "still here");
}

#[test]
fn not_a_pdf_is_damaged() {
    let err = extract(
        b"%PDF-1.4\nthis is not a pdf at all",
        DocumentKind::Pdf,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TextError::Damaged { .. }), "{err:?}");
}

#[test]
fn a_decompression_bomb_is_refused() {
    let zeros = vec![b' '; 64 * 1024 * 1024];
    let packed = support::deflate(&zeros);
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let content = pdf.add(Pdf::stream("/Filter /FlateDecode", &packed));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    let limits = Limits {
        max_decoded_bytes: 8 * 1024 * 1024,
        ..Limits::default()
    };
    let err = extract(&pdf.finish(catalog, ""), DocumentKind::Pdf, &limits).unwrap_err();
    assert!(
        matches!(err, TextError::DecodedTooLarge { limit } if limit == 8 * 1024 * 1024),
        "{err:?}"
    );
}

#[test]
fn limits_on_pages_size_and_time_are_errors() {
    let pages: Vec<_> = (0..3)
        .map(|_| PageSpec::text(text_at(72.0, 700.0, 12.0, "x")))
        .collect();
    let bytes = document(&pages, "");
    let few = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    assert!(matches!(
        extract(&bytes, DocumentKind::Pdf, &few),
        Err(TextError::TooManyPages { limit: 2, .. })
    ));
    let small = Limits {
        max_input_bytes: 100,
        ..Limits::default()
    };
    assert!(matches!(
        extract(&bytes, DocumentKind::Pdf, &small),
        Err(TextError::TooLarge { .. })
    ));
    let no_time = Limits {
        max_duration: Duration::ZERO,
        ..Limits::default()
    };
    assert!(matches!(
        extract(&bytes, DocumentKind::Pdf, &no_time),
        Err(TextError::TimedOut { .. })
    ));
}

/// The fixture, encrypted by lopdf with `user` as the user password.
fn encrypted(user: &str, aes: bool) -> Vec<u8> {
    use lopdf::encryption::crypt_filters::{Aes128CryptFilter, CryptFilter};
    use lopdf::{EncryptionState, EncryptionVersion, Object, Permissions, StringFormat};
    let plain = document(
        &[PageSpec::text(text_at(72.0, 700.0, 12.0, "secret text"))],
        "",
    );
    let mut doc = lopdf::Document::load_mem(&plain).unwrap();
    let id = Object::String(vec![0x42; 16], StringFormat::Hexadecimal);
    doc.trailer.set("ID", Object::Array(vec![id.clone(), id]));
    let version = if aes {
        let filter: std::sync::Arc<dyn CryptFilter> = std::sync::Arc::new(Aes128CryptFilter);
        EncryptionVersion::V4 {
            document: &doc,
            encrypt_metadata: true,
            crypt_filters: std::collections::BTreeMap::from([(b"StdCF".to_vec(), filter)]),
            stream_filter: b"StdCF".to_vec(),
            string_filter: b"StdCF".to_vec(),
            owner_password: "owner",
            user_password: user,
            permissions: Permissions::PRINTABLE,
        }
    } else {
        EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password: user,
            key_length: 128,
            permissions: Permissions::PRINTABLE,
        }
    };
    let state = EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    assert!(!out.windows(11).any(|w| w == b"secret text"));
    out
}

#[test]
fn encrypted_with_the_empty_user_password_is_read() {
    for aes in [false, true] {
        let doc = read(&encrypted("", aes));
        assert_eq!(doc.pages[0].text, "secret text", "aes: {aes}");
    }
}

#[test]
fn encrypted_with_a_user_password_is_refused() {
    for aes in [false, true] {
        let err = extract(
            &encrypted("hunter2", aes),
            DocumentKind::Pdf,
            &Limits::default(),
        )
        .unwrap_err();
        assert!(matches!(err, TextError::Encrypted), "aes {aes}: {err:?}");
    }
}

#[test]
fn an_embedded_type1_programs_own_encoding_maps_its_codes() {
    // A TeX math font: no /Encoding in the dictionary, codes mapped only inside the program.
    let mut pdf = Pdf::default();
    let program = b"%!PS-AdobeFont-1.0: CMSY10 003.002\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\n\
dup 0 /minus put\ndup 50 /element put\ndup 102 /braceleft put\nreadonly def\ncurrentfile eexec\n\x8f\x00garbage";
    let file = pdf.add(Pdf::stream(
        &format!("/Length1 {} /Length2 0 /Length3 0", program.len()),
        program,
    ));
    let descriptor = pdf.add(format!(
        "<< /Type /FontDescriptor /FontName /CMSY10 /Flags 4 /FontBBox [0 -200 500 800] /ItalicAngle 0 \
         /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile {file} 0 R >>"
    ));
    let font = pdf.add(format!(
        "<< /Type /Font /Subtype /Type1 /BaseFont /CMSY10 /FirstChar 0 /LastChar 255 /Widths [{}] /FontDescriptor {descriptor} 0 R >>",
        vec!["500"; 256].join(" ")
    ));
    let page = PageSpec {
        content: b"BT /F1 10 Tf 72 700 Td (x) Tj /F2 10 Tf (2f\\000) Tj ET\n".to_vec(),
        fonts: format!("/F2 {font} 0 R"),
        ..PageSpec::default()
    };
    let bytes = support::document_in(pdf, &[page], "");
    assert_eq!(read(&bytes).pages[0].text, "x\u{2208}{\u{2212}");
}

#[test]
fn running_headers_and_footers_are_marked_not_removed() {
    // Five pages: a running head whose page number changes (arabic, then a roman-numbered
    // front page), a footer with the page number, and body text that differs per page. The
    // first page's title sits in the top band too, on that page only.
    let pages: Vec<PageSpec> = (1..=5)
        .map(|n| {
            let head = if n == 1 {
                "A Title Only Here".to_owned()
            } else if n == 2 {
                "Journal of Tests iv".to_owned()
            } else {
                format!("Journal of Tests {}", 100 + n)
            };
            let content = text_at(72.0, 750.0, 10.0, &head)
                + &text_at(
                    72.0,
                    600.0,
                    12.0,
                    &format!("Body of page {n} says something"),
                )
                + &text_at(300.0, 40.0, 10.0, &format!("{n}"));
            PageSpec::text(content)
        })
        .collect();
    let doc = read(&document(&pages, ""));
    let marks = zotero_text::running::running_lines(&doc);
    assert_eq!(marks.len(), 5);
    for (n, (page, spans)) in doc.pages.iter().zip(&marks).enumerate() {
        let marked: Vec<&str> = spans
            .iter()
            .map(|&(s, e)| &page.text[s as usize..e as usize])
            .collect();
        let number = (n + 1).to_string();
        let expected: Vec<String> = match n {
            0 => vec![number],
            1 => vec!["Journal of Tests iv".to_owned(), number],
            _ => vec![format!("Journal of Tests {}", 101 + n), number],
        };
        assert_eq!(marked, expected, "page {}", n + 1);
        // Nothing removed: the page's text still holds head, body and footer.
        assert!(page.text.contains(&format!("Body of page {} says", n + 1)));
    }
    // The first page's title is not repeated: not marked.
    assert!(doc.pages[0].text.starts_with("A Title Only Here"));
}

#[test]
fn a_standard_font_without_widths_gives_each_character_its_own_width() {
    // Helvetica with no /Widths, WinAnsi codes beyond ASCII: é (0xE9, 556/1000 em), an em
    // dash (0x97, 1000), a straight quote (0x27, 191: not the curly one's 222); and Bold.
    let mut pdf = Pdf::default();
    let regular = pdf
        .add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    let bold = pdf.add(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    );
    let page = PageSpec {
        content: b"BT /F2 10 Tf 100 700 Td (caf\\351\\227'b) Tj /F3 10 Tf 100 600 Td (b) Tj ET\n"
            .to_vec(),
        fonts: format!("/F2 {regular} 0 R /F3 {bold} 0 R"),
        ..PageSpec::default()
    };
    let doc = read(&support::document_in(pdf, &[page], ""));
    let p = &doc.pages[0];
    assert_eq!(p.text, "café—'b\nb");
    // Advances in 1/1000 em at 10 pt: c 500, a 556, f 278, é 556, — 1000, ' 191, b 556;
    // Helvetica-Bold's b 611.
    let widths: Vec<f64> = p
        .glyphs
        .iter()
        .map(|g| ((g.rect[2] - g.rect[0]) * 100.0).round())
        .collect();
    assert_eq!(
        widths,
        [500.0, 556.0, 278.0, 556.0, 1000.0, 191.0, 556.0, 611.0]
    );
    // The straight quote starts where the five glyphs before it end: 100 + 28.9.
    assert!((p.glyphs[5].rect[0] - 128.9).abs() < 1e-9);
}

#[test]
fn a_composite_truetype_font_without_to_unicode_is_read_through_its_cmap() {
    // Identity-H, no /ToUnicode: the codes are glyph ids, and only the embedded program's
    // cmap says which characters they draw (before, such a page had no text at all). The
    // second font maps its CIDs through a /CIDToGIDMap stream (CID n → glyph 5 - n).
    let mut pdf = Pdf::default();
    let program = support::truetype_with_cmap(&['H', 'd', 'e', 'l', 'o', 'é']);
    let file = pdf.add(Pdf::stream(
        &format!("/Length1 {}", program.len()),
        &program,
    ));
    let descriptor = pdf.add(format!(
        "<< /Type /FontDescriptor /FontName /ABCDEF+Test /Flags 4 /FontBBox [0 -200 1000 800] \
         /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 {file} 0 R >>"
    ));
    let gid_map = pdf.add(Pdf::stream("", &[0, 0, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1]));
    let mut fonts = String::new();
    for (name, map) in [
        ("F2", String::new()),
        ("F3", format!("/CIDToGIDMap {gid_map} 0 R")),
    ] {
        let cid = pdf.add(format!(
            "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+Test \
             /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> \
             /FontDescriptor {descriptor} 0 R /DW 600 {map} >>"
        ));
        let font = pdf.add(format!(
            "<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Test /Encoding /Identity-H \
             /DescendantFonts [{cid} 0 R] >>"
        ));
        fonts += &format!("/{name} {font} 0 R ");
    }
    let page = PageSpec {
        // F2: glyphs 1 3 4 4 5 = "Hello"; F3: CIDs 1 and 5 = glyphs 5 and 1 = "oH"; glyph 6
        // through F2 = "é".
        content: b"BT /F2 10 Tf 72 700 Td <00010003000400040005> Tj 0 -20 Td <0006> Tj \
                   /F3 10 Tf 0 -20 Td <00010005> Tj ET\n"
            .to_vec(),
        fonts,
        ..PageSpec::default()
    };
    let doc = read(&support::document_in(pdf, &[page], ""));
    assert_eq!(doc.pages[0].status, PageStatus::Text);
    assert_eq!(doc.pages[0].text, "Hello\né\noH");
    // Each glyph keeps its box: /DW 600 at 10 pt.
    let g = &doc.pages[0].glyphs[1];
    assert_eq!(g.rect, [78.0, 698.0, 84.0, 708.0]);
}
