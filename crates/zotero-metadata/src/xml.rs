//! A minimal XML reader for arXiv's Atom answers: elements, attributes, text, CDATA and
//! character references; comments, processing instructions and the DOCTYPE are skipped.
//! Namespaces are not resolved: elements and attributes are found by their local name
//! (`arxiv:doi` → `doi`), which is unambiguous in an Atom feed. No recursion, and the
//! nesting depth is bounded.

use crate::mapping_error::MappingError;
use crate::text::decode_entities;

/// Deeper documents are refused (Atom entries are 3 levels deep).
const MAX_DEPTH: usize = 64;

/// An element: its qualified name, attributes and children.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
}

/// A child: an element or a run of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    Element(Element),
    Text(String),
}

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

impl Element {
    /// The name without its prefix.
    pub fn local_name(&self) -> &str {
        local(&self.name)
    }

    /// Child elements with this local name.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.children.iter().filter_map(move |n| match n {
            Node::Element(e) if e.local_name() == name => Some(e),
            _ => None,
        })
    }

    /// The first child element with this local name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find_map(|n| match n {
            Node::Element(e) if e.local_name() == name => Some(e),
            _ => None,
        })
    }

    /// The text of the element and its descendants.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut stack: Vec<&Node> = self.children.iter().rev().collect();
        while let Some(n) = stack.pop() {
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => stack.extend(e.children.iter().rev()),
            }
        }
        out
    }

    /// The text of the first child with this local name.
    pub fn child_text(&self, name: &str) -> Option<String> {
        self.child(name).map(Element::text)
    }

    /// An attribute by local name.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| local(k) == name)
            .map(|(_, v)| v.as_str())
    }
}

fn err(msg: impl Into<String>) -> MappingError {
    MappingError::Xml(msg.into())
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, ':' | '-' | '_' | '.')
}

/// Parses a start tag's inside (`name a="1" b='2'`, without `<`, `>` and a trailing `/`).
fn parse_start_tag(inner: &str) -> Result<Element, MappingError> {
    let name_end = inner
        .char_indices()
        .find(|&(_, c)| !is_name_char(c))
        .map_or(inner.len(), |(i, _)| i);
    let name = inner.get(..name_end).unwrap_or("");
    if name.is_empty() {
        return Err(err("a tag without a name"));
    }
    let mut attrs = Vec::new();
    let mut rest = inner.get(name_end..).unwrap_or("").trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| err(format!("attribute without a value in <{name}>")))?;
        let key = rest.get(..eq).unwrap_or("").trim();
        if key.is_empty() || !key.chars().all(is_name_char) {
            return Err(err(format!("bad attribute name in <{name}>")));
        }
        let after = rest.get(eq + 1..).unwrap_or("").trim_start();
        let quote = after
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| err(format!("unquoted attribute in <{name}>")))?;
        let body = after.get(1..).unwrap_or("");
        let close = body
            .find(quote)
            .ok_or_else(|| err(format!("unterminated attribute in <{name}>")))?;
        attrs.push((
            key.to_owned(),
            decode_entities(body.get(..close).unwrap_or("")),
        ));
        rest = body.get(close + 1..).unwrap_or("").trim_start();
    }
    Ok(Element {
        name: name.to_owned(),
        attrs,
        children: Vec::new(),
    })
}

/// Finds the `>` that ends a tag, skipping quoted attribute values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '>' => return Some(i),
            None => {}
        }
    }
    None
}

/// Parses a document into its root element.
pub(crate) fn parse(input: &str) -> Result<Element, MappingError> {
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut rest = input.strip_prefix('\u{feff}').unwrap_or(input);
    loop {
        let lt = rest.find('<').unwrap_or(rest.len());
        let (text, from_lt) = rest.split_at(lt);
        if let Some(top) = stack.last_mut() {
            if !text.is_empty() {
                top.children.push(Node::Text(decode_entities(text)));
            }
        } else if !text.trim().is_empty() {
            return Err(err("text outside the root element"));
        }
        if from_lt.is_empty() {
            break;
        }
        if let Some(body) = from_lt.strip_prefix("<!--") {
            let end = body
                .find("-->")
                .ok_or_else(|| err("unterminated comment"))?;
            rest = body.get(end + 3..).unwrap_or("");
        } else if let Some(body) = from_lt.strip_prefix("<![CDATA[") {
            let end = body.find("]]>").ok_or_else(|| err("unterminated CDATA"))?;
            let top = stack
                .last_mut()
                .ok_or_else(|| err("CDATA outside the root element"))?;
            top.children
                .push(Node::Text(body.get(..end).unwrap_or("").to_owned()));
            rest = body.get(end + 3..).unwrap_or("");
        } else if let Some(body) = from_lt.strip_prefix("<?") {
            let end = body
                .find("?>")
                .ok_or_else(|| err("unterminated processing instruction"))?;
            rest = body.get(end + 2..).unwrap_or("");
        } else if let Some(body) = from_lt.strip_prefix("<!") {
            let end = tag_end(body).ok_or_else(|| err("unterminated declaration"))?;
            rest = body.get(end + 1..).unwrap_or("");
        } else if let Some(body) = from_lt.strip_prefix("</") {
            let end = body.find('>').ok_or_else(|| err("unterminated end tag"))?;
            let name = body.get(..end).unwrap_or("").trim();
            let el = stack
                .pop()
                .ok_or_else(|| err(format!("</{name}> without a start tag")))?;
            if el.name != name {
                return Err(err(format!("</{name}> closes <{}>", el.name)));
            }
            attach(&mut stack, &mut root, el)?;
            rest = body.get(end + 1..).unwrap_or("");
        } else {
            let body = from_lt.get(1..).unwrap_or("");
            let end = tag_end(body).ok_or_else(|| err("unterminated start tag"))?;
            let inner = body.get(..end).unwrap_or("");
            let (inner, empty) = match inner.strip_suffix('/') {
                Some(i) => (i, true),
                None => (inner, false),
            };
            let el = parse_start_tag(inner.trim())?;
            if empty {
                attach(&mut stack, &mut root, el)?;
            } else {
                if stack.len() >= MAX_DEPTH {
                    return Err(err("nested too deeply"));
                }
                stack.push(el);
            }
            rest = body.get(end + 1..).unwrap_or("");
        }
    }
    if let Some(open) = stack.last() {
        return Err(err(format!("<{}> is not closed", open.name)));
    }
    root.ok_or_else(|| err("no root element"))
}

fn attach(
    stack: &mut [Element],
    root: &mut Option<Element>,
    el: Element,
) -> Result<(), MappingError> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(Node::Element(el)),
        None if root.is_none() => *root = Some(el),
        None => return Err(err("more than one root element")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_elements_attributes_text() {
        let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv='http://arxiv.org/schemas/atom'>
  <entry><title>A &amp; B <![CDATA[<raw>]]></title>
    <link title="pdf" href="http://arxiv.org/pdf/1?a=1&amp;b=2" rel="related"/>
    <arxiv:doi>10.1/x</arxiv:doi>
  </entry>
</feed>"#;
        let root = parse(doc).unwrap();
        assert_eq!(root.local_name(), "feed");
        let entry = root.child("entry").unwrap();
        assert_eq!(entry.child_text("title").unwrap(), "A & B <raw>");
        assert_eq!(
            entry.child("link").unwrap().attr("href"),
            Some("http://arxiv.org/pdf/1?a=1&b=2")
        );
        assert_eq!(entry.child_text("doi").unwrap(), "10.1/x");
    }

    #[test]
    fn malformed_documents_are_errors() {
        for bad in [
            "",
            "<a>",
            "<a></b>",
            "</a>",
            "<a><b></a>",
            "<a x=1></a>",
            "<a x=\"1></a>",
            "<a></a><b></b>",
            "text",
            "<a><!-- </a>",
            "<>",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "<a>".repeat(100) + &"</a>".repeat(100);
        assert!(parse(&deep).is_err());
    }
}
