//! `zotero_semantic_search`: ranked search of the local search index (`zotero-index`) by
//! words and meaning, one hit per item, with the passages that matched. The index is built
//! by `zotero-mcp update-db` (or `zotero_update_search_database`); without a sentence model
//! it is by words only and the answer says so.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize};
use serde_json::Value;
use zotero_api::LibraryRef;
use zotero_index::{Filters, Mode, SearchQuery};

use crate::budget;
use crate::error::ToolError;
use crate::service::index::search::{LibraryHit, Scope};
use crate::service::index::Freshness;
use crate::tools::params::{null_is_default, FilterTags, NonBlank, ObjectKey, Start};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_semantic_search` tool.
pub struct SemanticSearch;

/// Longest query (characters).
pub const QUERY_CHARS: usize = 1_000;

/// `all`, or one library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchLibrary {
    /// Every library that has an index.
    All,
    /// This library only.
    One(LibraryRef),
}

impl<'de> Deserialize<'de> for SearchLibrary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(SearchLibrary::All);
        }
        s.parse().map(SearchLibrary::One).map_err(|_| {
            de::Error::custom(format!(
                "must be \"all\", \"user\" or \"group:<groupID>\", got '{}'",
                crate::tools::params::quote(&s)
            ))
        })
    }
}

impl JsonSchema for SearchLibrary {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("SearchLibrary")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": 40, "pattern": "^(all|user|group:[0-9]+)$" })
    }
}

/// Ranking: words and meaning fused, meaning only, or words only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum SearchMode {
    #[default]
    Hybrid,
    Semantic,
    Keyword,
}

impl From<SearchMode> for Mode {
    fn from(m: SearchMode) -> Mode {
        match m {
            SearchMode::Hybrid => Mode::Hybrid,
            SearchMode::Semantic => Mode::Semantic,
            SearchMode::Keyword => Mode::Keyword,
        }
    }
}

/// The `filters` object other Zotero MCP servers take (an object, or the same as a JSON
/// string).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerFilters {
    item_type: Option<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    tags: Vec<String>,
    collection_key: Option<String>,
    year_from: Option<i32>,
    year_to: Option<i32>,
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// The filters argument as given: an object, or a JSON string of one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FiltersArg(PeerFilters);

impl<'de> Deserialize<'de> for FiltersArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let v = match v {
            Value::String(s) if s.chars().nth(2_000).is_some() => {
                return Err(de::Error::custom("must be at most 2000 characters as a string"))
            }
            Value::String(s) => serde_json::from_str::<Value>(&s).map_err(|_| {
                de::Error::custom("must be an object (or a JSON string of one) like {\"item_type\": \"journalArticle\", \"tags\": [\"nlp\"]}")
            })?,
            other => other,
        };
        if !v.is_object() {
            return Err(de::Error::custom(
                "must be an object like {\"item_type\": \"journalArticle\", \"tags\": [\"nlp\"]}",
            ));
        }
        let f: PeerFilters = serde_json::from_value(v).map_err(|e| {
            de::Error::custom(format!(
                "{e}; it takes item_type, tags, collection_key, year_from and year_to"
            ))
        })?;
        // The same bounds as the arguments of their own.
        let long = |s: &str, max: usize| s.chars().nth(max).is_some();
        if f.tags.len() > 20 || f.tags.iter().any(|t| long(t, 255)) {
            return Err(de::Error::custom(
                "tags: at most 20 tags of at most 255 characters each",
            ));
        }
        if f.item_type.as_deref().is_some_and(|t| long(t, 64)) {
            return Err(de::Error::custom("item_type: at most 64 characters"));
        }
        Ok(FiltersArg(f))
    }
}

impl JsonSchema for FiltersArg {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("PeerFilters")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["object", "string"],
            "maxLength": 2000,
            "properties": {
                "item_type": { "type": "string", "maxLength": 64 },
                "tags": {
                    "type": ["string", "array"], "maxLength": 255, "maxItems": 20,
                    "items": { "type": "string", "maxLength": 255 }
                },
                "collection_key": { "type": "string", "maxLength": 8 },
                "year_from": { "type": "integer" },
                "year_to": { "type": "integer" }
            },
            "additionalProperties": false
        })
    }
}

/// The arguments of `zotero_semantic_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SemanticSearchParams {
    /// Words or a question
    pub query: NonBlank<QUERY_CHARS>,
    /// Items to return
    #[serde(default, deserialize_with = "null_is_default")]
    pub limit: crate::tools::params::Count<1, 100, 10>,
    /// From next_start
    #[serde(default, deserialize_with = "null_is_default")]
    pub start: Start,
    /// user, group:<id> or all
    #[serde(default)]
    pub library: Option<SearchLibrary>,
    /// hybrid: words and meaning
    #[serde(default, deserialize_with = "null_is_default")]
    pub mode: SearchMode,
    /// e.g. journalArticle
    pub item_type: Option<NonBlank<64>>,
    /// In this collection
    pub collection_key: Option<ObjectKey>,
    /// Items with all these tags
    pub tags: Option<FilterTags>,
    /// From this year
    pub year_from: Option<i32>,
    /// Up to this year
    pub year_to: Option<i32>,
    /// Also trashed items
    #[serde(default, deserialize_with = "null_is_default")]
    pub include_trashed: bool,
    /// Other servers' form of the filters above
    pub filters: Option<FiltersArg>,
}

/// What `zotero_semantic_search` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SemanticSearchData {
    /// Best first, one per item
    pub results: Vec<HitOut>,
    /// The ranking used
    pub mode: SearchMode,
    /// Whether meaning (vectors) took part in the ranking
    pub semantic_used: bool,
    /// Why the search was by words only, when it was
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How fresh each library's index is and how much of it has vectors
    pub index: Vec<Freshness>,
    /// start of the next results; absent when there are no more
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start: Option<u64>,
}

/// One item found.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HitOut {
    /// 8-character key
    pub item_key: String,
    /// user or group:<id>
    pub library: String,
    /// The title (its first 300 characters)
    pub title: String,
    /// Creators, "Last, First; …" (the first 300 characters)
    pub creators: String,
    /// Year of publication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    /// Zotero item type
    pub item_type: String,
    /// 0 to 1 (1: first by every signal used)
    #[schemars(schema_with = "crate::service::index::number_schema")]
    pub score: f64,
    /// The item's rank by words (1 = best), when words matched
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<usize>,
    /// The item's rank by meaning, when meaning was used
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_rank: Option<usize>,
    /// What matched: title, metadata, abstract, note, annotation, fulltext
    pub matched: Vec<String>,
    /// Up to three matching passages (at most 400 characters each)
    pub passages: Vec<PassageOut>,
    /// Opens the item in the Zotero app: zotero://select/…
    pub zotero_url: String,
}

/// A passage that matched.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PassageOut {
    /// title, metadata, abstract, note, annotation or fulltext
    pub matched: String,
    /// The object it is from: the item, a note, an annotation, or for full text the
    /// attachment
    pub key: String,
    /// The passage (at most 400 characters)
    pub text: String,
    /// For full text: pass key as item_key and this as offset to zotero_get_item_fulltext
    /// to read on from here
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulltext_offset: Option<u64>,
    /// For text read from the attachment's file: its printed page label; to read on from
    /// the passage, also pass it as pages (the default listing has room for the label only:
    /// the page's index is in `zotero_get_item_fulltext`'s answer for it)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

/// The first 300 characters of JSON of a title or a creators line, "…" when cut.
fn short(text: String) -> String {
    match budget::cut_json(&text, 300) {
        Some((kept, _)) => format!("{kept}…"),
        None => text,
    }
}

impl ZoteroTool for SemanticSearch {
    const NAME: &'static str = "zotero_semantic_search";
    const TITLE: &'static str = "Search by meaning";
    const DESCRIPTION: &'static str = "Search the local index by words and meaning. Best first, \
        one per item: score, what matched, up to 3 passages (a full-text passage's key and \
        fulltext_offset go to zotero_get_item_fulltext). No index: zotero-mcp update-db.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Index;
    type Params = SemanticSearchParams;
    type Data = SemanticSearchData;

    fn validate(p: &SemanticSearchParams) -> Result<(), ToolError> {
        let from = p
            .year_from
            .or(p.filters.as_ref().and_then(|f| f.0.year_from));
        let to = p.year_to.or(p.filters.as_ref().and_then(|f| f.0.year_to));
        if let (Some(a), Some(b)) = (from, to) {
            if a > b {
                return Err(ToolError::invalid(
                    "year_to",
                    format!("year_to ({b}) is before year_from ({a})"),
                ));
            }
        }
        if let Some(k) = p
            .filters
            .as_ref()
            .and_then(|f| f.0.collection_key.as_deref())
        {
            if zotero_api::ObjectKey::parse(k).is_err() {
                return Err(ToolError::invalid(
                    "filters.collection_key",
                    "must be an 8-character collection key",
                ));
            }
        }
        Ok(())
    }

    async fn run(
        p: SemanticSearchParams,
        ctx: &ToolContext,
    ) -> Result<SemanticSearchData, ToolError> {
        let scope = match p.library {
            Some(SearchLibrary::All) => Scope::All,
            Some(SearchLibrary::One(l)) => Scope::One(l),
            None => Scope::One(ctx.svc.default_library),
        };
        let mode = p.mode;
        let (start, limit) = (
            usize::try_from(p.start.get()).unwrap_or(usize::MAX),
            usize::try_from(p.limit.get()).unwrap_or(10),
        );
        let first = p.start.get();
        let mut query = p.into_query();
        // One more than the page: whether there is a next one.
        query.limit = start.saturating_add(limit).saturating_add(1);
        let found = ctx.svc.index_search(query, scope, &ctx.cancel).await?;
        let more = found.hits.len() > start.saturating_add(limit);
        let results: Vec<HitOut> = found
            .hits
            .into_iter()
            .skip(start)
            .take(limit)
            .map(HitOut::from)
            .collect();
        let (results, cut) = budget::fit_page(results, budget::PAGE_CHARS);
        let next_start = (more || cut).then_some(first.saturating_add(results.len() as u64));
        Ok(SemanticSearchData {
            results,
            next_start,
            mode,
            semantic_used: found.semantic_used,
            note: found.note,
            index: found.index,
        })
    }
}

impl SemanticSearchParams {
    /// The query for the index: the arguments of its own win over the peer `filters`.
    fn into_query(self) -> SearchQuery {
        let peer = self.filters.map(|f| f.0).unwrap_or_default();
        let mut tags: Vec<String> = self.tags.map(FilterTags::into_strings).unwrap_or(peer.tags);
        tags.dedup();
        let mut query = SearchQuery::new(self.query.as_str()).mode(self.mode.into());
        query.filters = Filters {
            item_type: self.item_type.map(NonBlank::into_string).or(peer.item_type),
            collection_key: self
                .collection_key
                .map(|k| k.key().to_string())
                .or(peer.collection_key),
            tags,
            year_from: self.year_from.or(peer.year_from),
            year_to: self.year_to.or(peer.year_to),
            include_trashed: self.include_trashed,
        };
        query.limit = usize::try_from(self.limit.get()).unwrap_or(10);
        query
    }
}

impl From<LibraryHit> for HitOut {
    fn from(LibraryHit { library, hit: h }: LibraryHit) -> Self {
        HitOut {
            zotero_url: zotero_api::ObjectKey::parse(&h.item_key)
                .map(|k| library.zotero_url(&k))
                .unwrap_or_default(),
            item_key: h.item_key,
            library: library.to_string(),
            title: short(h.title),
            creators: short(h.creators),
            year: h.year,
            item_type: h.item_type,
            score: h.score,
            keyword_rank: h.keyword_rank,
            semantic_rank: h.semantic_rank,
            matched: h.matched.iter().map(|m| m.as_str().to_string()).collect(),
            passages: h
                .passages
                .into_iter()
                .map(|ps| PassageOut {
                    matched: ps.matched.as_str().to_string(),
                    key: ps.doc_key,
                    text: ps.text,
                    fulltext_offset: ps.fulltext_offset,
                    page: ps.page.map(|p| p.label),
                })
                .collect(),
        }
    }
}
