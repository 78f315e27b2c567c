//! Library text into the Markdown this server composes itself: text escaped to show as
//! written, links only to [`LINK_SCHEMES`], code spans that hold anything.

use super::text::one_line;

/// URL schemes a link may have, in every Markdown this server writes: the web, e-mail and
/// Zotero's own `zotero://select/…` and `zotero://open-pdf/…`. Nothing else (`javascript:`,
/// `data:`, `file:`, `vbscript:`, relative URLs, …) is ever a link.
pub const LINK_SCHEMES: [&str; 4] = ["http", "https", "mailto", "zotero"];

/// Text written from the library's data into Markdown this server composes (titles, fields,
/// names, tags, abstracts, annotation text and comments), shown as written, on one line:
/// whitespace (line breaks too) collapsed to single spaces, every character that could start
/// emphasis, code, a link, an image, an autolink, HTML, an entity, a heading, a quote or a
/// table cell escaped, and a list marker or thematic break at its start too. Nothing in the
/// result is HTML, a link or an image, whatever the text holds, wherever it is placed inline
/// or at the start of a line.
pub fn escape_text(text: &str) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if matches!(
            c,
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#' | '|' | '&' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    // What makes a line a list item, a thematic break or a setext underline is at its start
    // (`*`, `_`, `#` and `>` are escaped everywhere): `- ` or `+ ` (or the sign alone), a line
    // of `-` or `=`, `1. ` or `1) ` (or the number alone). `-5`, `+1` and `3.57` stay as they are.
    let ends_marker = |rest: &str| rest.is_empty() || rest.starts_with(' ');
    let digits = out.chars().take_while(char::is_ascii_digit).count();
    let marker = match out.get(digits..).unwrap_or_default().chars().next() {
        Some(c @ ('.' | ')')) if digits > 0 => {
            ends_marker(out.get(digits + c.len_utf8()..).unwrap_or_default()).then_some(digits)
        }
        Some(c @ ('-' | '+' | '=')) if digits == 0 => {
            let rest = out.get(1..).unwrap_or_default();
            let rule = c != '+' && out.chars().all(|x| x == c || x == ' ');
            (ends_marker(rest) || rule).then_some(0)
        }
        _ => None,
    };
    if let Some(at) = marker {
        out.insert(at, '\\');
    }
    out
}

/// Text of several lines (an abstract, a comment) as Markdown paragraphs: each line as
/// [`escape_text`] writes it, a blank line between paragraphs, each line prefixed with
/// `prefix` (`"> "` to quote it; a blank line gets `prefix` without its trailing spaces).
pub fn escape_lines(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut blank = false;
    // A line ends at `\n`, `\r\n` or a lone `\r`, as in CommonMark.
    for line in text.replace("\r\n", "\n").split(['\n', '\r']) {
        let line = escape_text(line);
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str(prefix.trim_end());
            out.push('\n');
            blank = false;
        }
        out.push_str(prefix);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `[text](url)` when `url` has an allowed scheme ([`LINK_SCHEMES`]), percent-encoded so
/// nothing in it can end the link; otherwise `text` alone. `text` is escaped.
pub fn link_to(text: &str, url: &str) -> String {
    match safe_destination(url) {
        Some(dest) => format!("[{}]({dest})", escape_text(text)),
        None => escape_text(text),
    }
}

/// `text` as a code span on one line, its fence longer than any run of backticks in it: what
/// it holds is shown as written, never read as Markdown or HTML.
pub fn code_span(text: &str) -> String {
    let code = one_line(text);
    if code.is_empty() {
        return String::new();
    }
    let longest_run = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    // A space on each side keeps a backtick at an end from joining the fence.
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{code}{pad}{fence}")
}

/// Whether a link destination has an allowed scheme ([`LINK_SCHEMES`]).
pub(super) fn allowed_link(dest: &str) -> bool {
    dest.split_once(':')
        .is_some_and(|(scheme, _)| LINK_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
}

/// A link destination if its scheme is allowed, percent-encoded so that nothing in it can
/// end the `(…)` or start HTML.
pub(super) fn safe_destination(href: &str) -> Option<String> {
    let href = href.trim();
    let (scheme, _) = href.split_once(':')?;
    if !LINK_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
        return None;
    }
    let mut out = String::with_capacity(href.len());
    for c in href.chars() {
        match c {
            ' ' | '<' | '>' | '(' | ')' | '[' | ']' | '\\' | '"' | '\'' | '`' => {
                out.push_str(&format!("%{:02X}", c as u32));
            }
            c if c.is_control() || c.is_whitespace() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_library_is_shown_as_written() {
        assert_eq!(
            escape_text("[click me](javascript:alert(1))"),
            "\\[click me\\](javascript:alert(1))"
        );
        assert_eq!(
            escape_text("<img src=x onerror=alert(1)>\n&lt;b&gt;"),
            "\\<img src=x onerror=alert(1)\\> \\&lt;b\\&gt;"
        );
        assert_eq!(escape_text("  - item"), "\\- item");
        assert_eq!(escape_text("12) x"), "12\\) x");
        assert_eq!(escape_text("1."), "1\\.");
        assert_eq!(escape_text("- - -"), "\\- - -");
        assert_eq!(escape_text("==="), "\\===");
        assert_eq!(escape_text("+"), "\\+");
        for kept in [
            "2017-06-12",
            "3.57% error",
            "10.48550/arXiv.1",
            "-5",
            "+1",
            "=x",
            "--x",
        ] {
            assert_eq!(escape_text(kept), kept);
        }
        assert_eq!(escape_text("# `a` | *b*"), "\\# \\`a\\` \\| \\*b\\*");
        assert_eq!(
            escape_lines("one\r\ntwo\n\n\n- three", "> "),
            "> one\n> two\n>\n> \\- three\n"
        );
        assert_eq!(escape_lines(" \n ", ""), "");
    }

    #[test]
    fn links_only_to_allowed_schemes_and_code_spans_hold_anything() {
        assert_eq!(
            link_to("Open [it]", "zotero://select/library/items/ABCD2345"),
            "[Open \\[it\\]](zotero://select/library/items/ABCD2345)"
        );
        assert_eq!(
            link_to("x", "https://e.org/a b)"),
            "[x](https://e.org/a%20b%29)"
        );
        assert_eq!(link_to("x", "javascript:alert(1)"), "x");
        assert_eq!(link_to("x", ""), "x");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_span("a\n\n<b>"), "`a <b>`");
    }
}
