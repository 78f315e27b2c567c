//! Hostile files, generated: deep nesting, reference chains and loops, decompression and
//! object-stream bombs, lying lengths, huge page trees, streams and images, broken objects,
//! deep or huge HTML, EPUB zip bombs. Shared by `tests/hostile.rs` (each case must end with
//! a typed error or a document, never a crash or a hang) and `examples/hostile.rs` (which
//! writes them out for the figures of the README's bounds section).
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::fmt::Write as _;
use std::io::{Cursor, Write};

use super::{document, text_at, PageSpec, Pdf};
use zotero_text::DocumentKind;

/// One hostile file: its name and kind, and how to make it.
pub struct Case {
    pub name: &'static str,
    pub kind: DocumentKind,
    pub make: fn() -> Vec<u8>,
}

const DEPTH: usize = 100_000;

/// Every case, in the order the README lists them.
pub fn cases() -> Vec<Case> {
    use DocumentKind::{Epub, Html, Pdf as P};
    let c = |name, kind, make| Case { name, kind, make };
    vec![
        c("deep-arrays-in-an-object", P, deep_arrays_object),
        c("deep-dicts-in-an-object", P, deep_dicts_object),
        c("deep-arrays-in-content", P, deep_arrays_content),
        c("deep-dicts-in-content", P, deep_dicts_content),
        c("deep-strings-in-content", P, deep_strings_content),
        c("reference-chain", P, reference_chain),
        c("length-reference-chain", P, length_reference_chain),
        c("prev-xref-loop", P, prev_loop),
        c("pages-chain-100k-deep", P, pages_chain),
        c("pages-cycle-and-parent-loop", P, pages_cycle),
        c("object-stream-bomb", P, object_stream_bomb),
        c("many-object-streams", P, many_object_streams),
        c(
            "object-stream-shared-offset",
            P,
            object_stream_shared_offset,
        ),
        c("xref-entries-sharing-an-object", P, xref_shared_offset),
        c("flate-bomb-1gb", P, flate_bomb),
        c("flate-bomb-every-page", P, flate_bomb_every_page),
        c("length-lies", P, length_lies),
        c("page-tree-100k-pages", P, many_pages),
        c("huge-content-glyphs", P, huge_content),
        c("huge-operand-run", P, huge_operands),
        c("huge-tj-array", P, huge_tj_array),
        c("huge-inline-image", P, huge_inline_image),
        c("form-fan-out", P, form_fan_out),
        c("every-object-broken", P, every_object_broken),
        c("values-under-the-limit-numbers", P, under_the_limit_numbers),
        c("values-under-the-limit-dicts", P, under_the_limit_dicts),
        c("html-200k-nested-divs", Html, html_deep_divs),
        c("html-200k-nested-formatting", Html, html_deep_formatting),
        c("html-200k-tables", Html, html_deep_tables),
        c("epub-zip-bomb", Epub, epub_bomb),
        c("epub-sizes-that-lie", Epub, epub_lying_sizes),
        c("epub-25k-entries", Epub, epub_many_entries),
        c("epub-nested-archive", Epub, epub_nested),
        c("epub-deep-chapter", Epub, epub_deep_chapter),
        c("epub-200k-spine-items", Epub, epub_huge_spine),
    ]
}

/// A one-page document whose page dictionary carries `extra` and whose content is `content`.
fn page_with(content: impl Into<Vec<u8>>, extra: &str) -> Vec<u8> {
    let mut spec = PageSpec::text(content);
    spec.extra = extra.to_owned();
    document(&[spec], "")
}

fn deep_arrays_object() -> Vec<u8> {
    page_with(
        text_at(72.0, 700.0, 12.0, "deep"),
        &format!("/X {}{}", "[".repeat(DEPTH), "]".repeat(DEPTH)),
    )
}

fn deep_dicts_object() -> Vec<u8> {
    page_with(
        text_at(72.0, 700.0, 12.0, "deep"),
        &format!("/X {}{}", "<< /A ".repeat(DEPTH), ">> ".repeat(DEPTH)),
    )
}

fn deep_arrays_content() -> Vec<u8> {
    let content = text_at(72.0, 700.0, 12.0, "before")
        + &format!(
            "BT /F1 12 Tf {}{} TJ ET\n",
            "[".repeat(DEPTH),
            "]".repeat(DEPTH)
        )
        + &text_at(72.0, 600.0, 12.0, "after");
    page_with(content, "")
}

fn deep_dicts_content() -> Vec<u8> {
    let content = text_at(72.0, 700.0, 12.0, "before")
        + &format!(
            "/Span {}{} BDC EMC\n",
            "<< /A ".repeat(DEPTH),
            ">> ".repeat(DEPTH)
        )
        + &text_at(72.0, 600.0, 12.0, "after");
    page_with(content, "")
}

fn deep_strings_content() -> Vec<u8> {
    let content = text_at(72.0, 700.0, 12.0, "before")
        + &format!(
            "BT /F1 12 Tf {}{} Tj ET\n",
            "(".repeat(DEPTH),
            ")".repeat(DEPTH)
        )
        + &text_at(72.0, 600.0, 12.0, "after");
    page_with(content, "")
}

/// The page's `/Contents` reaches its stream through 100,000 references.
fn reference_chain() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let first = pdf.reserve();
    let mut prev = first;
    for _ in 0..DEPTH {
        let next = pdf.reserve();
        pdf.set(prev, format!("{next} 0 R"));
        prev = next;
    }
    pdf.set(
        prev,
        Pdf::stream("", text_at(72.0, 700.0, 12.0, "chained").as_bytes()),
    );
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {first} 0 R \
         /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

/// The content stream's `/Length` is a reference to a reference … 100,000 deep, and a
/// second stream's `/Length` is a reference to itself.
fn length_reference_chain() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let first = pdf.reserve();
    let mut prev = first;
    for _ in 0..DEPTH {
        let next = pdf.reserve();
        pdf.set(prev, format!("{next} 0 R"));
        prev = next;
    }
    let data = text_at(72.0, 700.0, 12.0, "length");
    pdf.set(prev, data.len().to_string());
    let mut body = format!("<< /Length {first} 0 R >>\nstream\n").into_bytes();
    body.extend_from_slice(data.as_bytes());
    body.extend_from_slice(b"\nendstream");
    let content = pdf.add(body);
    let own = pdf.reserve();
    pdf.set(
        own,
        format!("<< /Length {own} 0 R >>\nstream\nBT ET\nendstream"),
    );
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents [{content} 0 R {own} 0 R] \
         /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

/// Two cross-reference sections whose `/Prev` name each other.
fn prev_loop() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let content = pdf.add(Pdf::stream(
        "",
        text_at(72.0, 700.0, 12.0, "looped").as_bytes(),
    ));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R \
         /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    // The first section's /Prev is a fixed-width placeholder, filled once the second's
    // offset is known (leading zeros are valid in an integer).
    let mut out = pdf.finish(catalog, "/Prev 0000000000");
    let text = String::from_utf8_lossy(&out).into_owned();
    let first = text.rfind("xref\n").unwrap();
    let second = out.len();
    let _ = write!(
        unsafe_string(&mut out),
        "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 7 /Root {catalog} 0 R /Prev {first} >>\nstartxref\n{second}\n%%EOF\n"
    );
    let at = text.find("/Prev 0000000000").unwrap() + "/Prev ".len();
    out[at..at + 10].copy_from_slice(format!("{second:010}").as_bytes());
    out
}

/// `String` view of a byte buffer for `write!` (the text written is ASCII).
fn unsafe_string(out: &mut Vec<u8>) -> impl std::fmt::Write + '_ {
    struct W<'a>(&'a mut Vec<u8>);
    impl std::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    W(out)
}

/// 100,000 `/Pages` nodes, each the only kid of the one above; the page at the bottom.
fn pages_chain() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let font = pdf.font();
    let content = pdf.add(Pdf::stream(
        "",
        text_at(72.0, 700.0, 12.0, "bottom").as_bytes(),
    ));
    let nodes: Vec<usize> = (0..DEPTH).map(|_| pdf.reserve()).collect();
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R \
         /Resources << /Font << /F1 {font} 0 R >> >> >>",
        nodes[DEPTH - 1]
    ));
    for (i, &node) in nodes.iter().enumerate() {
        let kid = nodes.get(i + 1).copied().unwrap_or(page);
        let parent = if i == 0 {
            String::new()
        } else {
            format!("/Parent {} 0 R", nodes[i - 1])
        };
        pdf.set(
            node,
            format!("<< /Type /Pages {parent} /Kids [{kid} 0 R] /Count 1 >>"),
        );
    }
    pdf.set(
        catalog,
        format!("<< /Type /Catalog /Pages {} 0 R >>", nodes[0]),
    );
    pdf.finish(catalog, "")
}

/// A `/Kids` cycle through two nodes and a page whose `/Parent` is itself.
fn pages_cycle() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let inner = pdf.reserve();
    let font = pdf.font();
    let content = pdf.add(Pdf::stream(
        "",
        text_at(72.0, 700.0, 12.0, "once").as_bytes(),
    ));
    let page = pdf.reserve();
    pdf.set(
        page,
        format!(
            "<< /Type /Page /Parent {page} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R \
             /Resources << /Font << /F1 {font} 0 R >> >> >>"
        ),
    );
    pdf.set(
        inner,
        format!("<< /Type /Pages /Parent {tree} 0 R /Kids [{page} 0 R {tree} 0 R] /Count 2 >>"),
    );
    pdf.set(
        tree,
        format!("<< /Type /Pages /Parent {inner} 0 R /Kids [{inner} 0 R] /Count 2 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

/// An object stream's body: `n` objects numbered from `first`, each `body`.
fn object_stream(first: usize, n: usize, body: &str) -> Vec<u8> {
    let mut header = String::new();
    let mut objects = String::new();
    for i in 0..n {
        let _ = write!(header, "{} {} ", first + i, objects.len());
        objects.push_str(body);
        objects.push(' ');
    }
    let data = format!("{header}{objects}");
    let packed = super::deflate(data.as_bytes());
    Pdf::stream(
        &format!(
            "/Type /ObjStm /N {n} /First {} /Filter /FlateDecode",
            header.len()
        ),
        &packed,
    )
}

/// An object stream that inflates to 1 GiB (its header names one object).
fn object_stream_bomb() -> Vec<u8> {
    let mut pdf = Pdf::default();
    pdf.add(Pdf::stream(
        "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
        &zlib_of_repeated(b' ', 1 << 30),
    ));
    document_in_after(pdf)
}

/// 200 copies of an object stream of 100,000 small objects (20 M objects in all).
fn many_object_streams() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let one = object_stream(1_000_000, 100_000, "[1 2]");
    for _ in 0..200 {
        pdf.add(one.clone());
    }
    document_in_after(pdf)
}

/// An object stream of 1,000,000 members that all start at the same 8 MB array.
fn object_stream_shared_offset() -> Vec<u8> {
    let n = 1_000_000;
    let mut header = String::new();
    for i in 0..n {
        let _ = write!(header, "{} 0 ", 1_000_000 + i);
    }
    let data = format!("{header}[{}]", "1 ".repeat(4_000_000));
    let packed = zlib_of_pattern(data.as_bytes(), b"", 0, b"");
    let mut pdf = Pdf::default();
    pdf.add(Pdf::stream(
        &format!(
            "/Type /ObjStm /N {n} /First {} /Filter /FlateDecode",
            header.len()
        ),
        &packed,
    ));
    document_in_after(pdf)
}

/// An update whose cross-reference section lists 500,000 objects at the offset of one
/// array of 400,000 numbers (within the values' limit once, 2 × 10^11 values if parsed per
/// entry).
fn xref_shared_offset() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let big = pdf.add(format!("[{}]", "1 ".repeat(400_000)));
    let mut out = document_in_after(pdf);
    let needle = format!("\n{big} 0 obj\n");
    let at = out
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap()
        + 1;
    let tail = String::from_utf8_lossy(&out[out.len() - 200..]).into_owned();
    let first: usize = tail
        .split("startxref\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let field = |name: &str| -> usize {
        tail.split(name)
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (size, root) = (field("/Size "), field("/Root "));
    let n = 500_000;
    let second = out.len();
    let mut table = format!("xref\n{size} {n}\n");
    for _ in 0..n {
        let _ = writeln!(table, "{at:010} 00000 n ");
    }
    let _ = write!(
        table,
        "trailer\n<< /Size {} /Root {root} 0 R /Prev {first} >>\nstartxref\n{second}\n%%EOF\n",
        size + n
    );
    out.extend_from_slice(table.as_bytes());
    out
}

/// A normal one-page document written after the objects already in `pdf`.
fn document_in_after(pdf: Pdf) -> Vec<u8> {
    super::document_in(
        pdf,
        &[PageSpec::text(text_at(72.0, 700.0, 12.0, "after the bomb"))],
        "",
    )
}

/// A page whose content inflates to 1 GiB of spaces.
fn flate_bomb() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let content = pdf.add(Pdf::stream(
        "/Filter /FlateDecode",
        &zlib_of_repeated(b' ', 1 << 30),
    ));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

/// 5,000 pages sharing one content stream that inflates to 16 MiB of spaces: each page
/// alone is within bounds, all of them together (80 GB) are not.
fn flate_bomb_every_page() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let content = pdf.add(Pdf::stream(
        "/Filter /FlateDecode",
        &zlib_of_repeated(b' ', 16 << 20),
    ));
    let kids: Vec<String> = (0..5_000)
        .map(|_| {
            let page = pdf.add(format!(
                "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R >>"
            ));
            format!("{page} 0 R")
        })
        .collect();
    pdf.set(
        tree,
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            kids.len()
        ),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

/// Three pages whose content streams' `/Length` lie: far past the file's end, negative,
/// and zero before real data.
fn length_lies() -> Vec<u8> {
    let bytes = document(
        &[
            PageSpec::text(text_at(72.0, 700.0, 12.0, "first")),
            PageSpec::text(text_at(72.0, 700.0, 12.0, "second")),
            PageSpec::text(text_at(72.0, 700.0, 12.0, "third")),
        ],
        "",
    );
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut lies = ["/Length 999999999999", "/Length -40", "/Length 0"].into_iter();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<<  /Length ") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let end = tail.find(" >>").unwrap();
        out.push_str("<< ");
        out.push_str(lies.next().unwrap_or("/Length 1"));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out.into_bytes()
}

/// 100,000 pages in one flat tree.
fn many_pages() -> Vec<u8> {
    let pages = vec![PageSpec::text(text_at(72.0, 700.0, 12.0, "p")); 100_000];
    document(&pages, "")
}

/// One page whose content shows 2 million glyphs.
fn huge_content() -> Vec<u8> {
    let op = b"(abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv) Tj\n";
    compressed_page(&zlib_of_pattern(
        b"BT /F1 1 Tf 0 0 Td\n",
        op,
        20_000,
        b"ET\n",
    ))
}

/// One operator with 5 million operands before it.
fn huge_operands() -> Vec<u8> {
    compressed_page(&zlib_of_pattern(
        b"BT /F1 12 Tf ",
        b"1 ",
        5_000_000,
        b"(x) Tj ET\n",
    ))
}

/// One `TJ` array of 2 million strings and numbers.
fn huge_tj_array() -> Vec<u8> {
    compressed_page(&zlib_of_pattern(
        b"BT /F1 12 Tf 72 700 Td [",
        b"(a) -10 ",
        1_000_000,
        b"] TJ ET\n",
    ))
}

/// An inline image of 25 MB (5,000 × 5,000 gray), then text.
fn huge_inline_image() -> Vec<u8> {
    let head = b"q BI /W 5000 /H 5000 /BPC 8 /CS /G ID ";
    let tail = b"\nEI Q\nBT /F1 12 Tf 72 700 Td (after the image) Tj ET\n";
    compressed_page(&zlib_of_pattern(head, b"\x80\x81\x82\x83", 6_250_000, tail))
}

/// Twelve levels of forms, each drawing the next one 100 times: 100^12 runs if unbounded.
fn form_fan_out() -> Vec<u8> {
    let mut pdf = Pdf::default();
    let font = pdf.font();
    let ids: Vec<usize> = (0..12).map(|_| pdf.reserve()).collect();
    for (i, &id) in ids.iter().enumerate() {
        let (body, res) = match ids.get(i + 1) {
            Some(next) => (
                "/Fx Do ".repeat(100),
                format!("/Resources << /XObject << /Fx {next} 0 R >> >>"),
            ),
            None => (
                "BT /F1 12 Tf 72 700 Td (leaf) Tj ET".to_owned(),
                format!("/Resources << /Font << /F1 {font} 0 R >> >>"),
            ),
        };
        pdf.set(
            id,
            Pdf::stream(
                &format!("/Type /XObject /Subtype /Form /BBox [0 0 612 792] {res}"),
                body.as_bytes(),
            ),
        );
    }
    let mut spec = PageSpec::text("/Fx Do\n");
    spec.xobjects = format!("/Fx {} 0 R", ids[0]);
    super::document_in(pdf, &[spec], "")
}

/// 50,000 objects that each start well and break, no cross-reference table.
fn every_object_broken() -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    for i in 1..=50_000 {
        let _ = write!(
            unsafe_string(&mut out),
            "{i} 0 obj\n<< /Type /Page /Kids [{} 0 R /Contents << stream\nendobj\n",
            i + 1
        );
    }
    out.extend_from_slice(b"trailer\n<< /Root 1 0 R >>\n%%EOF\n");
    out
}

/// One page (with the test font) whose content is `content`, already deflated.
/// One array of 990,000 numbers: just within the values' limit, the memory it costs.
fn under_the_limit_numbers() -> Vec<u8> {
    let mut pdf = Pdf::default();
    pdf.add(format!("[{}]", "1 ".repeat(990_000)));
    document_in_after(pdf)
}

/// 50,000 small objects of 18 values each (a dictionary of 13, `N 0 obj`, `endobj`, its
/// cross-reference entry): just within the values' limit.
fn under_the_limit_dicts() -> Vec<u8> {
    let mut pdf = Pdf::default();
    for i in 0..50_000 {
        pdf.add(format!(
            "<< /Type /Annot /Subtype /Link /Rect [0 0 {i} 9] >>"
        ));
    }
    document_in_after(pdf)
}

fn compressed_page(content: &[u8]) -> Vec<u8> {
    let mut pdf = Pdf::default();
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let stream = pdf.add(Pdf::stream("/Filter /FlateDecode", content));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {stream} 0 R \
         /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.finish(catalog, "")
}

fn html_deep_divs() -> Vec<u8> {
    let n = 200_000;
    format!(
        "<!DOCTYPE html><html><body>{}deep{}</body></html>",
        "<div>".repeat(n),
        "</div>".repeat(n)
    )
    .into_bytes()
}

fn html_deep_formatting() -> Vec<u8> {
    let n = 200_000;
    format!(
        "<!DOCTYPE html><html><body>{}deep <p>para</p></body></html>",
        "<b><i><a href=x>".repeat(n / 3)
    )
    .into_bytes()
}

fn html_deep_tables() -> Vec<u8> {
    let n = 200_000;
    format!(
        "<!DOCTYPE html><html><body>{}deep</body></html>",
        "<table><tr><td>".repeat(n / 3)
    )
    .into_bytes()
}

/// An EPUB of `files`, `mimetype` first, deflated.
pub fn epub(files: &[(&str, &[u8])]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/epub+zip").unwrap();
    let deflated = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    for (path, content) in files {
        zip.start_file(*path, deflated).unwrap();
        zip.write_all(content).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

pub const CONTAINER: &[u8] = br#"<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"#;

fn opf(items: usize) -> Vec<u8> {
    let mut manifest = String::new();
    let mut spine = String::new();
    for i in 0..items {
        let _ = write!(
            manifest,
            r#"<item id="c{i}" href="c.xhtml" media-type="application/xhtml+xml"/>"#
        );
        let _ = write!(spine, r#"<itemref idref="c{i}"/>"#);
    }
    format!(
        r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#
    )
    .into_bytes()
}

/// A chapter that inflates to 1 GiB (the zip's own deflate of spaces).
fn epub_bomb() -> Vec<u8> {
    epub_bomb_sized(1 << 30)
}

/// A chapter whose headers claim 11 bytes but that inflates to 8 MiB (within the limit:
/// the claim is not what bounds the read).
fn epub_lying_sizes() -> Vec<u8> {
    epub_bomb_sized(8 << 20)
}

fn epub_bomb_sized(n: usize) -> Vec<u8> {
    let bytes = epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("content.opf", &opf(1)),
        ("c.xhtml", b"PLACEHOLDER"),
    ]);
    with_entry_data(&bytes, "c.xhtml", &raw_deflate_of_repeated(b' ', n))
}

fn epub_many_entries() -> Vec<u8> {
    let names: Vec<String> = (0..25_000).map(|i| format!("f/{i}.xhtml")).collect();
    let mut files: Vec<(&str, &[u8])> = vec![("META-INF/container.xml", CONTAINER)];
    let opf = opf(1);
    files.push(("content.opf", &opf));
    files.push(("c.xhtml", b"<p>x</p>"));
    for name in &names {
        files.push((name.as_str(), b"<p>x</p>"));
    }
    epub(&files)
}

/// A chapter that is itself a zip bomb (an archive inside the archive): read as text, never
/// opened.
fn epub_nested() -> Vec<u8> {
    let inner = epub_bomb_sized(64 << 20);
    epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("content.opf", &opf(1)),
        ("c.xhtml", &inner),
    ])
}

fn epub_deep_chapter() -> Vec<u8> {
    epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("content.opf", &opf(1)),
        ("c.xhtml", &html_deep_divs()),
    ])
}

fn epub_huge_spine() -> Vec<u8> {
    epub(&[
        ("META-INF/container.xml", CONTAINER),
        ("content.opf", &opf(200_000)),
        ("c.xhtml", b"<p>x</p>"),
    ])
}

fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn u32_at(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

fn put_u32(b: &mut [u8], at: usize, v: usize) {
    b[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
}

/// `bytes` (a zip) with entry `name`'s data replaced by `data` (raw deflate), the claimed
/// uncompressed size and CRC left as they were: the headers then lie.
fn with_entry_data(bytes: &[u8], name: &str, data: &[u8]) -> Vec<u8> {
    let mut at = 0;
    let mut out = Vec::new();
    let mut moves: Vec<(usize, usize)> = Vec::new(); // (old offset, new offset) of local headers
    while bytes.get(at..at + 4) == Some(b"PK\x03\x04") {
        let compressed = u32_at(bytes, at + 18);
        let name_len = u16_at(bytes, at + 26);
        let extra = u16_at(bytes, at + 28);
        let start = at + 30 + name_len + extra;
        moves.push((at, out.len()));
        let header_at = out.len();
        out.extend_from_slice(&bytes[at..start]);
        if &bytes[at + 30..at + 30 + name_len] == name.as_bytes() {
            put_u32(&mut out, header_at + 18, data.len());
            out.extend_from_slice(data);
        } else {
            out.extend_from_slice(&bytes[start..start + compressed]);
        }
        at = start + compressed;
    }
    let cd_new = out.len();
    let cd_old = at;
    while bytes.get(at..at + 4) == Some(b"PK\x01\x02") {
        let name_len = u16_at(bytes, at + 28);
        let extra = u16_at(bytes, at + 30);
        let comment = u16_at(bytes, at + 32);
        let end = at + 46 + name_len + extra + comment;
        let entry_at = out.len();
        out.extend_from_slice(&bytes[at..end]);
        let local = u32_at(bytes, at + 42);
        if let Some(&(_, new)) = moves.iter().find(|(old, _)| *old == local) {
            put_u32(&mut out, entry_at + 42, new);
        }
        if &bytes[at + 46..at + 46 + name_len] == name.as_bytes() {
            put_u32(&mut out, entry_at + 20, data.len());
        }
        at = end;
    }
    let eocd = out.len();
    out.extend_from_slice(&bytes[at..]);
    put_u32(&mut out, eocd + 16, cd_new);
    let _ = cd_old;
    out
}

/// Raw deflate (no zlib wrapper) of `n` copies of `byte`: one fixed-Huffman block, the byte
/// then matches of 258 at distance 1 (13 bits per 258 bytes: ~160:1).
pub fn raw_deflate_of_repeated(byte: u8, n: usize) -> Vec<u8> {
    let mut w = Bits::default();
    w.bits(1, 1); // BFINAL
    w.bits(1, 2); // BTYPE = fixed Huffman
    let mut left = n;
    if left > 0 {
        w.literal(byte);
        left -= 1;
    }
    while left >= 258 {
        w.code(0b1100_0101, 8); // length code 285: 258
        w.code(0, 5); // distance code 0: 1
        left -= 258;
    }
    for _ in 0..left {
        w.literal(byte);
    }
    w.code(0, 7); // end of block (256)
    w.finish()
}

/// Zlib of `n` copies of `byte` (header, raw deflate, Adler-32).
pub fn zlib_of_repeated(byte: u8, n: usize) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    out.extend(raw_deflate_of_repeated(byte, n));
    // Adler-32 of n equal bytes in closed form.
    let (n64, v) = (n as u64, u64::from(byte));
    let a = (1 + n64 * v) % 65521;
    let b = (n64 + v * (n64 * (n64 + 1) / 2 % 65521)) % 65521;
    out.extend_from_slice(&(((b << 16) | a) as u32).to_be_bytes());
    out
}

/// Zlib of `head`, `n` copies of `unit`, `tail`, compressed by flate2 in pieces.
pub fn zlib_of_pattern(head: &[u8], unit: &[u8], n: usize, tail: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(head).unwrap();
    let chunk = unit.repeat(65_536 / unit.len().max(1) + 1);
    let per = chunk.len() / unit.len().max(1);
    let mut left = n;
    while left > 0 {
        let k = left.min(per);
        enc.write_all(&chunk[..k * unit.len()]).unwrap();
        left -= k;
    }
    enc.write_all(tail).unwrap();
    enc.finish().unwrap()
}

/// A bit writer, least significant bit first, as deflate packs its fields.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn bits(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code, written most significant bit first.
    fn code(&mut self, code: u64, len: u32) {
        let mut rev = 0;
        for i in 0..len {
            rev |= ((code >> i) & 1) << (len - 1 - i);
        }
        self.bits(rev, len);
    }

    /// A literal byte in the fixed code.
    fn literal(&mut self, byte: u8) {
        if byte < 144 {
            self.code(0x30 + u64::from(byte), 8);
        } else {
            self.code(0x190 + u64::from(byte) - 144, 9);
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}
