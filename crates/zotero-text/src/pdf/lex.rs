//! A linear PDF tokenizer that allocates nothing: brackets, strings, names, numbers and
//! keywords as byte ranges. It reads what lopdf is about to parse — a whole file before
//! loading it, a content stream before running it — so that their nesting, their size and
//! their cross-references can be bounded first (lopdf's parsers recurse and collect).

/// One token: its kind and where it lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `[` or `<<`.
    Open,
    /// `]` or `>>`.
    Close,
    /// A literal or hexadecimal string.
    Str,
    /// `/Name` (the range includes the slash).
    Name,
    /// An integer without sign or point (an object number, a generation, an offset).
    Integer(u64),
    /// Any other number.
    Number,
    /// A keyword or operator: `obj`, `R`, `stream`, `Tj`, `BI`…
    Keyword,
}

pub(crate) struct Lexer<'a> {
    bytes: &'a [u8],
    pub(crate) pos: usize,
    /// The deepest parentheses nested in the last literal string read.
    pub(crate) string_depth: usize,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(b: u8) -> bool {
    !is_space(b) && !is_delimiter(b)
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            string_depth: 0,
        }
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    /// The next token, white space and comments skipped; `None` at the end.
    pub(crate) fn next_token(&mut self) -> Option<Token> {
        loop {
            let b = self.at(self.pos)?;
            if is_space(b) {
                self.pos += 1;
            } else if b == b'%' {
                while self.at(self.pos).is_some_and(|c| c != b'\n' && c != b'\r') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let start = self.pos;
        let b = self.at(start)?;
        self.string_depth = 0;
        let kind = match b {
            b'[' | b'{' => {
                self.pos += 1;
                Kind::Open
            }
            b']' | b'}' => {
                self.pos += 1;
                Kind::Close
            }
            b'<' if self.at(start + 1) == Some(b'<') => {
                self.pos += 2;
                Kind::Open
            }
            b'>' if self.at(start + 1) == Some(b'>') => {
                self.pos += 2;
                Kind::Close
            }
            b'<' => {
                self.pos = memchr(b'>', self.bytes, start).map_or(self.bytes.len(), |i| i + 1);
                Kind::Str
            }
            b'(' => {
                self.literal_string();
                Kind::Str
            }
            b'/' => {
                self.pos += 1;
                self.regular();
                Kind::Name
            }
            b')' | b'>' => {
                // Unbalanced: a byte lopdf would reject; skipped here.
                self.pos += 1;
                Kind::Keyword
            }
            _ => {
                self.regular();
                number(self.bytes.get(start..self.pos).unwrap_or_default())
            }
        };
        Some(Token {
            kind,
            start,
            end: self.pos,
        })
    }

    fn regular(&mut self) {
        while self.at(self.pos).is_some_and(is_regular) {
            self.pos += 1;
        }
    }

    /// Past a literal string: balanced parentheses, `\` escaping the next byte.
    fn literal_string(&mut self) {
        let mut depth = 0usize;
        while let Some(b) = self.at(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'(' => {
                    depth += 1;
                    self.string_depth = self.string_depth.max(depth);
                }
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
        self.pos = self.pos.min(self.bytes.len());
    }

    /// Moves to `pos` (past data the caller skips: a stream's, an inline image's).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    pub(crate) fn text(&self, t: &Token) -> &'a [u8] {
        self.bytes.get(t.start..t.end).unwrap_or_default()
    }
}

fn number(word: &[u8]) -> Kind {
    if word.is_empty() {
        return Kind::Keyword;
    }
    if word.iter().all(u8::is_ascii_digit) {
        // Digits beyond u64 are not an offset or an object number anyone can mean.
        let mut v: u64 = 0;
        for d in word {
            v = v.saturating_mul(10).saturating_add(u64::from(d - b'0'));
        }
        return Kind::Integer(v);
    }
    let numeric = word
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'));
    if numeric {
        Kind::Number
    } else {
        Kind::Keyword
    }
}

/// The first `needle` at or after `from`.
pub(crate) fn memchr(needle: u8, hay: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .iter()
        .position(|&b| b == needle)
        .map(|i| i + from)
}

/// The first occurrence of `needle` at or after `from`.
pub(crate) fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let mut at = from;
    while let Some(i) = memchr(first, hay, at) {
        if hay.get(i..i + needle.len()) == Some(needle) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// Bounds on one content stream: what lopdf's content parser would collect at once.
pub(crate) struct ContentBounds {
    /// Operands before one operator.
    pub(crate) operands: usize,
    /// Items inside one operand (an array's, a dictionary's, nested ones counted).
    pub(crate) items: usize,
    /// Brackets open at once, or parentheses inside a string (lopdf's parser stops at 100
    /// and silently ignores the rest of the stream).
    pub(crate) depth: usize,
}

pub(crate) const CONTENT_BOUNDS: ContentBounds = ContentBounds {
    operands: 256,
    items: 65_536,
    depth: 32,
};

/// The length of the longest prefix of `content` that stays within `bounds`, cut before
/// the operand run that first exceeds them; `None` when all of it does. Inline image data
/// (`ID` … `EI`) is skipped as lopdf skips it.
pub(crate) fn content_prefix(content: &[u8], bounds: &ContentBounds) -> Option<usize> {
    let mut lx = Lexer::new(content);
    // Where the current run of operands began (the cut if it grows too long).
    let mut run_start: Option<usize> = None;
    let (mut operands, mut items, mut depth) = (0usize, 0usize, 0usize);
    while let Some(t) = lx.next_token() {
        let start = *run_start.get_or_insert(t.start);
        match t.kind {
            Kind::Open => {
                depth += 1;
                if depth == 1 {
                    operands += 1;
                } else {
                    items += 1;
                }
            }
            Kind::Close => depth = depth.saturating_sub(1),
            Kind::Keyword if depth == 0 => {
                let word = lx.text(&t);
                if word == b"ID" {
                    lx.seek(inline_image_end(content, t.end));
                }
                run_start = None;
                operands = 0;
                items = 0;
                continue;
            }
            _ if depth > 0 => items += 1,
            _ => operands += 1,
        }
        let nested = depth.max(if t.kind == Kind::Str {
            lx.string_depth
        } else {
            0
        });
        if operands > bounds.operands || items > bounds.items || nested > bounds.depth {
            return Some(start);
        }
    }
    None
}

/// Past an inline image's data starting after `ID` at `from`: the first `EI` with white
/// space before it and white space (or the end) after it.
fn inline_image_end(content: &[u8], from: usize) -> usize {
    let mut at = from + 1;
    while let Some(i) = find(content, b"EI", at) {
        let before = i.checked_sub(1).and_then(|j| content.get(j)).copied();
        let after = content.get(i + 2).copied();
        if before.is_some_and(is_space) && after.is_none_or(is_space) {
            return i + 2;
        }
        at = i + 1;
    }
    content.len()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn kinds(s: &str) -> Vec<Kind> {
        let mut lx = Lexer::new(s.as_bytes());
        std::iter::from_fn(|| lx.next_token())
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn tokens() {
        use Kind::*;
        assert_eq!(
            kinds("12 0 obj << /A [1 -2.5 (a(b)\\)c) <414>] >> endobj % note\n R"),
            [
                Integer(12),
                Integer(0),
                Keyword,
                Open,
                Name,
                Open,
                Integer(1),
                Number,
                Str,
                Str,
                Close,
                Close,
                Keyword,
                Keyword
            ]
        );
    }

    #[test]
    fn content_bounds_cut_before_the_run_that_exceeds_them() {
        let small = ContentBounds {
            operands: 3,
            items: 4,
            depth: 2,
        };
        assert_eq!(content_prefix(b"1 2 3 cm (a) Tj", &small), None);
        assert_eq!(content_prefix(b"(a) Tj 1 2 3 4 cm", &small), Some(7));
        assert_eq!(content_prefix(b"(a) Tj [1 2 3 4 5] TJ", &small), Some(7));
        assert_eq!(content_prefix(b"[[[1]]] TJ", &small), Some(0));
        assert_eq!(content_prefix(b"(a) Tj (((b))) Tj", &small), Some(7));
        // Inline image data is not tokens.
        assert_eq!(
            content_prefix(b"BI /W 1 ID \x01 2 3 4 5 6 7 EI (a) Tj", &small),
            None
        );
    }
}
