//! MCP resources: an item, its full text, notes and annotations, a collection's items and
//! the citation styles, read by `zotero://` URI. Each read is the answer of the tool that
//! reads the same thing (called with the same checks), bounded, and saying when it was cut
//! and which tool reads on. `resources/list` pages through the recently changed items of the
//! default library, not the whole library.

use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};
use rmcp::model::{ResourceTemplate, Role};
use serde::Serialize;
use serde_json::{json, Value};
use zotero_api::{LibraryRef, ObjectKey};

use crate::mcp::envelope::{ErrorCode, ToolError};
use crate::notes::markdown::{close_open_fence, cut_chars, escape_lines, escape_text, link_to};
use crate::tools::collections::list_collections::{ListCollections, ListCollectionsParams};
use crate::tools::files::get_item_fulltext::{
    GetItemFulltext, GetItemFulltextData, GetItemFulltextParams, MaxChars,
};
use crate::tools::items::get_item_metadata::{
    GetItemMetadata, GetItemMetadataParams, MetadataFormat,
};
use crate::tools::items::list_items::{ListItems, ListItemsParams};
use crate::tools::notes::get_annotations::{
    GetAnnotations, GetAnnotationsData, GetAnnotationsParams,
};
use crate::tools::notes::get_notes::{GetNotes, GetNotesData, GetNotesParams};
use crate::tools::output::Item;
use crate::tools::params::{
    quote, ItemSort, LibraryParam, Limit, NoteChars, NoteLimit, ObjectKey as ObjectKeyParam,
    SortDirection, Start, COMMON_STYLES, STYLES_URL,
};
use crate::tools::{self, ToolContext};

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

/// A tool's answer as pretty JSON, as the tool's `data` (keys in the order a call's answer
/// has them), with a `read_on` when it has one.
fn json_text<T: Serialize>(data: &T, read_on: Option<String>) -> Result<String, ToolError> {
    let mut value = serde_json::to_value(data).map_err(|e| {
        ToolError::new(
            ErrorCode::Internal,
            format!("a resource could not write its answer: {e}"),
        )
    })?;
    if let (Some(read_on), Value::Object(m)) = (read_on, &mut value) {
        m.insert("read_on".into(), Value::from(read_on));
    }
    Ok(to_json(&value))
}

/// Reads the resource at `raw`.
pub async fn read(raw: &str, ctx: &ToolContext) -> Result<ReadResourceResult, ToolError> {
    let (library, view, key) = match Uri::parse(raw)? {
        Uri::Styles => {
            let text = json_text(
                &json!({
                    "styles": COMMON_STYLES,
                    "default": "apa",
                    "note": format!("zotero_cite takes any style id of {STYLES_URL}, these and thousands more"),
                }),
                None,
            )?;
            return Ok(contents(raw, JSON, text));
        }
        Uri::Object { library, view, key } => (library, view, key),
    };
    let lib = library.to_string();
    let k = key.as_str().to_string();
    let item_key = ObjectKeyParam::from(key);
    let in_library = Some(LibraryParam(library));
    let text = match view {
        View::Item => {
            let params = GetItemMetadataParams {
                item_key,
                format: MetadataFormat::default(),
                include_abstract: true,
                field: None,
                offset: Start::default(),
                library: in_library,
            };
            json_text(&tools::run::<GetItemMetadata>(params, ctx).await?, None)?
        }
        View::FullText => {
            let params = GetItemFulltextParams {
                item_key,
                offset: Start::default(),
                max_chars: Some(MaxChars::of::<FULLTEXT_CHARS>()),
                library: in_library,
            };
            let data = tools::run::<GetItemFulltext>(params, ctx).await?;
            fulltext_text(&data, &k, &lib)
        }
        View::Notes => {
            let params = GetNotesParams {
                item_key,
                limit: NoteLimit::of::<NOTES>(),
                start: Start::default(),
                max_chars: NoteChars::of::<NOTE_CHARS>(),
                offset: Start::default(),
                library: in_library,
            };
            let data = tools::run::<GetNotes>(params, ctx).await?;
            notes_markdown(&data, &k, &lib)
        }
        View::AnnotationsMarkdown | View::AnnotationsJson => {
            let params = GetAnnotationsParams {
                item_key,
                types: Default::default(),
                colors: Default::default(),
                tags: Default::default(),
                limit: Limit::of::<ANNOTATIONS>(),
                start: Start::default(),
                max_chars: Default::default(),
                library: in_library,
            };
            let data = tools::run::<GetAnnotations>(params, ctx).await?;
            if view == View::AnnotationsJson {
                let read_on = data.next_start.map(|next| {
                    format!(
                        "the first {next} annotations; zotero_get_annotations with \
                         item_key {k}, library {lib} and start {next} reads on"
                    )
                });
                json_text(&data, read_on)?
            } else {
                annotations_markdown(&data, &k, &lib)
            }
        }
        View::Collection => {
            let params = ListItemsParams {
                collection_key: Some(item_key),
                limit: Limit::of::<COLLECTION_ITEMS>(),
                library: in_library,
                ..list_items_params()
            };
            let data = tools::run::<ListItems>(params, ctx).await?;
            let read_on = data.next_start.map(|next| {
                format!(
                    "the first {next} items; zotero_list_items with collection_key \
                     {k}, library {lib} and start {next} reads on"
                )
            });
            json_text(&data, read_on)?
        }
    };
    Ok(contents(raw, view.mime_type(), text))
}

/// `zotero_list_items`'s parameters when none is given.
fn list_items_params() -> ListItemsParams {
    ListItemsParams {
        collection_key: None,
        tags: None,
        exclude_tags: None,
        item_type: None,
        since: None,
        trashed: None,
        top_only: None,
        sort: ItemSort::default(),
        direction: None,
        limit: Limit::default(),
        start: Start::default(),
        library: None,
    }
}

/// The full text's first page, and how to read on when there is more.
fn fulltext_text(data: &GetItemFulltextData, key: &str, lib: &str) -> String {
    let mut text = data.text.clone();
    if let Some(next) = data.next_offset {
        let total = data.total_chars;
        text.push_str(&format!(
            "\n\n[Cut here: this is the first {next} of {total} characters. Read on with \
             zotero_get_item_fulltext {{\"item_key\": \"{key}\", \"library\": \"{lib}\", \
             \"offset\": {next}}}.]\n"
        ));
    }
    text
}

/// The notes as one Markdown document, bounded as a whole.
fn notes_markdown(data: &GetNotesData, key: &str, lib: &str) -> String {
    let total = data.total;
    let mut out = format!("# Notes of {key}\n\n");
    if data.notes.is_empty() {
        out.push_str("No notes.\n");
        return out;
    }
    let mut shown = 0u64;
    for n in &data.notes {
        // The title is the note's first line as plain text, decoded: a note can start with
        // anything, `[x](javascript:…)` or `&lt;img onerror=…&gt;` included.
        let mut part = format!("## {}\n\n", escape_text(&n.title));
        let mut meta = vec![link_to("Open in Zotero", &n.zotero_url)];
        if let Some(d) = &n.date_modified {
            meta.push(format!("modified {}", escape_text(d)));
        }
        meta.extend(tags_line(&n.tags));
        part.push_str(&format!("{}\n\n", meta.join(" · ")));
        // A note cut inside its code must not make the next notes code too.
        part.push_str(&close_open_fence(n.markdown.trim_end()));
        part.push_str("\n\n");
        if let Some(next) = n.next_offset {
            part.push_str(&format!(
                "_\\[Cut at {next} of {} characters: zotero_get_notes with item_key {}, \
                 library {lib} and offset {next} reads on.\\]_\n\n",
                n.total_chars,
                escape_text(&n.note_key),
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
fn tags_line(tags: &[String]) -> Option<String> {
    let tags: Vec<String> = tags.iter().map(|t| escape_text(t)).collect();
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
fn annotations_markdown(data: &GetAnnotationsData, key: &str, lib: &str) -> String {
    let list = &data.annotations;
    let total = data.total;
    let mut out = format!("# Annotations of {key}\n\n");
    if list.is_empty() {
        out.push_str("No annotations.\n");
        return out;
    }
    let mut attachment = "";
    let mut shown = 0u64;
    for a in list {
        let before = out.len();
        let on = a.attachment_key.as_str();
        if on != attachment {
            out.push_str(&format!("## On attachment {}\n\n", escape_text(on)));
            attachment = on;
        }
        let mut head = vec![capitalized(&a.annotation_type)];
        if let Some(p) = &a.page_label {
            head.push(format!("p. {p}"));
        }
        match (&a.color_name, &a.color) {
            (Some(name), _) => head.push(name.clone()),
            (None, Some(hex)) => head.push(hex.clone()),
            _ => {}
        }
        out.push_str(&format!(
            "### {} \\[{}\\]\n\n",
            escape_text(&head.join(" · ")),
            escape_text(&a.annotation_key)
        ));
        if let Some(t) = &a.text {
            let quoted = escape_lines(t, "> ");
            if !quoted.is_empty() {
                out.push_str(&format!("{quoted}\n"));
            }
        }
        if let Some(c) = &a.comment {
            let comment = escape_lines(c, "");
            if !comment.is_empty() {
                out.push_str(&format!("{comment}\n"));
            }
        }
        let mut meta = Vec::new();
        if a.truncated {
            meta.push("cut at 1,000 characters (zotero_get_annotations max_chars)".to_string());
        }
        meta.extend(tags_line(&a.tags));
        if let Some(u) = &a.zotero_url {
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
        data.next_start
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
    let params = ListItemsParams {
        library: Some(LibraryParam(library)),
        limit: Limit::of::<LIST_PAGE>(),
        start: Start::from(start),
        sort: ItemSort::default(),
        direction: Some(SortDirection::Desc),
        ..list_items_params()
    };
    let data = tools::run::<ListItems>(params, ctx).await?;
    let mut resources = Vec::new();
    if start == 0 {
        resources.push(styles_resource());
    }
    for item in &data.items {
        let key = item.item_key.as_str();
        let title = item.title.as_str();
        let (name, _) = cut_chars(if title.is_empty() { key } else { title }, NAME_CHARS);
        resources.push(
            Resource::new(uri(library, View::Item, key), name)
                .with_description(item_description(item))
                .with_mime_type(JSON),
        );
    }
    let mut out = ListResourcesResult::with_all_items(resources);
    out.next_cursor = data.next_start.map(|n| n.to_string());
    Ok(out)
}

/// "journalArticle · Vaswani et al. · 2017": what it is, by whom, when.
fn item_description(item: &Item) -> String {
    let mut parts = vec![item.item_type.clone()];
    if let Some(first) = item.creators.first() {
        let name = [first.last_name.as_deref(), first.name.as_deref()]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let (name, _) = cut_chars(name, 60);
        if !name.is_empty() {
            parts.push(if item.creators.len() > 1 {
                format!("{name} et al.")
            } else {
                name.to_string()
            });
        }
    }
    let (date, _) = cut_chars(item.date.as_deref().unwrap_or_default(), 30);
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
    let in_library = Some(LibraryParam(library));
    let pool = Limit::of::<COMPLETION_POOL>();
    // Each candidate as (key, title or name).
    let candidates: Vec<(String, String)> = match what {
        Completable::Item => {
            let params = ListItemsParams {
                library: in_library,
                limit: pool,
                ..list_items_params()
            };
            let data = tools::run::<ListItems>(params, ctx).await?;
            data.items
                .into_iter()
                .map(|i| (i.item_key, i.title))
                .collect()
        }
        Completable::Collection => {
            let params = ListCollectionsParams {
                limit: pool,
                start: Start::default(),
                parent_key: None,
                top_only: None,
                tree: None,
                library: in_library,
            };
            let data = tools::run::<ListCollections>(params, ctx).await?;
            data.collections
                .into_iter()
                .map(|c| (c.collection.collection_key, c.collection.name))
                .collect()
        }
    };
    let typed = typed.trim().to_lowercase();
    Ok(candidates
        .into_iter()
        .filter(|(key, text)| {
            key.to_lowercase().starts_with(&typed) || text.to_lowercase().contains(&typed)
        })
        .map(|(key, _)| key)
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

    fn page(text: &str, next_offset: Option<u64>, total_chars: u64) -> GetItemFulltextData {
        GetItemFulltextData {
            item_key: "VASWANI7".into(),
            item_type: "journalArticle".into(),
            title: String::new(),
            zotero_url: String::new(),
            text: text.into(),
            offset: 0,
            next_offset,
            total_chars,
            sections: Vec::new(),
            not_indexed: Vec::new(),
            unread_attachments: 0,
        }
    }

    #[test]
    fn a_page_with_a_next_one_says_how_to_read_on() {
        let more: Value = serde_json::from_str(
            &json_text(&json!({"items": []}), Some("start 25".into())).unwrap(),
        )
        .unwrap();
        assert_eq!(more["read_on"], "start 25");
        let last: Value =
            serde_json::from_str(&json_text(&json!({"items": []}), None).unwrap()).unwrap();
        assert!(last.get("read_on").is_none());
        let text = fulltext_text(&page("abc", Some(3), 10), "VASWANI7", "group:1");
        assert!(text.starts_with("abc\n\n[Cut here: this is the first 3 of 10"));
        assert!(
            text.contains("\"library\": \"group:1\", \"offset\": 3}"),
            "{text}"
        );
        assert_eq!(
            fulltext_text(&page("abc", None, 3), "VASWANI7", "user"),
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
