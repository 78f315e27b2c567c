//! MCP resources: an item, its full text, notes and annotations, a collection's items and
//! the citation styles, read by `zotero://` URI. Each read is the answer of the tool that
//! reads the same thing (called with the same checks), bounded, and saying when it was cut
//! and which tool reads on. `resources/list` pages through the recently changed items of the
//! default library, not the whole library.

use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};
use rmcp::model::{ResourceTemplate, Role};
use serde_json::{json, Map, Value};
use zotero_api::{LibraryRef, ObjectKey};

use crate::mcp::envelope::ToolError;
use crate::notes::markdown::{close_open_fence, cut_chars, escape_lines, escape_text, link_to};
use crate::tools::params::{quote, COMMON_STYLES, STYLES_URL};
use crate::tools::{ToolContext, ToolName};

pub const JSON: &str = "application/json";
pub const TEXT: &str = "text/plain";
pub const MARKDOWN: &str = "text/markdown";

/// The URI of the citation styles.
pub const STYLES_URI: &str = "zotero://styles";
/// Items per page of `resources/list` (the most recently modified first).
pub const LIST_PAGE: u64 = 25;
/// Characters of full text a read holds: the first page of `zotero_get_item_fulltext`.
pub const FULLTEXT_CHARS: u64 = 16_000;
/// Notes a read holds, and characters of each and of all: a read, like a tool's answer,
/// stays within the budget of 20,000 characters.
pub const NOTES: u64 = 25;
pub const NOTE_CHARS: u64 = 8_000;
pub const NOTES_CHARS: usize = 18_000;
/// Annotations a read holds at most (each text and comment at the tool's default of 1,000
/// characters), and the characters of Markdown they may take.
pub const ANNOTATIONS: u64 = 50;
pub const ANNOTATIONS_CHARS: usize = 18_000;
/// Items of a collection a read holds.
pub const COLLECTION_ITEMS: u64 = 25;
/// The longest resource name in `resources/list`.
const NAME_CHARS: usize = 200;

/// What of an object a URI reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Item,
    FullText,
    Notes,
    AnnotationsMarkdown,
    AnnotationsJson,
    Collection,
}

impl View {
    pub const ALL: [View; 6] = [
        View::Item,
        View::FullText,
        View::Notes,
        View::AnnotationsMarkdown,
        View::AnnotationsJson,
        View::Collection,
    ];

    /// The path after the library, with `key` in it.
    fn path(self, key: &str) -> String {
        match self {
            View::Item => format!("items/{key}"),
            View::FullText => format!("items/{key}/fulltext.txt"),
            View::Notes => format!("items/{key}/notes.md"),
            View::AnnotationsMarkdown => format!("items/{key}/annotations.md"),
            View::AnnotationsJson => format!("items/{key}/annotations.json"),
            View::Collection => format!("collections/{key}"),
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            View::Item | View::AnnotationsJson | View::Collection => JSON,
            View::FullText => TEXT,
            View::Notes | View::AnnotationsMarkdown => MARKDOWN,
        }
    }

    fn name(self) -> &'static str {
        match self {
            View::Item => "item",
            View::FullText => "item-fulltext",
            View::Notes => "item-notes",
            View::AnnotationsMarkdown => "item-annotations-markdown",
            View::AnnotationsJson => "item-annotations-json",
            View::Collection => "collection-items",
        }
    }

    fn title(self) -> &'static str {
        match self {
            View::Item => "Zotero item",
            View::FullText => "Full text of a Zotero item",
            View::Notes => "Notes of a Zotero item",
            View::AnnotationsMarkdown => "Annotations of a Zotero item (Markdown)",
            View::AnnotationsJson => "Annotations of a Zotero item (JSON)",
            View::Collection => "Items of a Zotero collection",
        }
    }

    fn description(self) -> &'static str {
        match self {
            View::Item => {
                "Every field, creator, tag, collection and relation of an item, as \
                 zotero_get_item_metadata answers it (JSON). library: user or group:<id>."
            }
            View::FullText => {
                "The text Zotero indexed for an item's attachments: the first 16,000 \
                 characters, saying where to read on with zotero_get_item_fulltext."
            }
            View::Notes => {
                "An item's notes as Markdown (those of the first 25 that fit in 20,000 \
                 characters, each up to 8,000; zotero_get_notes reads on)."
            }
            View::AnnotationsMarkdown => {
                "Highlights, underlines and comments on an item's PDFs, EPUBs and snapshots \
                 in reading order, as Markdown (those of the first 50 that fit in 20,000 \
                 characters; zotero_get_annotations reads on)."
            }
            View::AnnotationsJson => {
                "An item's annotations as zotero_get_annotations answers them (JSON, those \
                 of the first 50 that fit in 20,000 characters)."
            }
            View::Collection => {
                "The top-level items of a collection, most recently modified first (JSON, \
                 the first 25; zotero_list_items with collection_key reads on)."
            }
        }
    }
}

/// A resource this server reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uri {
    Styles,
    Object {
        library: LibraryRef,
        view: View,
        key: ObjectKey,
    },
}

/// The URI of `view` of the object `key` in `library`.
pub fn uri(library: LibraryRef, view: View, key: &str) -> String {
    format!("zotero://{library}/{}", view.path(key))
}

impl Uri {
    /// The URI as sent; a malformed one is a validation error naming `uri`.
    pub fn parse(raw: &str) -> Result<Uri, ToolError> {
        let bad = |why: String| {
            ToolError::invalid(
                "uri",
                format!(
                    "'{}' is not a resource of this server: {why}; resources are \
                     zotero://styles and zotero://{{library}}/items/{{key}}[/fulltext.txt|\
                     /notes.md|/annotations.md|/annotations.json] or \
                     zotero://{{library}}/collections/{{key}}, library being user or group:<id>",
                    quote(raw)
                ),
            )
        };
        let rest = raw
            .get(..9)
            .filter(|s| s.eq_ignore_ascii_case("zotero://"))
            .and_then(|_| raw.get(9..))
            .ok_or_else(|| bad("it does not start with zotero://".into()))?;
        if rest == "styles" {
            return Ok(Uri::Styles);
        }
        let (lib, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no object".into()))?;
        let lib = lib.replace("%3A", ":").replace("%3a", ":");
        let library: LibraryRef = lib.parse().map_err(|e| bad(format!("{e}")))?;
        let parts: Vec<&str> = path.split('/').collect();
        let (view, key) = match parts.as_slice() {
            ["items", key] => (View::Item, *key),
            ["items", key, "fulltext.txt"] => (View::FullText, *key),
            ["items", key, "notes.md"] => (View::Notes, *key),
            ["items", key, "annotations.md"] => (View::AnnotationsMarkdown, *key),
            ["items", key, "annotations.json"] => (View::AnnotationsJson, *key),
            ["collections", key] => (View::Collection, *key),
            _ => return Err(bad(format!("no resource has the path '{}'", quote(path)))),
        };
        let key = ObjectKey::parse(key).map_err(|e| bad(format!("its key must be {e}")))?;
        Ok(Uri::Object { library, view, key })
    }
}

/// The resource templates, and the styles (a template without variables).
pub fn templates() -> Vec<ResourceTemplate> {
    let mut all: Vec<ResourceTemplate> = View::ALL
        .iter()
        .map(|v| {
            ResourceTemplate::new(
                format!("zotero://{{library}}/{}", v.path("{key}")),
                v.name(),
            )
            .with_title(v.title())
            .with_description(v.description())
            .with_mime_type(v.mime_type())
        })
        .collect();
    all.push(
        ResourceTemplate::new(STYLES_URI, "citation-styles")
            .with_title("Citation styles")
            .with_description(styles_description())
            .with_mime_type(JSON),
    );
    all
}

fn styles_description() -> String {
    format!(
        "Citation style ids for zotero_cite's style: the common ones; any id of {STYLES_URL} works."
    )
}

fn styles_resource() -> Resource {
    Resource::new(STYLES_URI, "Citation styles")
        .with_title("Citation styles")
        .with_description(styles_description())
        .with_mime_type(JSON)
}

fn args(v: Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// `v` as indented JSON, or compact when indenting would take it past the budget.
fn to_json(v: &Value) -> String {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    if pretty.chars().count() <= crate::tools::budget::ANSWER_CHARS {
        pretty
    } else {
        serde_json::to_string(v).unwrap_or_default()
    }
}

fn contents(uri: &str, mime: &str, text: String) -> ReadResourceResult {
    ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(mime)])
}

/// `data` with a `read_on` saying how to go on when the tool's page has a next one.
fn with_read_on(mut data: Value, read_on: impl FnOnce(u64) -> String) -> Value {
    if let Some(next) = data.get("next_start").and_then(Value::as_u64) {
        if let Value::Object(m) = &mut data {
            m.insert("read_on".into(), Value::from(read_on(next)));
        }
    }
    data
}

/// Reads the resource at `raw`.
pub async fn read(raw: &str, ctx: &ToolContext) -> Result<ReadResourceResult, ToolError> {
    let (library, view, key) = match Uri::parse(raw)? {
        Uri::Styles => {
            let text = to_json(&json!({
                "styles": COMMON_STYLES,
                "default": "apa",
                "note": format!("zotero_cite takes any style id of {STYLES_URL}, these and thousands more"),
            }));
            return Ok(contents(raw, JSON, text));
        }
        Uri::Object { library, view, key } => (library, view, key),
    };
    let lib = library.to_string();
    let k = key.as_str();
    let text = match view {
        View::Item => {
            let data = ToolName::GetItemMetadata
                .call(ctx, args(json!({"item_key": k, "library": lib})))
                .await?;
            to_json(&data)
        }
        View::FullText => {
            let data = ToolName::GetItemFulltext
                .call(
                    ctx,
                    args(json!({"item_key": k, "library": lib, "max_chars": FULLTEXT_CHARS})),
                )
                .await?;
            fulltext_text(&data, k, &lib)
        }
        View::Notes => {
            let data = ToolName::GetNotes
                .call(
                    ctx,
                    args(json!({
                        "item_key": k, "library": lib, "limit": NOTES, "max_chars": NOTE_CHARS
                    })),
                )
                .await?;
            notes_markdown(&data, k, &lib)
        }
        View::AnnotationsMarkdown | View::AnnotationsJson => {
            let data = ToolName::GetAnnotations
                .call(
                    ctx,
                    args(json!({"item_key": k, "library": lib, "limit": ANNOTATIONS})),
                )
                .await?;
            if view == View::AnnotationsJson {
                to_json(&with_read_on(data, |next| {
                    format!(
                        "the first {next} annotations; zotero_get_annotations with \
                         item_key {k}, library {lib} and start {next} reads on"
                    )
                }))
            } else {
                annotations_markdown(&data, k, &lib)
            }
        }
        View::Collection => {
            let data = ToolName::ListItems
                .call(
                    ctx,
                    args(json!({
                        "collection_key": k, "library": lib, "limit": COLLECTION_ITEMS
                    })),
                )
                .await?;
            to_json(&with_read_on(data, |next| {
                format!(
                    "the first {next} items; zotero_list_items with collection_key \
                     {k}, library {lib} and start {next} reads on"
                )
            }))
        }
    };
    Ok(contents(raw, view.mime_type(), text))
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The full text's first page, and how to read on when there is more.
fn fulltext_text(data: &Value, key: &str, lib: &str) -> String {
    let mut text = str_of(data, "text").to_string();
    if let Some(next) = data.get("next_offset").and_then(Value::as_u64) {
        let total = data.get("total_chars").and_then(Value::as_u64).unwrap_or(0);
        text.push_str(&format!(
            "\n\n[Cut here: this is the first {next} of {total} characters. Read on with \
             zotero_get_item_fulltext {{\"item_key\": \"{key}\", \"library\": \"{lib}\", \
             \"offset\": {next}}}.]\n"
        ));
    }
    text
}

/// The notes as one Markdown document, bounded as a whole.
fn notes_markdown(data: &Value, key: &str, lib: &str) -> String {
    let notes = data
        .get("notes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = data.get("total").and_then(Value::as_u64).unwrap_or(0);
    let mut out = format!("# Notes of {key}\n\n");
    if notes.is_empty() {
        out.push_str("No notes.\n");
        return out;
    }
    let mut shown = 0u64;
    for n in &notes {
        // The title is the note's first line as plain text, decoded: a note can start with
        // anything, `[x](javascript:…)` or `&lt;img onerror=…&gt;` included.
        let mut part = format!("## {}\n\n", escape_text(str_of(n, "title")));
        let mut meta = vec![link_to("Open in Zotero", str_of(n, "zotero_url"))];
        if let Some(d) = n.get("date_modified").and_then(Value::as_str) {
            meta.push(format!("modified {}", escape_text(d)));
        }
        meta.extend(tags_line(n));
        part.push_str(&format!("{}\n\n", meta.join(" · ")));
        // A note cut inside its code must not make the next notes code too.
        part.push_str(&close_open_fence(str_of(n, "markdown").trim_end()));
        part.push_str("\n\n");
        if let Some(next) = n.get("next_offset").and_then(Value::as_u64) {
            part.push_str(&format!(
                "_\\[Cut at {next} of {} characters: zotero_get_notes with item_key {}, \
                 library {lib} and offset {next} reads on.\\]_\n\n",
                n.get("total_chars").and_then(Value::as_u64).unwrap_or(0),
                escape_text(str_of(n, "note_key")),
            ));
        }
        part.push_str("---\n\n");
        if shown > 0 && out.len() + part.len() > NOTES_CHARS {
            break;
        }
        out.push_str(&part);
        shown += 1;
    }
    if shown < total {
        out.push_str(&format!(
            "_\\[{shown} of {total} notes shown: zotero_get_notes with item_key {key}, library \
             {lib} and start {shown} reads the others.\\]_\n"
        ));
    }
    out
}

/// "tags: a, b" of a note or annotation, each tag escaped; nothing without tags.
fn tags_line(v: &Value) -> Option<String> {
    let tags: Vec<String> = v
        .get("tags")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_str)
        .map(escape_text)
        .collect();
    (!tags.is_empty()).then(|| format!("tags: {}", tags.join(", ")))
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The annotations as Markdown, in reading order.
fn annotations_markdown(data: &Value, key: &str, lib: &str) -> String {
    let list = data
        .get("annotations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = data.get("total").and_then(Value::as_u64).unwrap_or(0);
    let mut out = format!("# Annotations of {key}\n\n");
    if list.is_empty() {
        out.push_str("No annotations.\n");
        return out;
    }
    let mut attachment = "";
    let mut shown = 0u64;
    for a in &list {
        let before = out.len();
        let on = str_of(a, "attachment_key");
        if on != attachment {
            out.push_str(&format!("## On attachment {}\n\n", escape_text(on)));
            attachment = on;
        }
        let mut head = vec![capitalized(str_of(a, "type"))];
        if let Some(p) = a.get("page_label").and_then(Value::as_str) {
            head.push(format!("p. {p}"));
        }
        match (
            a.get("color_name").and_then(Value::as_str),
            a.get("color").and_then(Value::as_str),
        ) {
            (Some(name), _) => head.push(name.to_string()),
            (None, Some(hex)) => head.push(hex.to_string()),
            _ => {}
        }
        out.push_str(&format!(
            "### {} \\[{}\\]\n\n",
            escape_text(&head.join(" · ")),
            escape_text(str_of(a, "annotation_key"))
        ));
        if let Some(t) = a.get("text").and_then(Value::as_str) {
            let quoted = escape_lines(t, "> ");
            if !quoted.is_empty() {
                out.push_str(&format!("{quoted}\n"));
            }
        }
        if let Some(c) = a.get("comment").and_then(Value::as_str) {
            let comment = escape_lines(c, "");
            if !comment.is_empty() {
                out.push_str(&format!("{comment}\n"));
            }
        }
        let mut meta = Vec::new();
        if a.get("truncated").and_then(Value::as_bool) == Some(true) {
            meta.push("cut at 1,000 characters (zotero_get_annotations max_chars)".to_string());
        }
        meta.extend(tags_line(a));
        if let Some(u) = a.get("zotero_url").and_then(Value::as_str) {
            meta.push(link_to("Open in Zotero", u));
        }
        if !meta.is_empty() {
            out.push_str(&format!("{}\n\n", meta.join(" · ")));
        }
        // Bytes bound the characters: the read stays within the budget.
        if shown > 0 && out.len() > ANNOTATIONS_CHARS {
            out.truncate(before);
            break;
        }
        shown += 1;
    }
    let next = if shown < list.len() as u64 {
        Some(shown)
    } else {
        data.get("next_start").and_then(Value::as_u64)
    };
    if let Some(next) = next {
        out.push_str(&format!(
            "_\\[{shown} of {total} annotations shown: zotero_get_annotations with item_key \
             {key}, library {lib} and start {next} reads on.\\]_\n"
        ));
    }
    out
}

/// One page of the default library's most recently modified top-level items (the styles
/// first, on the first page); the cursor is where the next page starts.
pub async fn list(
    cursor: Option<&str>,
    ctx: &ToolContext,
) -> Result<ListResourcesResult, ToolError> {
    let start = match cursor {
        None => 0,
        Some(c) => c.parse::<u64>().map_err(|_| {
            ToolError::invalid(
                "cursor",
                format!(
                    "'{}' is not a cursor of this server: pass nextCursor of the previous page",
                    quote(c)
                ),
            )
        })?,
    };
    let library = ctx.svc.default_library;
    let data = ToolName::ListItems
        .call(
            ctx,
            args(json!({
                "library": library.to_string(), "limit": LIST_PAGE, "start": start,
                "sort": "dateModified", "direction": "desc"
            })),
        )
        .await?;
    let mut resources = Vec::new();
    if start == 0 {
        resources.push(styles_resource());
    }
    for item in data
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = str_of(item, "item_key");
        let title = str_of(item, "title");
        let (name, _) = cut_chars(if title.is_empty() { key } else { title }, NAME_CHARS);
        resources.push(
            Resource::new(uri(library, View::Item, key), name)
                .with_description(item_description(item))
                .with_mime_type(JSON),
        );
    }
    let mut out = ListResourcesResult::with_all_items(resources);
    out.next_cursor = data
        .get("next_start")
        .and_then(Value::as_u64)
        .map(|n| n.to_string());
    Ok(out)
}

/// "journalArticle · Vaswani et al. · 2017": what it is, by whom, when.
fn item_description(item: &Value) -> String {
    let mut parts = vec![str_of(item, "item_type").to_string()];
    let creators = item
        .get("creators")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(first) = creators.first() {
        let name = [str_of(first, "last_name"), str_of(first, "name")]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let (name, _) = cut_chars(name, 60);
        if !name.is_empty() {
            parts.push(if creators.len() > 1 {
                format!("{name} et al.")
            } else {
                name.to_string()
            });
        }
    }
    let (date, _) = cut_chars(str_of(item, "date"), 30);
    if !date.is_empty() {
        parts.push(date.to_string());
    }
    parts.join(" · ")
}

/// What `completion/complete` completes: an item key or a collection key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completable {
    Item,
    Collection,
}

/// How many objects completion looks through: the most recently modified.
pub const COMPLETION_POOL: u64 = 100;
/// The most values a completion answers.
pub const COMPLETION_VALUES: usize = 20;

/// Keys of `library` for a value typed so far: of the 100 most recently modified top-level
/// items (or the first 100 collections), those whose key starts with `typed` or whose title
/// (name) contains it, ignoring case. One request.
pub async fn complete(
    what: Completable,
    typed: &str,
    library: LibraryRef,
    ctx: &ToolContext,
) -> Result<Vec<String>, ToolError> {
    let lib = library.to_string();
    let (tool, list, key_field, text_field) = match what {
        Completable::Item => (ToolName::ListItems, "items", "item_key", "title"),
        Completable::Collection => (
            ToolName::ListCollections,
            "collections",
            "collection_key",
            "name",
        ),
    };
    let data = tool
        .call(ctx, args(json!({"library": lib, "limit": COMPLETION_POOL})))
        .await?;
    let typed = typed.trim().to_lowercase();
    Ok(data
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|o| {
            str_of(o, key_field).to_lowercase().starts_with(&typed)
                || str_of(o, text_field).to_lowercase().contains(&typed)
        })
        .map(|o| str_of(o, key_field).to_string())
        .take(COMPLETION_VALUES)
        .collect())
}

/// A link to `uri` for a prompt's messages.
pub fn link(uri: String, name: &str, mime: &str) -> rmcp::model::PromptMessage {
    rmcp::model::PromptMessage::new_resource_link(
        Role::User,
        Resource::new(uri, name).with_mime_type(mime),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_and_round_trip() {
        let k = "VASWANI7";
        for view in View::ALL {
            for lib in [LibraryRef::User, LibraryRef::Group(4101)] {
                let u = uri(lib, view, k);
                let parsed = Uri::parse(&u).unwrap();
                assert_eq!(
                    parsed,
                    Uri::Object {
                        library: lib,
                        view,
                        key: ObjectKey::parse(k).unwrap()
                    },
                    "{u}"
                );
            }
        }
        assert_eq!(
            Uri::parse("zotero://group%3A4101/items/VASWANI7").unwrap(),
            Uri::parse("zotero://group:4101/items/VASWANI7").unwrap()
        );
        assert_eq!(Uri::parse("zotero://styles").unwrap(), Uri::Styles);
        for bad in [
            "http://user/items/VASWANI7",
            "zotero://user",
            "zotero://nobody/items/VASWANI7",
            "zotero://user/items/vaswani",
            "zotero://user/items/VASWANI7/pdf",
            "zotero://user/tags/VASWANI7",
            "zotero://",
            "",
        ] {
            let e = Uri::parse(bad).unwrap_err();
            assert_eq!(e.details["field"], "uri", "{bad}");
        }
    }

    #[test]
    fn a_page_with_a_next_one_says_how_to_read_on() {
        let more = with_read_on(json!({"items": [], "next_start": 25}), |n| {
            format!("start {n}")
        });
        assert_eq!(more["read_on"], "start 25");
        let last = with_read_on(json!({"items": []}), |n| format!("start {n}"));
        assert!(last.get("read_on").is_none());
        let text = fulltext_text(
            &json!({"text": "abc", "next_offset": 3, "total_chars": 10}),
            "VASWANI7",
            "group:1",
        );
        assert!(text.starts_with("abc\n\n[Cut here: this is the first 3 of 10"));
        assert!(
            text.contains("\"library\": \"group:1\", \"offset\": 3}"),
            "{text}"
        );
        assert_eq!(
            fulltext_text(&json!({"text": "abc"}), "VASWANI7", "user"),
            "abc"
        );
    }

    #[test]
    fn every_view_has_a_template_and_the_styles_one() {
        let t = templates();
        assert_eq!(t.len(), View::ALL.len() + 1);
        assert!(t.iter().any(
            |t| t.uri_template == "zotero://{library}/items/{key}/fulltext.txt"
                && t.mime_type.as_deref() == Some(TEXT)
        ));
    }
}
