//! `zotero_cite`: a bibliography, or a citation per item, of up to 50 items in any CSL style,
//! rendered by Zotero itself (`format=bib`, `include=citation`), so it matches what the user
//! sees in Zotero. A style id without the shape of one is refused before any request; one
//! Zotero does not have is a validation error after the one request that asked.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_api::export::CiteOptions;

use crate::budget;
use crate::error::ToolError;
use crate::tools::cite::citation_text::{render, TextFormat};
use crate::tools::params::{
    library, null_is_default, LibraryParam, List, Locale, ObjectKey, Start, StyleId,
};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_cite` tool.
pub struct Cite;

/// Items one call may cite. Zotero renders at most 150 items into one bibliography (more
/// answer 413), so this limit keeps every call within it.
pub const MAX_CITE_KEYS: usize = 50;
/// The most a bibliography may hold in an answer (characters of JSON): a longer one is cut,
/// and the answer stays within the budget of 20,000 characters.
const MAX_BIBLIOGRAPHY_CHARS: usize = 16_000;
/// The most one citation may hold in an answer (bytes): 50 of them stay under 60 KB.
const MAX_CITATION_BYTES: usize = 1_200;

/// How the citations are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum CiteFormat {
    // Plain text, one entry a line
    #[default]
    Text,
    // Zotero's HTML
    Html,
    // Markdown (italics as *…*)
    Markdown,
}

/// What is made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum CiteMode {
    // A reference list of the items, sorted or numbered as the style says
    #[default]
    Bibliography,
    // One in-text citation (or footnote) per item
    Citation,
}

/// The arguments of `zotero_cite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CiteParams {
    /// Keys of the items to cite, 1 to 50, e.g. ["X42A7DEE"]
    #[schemars(extend("minItems" = 1))]
    pub item_keys: List<ObjectKey, MAX_CITE_KEYS>,
    /// A CSL style id from https://www.zotero.org/styles, e.g. apa, chicago-note-bibliography, ieee, nature
    #[serde(default, deserialize_with = "null_is_default")]
    pub style: StyleId,
    /// Language and region of the style's terms and dates, e.g. en-US, en-GB, de-DE; Zotero's default (en-US) if left out
    #[serde(default)]
    pub locale: Option<Locale>,
    /// text (default), html or markdown
    #[serde(default, deserialize_with = "null_is_default")]
    pub format: CiteFormat,
    /// bibliography (default) or citation
    #[serde(default, deserialize_with = "null_is_default")]
    pub mode: CiteMode,
    /// Characters of the bibliography to skip: next_offset of a cut answer
    #[serde(default, deserialize_with = "null_is_default")]
    pub offset: Start,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// One item's citation.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CitationOut {
    /// The item's key
    pub item_key: String,
    /// Its citation in the style
    pub citation: String,
}

/// What `zotero_cite` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CiteData {
    /// The style used
    pub style: String,
    /// The locale asked for; absent when Zotero's default was used
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The format asked for
    pub format: CiteFormat,
    /// bibliography or citation, as asked
    pub mode: CiteMode,
    /// The bibliography (mode bibliography)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bibliography: Option<String>,
    /// A citation of each item found, in the order of item_keys (mode citation)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citations: Option<Vec<CitationOut>>,
    /// Entries in the bibliography, or citations made
    pub count: usize,
    /// Keys Zotero did not cite: not in this library (for citations also notes and attachments, which have none)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_keys: Vec<String>,
    /// Present when a text was longer than an answer may be and was cut
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Where the rest of a cut bibliography starts: pass it as offset, with the same
    /// item_keys, to read on
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

fn text_format(f: CiteFormat) -> TextFormat {
    match f {
        CiteFormat::Text => TextFormat::Text,
        CiteFormat::Html => TextFormat::Html,
        CiteFormat::Markdown => TextFormat::Markdown,
    }
}

/// `text` cut to at most `max` bytes on a character boundary, and whether it was cut.
fn cut(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
    (text, true)
}

/// `text` cut to at most `max` characters of JSON, the characters kept, and whether it was
/// cut.
fn cut_chars(text: String, max: usize) -> (String, u64, bool) {
    match budget::cut_json(&text, max) {
        Some((kept, n)) => (kept.to_string(), n as u64, true),
        None => {
            let n = text.chars().count() as u64;
            (text, n, false)
        }
    }
}

impl ZoteroTool for Cite {
    const NAME: &'static str = "zotero_cite";
    const TITLE: &'static str = "Cite items";
    const DESCRIPTION: &'static str = "Format a bibliography (mode bibliography) or one \
        citation per item (mode citation) for up to 50 Zotero items in any CSL citation \
        style, rendered by Zotero itself so it matches what the user sees in Zotero. style is \
        a style id from https://www.zotero.org/styles (default apa); an unknown id is a \
        validation error. format: text, html or markdown.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Cite;
    type Params = CiteParams;
    type Data = CiteData;

    fn validate(p: &CiteParams) -> Result<(), ToolError> {
        if p.item_keys.is_empty() {
            return Err(ToolError::invalid(
                "item_keys",
                "'item_keys' must list at least one item key",
            ));
        }
        if p.offset.get() > 0 && p.mode == CiteMode::Citation {
            return Err(ToolError::invalid(
                "offset",
                "'offset' reads a cut bibliography on: leave out mode citation or offset",
            ));
        }
        Ok(())
    }

    async fn run(p: CiteParams, ctx: &ToolContext) -> Result<CiteData, ToolError> {
        let mut keys: Vec<zotero_api::ObjectKey> = Vec::with_capacity(p.item_keys.len());
        for k in p.item_keys.iter() {
            if !keys.contains(k.key()) {
                keys.push(k.key().clone());
            }
        }
        let locale = p.locale.map(Locale::into_string);
        let opts = CiteOptions {
            style: p.style.as_str().to_string(),
            locale: locale.clone(),
        };
        let lib = ctx.svc.library(library(p.library))?;
        let as_text = |html: &str| render(html, text_format(p.format));
        let mut data = CiteData {
            style: opts.style.clone(),
            locale,
            format: p.format,
            mode: p.mode,
            bibliography: None,
            citations: None,
            count: 0,
            missing_keys: Vec::new(),
            truncated: false,
            next_offset: None,
        };
        match p.mode {
            CiteMode::Bibliography => {
                let bib = lib.bibliography(&keys, &opts, &ctx.cancel).await?;
                let whole = as_text(&bib.html);
                let offset = p.offset.get();
                let total = whole.chars().count() as u64;
                if offset > total {
                    return Err(ToolError::invalid(
                        "offset",
                        format!(
                            "'offset' must be at most {total}, the characters of the \
                             bibliography, got {offset}"
                        ),
                    ));
                }
                let rest: String = whole
                    .chars()
                    .skip(usize::try_from(offset).unwrap_or(usize::MAX))
                    .collect();
                let (text, shown, truncated) = cut_chars(rest, MAX_BIBLIOGRAPHY_CHARS);
                data.next_offset = truncated.then_some(offset.saturating_add(shown));
                data.bibliography = Some(text);
                data.count = bib.entries;
                data.missing_keys = bib.missing_keys;
                data.truncated = truncated;
            }
            CiteMode::Citation => {
                let found = lib.citations(&keys, &opts, &ctx.cancel).await?;
                let mut out = Vec::with_capacity(found.citations.len());
                for c in found.citations {
                    let (citation, truncated) = cut(as_text(&c.html), MAX_CITATION_BYTES);
                    data.truncated |= truncated;
                    out.push(CitationOut {
                        item_key: c.item_key,
                        citation,
                    });
                }
                data.count = out.len();
                data.citations = Some(out);
                data.missing_keys = found.missing_keys;
            }
        }
        Ok(data)
    }
}
