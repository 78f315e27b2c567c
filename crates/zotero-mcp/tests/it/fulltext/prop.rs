//! Properties of full-text paging.
//!
//! 1. The pager (zotero-api's `Pager`, which the tool pages with): for any text made of any
//!    pieces (random sizes, characters of 1 to 4 bytes, control characters), any page size
//!    and byte bound, walking `next_offset` from 0 gives back the whole text exactly, with no
//!    gap and no overlap; every page keeps its bounds (its first character aside) and says
//!    the same total; a page at any offset is exactly that slice of the text.
//! 2. End to end: for any full text stored in the emulator and any `max_chars`, paging
//!    `zotero_get_item_fulltext` (an attachment, or its parent with the header) rebuilds
//!    exactly the attachment's text, or the header and the text.

use proptest::prelude::*;
use serde_json::json;
use zotero_api::fulltext::{PageRequest, Paged, Pager};
use zotero_emulator::{FullText, Library};

use crate::prop_support::{config, runtime, start};

/// Characters of every UTF-8 width, line breaks, a combining mark, anything else now and then.
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => proptest::char::range('a', 'z'),
        2 => proptest::sample::select(vec![' ', '\n', '\t', '"', '\\']),
        2 => proptest::sample::select(vec!['é', 'Ł', 'ß', 'ж', '\u{0301}']),
        2 => proptest::sample::select(vec!['漢', '注', '√', 'ₖ', '—']),
        1 => proptest::sample::select(vec!['🙂', '𝔸', '🧬']),
        1 => any::<char>(),
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(text_char(), 0..=max).prop_map(|v| v.into_iter().collect())
}

fn page(pieces: &[String], offset: u64, max_chars: u64, max_bytes: usize) -> Paged {
    let mut pager = Pager::new(PageRequest {
        offset,
        max_chars,
        max_bytes,
    });
    let mut at = 0;
    for p in pieces {
        let range = pager.push(p);
        assert_eq!(range.start, at);
        at = range.end;
        assert_eq!(range.end - range.start, p.chars().count() as u64);
    }
    pager.finish()
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn walking_next_offset_rebuilds_any_text_exactly(
        pieces in proptest::collection::vec(text(300), 0..8),
        max_chars in prop_oneof![1u64..=8, 1u64..=400],
        bytes_per_char in prop_oneof![Just(None), (1usize..=6).prop_map(Some)],
        offsets in proptest::collection::vec(0u64..=2_500, 1..4),
    ) {
        let whole: String = pieces.concat();
        let total = whole.chars().count() as u64;
        let max_bytes = bytes_per_char.map_or(usize::MAX, |b| b * max_chars as usize);
        let mut read = String::new();
        let mut offset = 0;
        let mut pages = 0;
        loop {
            let p = page(&pieces, offset, max_chars, max_bytes);
            prop_assert_eq!(p.total_chars, total);
            let n = p.text.chars().count() as u64;
            prop_assert!(n <= max_chars);
            prop_assert!(p.text.len() <= max_bytes || n == 1, "{} bytes", p.text.len());
            read.push_str(&p.text);
            pages += 1;
            match p.next_offset {
                Some(next) => {
                    prop_assert!(n >= 1, "every page moves on");
                    prop_assert_eq!(next, offset + n);
                    prop_assert!(next < total);
                    offset = next;
                }
                None => {
                    prop_assert_eq!(offset + n, total);
                    break;
                }
            }
        }
        prop_assert_eq!(&read, &whole);
        prop_assert!(pages as u64 <= total.max(1));
        // Any offset: exactly that slice.
        for o in offsets {
            let p = page(&pieces, o, max_chars, usize::MAX);
            let slice: String = whole.chars().skip(o as usize).take(max_chars as usize).collect();
            prop_assert_eq!(&p.text, &slice);
            prop_assert_eq!(p.next_offset.is_some(), o + max_chars < total);
        }
    }
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn paging_the_tool_rebuilds_the_stored_text(
        content in text(1_500),
        share in 1u64..=40,
        parent in any::<bool>(),
    ) {
        let n = content.chars().count() as u64;
        // At most about 40 pages a case.
        let max_chars = (n / share).max(n / 40).max(1);
        runtime().block_on(async {
            let (emu, server) = start(Library::from_fixtures(), &[]).await;
            emu.set_fulltext_of("VASPDF23", FullText::pdf(&content, 3, 3));
            let (key, expected) = if parent {
                let header = "=== PDF: Full Text PDF [VASPDF23] ===\n\n";
                ("VASWANI7", format!("{header}{content}"))
            } else {
                ("VASPDF23", content.clone())
            };
            let mut read = String::new();
            let mut offset = 0u64;
            loop {
                let a = server
                    .call(
                        "zotero_get_item_fulltext",
                        json!({"item_key": key, "offset": offset, "max_chars": max_chars}),
                    )
                    .await;
                let d = a.expect_ok().clone();
                let text = d["text"].as_str().unwrap();
                assert_eq!(d["total_chars"], expected.chars().count() as u64);
                read.push_str(text);
                match d.get("next_offset").and_then(|v| v.as_u64()) {
                    Some(next) => {
                        assert_eq!(next, offset + text.chars().count() as u64);
                        offset = next;
                    }
                    None => break,
                }
            }
            assert_eq!(read, expected);
            server.stop().await;
        });
    }
}
