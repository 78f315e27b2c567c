//! One Rust file read as text for the layering rules: comments and literals blanked out,
//! tokens with their lines, the `#[cfg(test)]` items cut out, `use` trees, the names the file
//! defines at its top level and the spans of its functions.
//!
//! Text, not `syn`: syn is in the tree only as the proc-macros' host build, so parsing with
//! it here would compile a second syn (with proc-macro2's `span-locations`, for lines) into
//! the test binary; what the rules need (paths, item names, brace-matched spans) is a few
//! hundred lines of lexing that runs over the whole workspace in a fraction of a second.

/// `text` with every comment and the inside of every string, raw string and char literal
/// replaced by spaces; the line breaks stay, so a line of the result is the same line of
/// `text`. Read by bytes: every delimiter is ASCII, and a character past ASCII is either
/// copied whole (code) or blanked byte by byte (a literal or comment).
pub fn blank(text: &str) -> String {
    let c = text.as_bytes();
    let at = |i: usize| c.get(i).copied().unwrap_or(0);
    let mut out: Vec<u8> = Vec::with_capacity(c.len());
    let hide = |out: &mut Vec<u8>, from: usize, to: usize| {
        let span = c.get(from..to.min(c.len())).unwrap_or_default();
        out.extend(span.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if c[i] == b'/' && at(i + 1) == b'/' {
            while i < c.len() && c[i] != b'\n' {
                i += 1;
            }
            hide(&mut out, start, i);
        } else if c[i] == b'/' && at(i + 1) == b'*' {
            // Block comments nest.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == b'/' && at(i + 1) == b'*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == b'*' && at(i + 1) == b'/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            hide(&mut out, start, i);
        } else if let Some((open, hashes)) = raw_string_at(c, i) {
            // `r"…"`, `r#"…"#`, `br##"…"##`: no escapes; ends at `"` and as many `#`.
            i = open + 1;
            out.extend_from_slice(&c[start..i]);
            while i < c.len() && !(c[i] == b'"' && (1..=hashes).all(|k| at(i + k) == b'#')) {
                i += 1;
            }
            hide(&mut out, open + 1, i);
            let end = (i + 1 + hashes).min(c.len());
            out.extend_from_slice(c.get(i..end).unwrap_or_default());
            i = end;
        } else if c[i] == b'"' || (c[i] == b'\'' && char_literal_at(c, i)) {
            // A string or a char literal (`'x'`, `'\n'`, `'\u{1F600}'`; `'a` is a lifetime).
            let quote = c[i];
            i += 1;
            while i < c.len() && c[i] != quote && !(quote == b'\'' && c[i] == b'\n') {
                i += if c[i] == b'\\' { 2 } else { 1 };
            }
            out.push(quote);
            hide(&mut out, start + 1, i);
            if i < c.len() {
                out.push(quote);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the `'` at `i` opens a char literal: an escape, or one character and a `'`.
fn char_literal_at(c: &[u8], i: usize) -> bool {
    let width = match c.get(i + 1) {
        Some(b'\\') => return true,
        None | Some(b'\n') => return false,
        Some(&b) if b < 0x80 => 1,
        Some(&b) if b >= 0xF0 => 4,
        Some(&b) if b >= 0xE0 => 3,
        Some(_) => 2,
    };
    c.get(i + 1 + width) == Some(&b'\'')
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Where the raw string that starts at `i` (at its `r`, `br` or `cr`) has its opening `"`,
/// and its number of `#`.
fn raw_string_at(c: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if matches!(c.get(j), Some(b'b' | b'c')) {
        j += 1;
    }
    if c.get(j) != Some(&b'r')
        || i.checked_sub(1)
            .and_then(|k| c.get(k))
            .is_some_and(|&b| is_word(b))
    {
        return None;
    }
    let hashes = c.get(j + 1..)?.iter().take_while(|&&h| h == b'#').count();
    let open = j + 1 + hashes;
    (c.get(open) == Some(&b'"')).then_some((open, hashes))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    Ident(&'a str),
    /// `::`
    Path,
    Punct(char),
}

#[derive(Clone, Copy, Debug)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    /// 1-based.
    pub line: usize,
}

impl<'a> Token<'a> {
    pub fn ident(&self) -> Option<&'a str> {
        match self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }
    pub fn is(&self, word: &str) -> bool {
        self.ident() == Some(word)
    }
    pub fn punct(&self, p: char) -> bool {
        self.tok == Tok::Punct(p)
    }
}

/// The tokens of blanked text; lifetimes and what is left of literals are left out. A byte
/// past ASCII is read as part of an identifier (outside literals and comments it can be
/// nothing else).
pub fn tokens(blanked: &str) -> Vec<Token<'_>> {
    let b = blanked.as_bytes();
    let word = is_word;
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() || c == b'"' {
            i += 1;
        } else if c == b'\'' {
            // What is left of a char literal (`'   '`), or a lifetime or label (`'a`).
            let spaces = b[i + 1..].iter().take_while(|&&s| s == b' ').count();
            if spaces > 0 && b.get(i + 1 + spaces) == Some(&b'\'') {
                i += 2 + spaces;
            } else {
                i += 1;
                while i < b.len() && word(b[i]) {
                    i += 1;
                }
            }
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            // Both ends are at ASCII bytes or at the text's ends: char boundaries.
            let tok = Tok::Ident(blanked.get(start..i).unwrap_or_default());
            out.push(Token { tok, line });
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Token {
                tok: Tok::Path,
                line,
            });
            i += 2;
        } else {
            // ASCII: a byte past it is part of a word.
            out.push(Token {
                tok: Tok::Punct(c as char),
                line,
            });
            i += 1;
        }
    }
    out
}

/// The index just past the group that opens at `open` (`(`, `[` or `{`), or the end.
fn close(toks: &[Token<'_>], open: usize) -> usize {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The index just past the item that starts at `i`: its `;` or its closing `}`.
fn item_end(toks: &[Token<'_>], mut i: usize) -> usize {
    while i < toks.len() {
        match toks[i].tok {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => return close(toks, i),
            Tok::Punct('(' | '[') => i = close(toks, i),
            _ => i += 1,
        }
    }
    toks.len()
}

/// Whether the attribute tokens `#[ … ]` gate on `test` (`cfg(test)`, `cfg(all(test, unix))`)
/// and not on its absence.
fn is_test_cfg(attr: &[Token<'_>]) -> bool {
    if !attr.get(2).is_some_and(|t| t.is("cfg")) {
        return false;
    }
    attr.iter()
        .enumerate()
        .any(|(k, t)| t.is("test") && !(k >= 2 && attr[k - 1].punct('(') && attr[k - 2].is("not")))
}

/// A file's tokens without its `#[cfg(test)]` items, the lines those items take, and the
/// names of the `#[cfg(test)] mod name;` files it declares.
pub struct Production<'a> {
    pub tokens: Vec<Token<'a>>,
    pub test_lines: usize,
    pub test_mods: Vec<String>,
}

pub fn production<'a>(toks: &[Token<'a>]) -> Production<'a> {
    let mut out = Production {
        tokens: Vec::new(),
        test_lines: 0,
        test_mods: Vec::new(),
    };
    let mut i = 0;
    while i < toks.len() {
        if toks[i].punct('#') && toks.get(i + 1).is_some_and(|t| t.punct('[')) {
            let end = close(toks, i + 1);
            if is_test_cfg(&toks[i..end]) {
                // Further attributes, then the item.
                let mut j = end;
                while toks.get(j).is_some_and(|t| t.punct('#')) {
                    j = close(toks, j + 1);
                }
                let stop = item_end(toks, j);
                let item = &toks[j..stop];
                if let [.., m, name, semi] = item {
                    if m.is("mod") && semi.punct(';') {
                        out.test_mods.extend(name.ident().map(str::to_string));
                    }
                }
                let last = toks.get(stop.saturating_sub(1)).map_or(0, |t| t.line);
                out.test_lines += last + 1 - toks[i].line;
                i = stop;
                continue;
            }
        }
        out.tokens.push(toks[i]);
        i += 1;
    }
    out
}

/// One name a `use` declaration binds (or a glob it opens).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseLeaf {
    /// As written, from its first segment (`crate`, `super`, `self`, a module or a crate).
    pub path: Vec<String>,
    /// The name it binds: the `as` name, else the last segment; None for a glob or `as _`.
    pub binds: Option<String>,
    pub glob: bool,
}

/// The `use` declarations among `toks`, and the index ranges they take.
pub fn uses(toks: &[Token<'_>]) -> (Vec<UseLeaf>, Vec<(usize, usize)>) {
    let mut leaves = Vec::new();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i].is("use") {
            let end = item_end(toks, i);
            let mut k = i + 1;
            if toks.get(k).is_some_and(|t| t.tok == Tok::Path) {
                k += 1; // `use ::std::…`: an outside crate; its first segment says so.
            }
            use_tree(&toks[..end], &mut k, &mut Vec::new(), &mut leaves);
            spans.push((i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    (leaves, spans)
}

fn use_tree(toks: &[Token<'_>], k: &mut usize, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    let depth = prefix.len();
    loop {
        match toks.get(*k).map(|t| t.tok) {
            Some(Tok::Ident(seg)) => {
                prefix.push(seg.to_string());
                *k += 1;
                if toks.get(*k).is_some_and(|t| t.tok == Tok::Path) {
                    *k += 1;
                    continue;
                }
                let mut binds = prefix.last().cloned();
                if toks.get(*k).is_some_and(|t| t.is("as")) {
                    binds = toks.get(*k + 1).and_then(|t| t.ident()).map(str::to_string);
                    *k += 2;
                }
                if prefix.last().is_some_and(|s| s == "self") {
                    prefix.pop();
                    if binds.as_deref() == Some("self") {
                        binds = prefix.last().cloned();
                    }
                }
                out.push(UseLeaf {
                    path: prefix.clone(),
                    binds: binds.filter(|b| b != "_"),
                    glob: false,
                });
                break;
            }
            Some(Tok::Punct('*')) => {
                *k += 1;
                out.push(UseLeaf {
                    path: prefix.clone(),
                    binds: None,
                    glob: true,
                });
                break;
            }
            Some(Tok::Punct('{')) => {
                *k += 1;
                while toks.get(*k).is_some_and(|t| !t.punct('}')) {
                    use_tree(toks, k, prefix, out);
                    if toks.get(*k).is_some_and(|t| t.punct(',')) {
                        *k += 1;
                    }
                }
                *k += 1;
                break;
            }
            _ => break,
        }
    }
    prefix.truncate(depth);
}

/// The multi-segment paths among `toks` outside the `skip` ranges. A path is `a::b::c`, with
/// `$crate::` read as `crate::`; a path opened by `::` is an outside crate's.
pub fn paths(toks: &[Token<'_>], skip: &[(usize, usize)]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut spans = skip.iter().peekable();
    let mut i = 0;
    while i < toks.len() {
        if let Some(&&(from, to)) = spans.peek() {
            if i >= from {
                i = i.max(to);
                spans.next();
                continue;
            }
        }
        let after_path = i > 0 && toks[i - 1].tok == Tok::Path;
        match toks[i].ident() {
            Some(first) if !after_path => {
                let mut path = vec![first.to_string()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|t| t.tok == Tok::Path) {
                    match toks.get(j + 1).and_then(Token::ident) {
                        Some(seg) => path.push(seg.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                if path.len() > 1 {
                    out.push(path);
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

/// The names a file defines at its top level (items, `mod`s, `macro_rules!`), read from its
/// production tokens.
pub fn definitions(toks: &[Token<'_>]) -> Vec<String> {
    const ITEMS: &[&str] = &[
        "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
    ];
    let mut out = Vec::new();
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        match t.tok {
            Tok::Punct('{' | '(' | '[') => depth += 1,
            Tok::Punct('}' | ')' | ']') => depth -= 1,
            Tok::Ident(word) if depth == 0 => {
                let next = toks.get(k + 1);
                if ITEMS.contains(&word) {
                    if let Some(name) = next.and_then(Token::ident) {
                        if !ITEMS.contains(&name) {
                            out.push(name.to_string());
                        }
                    }
                } else if word == "macro_rules" && next.is_some_and(|t| t.punct('!')) {
                    out.extend(toks.get(k + 2).and_then(Token::ident).map(str::to_string));
                }
            }
            _ => {}
        }
    }
    out
}

/// A function with a body: its name, the line of its `fn` and how many lines it takes from
/// there to its closing brace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnSpan {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

pub fn functions(toks: &[Token<'_>]) -> Vec<FnSpan> {
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let Some(name) = toks.get(k + 1).and_then(Token::ident) else {
            continue;
        };
        if !t.is("fn") {
            continue;
        }
        // The signature runs to the body's `{` or a declaration's `;`, past any groups.
        let mut j = k + 2;
        while j < toks.len() && !toks[j].punct('{') && !toks[j].punct(';') {
            j = match toks[j].tok {
                Tok::Punct('(' | '[') => close(toks, j),
                _ => j + 1,
            };
        }
        if toks.get(j).is_some_and(|b| b.punct('{')) {
            let end = close(toks, j);
            let last = toks.get(end - 1).map_or(t.line, |b| b.line);
            out.push(FnSpan {
                name: name.to_string(),
                line: t.line,
                lines: last + 1 - t.line,
            });
        }
    }
    out
}
