//! HTML (a web page snapshot, or an EPUB chapter): the text of the DOM as html5ever parses
//! it, scripts, styles and the head dropped, blocks on their own lines, whitespace folded as
//! a browser folds it (kept inside `<pre>`). The walk uses an explicit stack: no nesting
//! depth can exhaust ours.

use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};

use crate::budget::Budget;
use crate::document::{Page, PageStatus, TextError};
use crate::nfkc::nfkc;

/// Elements whose content is never text a reader sees.
const HIDDEN: &[&str] = &[
    "script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object",
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
    let source = crate::plain::decode(bytes);
    budget.check()?;
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(source);
    budget.check()?;
    let mut out = Out::default();
    // (node, leaving): a block is visited again when leaving it, to end its line.
    let mut stack: Vec<(Handle, bool)> = vec![(dom.document.clone(), false)];
    while let Some((node, leaving)) = stack.pop() {
        budget.tick()?;
        if leaving {
            if let NodeData::Element { name, .. } = &node.data {
                if &*name.local == "pre" {
                    out.pre = out.pre.saturating_sub(1);
                }
            }
            out.line();
            continue;
        }
        match &node.data {
            NodeData::Text { contents } => out.text(&contents.borrow()),
            NodeData::Element { name, .. } => {
                let tag = local(&name.local);
                if HIDDEN.contains(&tag) {
                    continue;
                }
                if BLOCKS.contains(&tag) {
                    out.line();
                    if tag == "pre" {
                        out.pre += 1;
                    }
                    stack.push((Rc::clone(&node), true));
                }
                push_children(&mut stack, &node);
            }
            NodeData::Document => push_children(&mut stack, &node),
            _ => {}
        }
    }
    Ok(nfkc(out.buf.trim_end()))
}

fn push_children(stack: &mut Vec<(Handle, bool)>, node: &Handle) {
    for child in node.children.borrow().iter().rev() {
        stack.push((Rc::clone(child), false));
    }
}

/// A tag's local name without a namespace prefix (`opf:item` → `item`).
pub(crate) fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
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

/// Attributes of every element named `tag` (any prefix), in document order: for the EPUB
/// package and container files, read through the HTML parser (attributes survive its
/// treatment of unknown elements, which is all these files need).
pub(crate) fn elements(
    bytes: &[u8],
    tags: &[&str],
    budget: &Budget,
) -> Result<Vec<Element>, TextError> {
    let source = crate::plain::decode(bytes);
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(source);
    let mut out = Vec::new();
    let mut stack: Vec<Handle> = vec![dom.document.clone()];
    while let Some(node) = stack.pop() {
        budget.tick()?;
        if let NodeData::Element { name, attrs, .. } = &node.data {
            let tag = local(&name.local);
            if tags.contains(&tag) {
                let attrs = attrs
                    .borrow()
                    .iter()
                    .map(|a| (local(&a.name.local).to_owned(), a.value.to_string()))
                    .collect();
                out.push((tag.to_owned(), attrs));
            }
        }
        for child in node.children.borrow().iter().rev() {
            stack.push(Rc::clone(child));
        }
    }
    Ok(out)
}
