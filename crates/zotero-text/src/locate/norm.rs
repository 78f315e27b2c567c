//! The one normalisation both a quote and a page's text go through before they are compared,
//! so that a quote copied from a PDF viewer, typed by hand or written by a model still finds
//! its words: case, whitespace, hyphenation, ligatures and quote styles do not matter.
//!
//! Every normalised character keeps the byte range of the page text it came from, so a match
//! found in normalised text maps back to the page's own bytes (and from there to glyphs).

/// One normalised character and the bytes of the original text it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NormChar {
    pub(crate) c: char,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Characters dropped from both sides: whitespace (line breaks and spacing are the
/// extractor's guess), hyphens and dashes (a hyphenated line end is joined on the page but
/// kept in a copied quote, or the other way round), soft hyphens and zero-width characters.
fn dropped(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '-' | '\u{00AD}'
                | '\u{2010}'..='\u{2015}'
                | '\u{2212}'
                | '\u{200B}'..='\u{200D}'
                | '\u{2060}'
                | '\u{FEFF}'
        )
}

/// What a character compares as: ligatures spelled out, every quote style one of `'` `"`,
/// lower case.
fn expand(c: char, out: &mut Vec<char>) {
    let spelled: Option<&str> = match c {
        '\u{FB00}' => Some("ff"),
        '\u{FB01}' => Some("fi"),
        '\u{FB02}' => Some("fl"),
        '\u{FB03}' => Some("ffi"),
        '\u{FB04}' => Some("ffl"),
        '\u{FB05}' | '\u{FB06}' => Some("st"),
        '\u{0152}' | '\u{0153}' => Some("oe"),
        '\u{00C6}' | '\u{00E6}' => Some("ae"),
        '\u{2026}' => Some("..."),
        _ => None,
    };
    if let Some(s) = spelled {
        out.extend(s.chars());
        return;
    }
    let c = match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' | '\u{00B4}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' => '"',
        other => other,
    };
    out.extend(c.to_lowercase());
}

/// `text` normalised, each character with its source bytes.
pub(crate) fn normalise(text: &str) -> Vec<NormChar> {
    let mut out = Vec::with_capacity(text.len());
    let mut buf = Vec::with_capacity(4);
    for (start, c) in text.char_indices() {
        if dropped(c) {
            continue;
        }
        let end = start + c.len_utf8();
        buf.clear();
        expand(c, &mut buf);
        out.extend(buf.iter().map(|&c| NormChar { c, start, end }));
    }
    out
}

/// `text` normalised, the characters only (for a quote).
pub(crate) fn normalise_chars(text: &str) -> Vec<char> {
    normalise(text).into_iter().map(|n| n.c).collect()
}

/// Every start of `needle` in `hay` (Knuth-Morris-Pratt: linear in both, whatever the text).
pub(crate) fn find_all(hay: &[NormChar], needle: &[char]) -> Vec<usize> {
    let mut found = Vec::new();
    if needle.is_empty() || hay.len() < needle.len() {
        return found;
    }
    // fail[i]: length of the longest proper border of needle[..=i].
    let mut fail = vec![0usize; needle.len()];
    let mut k = 0usize;
    for (i, c) in needle.iter().enumerate().skip(1) {
        while k > 0 && needle.get(k) != Some(c) {
            k = fail.get(k - 1).copied().unwrap_or(0);
        }
        if needle.get(k) == Some(c) {
            k += 1;
        }
        if let Some(f) = fail.get_mut(i) {
            *f = k;
        }
    }
    let mut k = 0usize;
    for (i, h) in hay.iter().enumerate() {
        while k > 0 && needle.get(k) != Some(&h.c) {
            k = fail.get(k - 1).copied().unwrap_or(0);
        }
        if needle.get(k) == Some(&h.c) {
            k += 1;
        }
        if k == needle.len() {
            found.push(i + 1 - k);
            k = fail.get(k - 1).copied().unwrap_or(0);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        normalise_chars(text).into_iter().collect()
    }

    #[test]
    fn case_space_hyphens_ligatures_and_quotes_do_not_matter() {
        assert_eq!(
            s("The \u{FB01}rst  “line”\nof hyphen-\nation"),
            "thefirst\"line\"ofhyphenation"
        );
        assert_eq!(
            s("the first \"line\" of hyphenation"),
            "thefirst\"line\"ofhyphenation"
        );
        assert_eq!(s("it\u{2019}s"), s("it's"));
    }

    #[test]
    fn each_character_keeps_its_source_bytes() {
        let n = normalise("a \u{FB01}b");
        // 'a' at 0, the ligature (3 bytes at 2) gives two characters, 'b' at 5.
        let spans: Vec<(char, usize, usize)> = n.iter().map(|x| (x.c, x.start, x.end)).collect();
        assert_eq!(
            spans,
            vec![('a', 0, 1), ('f', 2, 5), ('i', 2, 5), ('b', 5, 6)]
        );
    }

    #[test]
    fn finds_every_occurrence_even_overlapping() {
        let hay = normalise("aaa b aab");
        let starts = find_all(&hay, &['a', 'a']);
        assert_eq!(starts, vec![0, 1, 4]);
        assert!(find_all(&hay, &['z']).is_empty());
        assert!(find_all(&hay, &[]).is_empty());
    }
}
