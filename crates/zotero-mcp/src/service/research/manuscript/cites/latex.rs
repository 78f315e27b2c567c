//! LaTeX citations: `\cite`, `\citep[p.~3]{a,b}` and kin (the commands of
//! [`CITE_COMMANDS`]), outside comments.

use super::{
    byte, in_spans, Cite, KeyKind, Paragraphs, Syntax, Work, CITE_COMMANDS, MAX_GROUP_BYTES,
};

/// Byte spans of LaTeX comments (`%` to the end of the line, `\%` aside).
fn latex_comments(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(p) = text.get(i..).and_then(|r| r.find('%')) {
        let at = i + p;
        let mut backslashes = 0;
        while at > backslashes && byte(text, at - 1 - backslashes) == b'\\' {
            backslashes += 1;
        }
        let end = text
            .get(at..)
            .and_then(|r| r.find('\n'))
            .map_or(text.len(), |n| at + n);
        if backslashes % 2 == 0 {
            spans.push((at, end));
            i = end;
        } else {
            i = at + 1;
        }
    }
    spans
}

/// LaTeX citation commands.
pub(super) fn latex(text: &str, work: &Work) -> Vec<Cite> {
    let paragraphs = Paragraphs::new(text, work);
    let comments = latex_comments(text);
    let mut out = Vec::new();
    let mut group = 0;
    let mut i = 0;
    while let Some(p) = text.get(i..).and_then(|r| r.find('\\')) {
        let at = i + p;
        if !work.go(p + 1) {
            break;
        }
        if let Some(end) = in_spans(&comments, at) {
            i = end.max(at + 1);
            continue;
        }
        let name_len = text
            .get(at + 1..)
            .map_or(0, |r| r.bytes().take_while(u8::is_ascii_alphabetic).count());
        let name = text.get(at + 1..at + 1 + name_len).unwrap_or("");
        let lower = {
            let mut n = name.to_string();
            if let Some(f) = n.get_mut(..1) {
                f.make_ascii_lowercase();
            }
            n
        };
        if name_len == 0 || !CITE_COMMANDS.contains(&lower.as_str()) {
            i = at + 1 + name_len.max(1);
            continue;
        }
        let next = latex_command(
            text,
            (at, at + 1 + name_len),
            lower,
            (group, &paragraphs),
            &mut out,
            work,
        );
        group += 1;
        i = next.max(at + 1);
    }
    out
}

/// One citation command whose name ends at `j`: its optional `*`, up to two `[...]`
/// arguments (one is the locator; of two the second), and `{keys}`.
fn latex_command(
    text: &str,
    (at, mut j): (usize, usize),
    name: String,
    (group, paragraphs): (usize, &Paragraphs),
    out: &mut Vec<Cite>,
    work: &Work,
) -> usize {
    let par = paragraphs.end(text, at).min(at + MAX_GROUP_BYTES);
    work.go(par - at);
    let skip_space = |mut k: usize| {
        while matches!(byte(text, k), b' ' | b'\t' | b'\n' | b'\r') && k < par {
            k += 1;
        }
        k
    };
    if byte(text, j) == b'*' {
        j += 1;
    }
    let mut optional = Vec::new();
    loop {
        let k = skip_space(j);
        if byte(text, k) != b'[' || optional.len() == 2 {
            break;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (n, c) in text.get(k..par).unwrap_or("").char_indices() {
            match c {
                '[' | '{' => depth += 1,
                ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = Some(k + n);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        optional.push(text.get(k + 1..close).unwrap_or("").to_string());
        j = close + 1;
    }
    let locator = optional
        .last()
        .map(|l| l.replace('~', " ").trim().to_string())
        .filter(|l| !l.is_empty());
    let syntax = Syntax::Latex(name);
    let k = skip_space(j);
    let broken = |problem: &str, out: &mut Vec<Cite>, end: usize| {
        out.push(Cite {
            key: String::new(),
            kind: KeyKind::CitationKey,
            syntax: syntax.clone(),
            start: at,
            end,
            group_start: at,
            group_end: end,
            group,
            locator: locator.clone(),
            problem: Some(problem.to_string()),
        });
    };
    if byte(text, k) != b'{' {
        broken("no {keys} after the command", out, j);
        return j;
    }
    let Some(close) = text.get(k + 1..par).and_then(|r| r.find(['}', '\\', '{'])) else {
        broken("unterminated: '{' without '}' in its paragraph", out, par);
        return par;
    };
    let close = k + 1 + close;
    if byte(text, close) != b'}' {
        broken(
            "unterminated: '{' without '}' before the next command",
            out,
            close,
        );
        return close;
    }
    let mut pos = k + 1;
    for key in text.get(k + 1..close).unwrap_or("").split(',') {
        let lead = key.len() - key.trim_start().len();
        let trimmed = key.trim();
        let start = pos + lead;
        pos += key.len() + 1;
        if trimmed.is_empty() || trimmed == "*" {
            continue;
        }
        out.push(Cite {
            key: trimmed.to_string(),
            kind: KeyKind::CitationKey,
            syntax: syntax.clone(),
            start,
            end: start + trimmed.len(),
            group_start: at,
            group_end: close + 1,
            group,
            locator: locator.clone(),
            problem: None,
        });
    }
    close + 1
}
