//! Unicode NFKC, as Zotero normalises its own full text: ligatures (ﬁ → fi), full-width and
//! compatibility forms folded, so a quote typed by a person matches the page.

use unicode_normalization_alignments::UnicodeNormalization;

/// `text` in NFKC, appended to `out`.
pub(crate) fn push_nfkc(out: &mut String, text: &str) {
    if text.is_ascii() {
        out.push_str(text);
    } else {
        out.extend(text.nfkc().map(|(c, _)| c));
    }
}

/// `text` in NFKC.
pub(crate) fn nfkc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_nfkc(&mut out, text);
    out
}
