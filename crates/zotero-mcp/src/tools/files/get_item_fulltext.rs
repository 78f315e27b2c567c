//! `zotero_get_item_fulltext`: one page of the text Zotero indexed for an item (its
//! attachments' texts, each under a header) or for one attachment; with `pages`, or when
//! Zotero indexed nothing, the text of the attachment's file, page by page, each page under
//! its label (`service::fulltext`).

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize};
use zotero_api::fulltext::{DocumentKind, FullTextPage, PageRequest, Section, TextSource};
use zotero_api::LibraryRef;

use crate::budget;
use crate::error::ToolError;
use crate::service::fulltext::{FileText, ItemText};
use crate::tools::params::{library, null_is_default, LibraryParam, ObjectKey, Start, WholeNumber};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_get_item_fulltext` tool.
pub struct GetItemFulltext;

/// How many characters one page holds: 1 to 100,000, 16,000 unless given (and then the
/// answer is cut to the budget too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MaxChars(u64);

impl MaxChars {
    /// Characters of a page unless given (the default page also stops within the answer budget).
    pub const DEFAULT: u64 = 16_000;
    /// The most characters a page may hold.
    pub const MAX: u64 = 100_000;

    /// `N` characters, checked against 1 to 100,000 when compiled.
    pub const fn of<const N: u64>() -> Self {
        const { assert!(N >= 1 && N <= MaxChars::MAX) };
        Self(N)
    }

    /// The page this asks for from `offset`. UTF-8 bytes are bounded too, at 1.5 per
    /// character asked for (24,000 by default): text of 2 to 4 bytes a character comes in
    /// shorter pages instead of answers two or three times the size.
    pub fn page_from(self, offset: u64) -> PageRequest {
        PageRequest {
            offset,
            max_chars: self.0,
            max_bytes: usize::try_from(self.0.saturating_mul(3) / 2).unwrap_or(usize::MAX),
        }
    }
}

impl Default for MaxChars {
    fn default() -> Self {
        Self(Self::DEFAULT)
    }
}

impl<'de> Deserialize<'de> for MaxChars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeNumber {
            min: 1,
            max: MaxChars::MAX,
        })
        .map(Self)
        .map_err(de::Error::custom)
    }
}

impl JsonSchema for MaxChars {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("MaxChars")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 1, "maximum": MaxChars::MAX })
    }
}

/// The arguments of `zotero_get_item_fulltext`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetItemFulltextParams {
    /// An item (all its attachments) or one attachment
    pub item_key: ObjectKey,
    /// next_offset of the previous page
    #[serde(default, deserialize_with = "null_is_default")]
    pub offset: Start,
    /// Per page
    #[serde(default)]
    #[schemars(extend("default" = 16_000))]
    pub max_chars: Option<MaxChars>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
    /// Page labels or numbers: iv, 2,5-7
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub pages: Option<String>,
}

/// Where the text came from: Zotero's full-text index, or the file read page by page.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextOrigin {
    #[allow(missing_docs)]
    ZoteroIndex,
    #[allow(missing_docs)]
    File,
}

// By hand: the values say what they are, a plain enum of strings (no `oneOf`).
impl JsonSchema for TextOrigin {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("TextOrigin")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": ["zotero_index", "file"] })
    }
}

/// One page of the file in this answer's text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageInfo {
    /// Printed label
    pub label: String,
    /// 1-based position in the file
    pub number: u32,
    /// text, or why none: no_text_layer, encrypted, damaged
    pub status: String,
    /// Where its part (header, then text) starts
    pub offset: u64,
    /// Where it ends (exclusive)
    pub end_offset: u64,
    /// Running headers/footers in its text (lines repeated at the top or bottom of most
    /// pages, page numbers folded), marked, not removed: [start, end) in characters. The
    /// schema says only "array": the whole tools/list answer has a byte budget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "any_array")]
    pub running: Vec<[u64; 2]>,
}

fn any_array(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array" })
}

/// An attachment read for the text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Source {
    /// Key of the attachment item
    pub attachment_key: String,
    /// Title (else the file name)
    pub title: String,
    /// MIME type
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// pdf, epub, html (a web snapshot), text or other
    pub kind: DocumentKind,
}

impl From<TextSource> for Source {
    fn from(s: TextSource) -> Self {
        Self {
            attachment_key: s.attachment_key.to_string(),
            title: s.title,
            content_type: s.content_type,
            kind: s.kind,
        }
    }
}

/// One attachment's part of the text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FulltextSection {
    /// The attachment the text is from
    #[serde(flatten)]
    pub source: Source,
    /// Where its part (header, then text) starts in the whole text, in characters
    pub offset: u64,
    /// Where its part ends (exclusive)
    pub end_offset: u64,
    /// PDF pages Zotero took text from
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_pages: Option<u64>,
    /// Pages of the PDF
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// Characters Zotero indexed (as Zotero counts them)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_chars: Option<u64>,
    /// Characters of the document (as Zotero counts them)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_chars: Option<u64>,
    /// Zotero indexed only part of the document: the rest is not in the text
    pub partial: bool,
}

impl From<Section> for FulltextSection {
    fn from(s: Section) -> Self {
        Self {
            partial: s.stats.partial(),
            source: s.source.into(),
            offset: s.offset,
            end_offset: s.end_offset,
            indexed_pages: s.stats.indexed_pages,
            total_pages: s.stats.total_pages,
            indexed_chars: s.stats.indexed_chars,
            total_chars: s.stats.total_chars,
        }
    }
}

/// What `zotero_get_item_fulltext` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetItemFulltextData {
    /// The item asked for
    pub item_key: String,
    /// Its Zotero item type
    pub item_type: String,
    /// Its title
    pub title: String,
    /// Opens the item in the Zotero app: zotero://select/…
    pub zotero_url: String,
    /// This page of the text
    pub text: String,
    /// Where this page starts, in characters
    pub offset: u64,
    /// Where the next page starts; absent on the last page
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Characters in the whole text (headers included)
    pub total_chars: u64,
    /// zotero_index, or file (read page by page)
    pub source: TextOrigin,
    /// The attachments whose text it is, in order
    pub sections: Vec<FulltextSection>,
    /// The file's pages here (source file)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageInfo>,
    /// Attachments Zotero has no indexed text for
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_indexed: Vec<Source>,
    /// Attachments beyond the first 25 that were not read (ask for one by its key)
    #[serde(skip_serializing_if = "is_zero")]
    pub unread_attachments: u64,
}

impl GetItemFulltextData {
    /// The page cut where the answer would pass the budget, `next_offset` moved to the cut.
    fn fit_budget(&mut self) {
        let text = std::mem::take(&mut self.text);
        // The rest of the answer, and the envelope and the JSON escapes around the text.
        let room = budget::ANSWER_CHARS.saturating_sub(budget::json_chars(self) + 100);
        match budget::cut_json(&text, room) {
            Some((kept, n)) => {
                self.text = kept.to_string();
                self.next_offset = Some(self.offset.saturating_add(n as u64));
            }
            None => self.text = text,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl GetItemFulltextData {
    fn new(f: FullTextPage, library: LibraryRef) -> Self {
        Self {
            zotero_url: library.zotero_url(&f.item_key),
            item_key: f.item_key.to_string(),
            item_type: f.item_type,
            title: f.title,
            text: f.page.text,
            offset: f.offset,
            next_offset: f.page.next_offset,
            total_chars: f.page.total_chars,
            source: TextOrigin::ZoteroIndex,
            pages: Vec::new(),
            sections: f.sections.into_iter().map(Into::into).collect(),
            not_indexed: f.not_indexed.into_iter().map(Into::into).collect(),
            unread_attachments: f.unread as u64,
        }
    }
}

impl GetItemFulltextData {
    fn from_file(f: FileText, library: LibraryRef) -> Self {
        let end_offset = f.page.total_chars;
        let section = FulltextSection {
            source: Source {
                attachment_key: f.attachment.key,
                title: f.attachment.title,
                content_type: f.attachment.content_type,
                kind: f.attachment.kind,
            },
            offset: 0,
            end_offset,
            indexed_pages: None,
            total_pages: Some(f.total_pages),
            indexed_chars: None,
            total_chars: None,
            partial: false,
        };
        Self {
            zotero_url: library.zotero_url(&f.item_key),
            item_key: f.item_key.to_string(),
            item_type: f.item_type,
            title: f.title,
            text: f.page.text,
            offset: f.offset,
            next_offset: f.page.next_offset,
            total_chars: f.page.total_chars,
            source: TextOrigin::File,
            sections: vec![section],
            pages: f
                .pages
                .into_iter()
                .map(|p| PageInfo {
                    label: p.label,
                    number: p.number,
                    status: p.status.to_string(),
                    offset: p.offset,
                    end_offset: p.end_offset,
                    running: p.running,
                })
                .collect(),
            not_indexed: Vec::new(),
            unread_attachments: 0,
        }
    }

    /// The text's length in characters, for the offset check.
    fn total(text: &ItemText) -> u64 {
        match text {
            ItemText::Index(f) => f.page.total_chars,
            ItemText::File(f) => f.page.total_chars,
        }
    }
}

impl ZoteroTool for GetItemFulltext {
    const NAME: &'static str = "zotero_get_item_fulltext";
    const TITLE: &'static str = "Get item full text";
    const DESCRIPTION: &'static str = "Text of an item's attachments or of one, paged by \
        next_offset; pages picks pages by label.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Read;
    type Params = GetItemFulltextParams;
    type Data = GetItemFulltextData;

    async fn run(
        p: GetItemFulltextParams,
        ctx: &ToolContext,
    ) -> Result<GetItemFulltextData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let offset = p.offset.get();
        let page = p.max_chars.unwrap_or_default().page_from(offset);
        let text = ctx
            .svc
            .item_text(lib, p.item_key.key(), page, p.pages.as_deref(), &ctx.cancel)
            .await?;
        let total = GetItemFulltextData::total(&text);
        if offset > total {
            return Err(ToolError::invalid(
                "offset",
                format!(
                    "'offset' must be at most {total}, the characters in the text of {}, got {offset}",
                    p.item_key
                ),
            )
            .with_detail("total_chars", total));
        }
        let mut data = match text {
            ItemText::Index(f) => GetItemFulltextData::new(f, lib.name()),
            ItemText::File(f) => GetItemFulltextData::from_file(f, lib.name()),
        };
        if p.max_chars.is_none() {
            data.fit_budget();
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_chars_is_bounded_and_bounds_bytes_too() {
        let parse = |v: serde_json::Value| serde_json::from_value::<MaxChars>(v);
        assert_eq!(MaxChars::default().page_from(7).max_bytes, 24_000);
        assert_eq!(MaxChars::default().page_from(7).offset, 7);
        assert_eq!(parse(serde_json::json!(100_000)).unwrap().0, 100_000);
        assert_eq!(
            parse(serde_json::json!(1)).unwrap().page_from(0).max_bytes,
            1
        );
        for bad in [
            serde_json::json!(0),
            serde_json::json!(100_001),
            serde_json::json!(2.5),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad}");
        }
    }
}
