//! Markdown or HTML an agent writes → note HTML as Zotero's note editor stores it, with only
//! what that editor keeps.
//!
//! Zotero stores a note as HTML and shows it in its note editor (ProseMirror, with a schema of
//! its own in zotero/note-editor); a note written through the API is stored as sent. What an
//! agent sends is made into what the editor would have written, in two steps:
//!
//! 1. Markdown is rendered to HTML by walking `pulldown-cmark`'s events (CommonMark with GFM
//!    tables and strikethrough; raw HTML in it is passed on to step 2 like any other HTML).
//! 2. The HTML is parsed with html5ever as a browser parses `innerHTML` (broken markup
//!    included), and the tree is walked, without recursion, against an allow-list: the
//!    elements and attributes of the editor's schema ([`KEPT`]), links only to
//!    [`LINK_SCHEMES`] (checked on the value html5ever decoded), images only as the editor
//!    stores them (`data-attachment-key`, never a `src`: a remote image is a tracking
//!    pixel). Active and embedded content is dropped with what it holds
//!    (`markdown::DROPPED_WITH_CONTENT`: script, style, iframe, object, svg, form, …); any
//!    other element is unwrapped, its content kept (a block one becomes a paragraph where it
//!    held only text); every other attribute (`on…`, `style`, …) is dropped. html5ever's
//!    serializer writes the result, escaping text and attribute values.
//!
//! What was taken out is reported ([`Removed`]), so an agent knows its note changed.
//!
//! `ammonia` was not used, as for reading (see `notes/markdown.rs`): it brings a second html5ever,
//! `url` with ICU's tables and cssparser (2.9 MB of binary); this module adds no crate.
//!
//! The result is wrapped as the editor stores notes: `<div data-schema-version="9">…</div>`.
//! 9 is what zotero/zotero `chrome/content/zotero/xpcom/editorInstance.js`
//! (`createNoteFromAnnotations`) writes for notes without underline annotations ("Update
//! schema version only if using new features"); a wrapper already in the input keeps its
//! version and `data-citation-items`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use html5ever::serialize::{serialize, SerializeOpts, TraversalScope};
use html5ever::tendril::TendrilSink;
use html5ever::{ns, parse_fragment, Attribute, LocalName, ParseOpts, QualName};
use markup5ever_rcdom::{Node, NodeData, RcDom, SerializableHandle};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use schemars::JsonSchema;
use serde::Serialize;
use tendril::StrTendril;

use crate::notes::markdown::{nesting_depth, DROPPED_WITH_CONTENT, MAX_PARSE_DEPTH};

/// Zotero's limit on a note's length in characters (dataserver `Zotero_Notes::$MAX_NOTE_LENGTH`).
pub const MAX_NOTE_CHARS: usize = 500_000;

/// How much HTML Markdown may render to before it is refused: more than a note can hold
/// even after the sanitizer has removed what it removes.
const MAX_RENDERED_BYTES: usize = 8 * MAX_NOTE_CHARS;

/// The schema version written on a new note's wrapper (see the module documentation).
pub const SCHEMA_VERSION: &str = "9";

/// URL schemes a link may have: the same as in the Markdown this server writes.
pub use crate::notes::markdown::LINK_SCHEMES;

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
const BLOCK_CONTAINERS: &[&str] = &["blockquote", "li", "td", "th"];

/// Classes kept on a `span` (Zotero's citations, annotations and math) and on a `pre` (math).
const SPAN_CLASSES: &[&str] = &[
    "citation",
    "citation-item",
    "highlight",
    "underline",
    "math",
];

/// At most this many different things are reported as removed; the rest are counted together.
pub const MAX_REPORTED: usize = 32;

/// How long a reported name may be, in characters.
const MAX_NAME_CHARS: usize = 40;

/// What a note is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteFormat {
    Markdown,
    Html,
}

/// A note's HTML as Zotero stores it, and what was removed to make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SanitizedNote {
    pub html: String,
    pub removed: Vec<Removed>,
}

/// Something taken out of a note, and how many times.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Removed {
    pub kind: RemovedKind,
    /// An element's or attribute's name, a URL scheme (`none` for a URL without one), or `…`
    /// for what is past [`MAX_REPORTED`].
    pub name: String,
    pub count: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemovedKind {
    // Plain comments, not docs: docs on the variants would publish each as a schema of its own.
    // An element removed with everything in it (script, style, …).
    Element,
    // An element removed, what it held kept.
    Tag,
    // An attribute removed (event handlers, `style`, an image's `src`, …).
    Attribute,
    // A link or image URL removed for its scheme.
    UrlScheme,
    // A comment (or CDATA, which HTML reads as one).
    Comment,
    // Anything more, past `MAX_REPORTED` different things.
    Other,
}

/// Why a note is not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteRefused {
    #[error("the note has {chars} characters; Zotero keeps at most {max}")]
    TooLong { chars: usize, max: usize },
    #[error("the note as HTML would be longer than the {max} characters Zotero keeps")]
    TooLongAsHtml { max: usize },
    #[error("the note nests its elements {depth} deep; at most {max} can be written")]
    TooDeep { depth: usize, max: usize },
}

/// How many more times a note is cleaned, at most, to reach HTML that parses back to itself.
const MAX_PASSES: usize = 3;

/// `input` as note HTML: only what Zotero's note editor keeps, wrapped as it stores notes;
/// refused if it is longer than Zotero keeps (before or after conversion) or nested too deep
/// to convert safely.
pub fn note_html(input: &str, format: NoteFormat) -> Result<SanitizedNote, NoteRefused> {
    check_length(input)?;
    let html = match format {
        NoteFormat::Markdown => markdown_to_html(input).ok_or(NoteRefused::TooLongAsHtml {
            max: MAX_NOTE_CHARS,
        })?,
        NoteFormat::Html => input.to_string(),
    };
    let depth = nesting_depth(&html);
    if depth > MAX_PARSE_DEPTH {
        return Err(NoteRefused::TooDeep {
            depth,
            max: MAX_PARSE_DEPTH,
        });
    }
    let mut note = sanitize(&html);
    // What the cleaning keeps can still be nested in a way a parser rebuilds differently
    // (a heading in a heading, a block in a paragraph): Zotero would then store something
    // else than this answer reports. Cleaning the result again until nothing changes makes
    // the stored note the one answered. The first pass's report says what was removed.
    for _ in 0..MAX_PASSES {
        let again = sanitize(&note.html);
        if again.html == note.html {
            break;
        }
        note.html = again.html;
    }
    if note.html.chars().count() > MAX_NOTE_CHARS {
        return Err(NoteRefused::TooLongAsHtml {
            max: MAX_NOTE_CHARS,
        });
    }
    Ok(note)
}

fn check_length(text: &str) -> Result<(), NoteRefused> {
    let chars = text.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(NoteRefused::TooLong {
            chars,
            max: MAX_NOTE_CHARS,
        });
    }
    Ok(())
}

/// Markdown (CommonMark, GFM tables and strikethrough) as HTML. Raw HTML is passed on, to be
/// sanitized with the rest; an image keeps its alt text for the sanitizer to show. `None` if
/// the HTML grows past [`MAX_RENDERED_BYTES`] (a link reference definition can be used any
/// number of times: 500,000 characters of Markdown could make gigabytes of HTML).
fn markdown_to_html(markdown: &str) -> Option<String> {
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 4);
    let mut in_head = false;
    // Alt text of the images being read (images nest in links' text, not in each other, but a
    // stack costs nothing).
    let mut images: Vec<(String, String)> = Vec::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        if out.len() > MAX_RENDERED_BYTES {
            return None;
        }
        if let Some((_, alt)) = images.last_mut() {
            match &event {
                Event::Text(t) | Event::Code(t) => {
                    alt.push_str(t);
                    continue;
                }
                Event::SoftBreak | Event::HardBreak => {
                    alt.push(' ');
                    continue;
                }
                _ => {}
            }
        }
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph => out.push_str("<p>"),
                Tag::Heading { level, .. } => out.push_str(&format!("<{level}>")),
                Tag::BlockQuote(_) => out.push_str("<blockquote>"),
                Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented) => {
                    out.push_str("<pre>")
                }
                Tag::List(Some(1)) => out.push_str("<ol>"),
                Tag::List(Some(start)) => out.push_str(&format!("<ol start=\"{start}\">")),
                Tag::List(None) => out.push_str("<ul>"),
                Tag::Item => out.push_str("<li>"),
                Tag::Table(_) => out.push_str("<table>"),
                Tag::TableHead => {
                    in_head = true;
                    out.push_str("<thead><tr>");
                }
                Tag::TableRow => out.push_str("<tr>"),
                Tag::TableCell if in_head => out.push_str("<th>"),
                Tag::TableCell => out.push_str("<td>"),
                Tag::Emphasis => out.push_str("<em>"),
                Tag::Strong => out.push_str("<strong>"),
                Tag::Strikethrough => out.push_str("<s>"),
                Tag::Superscript => out.push_str("<sup>"),
                Tag::Subscript => out.push_str("<sub>"),
                Tag::Link { dest_url, .. } => {
                    out.push_str(&format!("<a href=\"{}\">", escape(&dest_url, true)))
                }
                Tag::Image { dest_url, .. } => images.push((dest_url.to_string(), String::new())),
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph => out.push_str("</p>\n"),
                TagEnd::Heading(level) => out.push_str(&format!("</{level}>\n")),
                TagEnd::BlockQuote(_) => out.push_str("</blockquote>\n"),
                TagEnd::CodeBlock => out.push_str("</pre>\n"),
                TagEnd::List(true) => out.push_str("</ol>\n"),
                TagEnd::List(false) => out.push_str("</ul>\n"),
                TagEnd::Item => out.push_str("</li>\n"),
                TagEnd::Table => out.push_str("</tbody></table>\n"),
                TagEnd::TableHead => {
                    in_head = false;
                    out.push_str("</tr></thead><tbody>\n");
                }
                TagEnd::TableRow => out.push_str("</tr>\n"),
                TagEnd::TableCell if in_head => out.push_str("</th>"),
                TagEnd::TableCell => out.push_str("</td>"),
                TagEnd::Emphasis => out.push_str("</em>"),
                TagEnd::Strong => out.push_str("</strong>"),
                TagEnd::Strikethrough => out.push_str("</s>"),
                TagEnd::Superscript => out.push_str("</sup>"),
                TagEnd::Subscript => out.push_str("</sub>"),
                TagEnd::Link => out.push_str("</a>"),
                TagEnd::Image => {
                    if let Some((src, alt)) = images.pop() {
                        out.push_str(&format!(
                            "<img src=\"{}\" alt=\"{}\">",
                            escape(&src, true),
                            escape(&alt, true)
                        ));
                    }
                }
                _ => {}
            },
            Event::Text(t) => out.push_str(&escape(&t, false)),
            Event::Code(t) => out.push_str(&format!("<code>{}</code>", escape(&t, false))),
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&h),
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>\n"),
            Event::Rule => out.push_str("<hr>\n"),
            _ => {}
        }
    }
    Some(out)
}

/// Text (or, `attribute`, an attribute value) escaped for HTML.
fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// What was removed, counted, at most [`MAX_REPORTED`] different things.
#[derive(Default)]
struct Report(BTreeMap<(RemovedKind, String), usize>);

impl Report {
    fn add(&mut self, kind: RemovedKind, name: &str) {
        let name: String = name.chars().take(MAX_NAME_CHARS).collect();
        let key = if self.0.contains_key(&(kind, name.clone())) || self.0.len() < MAX_REPORTED {
            (kind, name)
        } else {
            (RemovedKind::Other, "…".to_string())
        };
        *self.0.entry(key).or_insert(0) += 1;
    }

    fn into_vec(self) -> Vec<Removed> {
        self.0
            .into_iter()
            .map(|((kind, name), count)| Removed { kind, name, count })
            .collect()
    }
}

fn html_name(local: &str) -> QualName {
    QualName::new(None, ns!(html), LocalName::from(local))
}

fn attribute(name: &str, value: &str) -> Attribute {
    Attribute {
        name: QualName::new(None, ns!(), LocalName::from(name)),
        value: StrTendril::from(value),
    }
}

fn element(name: &str, attrs: Vec<Attribute>) -> Rc<Node> {
    Node::new(NodeData::Element {
        name: html_name(name),
        attrs: RefCell::new(attrs),
        template_contents: RefCell::new(None),
        mathml_annotation_xml_integration_point: false,
    })
}

fn local_name(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

/// An element's name as reported.
fn reported_name(node: &Node) -> String {
    local_name(node).unwrap_or_default().to_string()
}

/// What becomes of an element.
enum Fate {
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

/// The sanitized tree's HTML, wrapped as the note editor stores notes.
fn sanitize(html: &str) -> SanitizedNote {
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

fn fate(node: &Rc<Node>, block_context: bool, report: &mut Report) -> Fate {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn html(input: &str) -> SanitizedNote {
        note_html(input, NoteFormat::Html).unwrap_or_else(|e| SanitizedNote {
            html: e.to_string(),
            removed: Vec::new(),
        })
    }

    fn removed(note: &SanitizedNote, kind: RemovedKind, name: &str) -> usize {
        note.removed
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .map_or(0, |r| r.count)
    }

    fn inner(note: &SanitizedNote) -> &str {
        note.html
            .strip_prefix("<div data-schema-version=\"9\">")
            .and_then(|h| h.strip_suffix("</div>"))
            .unwrap_or(&note.html)
    }

    #[test]
    fn nesting_a_parser_would_rebuild_is_cleaned_until_it_parses_back_to_itself() {
        for input in ["<h1><div><h1>x", "<p><div><p>y</p></div></p>"] {
            let once = html(input);
            assert_eq!(html(&once.html).html, once.html, "{input}");
        }
    }

    #[test]
    fn a_newline_opening_a_pre_survives_being_written_again() {
        // The text left after the script is "\n": written once more so a parser keeps it.
        let once = html("<p><pre><script>x()</script>\n</pre>");
        let twice = html(&once.html);
        assert_eq!(once.html, twice.html);
        assert!(once.html.contains("<pre>\n\n</pre>"), "{}", once.html);
    }

    #[test]
    fn the_note_editors_markup_is_kept_as_is() {
        let body = "<h1>T</h1><h6>t</h6><p><strong>b</strong> <b>b</b> <em>e</em> <i>i</i> \
                    <u>u</u> <s>s</s> <strike>k</strike> <sub>1</sub><sup>2</sup> \
                    <code>c</code><br><a href=\"https://e.org/x?a=1&amp;b=2\">l</a></p>\
                    <ul><li>a<ol start=\"3\"><li>b</li></ol></li></ul><blockquote><p>q</p>\
                    </blockquote><pre>x &lt; y</pre><hr><table><thead><tr><th colspan=\"2\">h\
                    </th></tr></thead><tbody><tr><td rowspan=\"1\">1</td><td>2</td></tr></tbody>\
                    </table>";
        let note = html(body);
        assert_eq!(inner(&note), body);
        assert_eq!(note.removed, Vec::new());
    }

    #[test]
    fn a_new_note_is_wrapped_and_a_wrapper_is_kept() {
        let note = html("<p>x</p>");
        assert_eq!(note.html, "<div data-schema-version=\"9\"><p>x</p></div>");
        let note = html(
            "<div data-citation-items=\"%5B%5D\" data-schema-version=\"10\" onclick=\"x\">\
             <p>y</p></div>\n",
        );
        assert_eq!(
            note.html,
            "<div data-citation-items=\"%5B%5D\" data-schema-version=\"10\"><p>y</p></div>"
        );
        // A version that is not a number is replaced.
        let note = html("<div data-schema-version=\"9&quot;><script>\"><p>z</p></div>");
        assert_eq!(note.html, "<div data-schema-version=\"9\"><p>z</p></div>");
    }

    #[test]
    fn active_content_is_dropped_with_what_it_holds() {
        let note = html(
            "<p>a</p><script>alert(1)</script><style>p{}</style><iframe src=\"https://x\">f\
             </iframe><object data=\"x\">o</object><svg onload=\"x()\"><text>s</text></svg>\
             <form><input value=\"v\"><button>b</button></form><!-- c --><p>z</p>",
        );
        assert_eq!(inner(&note), "<p>a</p><p>z</p>");
        for name in ["script", "style", "iframe", "object", "svg", "form"] {
            assert_eq!(removed(&note, RemovedKind::Element, name), 1, "{name}");
        }
        assert_eq!(removed(&note, RemovedKind::Comment, "comment"), 1);
    }

    #[test]
    fn unknown_elements_are_unwrapped_keeping_their_text() {
        let note = html(
            "<div>one</div><div>two <font color=\"red\">red</font></div>\
             <section><p>p</p></section><p>x<x-custom>y</x-custom>z</p>",
        );
        assert_eq!(inner(&note), "<p>one</p><p>two red</p><p>p</p><p>xyz</p>");
        assert_eq!(removed(&note, RemovedKind::Tag, "div"), 2);
        assert_eq!(removed(&note, RemovedKind::Tag, "font"), 1);
        assert_eq!(removed(&note, RemovedKind::Attribute, "color"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "x-custom"), 1);
    }

    #[test]
    fn handlers_and_styles_are_removed() {
        let note = html(
            "<p onclick=\"x()\" style=\"color:red\" ONMOUSEOVER=\"y()\" class=\"c\" id=\"i\">t</p>",
        );
        assert_eq!(inner(&note), "<p>t</p>");
        for name in ["onclick", "style", "onmouseover", "class", "id"] {
            assert_eq!(removed(&note, RemovedKind::Attribute, name), 1, "{name}");
        }
    }

    #[test]
    fn links_keep_only_allowed_schemes() {
        let note = html(
            "<a href=\"http://e.org\">1</a><a href=\"MAILTO:a@b.c\">2</a>\
             <a href=\"zotero://select/library/items/ABCD2345\">3</a>\
             <a href=\"javascript:alert(1)\">4</a><a href=\"jav&#x61;script&colon;x\">5</a>\
             <a href=\" JaVaScRiPt:x\">6</a><a href=\"data:text/html,x\">7</a>\
             <a href=\"java&#x09;script:x\">8</a><a href=\"/rel\">9</a><a href=\"//e.org\">10</a>\
             <a name=\"n\">11</a>",
        );
        assert_eq!(
            inner(&note),
            "<a href=\"http://e.org\">1</a><a href=\"MAILTO:a@b.c\">2</a>\
             <a href=\"zotero://select/library/items/ABCD2345\">3</a>4567891011"
        );
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "javascript"), 3);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "data"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "invalid"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "none"), 2);
        assert_eq!(removed(&note, RemovedKind::Attribute, "name"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "a"), 8);
    }

    #[test]
    fn images_are_kept_only_as_attachment_keys() {
        let note = html(
            "<p><img src=\"https://t.example/p.gif\" alt=\"pixel\" onerror=\"x()\">\
             <img src=\"data:image/png;base64,AAAA\"><img data-attachment-key=\"ABCD2345\" \
             width=\"100\" height=\"50\" src=\"https://t.example/q.gif\" data-annotation=\"%7B%7D\">\
             <img data-attachment-key=\"../x\"></p>",
        );
        assert_eq!(
            inner(&note),
            "<p>pixel<img data-attachment-key=\"ABCD2345\" width=\"100\" height=\"50\" \
             data-annotation=\"%7B%7D\"></p>"
        );
        assert_eq!(removed(&note, RemovedKind::Tag, "img"), 3);
        assert_eq!(removed(&note, RemovedKind::Attribute, "src"), 3);
        assert_eq!(
            removed(&note, RemovedKind::Attribute, "data-attachment-key"),
            1
        );
    }

    #[test]
    fn citations_highlights_and_math_are_kept() {
        let body = "<p><span class=\"highlight\" data-annotation=\"%7B%7D\">“q”</span> \
                    <span class=\"citation\" data-citation=\"%7B%7D\">(<span class=\"citation-item\">\
                    Doe, 2020</span>)</span> <span class=\"math\">$x$</span></p>\
                    <pre class=\"math\">$$y$$</pre>";
        let note = html(body);
        assert_eq!(inner(&note), body);
        let note = html("<p><span class=\"citation evil\" data-x=\"1\">c</span><span>s</span></p>");
        assert_eq!(inner(&note), "<p><span class=\"citation\">c</span>s</p>");
        assert_eq!(removed(&note, RemovedKind::Attribute, "data-x"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "span"), 1);
    }

    #[test]
    fn markdown_is_rendered_then_sanitized() {
        let note = note_html(
            "# Title\n\nSome **bold**, *em*, ~~gone~~ and `code` with [a link](https://e.org/a).\n\n\
             - one\n- two\n\n3. three\n4. four\n\n> quoted\n\n```rust\nfn x() {}\n```\n\n\
             | a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n![pixel](https://t.example/p.gif) \
             [js](javascript:alert(1)) <script>alert(2)</script> <u>under</u>",
            NoteFormat::Markdown,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let h = inner(&note);
        for part in [
            "<h1>Title</h1>",
            "<strong>bold</strong>",
            "<em>em</em>",
            "<s>gone</s>",
            "<code>code</code>",
            "<a href=\"https://e.org/a\">a link</a>",
            "<ul><li>one</li>",
            "<ol start=\"3\">",
            "<blockquote><p>quoted</p>",
            "<pre>fn x() {}\n</pre>",
            "<thead><tr><th>a</th><th>b</th></tr></thead>",
            "<td>1</td><td>2</td>",
            "<hr>",
            "<p>pixel js  <u>under</u></p>",
        ] {
            assert!(h.contains(part), "{part} not in {h}");
        }
        assert!(!h.contains("alert"), "{h}");
        assert_eq!(removed(&note, RemovedKind::Element, "script"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "javascript"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "img"), 1);
        // Markup in Markdown text stays text.
        let note =
            note_html("a &lt;b&gt; \\<i>", NoteFormat::Markdown).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inner(&note), "<p>a &lt;b&gt; &lt;i&gt;</p>\n");
    }

    #[test]
    fn too_long_or_too_deep_is_refused() {
        let long = "a".repeat(MAX_NOTE_CHARS + 1);
        assert_eq!(
            note_html(&long, NoteFormat::Html),
            Err(NoteRefused::TooLong {
                chars: MAX_NOTE_CHARS + 1,
                max: MAX_NOTE_CHARS
            })
        );
        // Within the limit, but not once written as HTML.
        let stars = "*a* ".repeat(MAX_NOTE_CHARS / 4);
        assert_eq!(
            note_html(&stars, NoteFormat::Markdown),
            Err(NoteRefused::TooLongAsHtml {
                max: MAX_NOTE_CHARS
            })
        );
        // A link reference used over and over is refused before it is all rendered.
        let long = format!(
            "[r]: https://e.org/{}\n\n{}",
            "a".repeat(200_000),
            "[x][r] ".repeat(40_000)
        );
        let started = std::time::Instant::now();
        assert_eq!(
            note_html(&long, NoteFormat::Markdown),
            Err(NoteRefused::TooLongAsHtml {
                max: MAX_NOTE_CHARS
            })
        );
        assert!(started.elapsed().as_secs() < 10);
        let deep = format!("{}x{}", "<div>".repeat(2_000), "</div>".repeat(2_000));
        assert_eq!(
            note_html(&deep, NoteFormat::Html),
            Err(NoteRefused::TooDeep {
                depth: 2_000,
                max: MAX_PARSE_DEPTH
            })
        );
        let quotes = format!("{}x", "> ".repeat(2_000));
        assert!(matches!(
            note_html(&quotes, NoteFormat::Markdown),
            Err(NoteRefused::TooDeep { .. })
        ));
        // Deep but allowed nesting is walked without recursion.
        let ok = format!(
            "{}x{}",
            "<blockquote>".repeat(900),
            "</blockquote>".repeat(900)
        );
        let note = html(&ok);
        assert_eq!(note.html.matches("<blockquote>").count(), 900);
    }

    #[test]
    fn the_report_is_bounded() {
        let many: String = (0..100)
            .map(|i| format!("<x-{i} data-{i}=\"1\">t</x-{i}>"))
            .collect();
        let note = html(&format!("<p>{many}</p>"));
        assert!(note.removed.len() <= MAX_REPORTED + 1, "{:?}", note.removed);
        let total: usize = note.removed.iter().map(|r| r.count).sum();
        assert_eq!(total, 200);
        assert!(note.removed.iter().any(|r| r.kind == RemovedKind::Other));
        let long = "y".repeat(500);
        let note = html(&format!("<p><x-{long}>t</x-{long}></p>"));
        assert!(note
            .removed
            .iter()
            .all(|r| r.name.chars().count() <= MAX_NAME_CHARS));
    }
}
