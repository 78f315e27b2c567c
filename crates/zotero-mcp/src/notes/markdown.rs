//! Zotero note HTML → Markdown an agent can read and a Markdown renderer can show safely.
//!
//! Notes hold whatever HTML was written into them: the note editor's, a web clipper's, an
//! import's, a script's through the API. The desktop's local API serves them as stored, so
//! nothing upstream can be relied on to have cleaned them. Two well-kept crates do the work,
//! in layers:
//!
//! 1. `htmd` parses the note with html5ever (as a browser would, broken markup included) and
//!    writes Markdown, escaping text so it cannot become HTML. What it writes is an
//!    allow-list: Markdown for the tags it knows, the text of any other element, and nothing
//!    of attributes. Handlers of our own drop `<script>`, `<style>` and other active or
//!    embedded content with everything inside them ([`DROPPED_WITH_CONTENT`]); keep a link
//!    only with an allowed scheme ([`LINK_SCHEMES`], checked on the value html5ever decoded,
//!    so `jav&#x61;script:` is `javascript:`), its destination percent-encoded so it cannot
//!    leave its `(…)`; name an image but never link it (a remote image is a tracking pixel);
//!    turn Zotero's citations into their visible text linked to the cited item
//!    (`zotero://select/…`) and highlights quoted from a PDF into their quoted text.
//! 2. `pulldown-cmark` reads the result as a renderer would and escapes any raw HTML, image
//!    or link to another scheme it still finds (htmd's blocks nested in inline elements can
//!    break a fence open).
//!
//! `ammonia` was the first layer once: it added 2.9 MB to the binary (a second html5ever,
//! `url` with ICU's Unicode tables, cssparser) for what the handlers above and the last
//! layer already ensure; the property test (`tests/it/prop_notes.rs`) holds both to it.
//!
//! This module is also the one way library text reaches the Markdown the server composes
//! itself (`zotero_get_item_metadata`'s Markdown, the `notes.md` and `annotations.md`
//! resources): [`escape_text`] and [`escape_lines`] for text, [`link_to`] for links (the same
//! [`LINK_SCHEMES`]), [`code_span`] for tags; a page cut from a note is made safe again
//! ([`safe_piece`]), and `zotero_cite`'s Markdown goes through the last layer
//! ([`safe_converted`]). `tests/it/prop_markdown_outputs.rs` holds every output to it.
//!
//! The server, not zotero-api, does this: the client hands back notes as Zotero stores them;
//! what an agent is shown, and what is removed for its safety, is decided at the MCP edge.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::{Element, HtmlToMarkdown};
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use markup5ever_rcdom::{Node, NodeData};
use percent_encoding::percent_decode_str;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;
use tendril::StrTendril;

/// URL schemes a link may have, in every Markdown this server writes: the web, e-mail and
/// Zotero's own `zotero://select/…` and `zotero://open-pdf/…`. Nothing else (`javascript:`,
/// `data:`, `file:`, `vbscript:`, relative URLs, …) is ever a link.
pub const LINK_SCHEMES: [&str; 4] = ["http", "https", "mailto", "zotero"];

/// Tags removed together with everything inside them: code, styles, embedded documents and
/// media, forms, and the raw-text elements whose content is not text for a reader.
pub(crate) const DROPPED_WITH_CONTENT: &[&str] = &[
    "applet",
    "audio",
    "button",
    "canvas",
    "embed",
    "form",
    "frame",
    "frameset",
    "head",
    "plaintext",
    "iframe",
    "input",
    "map",
    "math",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "script",
    "select",
    "style",
    "svg",
    "template",
    "textarea",
    "title",
    "video",
    "xmp",
];

fn converter() -> HtmlToMarkdown {
    HtmlToMarkdown::builder()
        .add_handler(vec!["a"], link)
        .add_handler(vec!["img"], image)
        .add_handler(vec!["span"], span)
        .add_handler(vec!["table"], table)
        .add_handler(vec!["pre"], preformatted)
        .add_handler(vec!["code"], inline_code)
        .add_handler(DROPPED_WITH_CONTENT.to_vec(), dropped)
        .build()
}

/// How deep elements may nest before what is deeper becomes plain text: the converter
/// recurses once per level, and a note of 500,000 characters could nest 100,000 deep.
/// Real notes nest a few levels (lists in lists, a table in a div).
pub const MAX_DEPTH: usize = 48;

/// An element shown with nothing of what it holds.
fn dropped(_: &dyn Handlers, _: Element) -> Option<HandlerResult> {
    None
}

/// The note as a tree, nested at most [`MAX_DEPTH`] deep.
fn clean_tree(converter: &HtmlToMarkdown, html: &str) -> Option<Rc<Node>> {
    let tree = converter.html_to_tree(html).ok()?;
    flatten_deep(&tree);
    Some(tree)
}

/// How deep a note may nest its elements to be converted at all. HTML parsing costs time
/// proportional to depth × elements (each start tag looks down the stack of open elements):
/// 100,000 nested `<div>`s, which fit in a 500,000-character note, would take minutes.
/// Browsers cap depth for the same reason; no note Zotero's editor writes comes near this.
pub const MAX_PARSE_DEPTH: usize = 1_000;

/// What a note too deeply nested to convert is shown as.
pub const TOO_DEEP: &str =
    "[This note nests its HTML too deeply to be converted safely; open it in Zotero.]";

/// A note's HTML as Markdown: no HTML, no script or style, no event handler, and links only
/// to `http`, `https`, `mailto` and `zotero` URLs, whatever the HTML holds.
pub fn note_to_markdown(html: &str) -> String {
    if nesting_depth(html) > MAX_PARSE_DEPTH {
        return TOO_DEEP.to_string();
    }
    let converter = converter();
    let Some(tree) = clean_tree(&converter, html) else {
        return String::new();
    };
    // A `#` of the note's text could open a heading wherever the converter puts it at the
    // start of a line (`## ` before an image, after a line break): only the HTML's own
    // headings may. Each text `#` goes through the converter as a stand-in and comes back
    // escaped, or plain where Markdown shows text as written (code).
    let Some(hash) = stand_in(html) else {
        return neutralize(converter.tree_to_markdown(&tree));
    };
    replace_in_text(&tree, '#', hash);
    let markdown = converter.tree_to_markdown(&tree);
    neutralize(restore_hashes(&markdown, hash))
}

/// A private-use character the note does not hold, found in one pass over it: the stand-in
/// for its text's `#`. `None` only for a note holding every one of them (then its `#` are
/// left to [`neutralize`]).
fn stand_in(html: &str) -> Option<char> {
    let private = |c: char| ('\u{E000}'..='\u{F8FF}').contains(&c) || c >= '\u{F0000}';
    let used: std::collections::HashSet<char> = html.chars().filter(|c| private(*c)).collect();
    ('\u{E000}'..='\u{F8FF}')
        .chain('\u{F0000}'..='\u{FFFFD}')
        .find(|c| !used.contains(c))
}

/// Every `from` in the tree's text nodes replaced by `to`.
fn replace_in_text(root: &Rc<Node>, from: char, to: char) {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            let text = contents.borrow().to_string();
            if text.contains(from) {
                *contents.borrow_mut() = StrTendril::from(text.replace(from, &to.to_string()));
            }
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
}

/// The stand-ins of the text's `#` written back: as `#` inside code (spans and blocks show
/// their text as written, a backslash too), as `\#` everywhere else, where it can then start
/// no heading.
fn restore_hashes(markdown: &str, hash: char) -> String {
    if !markdown.contains(hash) {
        return markdown.to_string();
    }
    let mut code: Vec<std::ops::Range<usize>> = Vec::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut in_block = false;
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_block = true,
            Event::End(TagEnd::CodeBlock) => in_block = false,
            Event::Code(_) => code.push(range),
            Event::Text(_) if in_block => code.push(range),
            _ => {}
        }
    }
    let mut out = String::with_capacity(markdown.len() + 8);
    for (i, c) in markdown.char_indices() {
        if c == hash {
            if code.iter().any(|r| r.contains(&i)) {
                out.push('#');
            } else {
                out.push_str("\\#");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// How many times [`neutralize`] reads the Markdown again before it gives up on its structure
/// and escapes every `<`, `[` and `!`.
const ESCAPE_ROUNDS: usize = 4;

/// The last layer: the Markdown read as CommonMark (with and without GFM tables) as a
/// renderer would, and whatever it finds that must not be there escaped, until no reading
/// finds any: raw HTML (each `<` in it), images, and links to other schemes than
/// [`LINK_SCHEMES`]. The layers before should leave none; this one does not depend on how
/// htmd composes its blocks.
fn neutralize(mut markdown: String) -> String {
    for _ in 0..ESCAPE_ROUNDS {
        let mut at: Vec<usize> = Vec::new();
        for options in [
            Options::empty(),
            Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
        ] {
            // An ATX heading without content (`##` alone on a line): the HTML's empty
            // headings write nothing, so it came from text; its first `#` is escaped.
            let mut empty_heading: Option<usize> = None;
            for (event, range) in Parser::new_ext(&markdown, options).into_offset_iter() {
                let raw = markdown.get(range.clone()).unwrap_or_default();
                match event {
                    Event::Start(Tag::Heading { .. }) if raw.trim_start().starts_with('#') => {
                        empty_heading = Some(range.start + raw.len() - raw.trim_start().len());
                    }
                    // htmd writes the HTML's headings as `#`; a setext heading (a line of `-`
                    // or `=` under text, as `a<br>---` gives) came from text: its underline's
                    // first character is escaped.
                    Event::Start(Tag::Heading { .. }) => {
                        let line = raw.trim_end().rfind('\n').map_or(0, |i| i + 1);
                        let under = raw.get(line..).unwrap_or_default();
                        at.push(range.start + line + under.len() - under.trim_start().len());
                    }
                    Event::End(TagEnd::Heading(_)) => at.extend(empty_heading.take()),
                    Event::Html(_) | Event::InlineHtml(_) => {
                        at.extend(raw.match_indices('<').map(|(i, _)| range.start + i));
                    }
                    Event::Start(Tag::Image { .. }) => at.push(range.start),
                    Event::Start(Tag::Link { dest_url, .. }) if !allowed_link(&dest_url) => {
                        at.push(range.start)
                    }
                    // htmd writes the lists of the HTML as `1.` and escapes a `1.` in text, but
                    // not a `1)`: such an item came from text (`2) ## x` would put a heading,
                    // or any block, where the text was), so its `)` is escaped.
                    Event::Start(Tag::Item) => {
                        let digits = raw.bytes().take_while(u8::is_ascii_digit).count();
                        if digits > 0 && raw.as_bytes().get(digits) == Some(&b')') {
                            at.push(range.start + digits);
                        }
                    }
                    Event::Start(_) | Event::End(_) => {}
                    _ => empty_heading = None,
                }
            }
        }
        // Only before a character a backslash escapes; anything else is left to the end.
        at.retain(|i| {
            matches!(
                markdown.as_bytes().get(*i),
                Some(b'<' | b'[' | b'!' | b')' | b'#' | b'-' | b'=')
            )
        });
        if at.is_empty() {
            return markdown;
        }
        at.sort_unstable();
        at.dedup();
        for i in at.into_iter().rev() {
            markdown.insert(i, '\\');
        }
    }
    markdown
        .replace('<', "&lt;")
        .replace('[', "\\[")
        .replace('!', "\\!")
}

/// A piece of Markdown [`note_to_markdown`] made, cut at any character (a page of a long
/// note), as safe as the whole: a cut can leave a code span without its closing backtick, and
/// the `<script>` it held is then HTML again, or start a piece inside one.
pub fn safe_piece(piece: &str) -> String {
    neutralize(piece.to_string())
}

/// `md` with a fenced code block it ends in closed, when a cut left one open at its top
/// level: in a document that goes on after it (`notes.md`, the next note), the rest would
/// otherwise be shown as code. A fence inside a list or quote closes with its container.
pub fn close_open_fence(md: &str) -> String {
    let mut depth = 0usize;
    let mut open = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(md, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_)))
                if depth == 0 && range.end >= md.len() =>
            {
                let raw = md.get(range).unwrap_or_default();
                let first = raw.lines().next().unwrap_or_default().trim_start();
                let c = first.chars().next().unwrap_or('`');
                let fence: String = first.chars().take_while(|x| *x == c).collect();
                let last = raw.lines().last().unwrap_or_default().trim();
                let closed = raw.lines().count() > 1
                    && last.len() >= fence.len()
                    && last.chars().all(|x| x == c);
                if !closed {
                    open = Some(fence);
                }
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    match open {
        Some(fence) => format!("{md}\n{fence}"),
        None => md.to_string(),
    }
}

/// Citation or bibliography Markdown converted from the HTML Zotero renders: links only to
/// [`LINK_SCHEMES`], no raw HTML and no image, like a note's.
pub fn safe_converted(markdown: String) -> String {
    neutralize(markdown)
}

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

fn allowed_link(dest: &str) -> bool {
    dest.split_once(':')
        .is_some_and(|(scheme, _)| LINK_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
}

/// A note's title as Zotero shows it in the item tree: its first line of text, at most
/// `max_chars` characters. Only the start of the note is read.
pub fn note_title(html: &str, max_chars: usize) -> String {
    // Enough HTML for a first line; html5ever copes with the cut.
    let head = cut_chars(html, 4_000).0;
    if nesting_depth(head) > MAX_PARSE_DEPTH {
        return String::new();
    }
    let Some(tree) = clean_tree(&converter(), head) else {
        return String::new();
    };
    let text = text_lines(&tree);
    let line = text.lines().map(one_line).find(|l| !l.is_empty());
    cut_chars(&line.unwrap_or_default(), max_chars)
        .0
        .to_string()
}

/// How deep `html` nests its elements, about: html5ever's tokenizer alone (linear time) counts
/// open elements, leaving out void elements and those whose end tag may be left out (`<p>`,
/// `<li>`, …), which the tree builder closes implicitly.
pub fn nesting_depth(html: &str) -> usize {
    struct Depth {
        now: Cell<usize>,
        max: Cell<usize>,
    }
    impl TokenSink for Depth {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let Token::TagToken(tag) = token else {
                return TokenSinkResult::Continue;
            };
            let name: &str = &tag.name;
            let counted = !tag.self_closing
                && !matches!(
                    name,
                    "area"
                        | "base"
                        | "br"
                        | "col"
                        | "embed"
                        | "hr"
                        | "img"
                        | "input"
                        | "link"
                        | "meta"
                        | "source"
                        | "track"
                        | "wbr"
                        | "p"
                        | "li"
                        | "dt"
                        | "dd"
                        | "tr"
                        | "td"
                        | "th"
                        | "option"
                        | "optgroup"
                        | "rb"
                        | "rt"
                        | "rp"
                        | "thead"
                        | "tbody"
                        | "tfoot"
                        | "colgroup"
                        | "caption"
                );
            match tag.kind {
                TagKind::StartTag if counted => {
                    let now = self.now.get().saturating_add(1);
                    self.now.set(now);
                    self.max.set(self.max.get().max(now));
                }
                TagKind::EndTag if counted => self.now.set(self.now.get().saturating_sub(1)),
                _ => {}
            }
            // Text elements hold text, not markup, as the tree builder tells its tokenizer.
            match (tag.kind, name) {
                (TagKind::StartTag, "script") => TokenSinkResult::RawData(RawKind::ScriptData),
                (TagKind::StartTag, "style" | "xmp" | "iframe" | "noembed" | "noframes") => {
                    TokenSinkResult::RawData(RawKind::Rawtext)
                }
                (TagKind::StartTag, "title" | "textarea") => {
                    TokenSinkResult::RawData(RawKind::Rcdata)
                }
                (TagKind::StartTag, "plaintext") => TokenSinkResult::Plaintext,
                _ => TokenSinkResult::Continue,
            }
        }
    }
    let tokenizer = Tokenizer::new(
        Depth {
            now: Cell::new(0),
            max: Cell::new(0),
        },
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(html));
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.max.get()
}

/// `text` cut to at most `max` characters (never inside one), and whether it was cut.
pub fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text.get(..at).unwrap_or(text), true),
        None => (text, false),
    }
}

/// Elements after which a reader sees a new line.
fn breaks_line(tag: &str) -> bool {
    matches!(
        tag,
        "p" | "div"
            | "br"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "li"
            | "ul"
            | "ol"
            | "tr"
            | "table"
            | "blockquote"
            | "pre"
            | "hr"
    )
}

/// The text of a tree as a reader sees it, a line break at each block, walked without
/// recursion.
fn text_lines(root: &Rc<Node>) -> String {
    enum Step {
        Visit(Rc<Node>),
        Break,
    }
    let mut out = String::new();
    let mut stack = vec![Step::Visit(root.clone())];
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Break => {
                out.push('\n');
                continue;
            }
            Step::Visit(n) => n,
        };
        match &node.data {
            NodeData::Text { contents } => out.push_str(&contents.borrow()),
            // What a reader is never shown is not text either.
            NodeData::Element { name, .. } if DROPPED_WITH_CONTENT.contains(&&*name.local) => {}
            NodeData::Element { name, .. } => {
                if breaks_line(&name.local) {
                    out.push('\n');
                    stack.push(Step::Break);
                }
                stack.extend(
                    node.children
                        .borrow()
                        .iter()
                        .rev()
                        .cloned()
                        .map(Step::Visit),
                );
            }
            _ => stack.extend(
                node.children
                    .borrow()
                    .iter()
                    .rev()
                    .cloned()
                    .map(Step::Visit),
            ),
        }
    }
    out
}

/// Replaces what an element at [`MAX_DEPTH`] holds by its text, so nothing nests deeper.
fn flatten_deep(root: &Rc<Node>) {
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= MAX_DEPTH {
            let text = text_lines(&node);
            let leaf = Node::new(NodeData::Text {
                contents: RefCell::new(StrTendril::from(text)),
            });
            leaf.parent.set(Some(Rc::downgrade(&node)));
            *node.children.borrow_mut() = vec![leaf];
            continue;
        }
        stack.extend(
            node.children
                .borrow()
                .iter()
                .map(|c| (c.clone(), depth + 1)),
        );
    }
}

/// Whether every element around `node` is a container of blocks, where a code fence can open.
fn in_block_context(node: &Rc<Node>) -> bool {
    let mut current = parent(node);
    while let Some(p) = current {
        if let Some(t) = tag(&p) {
            if !matches!(
                t.as_str(),
                "html" | "body" | "div" | "blockquote" | "li" | "ul" | "ol"
            ) {
                return false;
            }
        }
        current = parent(&p);
    }
    true
}

fn parent(node: &Rc<Node>) -> Option<Rc<Node>> {
    let weak = node.parent.take()?;
    let p = weak.upgrade();
    node.parent.set(Some(weak));
    p
}

/// An inline `<code>` as a code span on one line. htmd keeps the line breaks of blocks inside
/// it, and a code span cannot cross a blank line: what followed would be read as Markdown,
/// `<script>` as HTML again.
fn inline_code(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let in_fenced_pre = parent(element.node)
        .is_some_and(|p| tag(&p).as_deref() == Some("pre") && in_block_context(&p));
    if in_fenced_pre {
        return handlers.fallback(element);
    }
    Some(code_span(&text_lines(element.node)).into())
}

/// A `<pre>` as a fenced code block. htmd fences only `<pre><code>`; a bare `<pre>`'s text
/// would come out unescaped as a paragraph, where `<script>` would be HTML again.
fn preformatted(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    if !in_block_context(element.node) {
        // A fence cannot open inside emphasis, a heading or a table cell: one line of code.
        return inline_code(handlers, element);
    }
    let children = element.node.children.borrow();
    let only_code =
        children.len() == 1 && children.first().and_then(|c| tag(c)).as_deref() == Some("code");
    drop(children);
    if only_code {
        return handlers.fallback(element);
    }
    let content = handlers.walk_children(element.node).content;
    let content = content.trim_matches('\n');
    let longest_run = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    Some(format!("\n\n{fence}\n{content}\n{fence}\n\n").into())
}

fn attr<'a>(element: &'a Element, name: &str) -> Option<&'a str> {
    element
        .attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn has_class(element: &Element, class: &str) -> bool {
    attr(element, "class").is_some_and(|c| c.split_whitespace().any(|x| x == class))
}

/// A link destination if its scheme is allowed, percent-encoded so that nothing in it can
/// end the `(…)` or start HTML.
fn safe_destination(href: &str) -> Option<String> {
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

/// Link text on one line (a line break would end the link).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn link(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let text = one_line(&handlers.walk_children(element.node).content);
    let dest = attr(&element, "href").and_then(safe_destination);
    Some(match dest {
        Some(dest) if !text.is_empty() => format!("[{text}]({dest})").into(),
        Some(dest) => format!("[{dest}]({dest})").into(),
        None => text.into(),
    })
}

/// An image is named, never linked: fetching it could tell a third party the note was read.
fn image(_: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let alt = attr(&element, "alt").map(one_line).unwrap_or_default();
    let alt = alt.replace(['[', ']', '\\', '<', '>', '*', '_', '`'], " ");
    let alt = one_line(&alt);
    // Brackets escaped: "[…]" before a "(" would be read as a link.
    Some(if alt.is_empty() {
        "\\[image\\]".into()
    } else {
        format!("\\[image: {alt}\\]").into()
    })
}

fn span(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let inner = handlers.walk_children(element.node).content;
    if has_class(&element, "citation") {
        let text = one_line(&inner);
        let cited = attr(&element, "data-citation").and_then(cited_item_url);
        return Some(match cited {
            Some(url) if !text.is_empty() => format!("[{text}]({url})").into(),
            _ => text.into(),
        });
    }
    Some(inner.into())
}

/// The `zotero://select/…` URL of the first item a citation cites: `data-citation` is
/// URI-encoded JSON `{"citationItems": [{"uris": ["http://zotero.org/users/ID/items/KEY"]}]}`
/// (zotero/zotero `EditorInstance`).
fn cited_item_url(data: &str) -> Option<String> {
    let json = percent_decode_str(data).decode_utf8().ok()?;
    let v: Value = serde_json::from_str(&json).ok()?;
    let uri = v
        .get("citationItems")?
        .as_array()?
        .first()?
        .get("uris")?
        .as_array()?
        .first()?
        .as_str()?;
    let path = uri
        .strip_prefix("http://zotero.org/")
        .or_else(|| uri.strip_prefix("https://zotero.org/"))?;
    let parts: Vec<&str> = path.split('/').collect();
    let key = zotero_api::ObjectKey::parse(parts.last()?).ok()?;
    match parts.as_slice() {
        ["groups", id, "items", _] if id.bytes().all(|b| b.is_ascii_digit()) => {
            Some(format!("zotero://select/groups/{id}/items/{key}"))
        }
        ["users", _, "items", _] | ["users", "local", _, "items", _] => {
            Some(format!("zotero://select/library/items/{key}"))
        }
        _ => None,
    }
}

/// A table whose header row htmd cannot find (no `<th>`, as the note editor often writes
/// them): the first row becomes the header, so it is still a Markdown table.
fn table(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let rows = table_rows(element.node);
    let has_th = rows.iter().flatten().any(|(th, _)| *th);
    if has_th || rows.is_empty() {
        return handlers.fallback(element);
    }
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return handlers.fallback(element);
    }
    let cell_text = |n: &Rc<Node>| {
        one_line(&handlers.walk_children(n).content)
            .replace('|', "\\|")
            .to_string()
    };
    let mut out = String::from("\n\n");
    for (i, row) in rows.iter().enumerate() {
        let mut cells: Vec<String> = row.iter().map(|(_, n)| cell_text(n)).collect();
        cells.resize(width, String::new());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("|{}\n", " --- |".repeat(width)));
        }
    }
    out.push('\n');
    Some(out.into())
}

/// The rows of a table (through `thead`/`tbody`/`tfoot`), each a list of (is `th`, cell).
fn table_rows(table: &Rc<Node>) -> Vec<Vec<(bool, Rc<Node>)>> {
    let mut rows = Vec::new();
    let mut stack: Vec<Rc<Node>> = table.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match tag(&n).as_deref() {
            Some("thead" | "tbody" | "tfoot") => {
                stack.extend(n.children.borrow().iter().rev().cloned());
            }
            Some("tr") => {
                let cells = n
                    .children
                    .borrow()
                    .iter()
                    .filter_map(|c| match tag(c).as_deref() {
                        Some("th") => Some((true, c.clone())),
                        Some("td") => Some((false, c.clone())),
                        _ => None,
                    })
                    .collect();
                rows.push(cells);
            }
            _ => {}
        }
    }
    rows
}

fn tag(n: &Node) -> Option<String> {
    match &n.data {
        NodeData::Element { name, .. } => Some(name.local.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_numbered_marker_in_text_stays_text() {
        for html in [
            "<p>2) ## ![x](javascript:alert(1))</p>",
            "<p>a</p><p>10) - b</p>",
        ] {
            let md = note_to_markdown(html);
            let blocks: Vec<_> = Parser::new(&md)
                .filter(|e| {
                    matches!(
                        e,
                        Event::Start(Tag::List(_) | Tag::Item | Tag::Heading { .. })
                    )
                })
                .collect();
            assert!(blocks.is_empty(), "{html} gave {md:?}: {blocks:?}");
        }
        // A list of the HTML stays a list.
        let md = note_to_markdown("<ol><li>one</li><li>two</li></ol>");
        assert_eq!(
            Parser::new(&md)
                .filter(|e| matches!(e, Event::Start(Tag::Item)))
                .count(),
            2,
            "{md:?}"
        );
    }

    use super::*;

    #[test]
    fn headings_only_from_the_html_headings() {
        // `##` alone on a line is an empty heading in CommonMark, and a line of `-` or `=`
        // under text a setext heading; in a note they can only come from text (htmd writes
        // `<h2>` as `## `, an empty one as nothing), and a reader of `notes.md` would take
        // them for the next note's title.
        for html in [
            "<p>##</p>",
            "<p>## </p>",
            "<pre>x</pre><p>\n## </p>",
            "<p>a<br>#</p>",
            "<p>a<br>---</p>",
            "<p>a<br>-</p>",
            "<p>a<br> ===</p>",
            "<p>a<br>b<br>  ==</p>",
            "<p>\n## <img src=x></p>",
            "<p>## <b>bold</b></p>",
            "<ul><li>## x</li></ul>",
        ] {
            let md = note_to_markdown(html);
            let headings = Parser::new(&md)
                .filter(|e| matches!(e, Event::Start(Tag::Heading { .. })))
                .count();
            assert_eq!(headings, 0, "{html} gave {md:?}");
        }
        let md = note_to_markdown("<h2>Title</h2><p>x</p>");
        assert!(md.starts_with("## Title"), "{md:?}");
        // A note holding the first private-use characters gets another stand-in, and those
        // characters stay as they were.
        let md = note_to_markdown("<p>\u{E000}\u{E001} ## x</p>");
        assert!(md.contains("\u{E000}\u{E001}"), "{md:?}");
        assert!(md.contains("\\#\\# x"), "{md:?}");
        // A `#` of the text reads as written, in text and in code.
        let md = note_to_markdown(
            "<p>issue #12</p><pre>let x = 1; # comment</pre><p><code>a#b</code></p>",
        );
        assert!(md.contains("issue \\#12"), "{md:?}");
        assert!(md.contains("let x = 1; # comment"), "{md:?}");
        assert!(md.contains("`a#b`"), "{md:?}");
    }

    #[test]
    fn note_editor_html_becomes_markdown() {
        let md = note_to_markdown(
            "<div data-schema-version=\"9\"><h1>Title</h1><p>Some <strong>bold</strong> and \
             <em>italic</em> text with <a href=\"https://example.org/a b\">a link</a>.</p>\
             <ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>\
             <ol><li>first</li><li>second</li></ol>\
             <blockquote><p>quoted</p></blockquote><pre>code()</pre></div>",
        );
        assert!(md.starts_with("# Title"), "{md}");
        assert!(md.contains("**bold**") && md.contains("*italic*"), "{md}");
        assert!(md.contains("[a link](https://example.org/a%20b)"), "{md}");
        assert!(md.contains("*   one") && md.contains("nested"), "{md}");
        assert!(md.contains("1.  first"), "{md}");
        assert!(md.contains("> quoted"), "{md}");
        assert!(md.contains("```\ncode()\n```"), "{md}");
    }

    #[test]
    fn tables_with_and_without_header_cells() {
        let with = note_to_markdown(
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>",
        );
        assert!(
            with.contains("| a | b |") && with.contains("| 1 | 2 |"),
            "{with}"
        );
        let without = note_to_markdown(
            "<table><tbody><tr><td>x</td><td>y|z</td></tr><tr><td>3</td></tr></tbody></table>",
        );
        assert!(without.contains("| x | y\\|z |"), "{without}");
        assert!(without.contains("| --- | --- |"), "{without}");
        assert!(without.contains("| 3 |  |"), "{without}");
    }

    #[test]
    fn citations_link_to_the_cited_item_and_highlights_keep_their_quote() {
        let data = "%7B%22citationItems%22%3A%5B%7B%22uris%22%3A%5B%22http%3A%2F%2Fzotero.org%2Fgroups%2F42%2Fitems%2FABCD2345%22%5D%7D%5D%7D";
        let md = note_to_markdown(&format!(
            "<p><span class=\"highlight\" data-annotation=\"x\">“quoted”</span> \
             <span class=\"citation\" data-citation=\"{data}\">(<span class=\"citation-item\">\
             Doe, 2020, p. 3</span>)</span></p>"
        ));
        assert_eq!(
            md,
            "“quoted” [(Doe, 2020, p. 3)](zotero://select/groups/42/items/ABCD2345)"
        );
        // An unreadable citation keeps its text.
        let md = note_to_markdown(
            "<span class=\"citation\" data-citation=\"%7Bbad\">(Doe, 2020)</span>",
        );
        assert_eq!(md, "(Doe, 2020)");
    }

    #[test]
    fn active_content_is_removed() {
        let md = note_to_markdown(
            "<p onclick=\"steal()\">hi</p><script>alert(1)</script><style>p{}</style>\
             <a href=\"javascript:alert(2)\">js</a> <a href=\"jav&#x61;script&colon;x\">enc</a>\
             <img src=\"https://t.example/p.gif\" alt=\"pixel\"><iframe src=\"https://x\">f</iframe>\
             <svg onload=\"alert(3)\"><script>alert(4)</script></svg>\
             <p>&lt;script&gt;alert(5)&lt;/script&gt;</p><p>&lt;![CDATA[x]]&gt;</p>",
        );
        for bad in [
            "steal",
            "alert(1)",
            "p{}",
            "javascript",
            "t.example",
            "alert(3)",
            "alert(4)",
        ] {
            assert!(!md.contains(bad), "{bad} in {md}");
        }
        assert!(
            md.contains("hi") && md.contains("js") && md.contains("enc"),
            "{md}"
        );
        assert!(md.contains("\\[image: pixel\\]"), "{md}");
        assert!(md.contains("\\<script>alert(5)"), "{md}");
        assert!(md.contains("<!\\[CDATA\\[x\\]\\]>"), "{md}");
        // Preformatted text is fenced, so markup in it stays text.
        let md = note_to_markdown("<pre>&lt;script&gt;x()&lt;/script&gt;\n```</pre>");
        assert_eq!(md, "````\n<script>x()</script>\n```\n````");
    }

    #[test]
    fn titles_are_the_first_line_of_text() {
        assert_eq!(
            note_title("<div><h1>Reading <em>notes</em></h1><p>x</p></div>", 79),
            "Reading notes"
        );
        assert_eq!(note_title("<p>* not a list</p>", 79), "* not a list");
        assert_eq!(note_title("<p></p>", 79), "");
        assert_eq!(note_title("<p>ééééé</p>", 3), "ééé");
    }

    #[test]
    fn nesting_too_deep_to_parse_is_refused_quickly() {
        let depth = 100_000;
        let html = format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth));
        assert_eq!(nesting_depth(&html), depth);
        assert_eq!(note_to_markdown(&html), TOO_DEEP);
        assert_eq!(note_title(&html, 79), "");
        // Elements closed implicitly, void ones and script text do not count.
        let flat = "<p>a<p>b<ul><li>x<li>y</ul><br><img src=x><script>a<b<c</script>";
        assert_eq!(nesting_depth(flat), 1);
    }

    #[test]
    fn deep_nesting_becomes_text() {
        let depth = MAX_PARSE_DEPTH / 2;
        let html = format!(
            "{}deep{}",
            "<div><b>".repeat(depth),
            "</b></div>".repeat(depth)
        );
        let md = note_to_markdown(&html);
        // The first levels keep their emphasis; below MAX_DEPTH it is plain text.
        assert_eq!(md.trim_matches(['*', ' ']), "deep", "{md}");
        assert!(md.matches('*').count() <= 2 * MAX_DEPTH, "{md}");
        let html = format!("{}deep{}", "<div><i>".repeat(100), "</i></div>".repeat(100));
        assert_eq!(note_title(&html, 79), "deep");
    }

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

    #[test]
    fn a_piece_cut_from_a_code_span_is_not_html() {
        let md = note_to_markdown("<p><code>&lt;img src=x onerror=alert(1)&gt;</code> x</p>");
        assert_eq!(md, "`<img src=x onerror=alert(1)>` x");
        let (head, _) = cut_chars(&md, 29);
        assert_eq!(safe_piece(head), "`\\<img src=x onerror=alert(1)>");
        assert_eq!(safe_piece(&md[1..]), "\\<img src=x onerror=alert(1)>` x");
        assert_eq!(safe_piece(&md), md);
    }

    #[test]
    fn a_fence_left_open_by_a_cut_is_closed() {
        assert_eq!(close_open_fence("a\n\n````\ncode"), "a\n\n````\ncode\n````");
        assert_eq!(close_open_fence("~~~ rust\n"), "~~~ rust\n\n~~~");
        for whole in [
            "a\n\n```\ncode\n```",
            "`x` and ```y```",
            "> ```\n> code",
            "- ```\n  x",
        ] {
            assert_eq!(close_open_fence(whole), whole);
        }
    }

    #[test]
    fn cuts_never_split_a_character() {
        assert_eq!(cut_chars("aé😀b", 3), ("aé😀", true));
        assert_eq!(cut_chars("aé", 5), ("aé", false));
    }
}
