//! The allow-list: the elements and attributes of the note editor's schema, and what becomes
//! of every other element (dropped with its content, unwrapped, made a paragraph, or its text).

use std::rc::Rc;

use html5ever::{ns, Attribute};
use markup5ever_rcdom::{Node, NodeData};

use super::dom::attribute;
use super::report::{RemovedKind, Report};
use crate::notes::markdown::{local_name, DROPPED_WITH_CONTENT, LINK_SCHEMES};

/// Elements kept: the note editor's schema.
const KEPT: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "blockquote",
    "pre",
    "code",
    "strong",
    "b",
    "em",
    "i",
    "u",
    "s",
    "strike",
    "sub",
    "sup",
    "a",
    "br",
    "hr",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "span",
    "img",
];

/// Unknown elements that are blocks: unwrapped, they become a paragraph if they hold only
/// text, so their text does not run into the next block's.
const BLOCKISH: &[&str] = &[
    "div",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "figure",
    "figcaption",
    "address",
    "details",
    "summary",
    "center",
    "dl",
    "dt",
    "dd",
    "caption",
    "tfoot",
];

/// Kept elements that hold blocks: an unwrapped block inside them may become a paragraph.
pub(super) const BLOCK_CONTAINERS: &[&str] = &["blockquote", "li", "td", "th"];

/// Classes kept on a `span` (Zotero's citations, annotations and math) and on a `pre` (math).
const SPAN_CLASSES: &[&str] = &[
    "citation",
    "citation-item",
    "highlight",
    "underline",
    "math",
];

/// What becomes of an element.
pub(super) enum Fate {
    /// Kept, with these attributes.
    Keep(Vec<Attribute>),
    /// Removed with its content.
    Drop,
    /// Removed, its content kept in its place.
    Unwrap,
    /// Replaced by a paragraph holding its content.
    Paragraph,
    /// Replaced by this text (an image by its alt text).
    Text(String),
}

/// What becomes of `node`, its removed attributes reported; `block_context`: whether a
/// block may open where it stands.
pub(super) fn fate(node: &Rc<Node>, block_context: bool, report: &mut Report) -> Fate {
    let NodeData::Element { name, attrs, .. } = &node.data else {
        return Fate::Drop;
    };
    let local: &str = &name.local;
    if name.ns != ns!(html) || DROPPED_WITH_CONTENT.contains(&local) {
        return Fate::Drop;
    }
    if !KEPT.contains(&local) {
        for a in attrs.borrow().iter() {
            report.add(RemovedKind::Attribute, &attribute_name(a));
        }
        if block_context && BLOCKISH.contains(&local) && holds_only_inline(node) {
            return Fate::Paragraph;
        }
        return Fate::Unwrap;
    }
    let attrs = attrs.borrow();
    let mut kept = Vec::new();
    let mut class_kept = false;
    for a in attrs.iter() {
        let attr: &str = &a.name.local;
        let value: &str = &a.value;
        let keep = a.name.ns == ns!()
            && match (local, attr) {
                ("a", "href") => match refused_scheme(value) {
                    None => {
                        kept.push(attribute("href", value.trim()));
                        continue;
                    }
                    Some(scheme) => {
                        report.add(RemovedKind::UrlScheme, &scheme);
                        continue;
                    }
                },
                ("td" | "th", "colspan" | "rowspan") | ("img", "width" | "height") => {
                    is_number(value)
                }
                ("ol", "start") => is_number(value),
                ("img", "data-attachment-key") => zotero_api::ObjectKey::parse(value).is_ok(),
                ("img", "alt" | "data-annotation") => true,
                ("span", "data-citation" | "data-annotation") => true,
                ("span" | "pre", "class") => {
                    let classes: Vec<&str> = value
                        .split_ascii_whitespace()
                        .filter(|c| SPAN_CLASSES.contains(c))
                        .collect();
                    if !classes.is_empty() {
                        class_kept = true;
                        kept.push(attribute("class", &classes.join(" ")));
                        continue;
                    }
                    false
                }
                _ => false,
            };
        if keep {
            kept.push(a.clone());
        } else if local == "img" && attr == "src" {
            // An image's URL is never kept; its scheme tells what it was.
            report.add(RemovedKind::Attribute, "src");
        } else {
            report.add(RemovedKind::Attribute, &attribute_name(a));
        }
    }
    match local {
        // The editor stores an image as the key of the attachment that holds it; any other
        // image would be fetched from where its src points, and is shown by its alt text.
        "img" if !kept.iter().any(|a| &*a.name.local == "data-attachment-key") => {
            report.add(RemovedKind::Tag, "img");
            let alt = attrs
                .iter()
                .find(|a| &*a.name.local == "alt")
                .map(|a| a.value.trim().to_string())
                .unwrap_or_default();
            Fate::Text(alt)
        }
        // A span is only kept as a citation, annotation or math.
        "span" if !class_kept => Fate::Unwrap,
        // A link without an allowed URL is its text.
        "a" if kept.is_empty() => Fate::Unwrap,
        _ => Fate::Keep(kept),
    }
}

/// Whether an element holds no block (so its content can be a paragraph).
fn holds_only_inline(node: &Rc<Node>) -> bool {
    let mut stack: Vec<Rc<Node>> = node.children.borrow().clone();
    while let Some(n) = stack.pop() {
        if let Some(name) = local_name(&n) {
            let inline = matches!(
                name,
                "a" | "span"
                    | "strong"
                    | "b"
                    | "em"
                    | "i"
                    | "u"
                    | "s"
                    | "strike"
                    | "sub"
                    | "sup"
                    | "code"
                    | "br"
                    | "img"
                    | "font"
                    | "small"
                    | "big"
                    | "mark"
                    | "abbr"
                    | "cite"
                    | "q"
                    | "kbd"
                    | "samp"
                    | "var"
                    | "del"
                    | "ins"
                    | "time"
                    | "label"
            ) || DROPPED_WITH_CONTENT.contains(&name);
            if !inline {
                return false;
            }
            if !DROPPED_WITH_CONTENT.contains(&name) {
                stack.extend(n.children.borrow().iter().cloned());
            }
        }
    }
    true
}

fn is_number(value: &str) -> bool {
    (1..=4).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit())
}

fn attribute_name(a: &Attribute) -> String {
    match a.name.prefix.as_ref() {
        Some(p) => format!("{p}:{}", a.name.local),
        None => a.name.local.to_string(),
    }
}

/// The scheme of a URL whose scheme is not allowed (`none` if it has none, `invalid` if
/// what stands before `:` is not a scheme); `None` for an allowed one.
fn refused_scheme(url: &str) -> Option<String> {
    let url = url.trim();
    let Some((scheme, _)) = url.split_once(':') else {
        return Some("none".to_string());
    };
    if LINK_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
        return None;
    }
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    Some(if valid {
        scheme.to_ascii_lowercase()
    } else if scheme.contains('/') {
        "none".to_string()
    } else {
        "invalid".to_string()
    })
}
