//! HTML parsed as a browser parses `innerHTML`, walked without recursion against the
//! allow-list, and serialized inside the wrapper the note editor stores notes in.

use std::cell::RefCell;
use std::rc::Rc;

use html5ever::serialize::{serialize, SerializeOpts, TraversalScope};
use html5ever::tendril::TendrilSink;
use html5ever::{ns, parse_fragment, Attribute, ParseOpts};
use markup5ever_rcdom::{Node, NodeData, RcDom, SerializableHandle};
use tendril::StrTendril;

use super::allow::{fate, Fate, BLOCK_CONTAINERS};
use super::dom::{attribute, element, html_name, reported_name};
use super::report::{RemovedKind, Report, SanitizedNote};
use crate::notes::markdown::local_name;

/// The schema version written on a new note's wrapper (see the module documentation).
pub const SCHEMA_VERSION: &str = "9";

/// The sanitized tree's HTML, wrapped as the note editor stores notes.
pub(super) fn sanitize(html: &str) -> SanitizedNote {
    let dom = parse_fragment(
        RcDom::default(),
        ParseOpts::default(),
        html_name("body"),
        Vec::new(),
        false,
    )
    .one(html);
    let mut report = Report::default();
    // parse_fragment puts the content in an <html> element under the document.
    let root = dom
        .document
        .children
        .borrow()
        .iter()
        .find(|c| local_name(c) == Some("html"))
        .cloned()
        .unwrap_or_else(|| dom.document.clone());
    let (content, mut wrapper_attrs) = unwrap_wrapper(&root);
    if !wrapper_attrs
        .iter()
        .any(|a| &*a.name.local == "data-schema-version")
    {
        wrapper_attrs.push(attribute("data-schema-version", SCHEMA_VERSION));
    }
    let wrapper = element("div", wrapper_attrs);
    *wrapper.children.borrow_mut() = content;
    clean(&wrapper, &mut report);
    let mut out = Vec::new();
    let opts = SerializeOpts {
        traversal_scope: TraversalScope::IncludeNode,
        ..SerializeOpts::default()
    };
    // Writing to a Vec does not fail.
    let _ = serialize(&mut out, &SerializableHandle::from(wrapper), opts);
    SanitizedNote {
        html: String::from_utf8_lossy(&out).into_owned(),
        removed: report.into_vec(),
    }
}

/// The content of the note, and the attributes of the wrapper `<div data-schema-version>` it
/// already had (its version if a number, its `data-citation-items`).
fn unwrap_wrapper(root: &Rc<Node>) -> (Vec<Rc<Node>>, Vec<Attribute>) {
    let children: Vec<Rc<Node>> = root.children.borrow().clone();
    let mut elements = children.iter().filter(|c| match &c.data {
        NodeData::Text { contents } => !contents.borrow().trim().is_empty(),
        _ => true,
    });
    if let (Some(only), None) = (elements.next(), elements.next()) {
        if let NodeData::Element { name, attrs, .. } = &only.data {
            let attrs = attrs.borrow();
            let version = attrs
                .iter()
                .find(|a| &*a.name.local == "data-schema-version")
                .map(|a| a.value.to_string());
            let is_wrapper = name.ns == ns!(html) && &*name.local == "div" && version.is_some();
            if is_wrapper {
                let mut kept = Vec::new();
                if let Some(items) = attrs
                    .iter()
                    .find(|a| &*a.name.local == "data-citation-items")
                {
                    kept.push(attribute("data-citation-items", &items.value));
                }
                if let Some(v) = version
                    .filter(|v| (1..=3).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()))
                {
                    kept.push(attribute("data-schema-version", &v));
                }
                return (only.children.borrow().clone(), kept);
            }
        }
    }
    (children, Vec::new())
}

/// Walks the tree under `root` without recursion, leaving only what the allow-list keeps.
fn clean(root: &Rc<Node>, report: &mut Report) {
    // (element whose children are cleaned, whether blocks may open in it)
    let mut work = vec![(root.clone(), true)];
    while let Some((parent, block_context)) = work.pop() {
        let mut queue: Vec<Rc<Node>> = parent.children.take();
        queue.reverse();
        let mut kept: Vec<Rc<Node>> = Vec::new();
        while let Some(child) = queue.pop() {
            let fate = match &child.data {
                NodeData::Text { .. } => {
                    kept.push(child);
                    continue;
                }
                NodeData::Comment { .. } => {
                    report.add(RemovedKind::Comment, "comment");
                    continue;
                }
                NodeData::Element { .. } => fate(&child, block_context, report),
                _ => continue,
            };
            match fate {
                Fate::Keep(attrs) => {
                    if let NodeData::Element { attrs: a, .. } = &child.data {
                        *a.borrow_mut() = attrs;
                    }
                    let name = local_name(&child).unwrap_or_default();
                    let blocks = BLOCK_CONTAINERS.contains(&name);
                    work.push((child.clone(), blocks));
                    kept.push(child);
                }
                Fate::Drop => report.add(RemovedKind::Element, &reported_name(&child)),
                Fate::Unwrap => {
                    report.add(RemovedKind::Tag, &reported_name(&child));
                    let inner = child.children.take();
                    queue.extend(inner.into_iter().rev());
                }
                Fate::Paragraph => {
                    report.add(RemovedKind::Tag, &reported_name(&child));
                    let p = element("p", Vec::new());
                    *p.children.borrow_mut() = child.children.take();
                    work.push((p.clone(), false));
                    kept.push(p);
                }
                Fate::Text(text) => {
                    if !text.is_empty() {
                        kept.push(Node::new(NodeData::Text {
                            contents: RefCell::new(StrTendril::from(text)),
                        }));
                    }
                }
            }
        }
        for k in &kept {
            k.parent.set(Some(Rc::downgrade(&parent)));
        }
        if local_name(&parent) == Some("pre") {
            keep_leading_newline(kept.first());
        }
        *parent.children.borrow_mut() = kept;
    }
}

/// A parser drops the newline right after `<pre>`, so the HTML serialization algorithm
/// writes one more when a `<pre>`'s text starts with a newline; html5ever's serializer does
/// not. Without it a newline would be lost each time the note is read and written again.
fn keep_leading_newline(first: Option<&Rc<Node>>) {
    if let Some(NodeData::Text { contents }) = first.map(|n| &n.data) {
        let mut text = contents.borrow_mut();
        if text.starts_with('\n') {
            let mut doubled = StrTendril::from("\n");
            doubled.push_tendril(&text);
            *text = doubled;
        }
    }
}
