//! Pandoc/Markdown citations: `[@a; @b, p. 4]`, `[-@a]`, `@a` in the text and `@a [p. 3]`,
//! outside code spans and fenced blocks.

use super::{byte, in_spans, Cite, KeyKind, Paragraphs, Syntax, Work, MAX_GROUP_BYTES};

/// Pandoc's key: a letter, digit or `_`, then alphanumerics, `_` and internal punctuation
/// (`:.#$%&-+?<>~/`); trailing punctuation is not part of it. `@{...}` takes anything but
/// braces. Returns the key's byte span after the `@` at `at`.
fn pandoc_key(text: &str, at: usize) -> Option<(usize, usize)> {
    let start = at + 1;
    if byte(text, start) == b'{' {
        // Within a citation's bound: a key is short, and an unclosed `@{` does not send
        // each `@{` after it searching to the end of the line.
        let mut bound = (start + 1 + MAX_GROUP_BYTES).min(text.len());
        while !text.is_char_boundary(bound) {
            bound -= 1;
        }
        let close = text.get(start + 1..bound)?.find(['}', '\n'])? + start + 1;
        if byte(text, close) != b'}' || close == start + 1 {
            return None;
        }
        return Some((start + 1, close));
    }
    let rest = text.get(start..)?;
    let first = rest.chars().next()?;
    if !(first.is_alphanumeric() || first == '_') {
        return None;
    }
    let mut end = start;
    for (i, c) in rest.char_indices() {
        if c.is_alphanumeric() || c == '_' || ":.#$%&-+?<>~/".contains(c) {
            end = start + i + c.len_utf8();
        } else {
            break;
        }
    }
    // Punctuation is internal only.
    while end > start {
        let last = byte(text, end - 1);
        if ":.#$%&-+?<>~/".as_bytes().contains(&last) {
            end -= 1;
        } else {
            break;
        }
    }
    (end > start).then_some((start, end))
}

/// Byte spans of code (fenced blocks and inline code spans) that hold no citations.
fn code_spans(text: &str, paragraphs: &Paragraphs, work: &Work) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() && work.go(1) {
        let b = byte(text, i);
        if line_start {
            let trimmed = text.get(i..).unwrap_or("").trim_start_matches([' ', '\t']);
            let indent = text.len() - i - trimmed.len();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                let fence = trimmed.get(..3).unwrap_or("```");
                let open_end = text.get(i..).and_then(|r| r.find('\n')).map(|n| i + n + 1);
                let Some(open_end) = open_end else {
                    spans.push((i, bytes.len()));
                    return spans;
                };
                let close = text
                    .get(open_end..)
                    .and_then(|r| {
                        r.find(&format!("\n{fence}"))
                            .or_else(|| r.starts_with(fence).then_some(0))
                    })
                    .map(|n| open_end + n + 1 + fence.len());
                let end = close.unwrap_or(bytes.len()).min(bytes.len());
                spans.push((i + indent, end));
                i = end;
                continue;
            }
        }
        line_start = b == b'\n';
        if b == b'`' {
            let mut n = 0;
            while byte(text, i + n) == b'`' {
                n += 1;
            }
            let ticks = "`".repeat(n);
            // The closing run is in the paragraph (which ends at a line break, no backtick):
            // only it is searched.
            let par = paragraphs.end(text, i);
            let within = text.get(i + n..par).unwrap_or("");
            let close = within.find(&ticks);
            work.go(close.map_or(within.len(), |c| c + n));
            match close.map(|c| i + n + c + n) {
                Some(end) => {
                    spans.push((i, end));
                    i = end;
                }
                _ => i += n,
            }
            continue;
        }
        i += 1;
    }
    spans
}

/// Pandoc/Markdown citations.
pub(super) fn markdown(text: &str, work: &Work) -> Vec<Cite> {
    let paragraphs = Paragraphs::new(text, work);
    let code = code_spans(text, &paragraphs, work);
    let pairs = bracket_pairs(text, &paragraphs, work);
    let mut out = Vec::new();
    let mut group = 0;
    let mut i = 0;
    while i < text.len() && work.go(1) {
        if let Some(end) = in_spans(&code, i) {
            i = end.max(i + 1);
            continue;
        }
        let b = byte(text, i);
        if b == b'[' {
            if let Some(next) = bracketed(text, i, (group, &paragraphs, &pairs), &mut out) {
                group += 1;
                i = next;
                continue;
            }
        } else if b == b'@' {
            let prev = text.get(..i).and_then(|s| s.chars().next_back());
            let email_like = prev.is_some_and(|c| c.is_alphanumeric() || "._-+\\/:=".contains(c));
            if !email_like {
                if let Some((ks, ke)) = pandoc_key(text, i) {
                    let mut cite = Cite {
                        key: text.get(ks..ke).unwrap_or("").to_string(),
                        kind: KeyKind::CitationKey,
                        syntax: Syntax::InText,
                        start: ks,
                        end: ke,
                        group_start: i,
                        group_end: ke + usize::from(byte(text, ke) == b'}'),
                        group,
                        locator: None,
                        problem: None,
                    };
                    // `@key [p. 33]`: a locator in brackets right after.
                    let after = cite.group_end;
                    let skip = usize::from(byte(text, after) == b' ');
                    if byte(text, after + skip) == b'[' {
                        // A locator is short: looked for in the group's bound only.
                        let mut par = paragraphs
                            .end(text, after)
                            .min(after + skip + MAX_GROUP_BYTES);
                        while !text.is_char_boundary(par) {
                            par -= 1;
                        }
                        let close = text.get(after + skip..par).and_then(|r| r.find(']'));
                        work.go(close.unwrap_or(par - after));
                        if let Some(c) = close {
                            let inner = text.get(after + skip + 1..after + skip + c).unwrap_or("");
                            if !inner.contains('@') {
                                cite.locator =
                                    Some(inner.trim().to_string()).filter(|l| !l.is_empty());
                                cite.group_end = after + skip + c + 1;
                            }
                        }
                    }
                    i = cite.group_end.max(i + 1);
                    out.push(cite);
                    group += 1;
                    continue;
                }
            }
        }
        i += text
            .get(i..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8);
    }
    out
}

/// Each `[` and the `]` that closes it (the brackets between them balanced) within its
/// paragraph, in the order of the `[`s: one pass with a stack, where a scan from each `[`
/// would read up to [`MAX_GROUP_BYTES`] for each.
fn bracket_pairs(text: &str, paragraphs: &Paragraphs, work: &Work) -> Vec<(usize, usize)> {
    work.go(text.len());
    let mut pairs = Vec::new();
    let mut open = Vec::new();
    let mut paragraph_end = paragraphs.end(text, 0);
    for (i, b) in text.bytes().enumerate() {
        if i >= paragraph_end {
            open.clear();
            paragraph_end = paragraphs.end(text, i + 1);
        }
        match b {
            b'[' => open.push(i),
            b']' => {
                if let Some(o) = open.pop() {
                    pairs.push((o, i));
                }
            }
            _ => {}
        }
    }
    pairs.sort_unstable();
    pairs
}

/// A bracketed citation opening at `open`: pushes its keys and answers where to go on, or
/// `None` when the brackets hold no citation (a link, a footnote, plain text).
fn bracketed(
    text: &str,
    open: usize,
    (group, paragraphs, pairs): (usize, &Paragraphs, &[(usize, usize)]),
    out: &mut Vec<Cite>,
) -> Option<usize> {
    let par = paragraphs.end(text, open).min(open + MAX_GROUP_BYTES);
    // A bound inside a character reads as no citation (as the scan it replaces did).
    if !text.is_char_boundary(par) {
        return None;
    }
    let close = pairs
        .binary_search_by_key(&open, |p| p.0)
        .ok()
        .and_then(|k| pairs.get(k))
        .map(|p| p.1)
        .filter(|c| *c < par);
    let Some(close) = close else {
        // Only `[@` or `[-@` right at the bracket is taken for a broken citation.
        let starts = text.get(open + 1..).unwrap_or("");
        if !(starts.starts_with('@') || starts.starts_with("-@")) {
            return None;
        }
        let at = open + 1 + usize::from(starts.starts_with('-'));
        let (ks, ke) = pandoc_key(text, at)?;
        out.push(Cite {
            key: text.get(ks..ke).unwrap_or("").to_string(),
            kind: KeyKind::CitationKey,
            syntax: Syntax::Bracketed,
            start: ks,
            end: ke,
            group_start: open,
            group_end: ke,
            group,
            locator: None,
            problem: Some("unterminated: '[' without ']' in its paragraph".into()),
        });
        return Some(ke);
    };
    // `[text](url)` and `[text][ref]` are links, `[^note]` a footnote.
    if matches!(byte(text, close + 1), b'(' | b'[') || byte(text, open + 1) == b'^' {
        return None;
    }
    let inner_start = open + 1;
    let inner = text.get(inner_start..close)?;
    let mut found = Vec::new();
    let mut piece_start = 0;
    for piece in inner.split(';') {
        let base = inner_start + piece_start;
        piece_start += piece.len() + 1;
        // The key: an `@` at the start of the piece or after a space or `-`.
        let mut at = None;
        for (j, c) in piece.char_indices() {
            if c == '@' {
                let prev = piece.get(..j).and_then(|s| s.chars().next_back());
                if prev.is_none_or(|p| p.is_whitespace() || p == '-') {
                    at = Some(j);
                    break;
                }
            }
        }
        let Some(j) = at else { continue };
        let Some((ks, ke)) = pandoc_key(text, base + j) else {
            continue;
        };
        let suppress = piece.get(..j).is_some_and(|p| p.ends_with('-'));
        let key_end = ke + usize::from(byte(text, ke) == b'}');
        let locator = text
            .get(key_end..base + piece.len())
            .map(|l| l.trim().trim_start_matches(',').trim().to_string())
            .filter(|l| !l.is_empty());
        found.push(Cite {
            key: text.get(ks..ke).unwrap_or("").to_string(),
            kind: KeyKind::CitationKey,
            syntax: if suppress {
                Syntax::SuppressAuthor
            } else {
                Syntax::Bracketed
            },
            start: ks,
            end: ke,
            group_start: open,
            group_end: close + 1,
            group,
            locator,
            problem: None,
        });
    }
    if found.is_empty() {
        return None;
    }
    out.extend(found);
    Some(close + 1)
}
