//! Text folded for searching as Zotero 10 folds it (`Zotero.Utilities.Internal
//! .normalizeForSearch`, which fills the database's `…Normalized` shadow columns and folds
//! every search term): so "Erdos" finds "Erdős", "soren" "Søren", "strasse" "Straße",
//! "mind-body" "mind—body". The one fold of the workspace: the database backend's quick
//! search folds with it, and the local search index folds with it both the text it indexes
//! and the words it is asked (zotero-index imports it from here, the lower crate).
//!
//! Zotero's steps, in its order: its rich-text formatting tags are taken out; NFKD
//! (compatibility decomposition: "ﬁ" → "fi", "x²" → "x2", "½" → "1⁄2"); the combining
//! diacritical marks U+0300–U+036F are dropped; lower case; the letters NFKD leaves alone
//! are mapped (ø→o, œ→oe, æ→ae, ł→l, đ→d, ð→d, þ→th, ß→ss, ı→i, and the fraction slash →
//! "/"); typographic quotes and dashes become ASCII ones; NFC, so that kana and Hangul NFKD
//! took apart are whole again ("が" must not be found by "か").
//!
//! One difference: the normalization tables here are Unicode 9's
//! (`unicode-normalization-alignments`), Zotero's are its ICU's; characters added to
//! Unicode since then are left as they are.

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;
use unicode_normalization_alignments::UnicodeNormalization;

/// The name under which [`register`] gives SQL the fold: `zotero_fold(value)`.
pub(crate) const SQL_FOLD: &str = "zotero_fold";

/// The formatting tags Zotero allows in item fields, taken out before folding (Zotero's
/// `_searchFormattingTagRE`, matched as it matches them: exactly, case and all).
const FORMATTING_TAGS: &[&str] = &[
    "<i>",
    "</i>",
    "<b>",
    "</b>",
    "<sub>",
    "</sub>",
    "<sup>",
    "</sup>",
    "<span style=\"font-variant:small-caps;\">",
    "<span class=\"nocase\">",
    "</span>",
];

/// `text` as Zotero 10 folds it for searching (see the module's notes).
pub fn fold_for_search(text: &str) -> String {
    // Most values are plain ASCII: then only the case and the tags can change.
    if text.is_ascii() {
        return if text.contains('<') {
            strip_tags(text).to_ascii_lowercase()
        } else {
            text.to_ascii_lowercase()
        };
    }
    let text = if text.contains('<') {
        strip_tags(text)
    } else {
        text.to_string()
    };
    let decomposed: String = text
        .nfkd()
        .map(|(c, _)| c)
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .collect();
    // Lower case over the whole string, as JavaScript's `toLowerCase` (a final sigma).
    let lower = decomposed.to_lowercase();
    let mut mapped = String::with_capacity(lower.len());
    for c in lower.chars() {
        match c {
            'ø' => mapped.push('o'),
            'œ' => mapped.push_str("oe"),
            'æ' => mapped.push_str("ae"),
            'ł' => mapped.push('l'),
            'đ' | 'ð' => mapped.push('d'),
            'þ' => mapped.push_str("th"),
            'ß' => mapped.push_str("ss"),
            'ı' => mapped.push('i'),
            '\u{2044}' => mapped.push('/'),
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => mapped.push('\''),
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => mapped.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => mapped.push('-'),
            c => mapped.push(c),
        }
    }
    if mapped.is_ascii() {
        return mapped;
    }
    mapped.nfc().map(|(c, _)| c).collect()
}

/// Gives `conn` the SQL function `zotero_fold(value)`, unless it has it: a text value
/// folded, a number as its text, NULL as NULL (Zotero stores field values untyped). Given
/// once: giving it again would expire every statement the connection has prepared.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    if conn.prepare(&format!("SELECT {SQL_FOLD}('')")).is_ok() {
        return Ok(());
    }
    conn.create_scalar_function(
        SQL_FOLD,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(t) => Value::Text(fold_for_search(&String::from_utf8_lossy(t))),
                ValueRef::Integer(i) => Value::Text(i.to_string()),
                ValueRef::Real(f) => Value::Text(f.to_string()),
                ValueRef::Null | ValueRef::Blob(_) => Value::Null,
            })
        },
    )
}

/// `text` without Zotero's formatting tags.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        match FORMATTING_TAGS.iter().find(|t| from.starts_with(**t)) {
            Some(tag) => rest = from.get(tag.len()..).unwrap_or_default(),
            None => {
                out.push('<');
                rest = from.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::fold_for_search as fold;

    /// Zotero's own tests of accent-insensitive search (test/tests/searchTest.js,
    /// "Accent-insensitive matching"): the stored title, folded, contains the folded term.
    #[test]
    fn zoteros_search_tests() {
        let contains = |stored: &str, term: &str| fold(stored).contains(&fold(term));
        assert!(contains("zdiaséance", "zdiaseance"));
        assert!(contains("zdiaresume", "zdiarésumé"));
        assert!(contains("Étiennezdia Müllerzdia", "etiennezdia mullerzdia"));
        assert!(contains("résumézdia", "resumezdia"));
        assert!(contains("zdiaΘΕΜΑ", "zdiaθεμα"));
        assert!(contains("zdiaПРИВЕТ", "zdiaпривет"));
        assert!(contains(
            "zdiasøren œuvre ﬁle x² ½ straße",
            "zdiasoren oeuvre file x2 1/2 strasse"
        ));
        let formatted = "The <span style=\"font-variant:small-caps;\">zdiadrosophila</span> genome";
        assert!(contains(formatted, "zdiadrosophila genome"));
        assert!(!contains(formatted, "small-caps"));
        assert!(contains("zdia“pp. 10–12”", "zdia\"pp. 10-12\""));
        assert!(contains("zdiamind—body problem", "zdiamind-body"));
        assert!(contains("zdiaがん", "zdiaがん"));
        assert!(contains("zdia한국", "zdia한국"));
        assert!(!contains("zdiaがん", "zdiaかん"));
        assert!(!contains("zdia한국", "zdia하"));
        assert!(contains("zdiabörkbackfill", "zdiaborkbackfill"));
    }

    #[test]
    fn the_letters_nfkd_leaves_alone() {
        assert_eq!(fold("Erdős"), "erdos");
        assert_eq!(fold("Łukasiewicz"), "lukasiewicz");
        assert_eq!(fold("Ærø Œuvre"), "aero oeuvre");
        assert_eq!(fold("Đorđe Þór Ðan"), "dorde thor dan");
        assert_eq!(fold("Straße ẞ"), "strasse ss");
        assert_eq!(fold("Işık İstanbul"), "isik istanbul");
        assert_eq!(fold("½ ⅔"), "1/2 2/3");
        // NFKD makes the double prime two primes before Zotero's map sees it.
        assert_eq!(fold("it’s ‘x’ “y” ′ ″"), "it's 'x' \"y\" ' ''");
        assert_eq!(fold("a‐b‑c‒d–e—f―g−h"), "a-b-c-d-e-f-g-h");
        assert_eq!(
            fold("ΣΟΦΟΣ"),
            "σοφος",
            "a final sigma, as JavaScript lowers it"
        );
    }

    #[test]
    fn ascii_and_tags() {
        assert_eq!(fold("Plain ASCII"), "plain ascii");
        assert_eq!(fold("<i>E. coli</i> in <B>x</B>"), "e. coli in <b>x</b>");
        assert_eq!(fold("a < b <sub>2</sub>"), "a < b 2");
        assert_eq!(fold("<i>Ménière</i>"), "meniere");
        assert_eq!(fold(""), "");
    }
}
