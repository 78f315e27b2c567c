//! The note as html5ever's tree: how deep it nests (counted before it is parsed), what is
//! dropped with its content, its text as a reader sees it, and flattening what nests too deep.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use markup5ever_rcdom::{Node, NodeData};
use tendril::StrTendril;

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

/// How deep elements may nest before what is deeper becomes plain text: the converter
/// recurses once per level, and a note of 500,000 characters could nest 100,000 deep.
/// Real notes nest a few levels (lists in lists, a table in a div).
pub const MAX_DEPTH: usize = 48;

/// How deep a note may nest its elements to be converted at all. HTML parsing costs time
/// proportional to depth × elements (each start tag looks down the stack of open elements):
/// 100,000 nested `<div>`s, which fit in a 500,000-character note, would take minutes.
/// Browsers cap depth for the same reason; no note Zotero's editor writes comes near this.
pub const MAX_PARSE_DEPTH: usize = 1_000;

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
pub(super) fn text_lines(root: &Rc<Node>) -> String {
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
            NodeData::Text { contents } => {
                out.push_str(&contents.borrow());
                continue;
            }
            // What a reader is never shown is not text either.
            NodeData::Element { name, .. } if DROPPED_WITH_CONTENT.contains(&&*name.local) => {
                continue;
            }
            NodeData::Element { name, .. } if breaks_line(&name.local) => {
                out.push('\n');
                stack.push(Step::Break);
            }
            _ => {}
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
    out
}

/// Replaces what an element at [`MAX_DEPTH`] holds by its text, so nothing nests deeper.
pub(super) fn flatten_deep(root: &Rc<Node>) {
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

/// The parent of `node`, if it has one.
pub(super) fn parent(node: &Rc<Node>) -> Option<Rc<Node>> {
    let weak = node.parent.take()?;
    let p = weak.upgrade();
    node.parent.set(Some(weak));
    p
}

/// The local name of an element; `None` for any other node.
pub(crate) fn local_name(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}
