//! `zotero_find_related`: what a work cites and what cites it (OpenAlex, with Crossref's
//! reference lists where OpenAlex has none), or the works most often cited by a set of
//! works, each marked in_library (see `crate::service::research::graph`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_metadata::identifiers::{self, Identifier};

use crate::budget::PAGE_CHARS;
use crate::error::ToolError;
use crate::service::research::graph::{
    self, find_related, Cursor, Direction, RelatedRequest, Seed, Work, WorkList,
};
use crate::service::research::in_library::MatchedBy;
use crate::tools::params::{library, limits, LibraryParam, List, ObjectKey, Text};
use crate::tools::tool::{Hints, ToolContext, ToolSet, ZoteroTool};

/// The `zotero_find_related` tool.
pub struct FindRelated;

/// The most works one call starts from (co_cited).
pub const MAX_SEEDS: usize = 20;

/// Which works to answer.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A doc on a variant would publish the schema's enum as a oneOf: the field's doc says it.
#[allow(missing_docs)]
pub enum DirectionParam {
    References,
    Citing,
    #[default]
    Both,
    CoCited,
}

/// The arguments of `zotero_find_related`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindRelatedParams {
    /// Library items to start from (their DOI is used): one, or 2-20 for co_cited
    #[serde(default)]
    pub item_keys: Option<List<ObjectKey, MAX_SEEDS>>,
    /// DOIs to start from, as item_keys
    #[serde(default)]
    pub dois: Option<List<Text<{ limits::IDENTIFIER }>, MAX_SEEDS>>,
    /// references (what it cites), citing (what cites it), both (default), or co_cited (the works most often in the given works' reference lists)
    #[serde(default)]
    pub direction: DirectionParam,
    /// Works per list, 1-50 (default 20)
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// A list's next_cursor, to read it on (with the same item_keys/dois; it says which list)
    #[serde(default)]
    pub cursor: Option<Text<2_000>>,
    /// user or group:<id>
    #[serde(default)]
    pub library: Option<LibraryParam>,
}

/// How a work was found in the library.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum Matched {
    Doi,
    TitleYear,
}

/// One work.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WorkData {
    /// Its title
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its first authors (at most 3)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
    /// How many more authors it has
    #[serde(skip_serializing_if = "is_zero")]
    pub more_authors: usize,
    /// Year of publication
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<u32>,
    /// Its DOI: what zotero_add_by_identifier takes to add it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    /// Its OpenAlex id
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openalex_id: Option<String>,
    /// How many works cite it (OpenAlex)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cited_by_count: Option<u64>,
    /// co_cited: how many of the given works cite it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cited_by_given: Option<u32>,
    /// The library holds it (item_key)
    pub in_library: bool,
    /// The library's item
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    /// How it was recognised: doi, or title_year (same normalized title and year)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<Matched>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One list of works.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ListData {
    /// Where the list comes from: OpenAlex (most cited first) or Crossref (its reference order)
    pub source: &'static str,
    /// How many works the list holds in all
    pub total: u64,
    /// This page of it
    pub works: Vec<WorkData>,
    /// Pass as cursor (same item_keys/dois) for the next page; absent at the end
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Why it is empty, or from Crossref
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What `zotero_find_related` answers (the envelope's `data`).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FindRelatedData {
    /// The work asked about (absent for co_cited and when a cursor reads on)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<WorkData>,
    /// What it cites
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<ListData>,
    /// What cites it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citing: Option<ListData>,
    /// The works most often in the given works' reference lists, most shared first
    #[serde(skip_serializing_if = "Option::is_none")]
    pub co_cited: Option<ListData>,
    /// Given DOIs OpenAlex does not know
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_found: Vec<String>,
}

impl ZoteroTool for FindRelated {
    const NAME: &'static str = "zotero_find_related";
    const TITLE: &'static str = "Find citing and cited works";
    const DESCRIPTION: &'static str = "What a work cites and what cites it (OpenAlex; Crossref's \
        reference list where OpenAlex has none), most cited first, or with co_cited the works \
        most often cited by 2-20 given works. Each says in_library (matched by DOI, then title \
        and year) with its item_key; add others with zotero_add_by_identifier and their doi. \
        Paged: next_cursor.";
    const HINTS: Hints = Hints::READ;
    const SET: ToolSet = ToolSet::Research;
    type Params = FindRelatedParams;
    type Data = FindRelatedData;

    fn validate(p: &FindRelatedParams) -> Result<(), ToolError> {
        for (i, d) in p.dois.iter().flat_map(|d| d.iter()).enumerate() {
            if !matches!(identifiers::parse(d.as_str()), Ok(Identifier::Doi(_))) {
                return Err(ToolError::invalid(
                    &format!("dois[{i}]"),
                    format!("dois[{i}] is not a DOI: give one such as 10.1038/nature14539"),
                ));
            }
        }
        if let Some(limit) = p.limit {
            if !(1..=graph::MAX_PER_PAGE).contains(&limit) {
                return Err(ToolError::invalid("limit", "limit must be 1 to 50"));
            }
        }
        if let Some(c) = &p.cursor {
            if Cursor::decode(c.as_str()).is_none() {
                return Err(ToolError::invalid(
                    "cursor",
                    "cursor must be a next_cursor of an earlier answer, as it was given",
                ));
            }
        }
        let n = seeds(p).len();
        let continues = p.cursor.as_ref().and_then(|c| Cursor::decode(c.as_str()));
        let is_co_cited = continues
            .as_ref()
            .map_or(matches!(p.direction, DirectionParam::CoCited), |c| {
                c.list() == graph::ListKind::CoCited
            });
        if is_co_cited && !(2..=MAX_SEEDS).contains(&n) {
            return Err(ToolError::invalid(
                "item_keys",
                "co_cited counts the reference lists of 2 to 20 works: give them in item_keys and/or dois",
            ));
        }
        let needs_one = continues
            .as_ref()
            .is_none_or(|c| matches!(c, Cursor::Offset { crossref: true, .. }));
        if !is_co_cited && needs_one && n != 1 {
            return Err(ToolError::invalid(
                "item_keys",
                format!(
                    "give exactly one work (an item key in item_keys or a DOI in dois), not {n}; \
                     direction co_cited takes 2 to 20"
                ),
            ));
        }
        Ok(())
    }

    async fn run(p: FindRelatedParams, ctx: &ToolContext) -> Result<FindRelatedData, ToolError> {
        let lib = ctx.svc.library(library(p.library))?;
        let req = RelatedRequest {
            seeds: seeds(&p),
            direction: match p.direction {
                DirectionParam::References => Direction::References,
                DirectionParam::Citing => Direction::Citing,
                DirectionParam::Both => Direction::Both,
                DirectionParam::CoCited => Direction::CoCited,
            },
            limit: p.limit.unwrap_or(20),
            cursor: p.cursor.as_ref().and_then(|c| Cursor::decode(c.as_str())),
            chars: PAGE_CHARS,
        };
        let related = find_related(&ctx.svc, lib, req, &ctx.cancel).await?;
        Ok(FindRelatedData {
            work: related.work.map(work_data),
            references: related.references.map(list_data),
            citing: related.citing.map(list_data),
            co_cited: related.co_cited.map(list_data),
            not_found: related.not_found,
        })
    }
}

fn seeds(p: &FindRelatedParams) -> Vec<Seed> {
    let keys = p
        .item_keys
        .iter()
        .flat_map(|k| k.iter())
        .map(|k| Seed::Item(k.key().clone()));
    let dois =
        p.dois
            .iter()
            .flat_map(|d| d.iter())
            .filter_map(|d| match identifiers::parse(d.as_str()) {
                Ok(Identifier::Doi(doi)) => Some(Seed::Doi(doi.as_str().to_string())),
                _ => None,
            });
    keys.chain(dois).collect()
}

fn work_data(w: Work) -> WorkData {
    let (item_key, matched_by) = match w.in_library {
        Some(found) => (
            Some(found.item_key),
            Some(match found.matched_by {
                MatchedBy::Doi => Matched::Doi,
                MatchedBy::TitleYear => Matched::TitleYear,
            }),
        ),
        None => (None, None),
    };
    WorkData {
        title: w.title,
        authors: w.authors,
        more_authors: w.more_authors,
        year: w.year,
        doi: w.doi,
        openalex_id: w.openalex_id,
        cited_by_count: w.cited_by_count,
        cited_by_given: w.cited_by_given,
        in_library: item_key.is_some(),
        item_key,
        matched_by,
    }
}

fn list_data(l: WorkList) -> ListData {
    ListData {
        source: l.source,
        total: l.total,
        works: l.works.into_iter().map(work_data).collect(),
        next_cursor: l.next.map(|c| c.encode()),
        note: l.note,
    }
}
