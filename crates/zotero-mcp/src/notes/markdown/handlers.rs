//! htmd's handlers of our own: what each element of a note becomes in Markdown (links only to
//! allowed schemes, images named, citations linked to the cited item, code fenced safely,
//! tables given a header row, active content dropped).

use std::rc::Rc;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::{Element, HtmlToMarkdown};
use markup5ever_rcdom::Node;
use percent_encoding::percent_decode_str;
use serde_json::Value;

use super::escape::{code_span, safe_destination};
use super::text::one_line;
use super::tree::{local_name, parent, text_lines, DROPPED_WITH_CONTENT};

/// htmd with the handlers of this module.
pub(super) fn converter() -> HtmlToMarkdown {
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

/// An element shown with nothing of what it holds.
fn dropped(_: &dyn Handlers, _: Element) -> Option<HandlerResult> {
    None
}

/// Whether every element around `node` is a container of blocks, where a code fence can open.
fn in_block_context(node: &Rc<Node>) -> bool {
    let mut current = parent(node);
    while let Some(p) = current {
        if let Some(t) = local_name(&p) {
            if !matches!(
                t,
                "html" | "body" | "div" | "blockquote" | "li" | "ul" | "ol"
            ) {
                return false;
            }
        }
        current = parent(&p);
    }
    true
}

/// An inline `<code>` as a code span on one line. htmd keeps the line breaks of blocks inside
/// it, and a code span cannot cross a blank line: what followed would be read as Markdown,
/// `<script>` as HTML again.
fn inline_code(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let in_fenced_pre =
        parent(element.node).is_some_and(|p| local_name(&p) == Some("pre") && in_block_context(&p));
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
        children.len() == 1 && children.first().and_then(|c| local_name(c)) == Some("code");
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
        match local_name(&n) {
            Some("thead" | "tbody" | "tfoot") => {
                stack.extend(n.children.borrow().iter().rev().cloned());
            }
            Some("tr") => {
                let cells = n
                    .children
                    .borrow()
                    .iter()
                    .filter_map(|c| match local_name(c) {
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
