//! HTML (a web page snapshot, or an EPUB chapter): the text as html5ever's tokenizer reads
//! it, scripts, styles and the head dropped, blocks on their own lines, whitespace folded as
//! a browser folds it (kept inside `<pre>`). No tree is built: the tree builder's repairs
//! (misnested formatting elements, tables, 200,000 nested `div`s) cost minutes on hostile
//! pages, the tokenizer is linear, and text needs no tree. The input is fed in slices, the
//! deadline read between them.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

use crate::budget::Budget;
use crate::document::{Page, PageStatus, TextError};
use crate::nfkc::nfkc;

/// Elements whose content is never text a reader sees.
const HIDDEN: &[&str] = &[
    "script", "style", "noscript", "template", "head", "title", "svg", "math", "iframe", "object",
    "noembed", "noframes", "xmp",
];

/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "aside",
    "blockquote",
    "pre",
    "header",
    "footer",
    "nav",
    "figure",
    "figcaption",
    "hr",
    "main",
    "address",
    "caption",
    "body",
    "html",
    "td",
    "th",
];

/// Elements with no content and no end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// Bytes fed to the tokenizer between two reads of the clock.
const SLICE: usize = 64 * 1024;

pub(crate) fn extract(bytes: &[u8], budget: &Budget) -> Result<Page, TextError> {
    let text = text(bytes, budget)?;
    Ok(Page {
        index: 0,
        label: "1".to_owned(),
        status: PageStatus::Text,
        text,
        glyphs: Vec::new(),
        view_box: [0.0; 4],
        rotation: 0,
    })
}

/// The visible text of an HTML (or XHTML) document.
pub(crate) fn text(bytes: &[u8], budget: &Budget) -> Result<String, TextError> {
    let sink = tokenize(bytes, TextSink::default(), budget)?;
    let out = sink.state.into_inner().out;
    Ok(nfkc(out.buf.trim_end()))
}

/// Runs the tokenizer over `bytes` (decoded as `plain::decode` does) into `sink`.
fn tokenize<S: TokenSink<Handle = ()>>(
    bytes: &[u8],
    sink: S,
    budget: &Budget,
) -> Result<S, TextError> {
    let source = crate::plain::decode(bytes);
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    let mut rest = source.as_str();
    while !rest.is_empty() {
        budget.check()?;
        let mut cut = rest.len().min(SLICE);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (slice, tail) = rest.split_at(cut);
        input.push_back(StrTendril::from_slice(slice));
        // The sink never asks to stop for a script: each feed reads the whole slice.
        let _ = tokenizer.feed(&input);
        rest = tail;
    }
    tokenizer.end();
    Ok(tokenizer.sink)
}

/// A tag's local name without a namespace prefix (`opf:item` → `item`).
pub(crate) fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

#[derive(Default)]
struct TextSink {
    state: RefCell<TextState>,
}

#[derive(Default)]
struct TextState {
    out: Out,
    /// Hidden elements open, innermost last; text is dropped while any is.
    hidden: Vec<String>,
}

impl TokenSink for TextSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut st = self.state.borrow_mut();
        match token {
            Token::CharacterTokens(t) if st.hidden.is_empty() => st.out.text(&t),
            Token::TagToken(tag) => return st.tag(&tag),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

impl TextState {
    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name = local(&tag.name);
        let empty = tag.self_closing || VOID.contains(&name);
        match tag.kind {
            TagKind::StartTag => {
                // The body (or any of its blocks) ends a head left open.
                if name == "body" && self.hidden.last().is_some_and(|h| h == "head") {
                    self.hidden.pop();
                }
                if HIDDEN.contains(&name) {
                    if empty {
                        return TokenSinkResult::Continue;
                    }
                    self.hidden.push(name.to_owned());
                    return match name {
                        "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                        "title" => TokenSinkResult::RawData(RawKind::Rcdata),
                        "style" | "noscript" | "iframe" | "noembed" | "noframes" | "xmp" => {
                            TokenSinkResult::RawData(RawKind::Rawtext)
                        }
                        _ => TokenSinkResult::Continue,
                    };
                }
                if !self.hidden.is_empty() {
                    return TokenSinkResult::Continue;
                }
                if name == "textarea" && !empty {
                    return TokenSinkResult::RawData(RawKind::Rcdata);
                }
                if name == "plaintext" {
                    self.out.line();
                    return TokenSinkResult::Plaintext;
                }
                if BLOCKS.contains(&name) {
                    self.out.line();
                    if name == "pre" && !empty {
                        self.out.pre += 1;
                    }
                }
            }
            TagKind::EndTag => {
                if let Some(at) = self.hidden.iter().rposition(|h| h == name) {
                    self.hidden.truncate(at);
                    return TokenSinkResult::Continue;
                }
                if !self.hidden.is_empty() {
                    return TokenSinkResult::Continue;
                }
                if BLOCKS.contains(&name) {
                    if name == "pre" {
                        self.out.pre = self.out.pre.saturating_sub(1);
                    }
                    self.out.line();
                }
            }
        }
        TokenSinkResult::Continue
    }
}

/// Text being written, whitespace folded.
#[derive(Default)]
struct Out {
    buf: String,
    pre: usize,
}

impl Out {
    fn text(&mut self, s: &str) {
        if self.pre > 0 {
            self.buf.push_str(s);
            return;
        }
        if s.starts_with(char::is_whitespace) {
            self.space();
        }
        for (i, word) in s.split_whitespace().enumerate() {
            if i > 0 {
                self.space();
            }
            self.buf.push_str(word);
        }
        if s.ends_with(char::is_whitespace) {
            self.space();
        }
    }

    fn space(&mut self) {
        if !self.buf.is_empty() && !self.buf.ends_with([' ', '\n']) {
            self.buf.push(' ');
        }
    }

    fn line(&mut self) {
        let keep = self.buf.trim_end_matches(' ').len();
        self.buf.truncate(keep);
        if !self.buf.is_empty() && !self.buf.ends_with('\n') {
            self.buf.push('\n');
        }
    }
}

/// An element's local name and its attributes (local names, values).
pub(crate) type Element = (String, Vec<(String, String)>);

/// Collects the start tags named in `tags`.
struct ElementSink<'t> {
    tags: &'t [&'t str],
    found: RefCell<Vec<Element>>,
    limit: usize,
}

impl TokenSink for ElementSink<'_> {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        if let Token::TagToken(tag) = token {
            let name = local(&tag.name);
            let mut found = self.found.borrow_mut();
            if tag.kind == TagKind::StartTag
                && self.tags.contains(&name)
                && found.len() <= self.limit
            {
                let attrs = tag
                    .attrs
                    .iter()
                    .map(|a| (local(&a.name.local).to_owned(), a.value.to_string()))
                    .collect();
                found.push((name.to_owned(), attrs));
            }
        }
        TokenSinkResult::Continue
    }
}

/// Attributes of every element named `tag` (any prefix), in document order, at most
/// `limit` + 1 of them (so that a caller can tell "too many"): for the EPUB package and
/// container files, read through the HTML tokenizer (attributes are all these files need).
pub(crate) fn elements(
    bytes: &[u8],
    tags: &[&str],
    limit: usize,
    budget: &Budget,
) -> Result<Vec<Element>, TextError> {
    let sink = ElementSink {
        tags,
        found: RefCell::new(Vec::new()),
        limit,
    };
    Ok(tokenize(bytes, sink, budget)?.found.into_inner())
}
