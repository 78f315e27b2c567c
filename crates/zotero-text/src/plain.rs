//! Plain text and Markdown: one page, the text as written. UTF-8 (a BOM dropped) or UTF-16
//! with its BOM; bytes that are not valid UTF-8 become U+FFFD rather than failing the file,
//! since a stray Latin-1 byte should not hide the rest of a note.

use crate::document::{Page, PageStatus};
use crate::nfkc::nfkc;

pub(crate) fn extract(bytes: &[u8]) -> Page {
    let text = decode(bytes).replace("\r\n", "\n");
    Page {
        index: 0,
        label: "1".to_owned(),
        status: PageStatus::Text,
        text: nfkc(&text),
        glyphs: Vec::new(),
        view_box: [0.0; 4],
        rotation: 0,
    }
}

/// The bytes as text: UTF-16 when a BOM says so, else UTF-8, lossily.
pub(crate) fn decode(bytes: &[u8]) -> String {
    let utf16 = |rest: &[u8], be: bool| {
        let units = rest.chunks_exact(2).map(|p| match p {
            [a, b] if be => u16::from_be_bytes([*a, *b]),
            [a, b] => u16::from_le_bytes([*a, *b]),
            _ => 0xfffd,
        });
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect::<String>()
    };
    if let Some(rest) = bytes.strip_prefix(b"\xfe\xff") {
        utf16(rest, true)
    } else if let Some(rest) = bytes.strip_prefix(b"\xff\xfe") {
        utf16(rest, false)
    } else {
        let rest = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        String::from_utf8_lossy(rest).into_owned()
    }
}
