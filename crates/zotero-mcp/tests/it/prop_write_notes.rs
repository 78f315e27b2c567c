//! Property: whatever an agent writes as a note — the adversarial HTML of `prop_notes` (event
//! handlers, `javascript:` in every spelling, `<svg onload>`, `<script>` in foreign content,
//! comments, broken markup), or Markdown holding it — the HTML
//! `zotero_mcp::notes::html::note_html` makes of it, parsed again as a browser would:
//!
//! 1. holds only the note editor's elements, no event handler, no `style`, no `src`, no image
//!    but an attachment's, and no link but to `http`, `https`, `mailto` or `zotero`;
//! 2. holds nothing of a script's or style's content, a handler or a comment (each carries a
//!    marker the output must not contain), and no dangerous URL's marker in a link;
//! 3. is left as it is when sanitized again;
//!
//! and simple markup the editor keeps comes out as it went in. Markdown written, then read
//! back with `note_to_markdown`, keeps its headings, lists, emphasis, links and tables.

use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use html5ever::{ns, parse_fragment, LocalName, ParseOpts, QualName};
use markup5ever_rcdom::{Node, NodeData, RcDom};
use proptest::prelude::*;
use zotero_mcp::notes::html::{note_html, NoteFormat, SanitizedNote, LINK_SCHEMES};
use zotero_mcp::notes::markdown::note_to_markdown;

use crate::prop_notes::{html, HIDDEN};
use crate::prop_support::config;

const ELEMENTS: [&str; 34] = [
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
    "div",
];

fn parse(html: &str) -> RcDom {
    parse_fragment(
        RcDom::default(),
        ParseOpts::default(),
        QualName::new(None, ns!(html), LocalName::from("body")),
        Vec::new(),
        false,
    )
    .one(html)
}

/// What the HTML, parsed again, holds that it must not; `markers`: and any marker.
fn problems(note: &SanitizedNote, markers: bool) -> Vec<String> {
    let mut found = Vec::new();
    if markers {
        for marker in HIDDEN.iter().filter(|m| **m != "PWNURL") {
            if note.html.contains(marker) {
                found.push(format!("marker {marker}"));
            }
        }
    }
    let dom = parse(&note.html);
    let mut stack: Vec<Rc<Node>> = vec![dom.document.clone()];
    let mut divs = 0;
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Comment { .. } => found.push("comment".into()),
            NodeData::Element { name, attrs, .. } => {
                let local: &str = &name.local;
                if name.ns != ns!(html) || !(ELEMENTS.contains(&local) || local == "html") {
                    found.push(format!("element {local}"));
                }
                divs += usize::from(local == "div");
                let attrs = attrs.borrow();
                for a in attrs.iter() {
                    let attr: &str = &a.name.local;
                    if attr.starts_with("on") || matches!(attr, "style" | "src" | "srcdoc") {
                        found.push(format!("attribute {attr}"));
                    }
                    if attr == "href" {
                        let allowed = a.value.split_once(':').is_some_and(|(s, _)| {
                            LINK_SCHEMES.iter().any(|l| l.eq_ignore_ascii_case(s))
                        });
                        if !allowed || a.value.contains("PWNURL") {
                            found.push(format!("link to {:?}", a.value));
                        }
                    }
                }
                if local == "img"
                    && !attrs
                        .iter()
                        .any(|a| &*a.name.local == "data-attachment-key")
                {
                    found.push("image without attachment".into());
                }
            }
            _ => {}
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
    if divs != 1 {
        found.push(format!("{divs} divs"));
    }
    found
}

fn written(input: &str, format: NoteFormat) -> SanitizedNote {
    note_html(input, format).unwrap_or_else(|e| panic!("{e}\n{input}"))
}

/// Simple markup the note editor keeps, as HTML.
fn simple_markup() -> impl Strategy<Value = String> {
    let word = "[A-Za-z0-9]{1,8}";
    let inline = prop_oneof![
        word.prop_map(|w| w.to_string()),
        (
            proptest::sample::select(vec!["strong", "em", "u", "s", "sub", "sup", "code"]),
            word
        )
            .prop_map(|(t, w)| format!("<{t}>{w}</{t}>")),
        word.prop_map(|w| format!("<a href=\"https://example.org/{w}\">{w}</a>")),
    ];
    let paragraph = proptest::collection::vec(inline, 1..6).prop_map(|p| p.join(" "));
    let block = prop_oneof![
        paragraph.clone().prop_map(|p| format!("<p>{p}</p>")),
        (1..=6u8, paragraph.clone()).prop_map(|(l, p)| format!("<h{l}>{p}</h{l}>")),
        proptest::collection::vec(paragraph.clone(), 1..4).prop_map(|items| format!(
            "<ul>{}</ul>",
            items
                .iter()
                .map(|i| format!("<li>{i}</li>"))
                .collect::<String>()
        )),
        paragraph.prop_map(|p| format!("<blockquote><p>{p}</p></blockquote>")),
    ];
    proptest::collection::vec(block, 1..5).prop_map(|b| b.concat())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn note_html_from_any_html_is_inert_and_stable(input in html(false)) {
        let note = written(&input, NoteFormat::Html);
        let found = problems(&note, true);
        prop_assert!(found.is_empty(), "{found:?}\nin: {input}\nout: {}", note.html);
        let again = written(&note.html, NoteFormat::Html);
        prop_assert_eq!(&again.html, &note.html, "in: {}", input);
        prop_assert!(again.removed.is_empty(), "{:?}", again.removed);
    }

    #[test]
    fn note_html_from_broken_html_is_inert(input in html(true)) {
        let note = written(&input, NoteFormat::Html);
        let found = problems(&note, false);
        prop_assert!(found.is_empty(), "{found:?}\nin: {input}\nout: {}", note.html);
    }

    #[test]
    fn note_html_from_markdown_holding_html_is_inert(input in html(true)) {
        let markdown = format!("# Note\n\n{input}\n\n* [x](javascript:PWNURL()) ![i](https://e.org/i.png)\n");
        let note = written(&markdown, NoteFormat::Markdown);
        let found = problems(&note, false);
        prop_assert!(found.is_empty(), "{found:?}\nin: {markdown}\nout: {}", note.html);
    }

    #[test]
    fn simple_markup_survives(input in simple_markup()) {
        let note = written(&input, NoteFormat::Html);
        prop_assert_eq!(note.html, format!("<div data-schema-version=\"9\">{input}</div>"));
        prop_assert!(note.removed.is_empty(), "{:?}", note.removed);
    }
}

#[test]
fn markdown_written_reads_back() {
    let markdown = "# Findings\n\n## Method\n\nWe used **residual** learning and *shortcuts*, \
                    see [the paper](https://arxiv.org/abs/1512.03385).\n\n\
                    - first point\n- second point\n  - nested\n\n1. one\n2. two\n\n\
                    > a quote\n\n| model | error |\n|---|---|\n| ResNet | 3.57 |\n";
    let note = written(markdown, NoteFormat::Markdown);
    assert!(note.removed.is_empty(), "{:?}", note.removed);
    let md = note_to_markdown(&note.html);
    for part in [
        "# Findings",
        "## Method",
        "**residual**",
        "*shortcuts*",
        "[the paper](https://arxiv.org/abs/1512.03385)",
        "*   first point",
        "*   nested",
        "1.  one",
        "> a quote",
        "| model | error |",
        "| ResNet | 3.57 |",
    ] {
        // htmd pads table cells to their column's width.
        let found = md.contains(part) || one_space(&md).contains(&one_space(part));
        assert!(found, "{part:?} not in\n{md}\nfrom\n{}", note.html);
    }
}

fn one_space(text: &str) -> String {
    text.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
