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

mod escape;
mod handlers;
mod safe;
mod text;
mod tree;

use std::rc::Rc;

use htmd::HtmlToMarkdown;
use markup5ever_rcdom::{Node, NodeData};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use tendril::StrTendril;

pub use self::escape::{code_span, escape_lines, escape_text, link_to, LINK_SCHEMES};
use self::handlers::converter;
use self::safe::neutralize;
pub use self::safe::{close_open_fence, safe_converted, safe_piece};
pub use self::text::cut_chars;
use self::text::one_line;
use self::tree::{flatten_deep, text_lines};
pub(crate) use self::tree::{local_name, DROPPED_WITH_CONTENT};
pub use self::tree::{nesting_depth, MAX_DEPTH, MAX_PARSE_DEPTH};

/// The note as a tree, nested at most [`MAX_DEPTH`] deep.
fn clean_tree(converter: &HtmlToMarkdown, html: &str) -> Option<Rc<Node>> {
    let tree = converter.html_to_tree(html).ok()?;
    flatten_deep(&tree);
    Some(tree)
}

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
    fn a_piece_cut_from_a_code_span_is_not_html() {
        let md = note_to_markdown("<p><code>&lt;img src=x onerror=alert(1)&gt;</code> x</p>");
        assert_eq!(md, "`<img src=x onerror=alert(1)>` x");
        let (head, _) = cut_chars(&md, 29);
        assert_eq!(safe_piece(head), "`\\<img src=x onerror=alert(1)>");
        assert_eq!(safe_piece(&md[1..]), "\\<img src=x onerror=alert(1)>` x");
        assert_eq!(safe_piece(&md), md);
    }
}
