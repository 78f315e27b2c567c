//! The `zotero://` URIs this server reads: what each names ([`View`], [`Uri`]), their
//! templates as `resources/templates/list` publishes them, and links to them for prompts.

use rmcp::model::{Resource, ResourceTemplate, Role};
use zotero_api::{LibraryRef, ObjectKey};

use crate::error::ToolError;
use crate::tools::params::{quote, STYLES_URL};

pub const JSON: &str = "application/json";
pub const TEXT: &str = "text/plain";
pub const MARKDOWN: &str = "text/markdown";

/// The URI of the citation styles.
pub const STYLES_URI: &str = "zotero://styles";

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

pub(super) fn styles_resource() -> Resource {
    Resource::new(STYLES_URI, "Citation styles")
        .with_title("Citation styles")
        .with_description(styles_description())
        .with_mime_type(JSON)
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
    fn every_view_has_a_template_and_the_styles_one() {
        let t = templates();
        assert_eq!(t.len(), View::ALL.len() + 1);
        assert!(t.iter().any(
            |t| t.uri_template == "zotero://{library}/items/{key}/fulltext.txt"
                && t.mime_type.as_deref() == Some(TEXT)
        ));
    }
}
