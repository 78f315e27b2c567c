//! A tiny PDF writer for the tests: numbered objects, a cross-reference table and a trailer,
//! one Type 1 font whose every code is 0.5 em wide (ascent 0.8, descent -0.2 em) so each
//! glyph's box is known exactly, and helpers for text and images in content streams.
#![allow(dead_code)]

use std::fmt::Write as _;

pub mod hostile;

/// A PDF under construction: object `n` is `objects[n - 1]`.
#[derive(Default)]
pub struct Pdf {
    objects: Vec<Vec<u8>>,
}

/// One page: its content stream and extras for its dictionary.
#[derive(Default, Clone)]
pub struct PageSpec {
    pub content: Vec<u8>,
    /// Extra entries written into the page dictionary (`/Rotate 90`, …).
    pub extra: String,
    /// Extra entries of the page's `/XObject` resource dictionary.
    pub xobjects: String,
    /// Extra entries of the page's `/Font` resource dictionary (besides `/F1`).
    pub fonts: String,
}

impl PageSpec {
    pub fn text(content: impl Into<Vec<u8>>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }
}

impl Pdf {
    /// Adds an object and answers its number.
    pub fn add(&mut self, body: impl Into<Vec<u8>>) -> usize {
        self.objects.push(body.into());
        self.objects.len()
    }

    /// Reserves a number to fill later with `set`.
    pub fn reserve(&mut self) -> usize {
        self.add(Vec::new())
    }

    pub fn set(&mut self, id: usize, body: impl Into<Vec<u8>>) {
        if let Some(slot) = self.objects.get_mut(id - 1) {
            *slot = body.into();
        }
    }

    /// A stream object body: `dict` (without /Length) and its data.
    pub fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\nendstream");
        out
    }

    /// The file: header, objects, cross-reference table, trailer with `/Root root`.
    pub fn finish(&self, root: usize, trailer_extra: &str) -> Vec<u8> {
        let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in self.objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", self.objects.len() + 1);
        for off in offsets {
            let _ = writeln!(table, "{off:010} 00000 n ");
        }
        out.extend_from_slice(table.as_bytes());
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root {root} 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n",
                self.objects.len() + 1
            )
            .as_bytes(),
        );
        out
    }

    /// The test font: every code 500/1000 em wide; codes 1 and 2 are the ﬁ and ﬂ ligatures.
    pub fn font(&mut self) -> usize {
        let descriptor = self.add(
            "<< /Type /FontDescriptor /FontName /TestSans /Flags 32 /FontBBox [0 -200 500 800] \
             /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>",
        );
        let widths = vec!["500"; 256].join(" ");
        self.add(format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /TestSans /FirstChar 0 /LastChar 255 \
             /Widths [{widths}] /FontDescriptor {descriptor} 0 R \
             /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /fi 2 /fl] >> >>"
        ))
    }
}

/// A document of `pages` sharing the test font as `/F1`; `catalog_extra` goes into the
/// catalog (`/PageLabels …`).
pub fn document(pages: &[PageSpec], catalog_extra: &str) -> Vec<u8> {
    document_in(Pdf::default(), pages, catalog_extra)
}

/// `document` written after the objects already in `pdf` (images, forms the pages use).
pub fn document_in(mut pdf: Pdf, pages: &[PageSpec], catalog_extra: &str) -> Vec<u8> {
    let catalog = pdf.reserve();
    let tree = pdf.reserve();
    let font = pdf.font();
    let mut kids = Vec::new();
    for page in pages {
        let content = pdf.add(Pdf::stream("", &page.content));
        let id = pdf.add(format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R \
             /Resources << /Font << /F1 {font} 0 R {} >> /XObject << {} >> >> {} >>",
            page.fonts, page.xobjects, page.extra
        ));
        kids.push(format!("{id} 0 R"));
    }
    pdf.set(
        tree,
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            kids.len()
        ),
    );
    pdf.set(
        catalog,
        format!("<< /Type /Catalog /Pages {tree} 0 R {catalog_extra} >>"),
    );
    pdf.finish(catalog, "")
}

/// `text` shown at `(x, y)` in the test font at `size`.
pub fn text_at(x: f64, y: f64, size: f64, text: &str) -> String {
    format!("BT /F1 {size} Tf {x} {y} Td ({}) Tj ET\n", escape(text))
}

/// A PDF literal string's body.
pub fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// The box the test font gives glyph `i` of a string shown at `(x, y)` in `size`.
pub fn glyph_box(x: f64, y: f64, size: f64, i: usize) -> [f64; 4] {
    let w = 0.5 * size;
    [
        x + w * i as f64,
        y - 0.2 * size,
        x + w * (i as f64 + 1.0),
        y + 0.8 * size,
    ]
}

/// Zlib-compresses `data` (for streams with `/Filter /FlateDecode`).
pub fn deflate(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

/// A TrueType program holding only a `cmap` table: one format 4 subtable (3,1) mapping
/// `chars` (ascending) to glyphs 1, 2, 3… in order, one segment each. Enough for a reader
/// that maps glyphs back to characters; nothing draws with it.
pub fn truetype_with_cmap(chars: &[char]) -> Vec<u8> {
    let be16 = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_be_bytes());
    let mut segs: Vec<(u16, u16)> = chars
        .iter()
        .enumerate()
        .map(|(i, c)| (*c as u16, i as u16 + 1))
        .collect();
    segs.push((0xFFFF, 0));
    let n = segs.len() as u16;
    let mut sub = Vec::new();
    for v in [4u16, 16 + 8 * n, 0, 2 * n, 0, 0, 0] {
        be16(&mut sub, v);
    }
    for (code, _) in &segs {
        be16(&mut sub, *code);
    }
    be16(&mut sub, 0);
    for (code, _) in &segs {
        be16(&mut sub, *code);
    }
    for (code, gid) in &segs {
        be16(
            &mut sub,
            if *code == 0xFFFF {
                1
            } else {
                gid.wrapping_sub(*code)
            },
        );
    }
    for _ in &segs {
        be16(&mut sub, 0);
    }
    let mut font = Vec::new();
    font.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    for v in [1u16, 16, 0, 0] {
        be16(&mut font, v);
    }
    font.extend_from_slice(b"cmap");
    font.extend_from_slice(&0u32.to_be_bytes());
    font.extend_from_slice(&28u32.to_be_bytes());
    font.extend_from_slice(&(12 + sub.len() as u32).to_be_bytes());
    for v in [0u16, 1, 3, 1] {
        be16(&mut font, v);
    }
    font.extend_from_slice(&12u32.to_be_bytes());
    font.extend(sub);
    font
}
