//! Small real PDFs the tests write: numbered objects, a cross-reference table and a trailer
//! ([`finish`]), and papers of one line of text a page in a Type 1 font whose every code is
//! 500/1000 em wide, their pages labelled from a number ([`labelled_pages`]). A copy of the
//! minimal part of `zotero-text`'s test support (`crates/zotero-text/tests/support/mod.rs`):
//! that module belongs to another crate's test binaries, and including it by path would pull
//! its `flate2` helper into this crate's dev-dependencies for nothing used here.

use std::fmt::Write as _;

/// A PDF's bytes: numbered objects, a cross-reference table and a trailer.
pub fn finish(objects: &[String], root: usize) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for off in offsets {
        writeln!(table, "{off:010} 00000 n ").unwrap();
    }
    out.extend_from_slice(table.as_bytes());
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// The objects every paper starts with: 1 catalog (its `/PageLabels` number pages from
/// `first_label`), 2 the page tree (filled in by [`add_pages`]), 3 a font descriptor, 4 the
/// font.
pub fn head(first_label: u32) -> Vec<String> {
    let widths = vec!["500"; 256].join(" ");
    vec![
        format!(
            "<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /D /St {first_label} >>] >> >>"
        ),
        String::new(),
        "<< /Type /FontDescriptor /FontName /TestSans /Flags 32 /FontBBox [0 -200 500 800] \
         /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>"
            .to_string(),
        format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /TestSans /FirstChar 0 /LastChar 255 \
             /Widths [{widths}] /FontDescriptor 3 0 R /Encoding /WinAnsiEncoding >>"
        ),
    ]
}

/// Adds a page per entry of `pages` (its content stream) to `objects` made by [`head`], and
/// the page tree that lists them.
pub fn add_pages(objects: &mut Vec<String>, pages: &[String]) {
    let mut kids = Vec::new();
    for content in pages {
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
        let content_id = objects.len();
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R \
             /Resources << /Font << /F1 4 0 R >> >> >>"
        ));
        kids.push(format!("{} 0 R", objects.len()));
    }
    objects[1] = format!(
        "<< /Type /Pages /Kids [{}] /Count {} >>",
        kids.join(" "),
        kids.len()
    );
}

/// A paper of one line of text a page (`lines`, ASCII), its pages labelled from
/// `first_label`.
pub fn labelled_pages(lines: &[&str], first_label: u32) -> Vec<u8> {
    let mut objects = head(first_label);
    let pages: Vec<String> = lines
        .iter()
        .map(|t| format!("BT /F1 10 Tf 72 700 Td ({t}) Tj ET\n"))
        .collect();
    add_pages(&mut objects, &pages);
    finish(&objects, 1)
}
