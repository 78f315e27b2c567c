//! Small text helpers shared by the mappers: whitespace, markup, entities, personal names and
//! dates, each modelled on the zotero/utilities or zotero/translators function it names.

/// Every run of whitespace (newlines and no-break spaces included) becomes one space, and the
/// ends are trimmed (`ZU.trimInternal`).
pub(crate) fn trim_internal(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '\u{a0}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Decodes the XML/HTML character references a service may leave in text: the five named
/// ones, `&nbsp;` and numeric ones. Anything else is kept as written.
pub(crate) fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        let (before, from_amp) = rest.split_at(amp);
        out.push_str(before);
        let decoded = from_amp
            .find(';')
            .filter(|&semi| semi <= 12)
            .and_then(|semi| {
                let name = from_amp.get(1..semi)?;
                let c = match name {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    "nbsp" => '\u{a0}',
                    _ => {
                        let num = name.strip_prefix('#')?;
                        let code = match num.strip_prefix(['x', 'X']) {
                            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                            None => num.parse::<u32>().ok()?,
                        };
                        char::from_u32(code)?
                    }
                };
                Some((c, semi + 1))
            });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = from_amp.get(len..).unwrap_or("");
            }
            None => {
                out.push('&');
                rest = from_amp.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

/// Tags whose content starts a new paragraph of plain text.
const BLOCK_TAGS: &[&str] = &["p", "sec", "title", "div", "br", "li", "list", "list-item"];

/// The rich text Zotero keeps in titles and abstracts (`<i>`, `<b>`, `<sub>`, `<sup>`,
/// small capitals); the JATS spellings of the same are converted.
fn kept_markup(name: &str, closing: bool) -> Option<&'static str> {
    let tag = match name {
        "i" | "italic" | "em" => ["<i>", "</i>"],
        "b" | "bold" | "strong" => ["<b>", "</b>"],
        "sub" => ["<sub>", "</sub>"],
        "sup" => ["<sup>", "</sup>"],
        "sc" | "scp" => ["<span style=\"font-variant:small-caps;\">", "</span>"],
        _ => return None,
    };
    Some(if closing { tag[1] } else { tag[0] })
}

/// Markup of a title or abstract reduced to what Zotero shows: JATS (`<jats:p>`,
/// `<jats:title>`, …), MathML and other tags are removed, keeping their text; the rich-text
/// tags Zotero supports are kept (Crossref REST.js `removeUnsupportedMarkup`); character
/// references are decoded; paragraphs become lines and other whitespace is collapsed. A
/// leading heading reading "Abstract" is dropped.
pub(crate) fn clean_markup(s: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut rest = s;
    let flush = |current: &mut String, paragraphs: &mut Vec<String>| {
        let p = trim_internal(&decode_entities(current));
        if !p.is_empty() {
            paragraphs.push(p);
        }
        current.clear();
    };
    while let Some(lt) = rest.find('<') {
        let (text, from_lt) = rest.split_at(lt);
        current.push_str(text);
        if let Some(cdata) = from_lt.strip_prefix("<![CDATA[") {
            let end = cdata.find("]]>").unwrap_or(cdata.len());
            current.push_str(&escape_lt(cdata.get(..end).unwrap_or("")));
            rest = cdata.get(end + 3..).unwrap_or("");
            continue;
        }
        let Some(gt) = from_lt.find('>') else {
            current.push_str(&escape_lt(from_lt));
            rest = "";
            break;
        };
        let inner = from_lt.get(1..gt).unwrap_or("");
        rest = from_lt.get(gt + 1..).unwrap_or("");
        let closing = inner.starts_with('/');
        let name: String = inner
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, ':' | '-' | '_' | '.'))
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() {
            // Not a tag ("a < b"): keep the text.
            current.push_str("&lt;");
            current.push_str(inner);
            current.push('>');
            continue;
        }
        let local = name.rsplit(':').next().unwrap_or(&name);
        if BLOCK_TAGS.contains(&local) {
            flush(&mut current, &mut paragraphs);
        } else if let Some(tag) = kept_markup(local, closing) {
            current.push_str(tag);
        }
    }
    current.push_str(&escape_lt(rest));
    flush(&mut current, &mut paragraphs);
    if paragraphs.len() > 1
        && paragraphs
            .first()
            .is_some_and(|p| p.eq_ignore_ascii_case("abstract"))
    {
        paragraphs.remove(0);
    }
    paragraphs.join("\n")
}

/// `<` in text outside tags, escaped so the tag scan of `clean_markup` leaves it alone until
/// the final decoding.
fn escape_lt(s: &str) -> String {
    s.replace('<', "&lt;")
}

/// A title: markup reduced as in `clean_markup`, on one line.
pub(crate) fn clean_title(s: &str) -> String {
    trim_internal(&clean_markup(s))
}

/// A personal name split into (first, last) the way `ZU.cleanAuthor` does: punctuation is
/// trimmed off the ends; with `use_comma`, "Last, First"; otherwise the last word whose
/// first character is a letter is the last name. Initials get periods ("JA" → "J. A.").
pub(crate) fn clean_author(name: &str, use_comma: bool) -> (String, String) {
    let is_edge = |c: char| c.is_whitespace() || matches!(c, '.' | ',' | '/' | '[' | ']' | ':');
    let name = trim_internal(name.trim_matches(is_edge));
    let (first, last) = if use_comma {
        let name = space_after_periods(&name);
        let mut parts = name.splitn(3, [',', '،']);
        let last = parts.next().unwrap_or("").trim().to_owned();
        match parts.next() {
            Some(first) => (first.trim().to_owned(), last),
            None => (String::new(), name.clone()),
        }
    } else {
        split_last_word(&name)
    };
    (initials(&first, &last), last)
}

/// "J.A." → "J. A." (the first period followed by a non-space, as cleanAuthor does).
fn space_after_periods(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 1);
    let mut done = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if !done && c == '.' {
            if let Some(&n) = chars.peek() {
                if n != ' ' {
                    out.push(' ');
                    done = true;
                }
            }
        }
    }
    out
}

/// Splits "Firstname Lastname" at the last space whose following word starts with a letter
/// (so "Ada Lovelace (UK)" keeps "(UK)" with the last name).
fn split_last_word(name: &str) -> (String, String) {
    let mut end = name.len();
    loop {
        match name.get(..end).and_then(|s| s.rfind(' ')) {
            Some(space) => {
                let last = name.get(space + 1..).unwrap_or("");
                if last.chars().next().is_some_and(char::is_alphabetic) || space == 0 {
                    return (name.get(..space).unwrap_or("").to_owned(), last.to_owned());
                }
                end = space;
            }
            None => return (String::new(), name.to_owned()),
        }
    }
}

fn is_cap(c: char) -> bool {
    c.is_ascii_uppercase() || ('\u{400}'..='\u{42f}').contains(&c)
}

/// cleanAuthor's initials: an all-capitals first name of up to 3 letters is a run of
/// initials ("JA" → "J. A.") unless the last name is in capitals too; then every single
/// capital gets a period.
fn initials(first: &str, last: &str) -> String {
    let mut first = first.to_owned();
    let n = first.chars().count();
    if n > 0 && n < 4 && first.chars().all(is_cap) && (n == 1 || last.to_uppercase() != last) {
        first = first
            .chars()
            .map(|c| format!("{c}."))
            .collect::<Vec<_>>()
            .join(" ");
    }
    if first.is_empty() {
        return first;
    }
    let trimmed = first
        .trim_start_matches(|c: char| c.is_whitespace() || c == '.')
        .trim_end_matches(|c: char| c.is_whitespace() || c == ',');
    let mut out = String::new();
    for word in trimmed.split(|c: char| c.is_whitespace() || c == '.') {
        if word.is_empty() {
            continue;
        }
        // Hyphenated initials ("J.-P.") stay joined.
        let pieces: Vec<&str> = split_keep_hyphen(word);
        for piece in pieces {
            out.push_str(piece);
            let mut cs = piece.trim_start_matches('-').chars();
            if cs.next().is_some_and(is_cap) && cs.next().is_none() {
                out.push('.');
            }
            if !piece.is_empty() {
                out.push(' ');
            }
        }
    }
    out.replace(" -", "-").trim().to_owned()
}

/// "Jean-Paul" → ["Jean", "-Paul"].
fn split_keep_hyphen(word: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in word.char_indices() {
        if c == '-' && i > 0 {
            pieces.push(word.get(start..i).unwrap_or(""));
            start = i;
        }
    }
    pieces.push(word.get(start..).unwrap_or(""));
    pieces
}

/// English month names and abbreviations → 1–12.
pub(crate) fn month_number(s: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let lower = s.trim_end_matches('.').to_ascii_lowercase();
    if lower.len() < 3 {
        return None;
    }
    // "Sept" too.
    let lower = if lower == "sept" {
        "sep".to_owned()
    } else {
        lower
    };
    MONTHS
        .iter()
        .position(|m| m.starts_with(&lower))
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// Year, month and day as Zotero's SQL-like ISO form: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`
/// (a month outside 1–12 is dropped with the day; a day outside 1–31 is dropped).
pub(crate) fn iso_date(year: i64, month: Option<u32>, day: Option<u32>) -> String {
    let mut s = if year < 0 {
        format!("-{:04}", year.unsigned_abs())
    } else {
        format!("{year:04}")
    };
    if let Some(m) = month.filter(|m| (1..=12).contains(m)) {
        s.push_str(&format!("-{m:02}"));
        if let Some(d) = day.filter(|d| (1..=31).contains(d)) {
            s.push_str(&format!("-{d:02}"));
        }
    }
    s
}

/// `ZU.strToISO` for the forms the services send: an ISO date or timestamp
/// (`2017-06-12T17:57:34Z`, `2017-06`, `2017`), "2013 Aug 1", "2013 Aug", "Aug 1, 2013".
/// `None` when no year is found.
pub(crate) fn str_to_iso(s: &str) -> Option<String> {
    let s = s.trim();
    // ISO: YYYY[-MM[-DD]] at the start.
    let mut iso = s.splitn(3, '-');
    if let Some(y) = iso.next() {
        if y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()) {
            let year: i64 = y.parse().ok()?;
            let month = iso
                .next()
                .and_then(|m| m.get(..2))
                .and_then(|m| m.parse::<u32>().ok());
            let day = iso
                .next()
                .and_then(|d| d.get(..2))
                .and_then(|d| d.parse::<u32>().ok());
            if month.is_some() || !s.contains(' ') {
                return Some(iso_date(year, month, day));
            }
        }
    }
    // Words: a 4-digit year, an English month name, a 1–2 digit day.
    let mut year = None;
    let mut month = None;
    let mut day = None;
    for word in s
        .split(|c: char| c.is_whitespace() || c == ',' || c == '/')
        .filter(|w| !w.is_empty())
    {
        if word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()) && year.is_none() {
            year = word.parse::<i64>().ok();
        } else if let Some(m) = month_number(word).filter(|_| month.is_none()) {
            month = Some(m);
        } else if word.len() <= 2 && word.bytes().all(|b| b.is_ascii_digit()) && day.is_none() {
            day = word.parse::<u32>().ok();
        } else {
            // "Sep-Oct" and the like: not a single date.
            return None;
        }
    }
    year.map(|y| iso_date(y, month, day.filter(|_| month.is_some())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_internal_collapses() {
        assert_eq!(
            trim_internal("  Attention Is\n  All You\u{a0}Need \n"),
            "Attention Is All You Need"
        );
    }

    #[test]
    fn entities() {
        assert_eq!(
            decode_entities("a &amp; b &lt;c&gt; &#233; &#x2013; &bogus; &"),
            "a & b <c> é – &bogus; &"
        );
    }

    #[test]
    fn jats_abstract_to_text() {
        let jats = "<jats:title>Abstract</jats:title><jats:p>Sensitive probing of temperature \
                    variations on nanometre scales is an outstanding challenge in many areas \
                    of modern science.</jats:p>\n<jats:p>Here we demonstrate a new approach \
                    with H<jats:sub>2</jats:sub>O &amp; <jats:italic>in vivo</jats:italic> cells.</jats:p>";
        assert_eq!(
            clean_markup(jats),
            "Sensitive probing of temperature variations on nanometre scales is an outstanding \
             challenge in many areas of modern science.\nHere we demonstrate a new approach with \
             H<sub>2</sub>O & <i>in vivo</i> cells."
        );
        assert_eq!(clean_markup("<p>Only</p>"), "Only");
        assert_eq!(clean_markup("a < b and c > d"), "a < b and c > d");
        assert_eq!(clean_markup("<![CDATA[x < y]]> ok"), "x < y ok");
        assert_eq!(
            clean_title("The <i>E. coli</i> <span class=\"x\">genome</span>\n"),
            "The <i>E. coli</i> genome"
        );
        assert_eq!(
            clean_title("<mml:math><mml:mi>x</mml:mi></mml:math> rays"),
            "x rays"
        );
    }

    #[test]
    fn authors_like_clean_author() {
        let ca = |n, c| clean_author(n, c);
        assert_eq!(
            ca("Ashish Vaswani", false),
            ("Ashish".into(), "Vaswani".into())
        );
        assert_eq!(
            ca("Aidan N. Gomez", false),
            ("Aidan N.".into(), "Gomez".into())
        );
        assert_eq!(ca("Madonna", false), ("".into(), "Madonna".into()));
        assert_eq!(ca("Kucsko, G", true), ("G.".into(), "Kucsko".into()));
        assert_eq!(ca("Smith, JA", true), ("J. A.".into(), "Smith".into()));
        assert_eq!(ca("Lo, J.A.", true), ("J. A.".into(), "Lo".into()));
        assert_eq!(
            ca("Garcia, Jean-Paul", true),
            ("Jean-Paul".into(), "Garcia".into())
        );
        assert_eq!(ca("Garcia, J.-P.", true), ("J.-P.".into(), "Garcia".into()));
        assert_eq!(
            ca("Ada Lovelace (UK)", false),
            ("Ada".into(), "Lovelace (UK)".into())
        );
        assert_eq!(
            ca("World Health Organization", true),
            ("".into(), "World Health Organization".into())
        );
    }

    #[test]
    fn dates() {
        assert_eq!(
            str_to_iso("2023-08-02T00:41:18Z").as_deref(),
            Some("2023-08-02")
        );
        assert_eq!(str_to_iso("2017-06").as_deref(), Some("2017-06"));
        assert_eq!(str_to_iso("2017").as_deref(), Some("2017"));
        assert_eq!(str_to_iso("2013 Aug 1").as_deref(), Some("2013-08-01"));
        assert_eq!(str_to_iso("2013 Aug").as_deref(), Some("2013-08"));
        assert_eq!(str_to_iso("Aug 1, 2013").as_deref(), Some("2013-08-01"));
        assert_eq!(str_to_iso("2010 Sep-Oct"), None);
        assert_eq!(str_to_iso("n.d."), None);
        assert_eq!(iso_date(-429, None, None), "-0429");
        assert_eq!(iso_date(2021, Some(21), Some(3)), "2021");
    }
}
