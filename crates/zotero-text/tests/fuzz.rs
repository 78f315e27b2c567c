//! Mutated PDFs (bytes flipped, cut, spliced, duplicated) never panic and always answer
//! within the limits: a document or a typed error.

mod support;

use std::time::Duration;

use proptest::prelude::*;
use support::{document, text_at, PageSpec};
use zotero_text::{extract, DocumentKind, Limits};

fn seed() -> Vec<u8> {
    let mut content = text_at(50.0, 700.0, 10.0, "left column text")
        + &text_at(320.0, 700.0, 10.0, "right column");
    content += "q 2 0 0 2 0 0 cm BT /F1 12 Tf 12 TL 0 1 -1 0 100 100 Tm [(rot) -200 (ated)] TJ T* (more) ' ET Q\n";
    document(
        &[PageSpec::text(content.clone()), PageSpec::text(content)],
        "/PageLabels << /Nums [0 << /S /r >> 1 << /P (x) /S /D /St 5 >>] >>",
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_pdfs_answer_without_panicking(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..12),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = seed();
        for (at, byte, how) in edits {
            let i = at.index(bytes.len());
            match how {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => {
                    let end = (i + usize::from(byte)).min(bytes.len());
                    let chunk = bytes[i..end].to_vec();
                    bytes.splice(i..i, chunk);
                }
            }
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()).max(1));
        }
        let limits = Limits { max_duration: Duration::from_secs(5), ..Limits::default() };
        if let Ok(doc) = extract(&bytes, DocumentKind::Pdf, &limits) {
            prop_assert!(!doc.pages.is_empty());
            for page in &doc.pages {
                for g in &page.glyphs {
                    prop_assert!(g.start < g.end && (g.end as usize) <= page.text.len());
                    prop_assert!(page.text.is_char_boundary(g.start as usize) && page.text.is_char_boundary(g.end as usize));
                }
            }
        }
    }
}
