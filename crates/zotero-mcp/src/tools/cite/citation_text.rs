//! Zotero's citation and bibliography HTML (citeproc-js output: `csl-bib-body`, `csl-entry`,
//! `csl-left-margin`/`csl-right-inline` for numbered styles, `<ol>` citation lists, COinS
//! spans) as plain text or Markdown. Parsed by html5ever (through htmd); Markdown is
//! written by htmd, plain text by a walk over the parsed tree.

use std::rc::Rc;

use htmd::element_handler::Handlers;
use htmd::{Element, HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

use crate::notes::markdown::{escape_lines, safe_converted};

/// How a citation or bibliography is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Plain text, one entry a line.
    Text,
    /// Zotero's HTML, unchanged.
    Html,
    /// Markdown made from Zotero's HTML.
    Markdown,
}

/// The `class` attribute of an element's attributes (html5ever's `Attribute`s).
macro_rules! class_of {
    ($attrs:expr) => {
        $attrs
            .iter()
            .find(|a| &*a.name.local == "class")
            .map(|a| a.value.to_string())
            .unwrap_or_default()
    };
}

/// The `li` children of a node.
fn list_items(node: &Rc<Node>) -> Vec<Rc<Node>> {
    node.children
        .borrow()
        .iter()
        .filter(|c| matches!(&c.data, NodeData::Element { name, .. } if &*name.local == "li"))
        .cloned()
        .collect()
}

fn markdown_converter() -> HtmlToMarkdown {
    HtmlToMarkdown::builder()
        .add_handler(vec!["ol"], |h: &dyn Handlers, e: Element| {
            // The desktop wraps a note style's single citation in a list: it is one note,
            // not a list of one.
            match list_items(e.node).as_slice() {
                [only] => Some(h.walk_children(only).content.trim().to_string().into()),
                _ => h.fallback(e),
            }
        })
        // Never a script or a style's text, nor an image (a remote one is a tracking pixel),
        // whatever reaches us.
        .skip_tags(vec!["script", "style", "head", "img"])
        .add_handler(vec!["span"], |h: &dyn Handlers, e: Element| {
            // COinS metadata spans (`Z3988`) carry nothing to read.
            if class_of!(e.attrs).contains("Z3988") {
                None
            } else {
                h.fallback(e)
            }
        })
        .add_handler(vec!["div"], |h: &dyn Handlers, e: Element| {
            let class = class_of!(e.attrs);
            let inner = h.walk_children(e.node).content;
            if class.contains("csl-left-margin") {
                // A numbered entry's label stays on the entry's line.
                Some(inner.trim().to_string().into())
            } else if class.contains("csl-right-inline") {
                // The space between label and text (a trailing space would be trimmed).
                Some(format!(" {}", inner.trim()).into())
            } else {
                Some(format!("\n\n{}\n\n", inner.trim()).into())
            }
        })
        .build()
}

/// Zotero's HTML as `format` asks: unchanged, Markdown, or plain text (one entry a line).
pub fn render(html: &str, format: TextFormat) -> String {
    match format {
        TextFormat::Html => html.trim().to_string(),
        // Zotero's HTML is trusted no more than a note's: links only to allowed schemes, no
        // raw HTML, no image (`crate::notes::markdown`'s last layer).
        TextFormat::Markdown => markdown_converter()
            .convert(html)
            .map(|md| safe_converted(md.trim().to_string()))
            .unwrap_or_else(|_| escape_lines(&plain(html), "")),
        TextFormat::Text => plain(html),
    }
}

/// Plain text: inline markup dropped, each entry (and list item) on its own line.
fn plain(html: &str) -> String {
    let Ok(tree) = HtmlToMarkdown::new().html_to_tree(html) else {
        return String::new();
    };
    let mut out = String::new();
    walk(&tree, &mut out);
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn walk(node: &Rc<Node>, out: &mut String) {
    match &node.data {
        NodeData::Text { contents } => {
            // Whitespace in HTML is a space, never a line break.
            let text = contents.borrow();
            out.extend(
                text.chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c }),
            );
        }
        NodeData::Element { name, attrs, .. } => {
            let tag = &*name.local;
            let class = class_of!(attrs.borrow());
            if matches!(tag, "script" | "style" | "head" | "template") || class.contains("Z3988") {
                return;
            }
            let block = matches!(tag, "div" | "p" | "li" | "ol" | "ul" | "br")
                && !class.contains("csl-left-margin")
                && !class.contains("csl-right-inline");
            if block {
                out.push('\n');
            }
            if tag == "ol" {
                // Citation lists of note styles: numbered as they are shown (a single
                // citation is one note, not a list of one).
                let numbered = list_items(node).len() > 1;
                let mut n = 0;
                for child in node.children.borrow().iter() {
                    let is_li = matches!(&child.data,
                        NodeData::Element { name, .. } if &*name.local == "li");
                    if !is_li {
                        walk(child, out);
                        continue;
                    }
                    n += 1;
                    out.push('\n');
                    if numbered {
                        out.push_str(&format!("{n}. "));
                    }
                    for grandchild in child.children.borrow().iter() {
                        walk(grandchild, out);
                    }
                    out.push('\n');
                }
                out.push('\n');
                return;
            }
            for child in node.children.borrow().iter() {
                walk(child, out);
            }
            if class.contains("csl-left-margin") {
                out.push(' ');
            }
            if block {
                out.push('\n');
            }
        }
        _ => {
            for child in node.children.borrow().iter() {
                walk(child, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APA: &str = "<?xml version=\"1.0\"?>\n<div class=\"csl-bib-body\" style=\"line-height: 2;\">\n  <div class=\"csl-entry\">Vaswani, A. (2017). Attention. <i>NeurIPS</i>, <i>30</i>, 1–2.</div>\n  <span class=\"Z3988\" title=\"x\"></span>\n  <div class=\"csl-entry\">World Health Organization. (2015). <i>World Report</i>.</div>\n</div>\n";
    const IEEE: &str = "<div class=\"csl-bib-body\">\n  <div class=\"csl-entry\">\n    <div class=\"csl-left-margin\">[1]</div><div class=\"csl-right-inline\">A. Vaswani <i>et al.</i>, “Attention,” 2017.</div>\n  </div>\n</div>";

    #[test]
    fn text_has_one_entry_a_line_without_markup() {
        assert_eq!(
            render(APA, TextFormat::Text),
            "Vaswani, A. (2017). Attention. NeurIPS, 30, 1–2.\nWorld Health Organization. (2015). World Report."
        );
        assert_eq!(
            render(IEEE, TextFormat::Text),
            "[1] A. Vaswani et al., “Attention,” 2017."
        );
        assert_eq!(
            render(
                "<ol>\n\t<li>Vaswani, “A.”</li>\n\t<li>Gomez, “B.”</li>\n</ol>",
                TextFormat::Text
            ),
            "1. Vaswani, “A.”\n2. Gomez, “B.”"
        );
        assert_eq!(
            render("<span>(Vaswani, 2017)</span>", TextFormat::Text),
            "(Vaswani, 2017)"
        );
        assert_eq!(
            render(
                "<div>a<script>alert(1)</script><style>x{}</style>b</div>",
                TextFormat::Text
            ),
            "ab"
        );
    }

    #[test]
    fn markdown_links_only_to_allowed_schemes_and_holds_no_html() {
        let md = render(
            "<div class=\"csl-entry\">A. <a href=\"javascript:alert(1)\">x</a> \
             <a href=\"https://doi.org/10.1/x\">doi</a> <img src=\"https://t.example/p.gif\"> \
             <b>&lt;img src=x onerror=alert(1)&gt;</b></div>",
            TextFormat::Markdown,
        );
        use pulldown_cmark::{Event, Parser, Tag};
        let mut links = Vec::new();
        for event in Parser::new(&md) {
            match event {
                Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
                Event::Start(Tag::Image { .. }) | Event::Html(_) | Event::InlineHtml(_) => {
                    panic!("{event:?} in {md}")
                }
                _ => {}
            }
        }
        assert_eq!(links, ["https://doi.org/10.1/x"], "{md}");
    }

    #[test]
    fn markdown_keeps_emphasis_and_entries_apart() {
        let md = render(APA, TextFormat::Markdown);
        assert!(md.contains("*NeurIPS*"), "{md}");
        assert!(md.contains("\n\nWorld Health"), "{md}");
        assert!(!md.contains("Z3988"), "{md}");
        let md = render(IEEE, TextFormat::Markdown);
        assert!(md.starts_with("\\[1\\] A. Vaswani *et al.*"), "{md}");
    }
}
