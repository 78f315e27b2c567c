//! Building html5ever's tree: names, attributes, elements, and the name a report gives one.

use std::cell::RefCell;
use std::rc::Rc;

use html5ever::{ns, Attribute, LocalName, QualName};
use markup5ever_rcdom::{Node, NodeData};
use tendril::StrTendril;

use crate::notes::markdown::local_name;

/// An element name in the HTML namespace.
pub(super) fn html_name(local: &str) -> QualName {
    QualName::new(None, ns!(html), LocalName::from(local))
}

/// An attribute without namespace.
pub(super) fn attribute(name: &str, value: &str) -> Attribute {
    Attribute {
        name: QualName::new(None, ns!(), LocalName::from(name)),
        value: StrTendril::from(value),
    }
}

/// A new element with these attributes and no children.
pub(super) fn element(name: &str, attrs: Vec<Attribute>) -> Rc<Node> {
    Node::new(NodeData::Element {
        name: html_name(name),
        attrs: RefCell::new(attrs),
        template_contents: RefCell::new(None),
        mathml_annotation_xml_integration_point: false,
    })
}

/// An element's name as reported.
pub(super) fn reported_name(node: &Node) -> String {
    local_name(node).unwrap_or_default().to_string()
}
