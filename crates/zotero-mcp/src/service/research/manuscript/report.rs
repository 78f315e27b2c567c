//! What the manuscript check answers: its lines (citations, quotations, retracted and
//! uncited items), its summary, and the retracted lines built from Zotero's flags or
//! Crossref's notices.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::cites::Format;
use super::library::Entry;
use crate::service::research::retractions::{CheckedWith, RetractionState, RetractionStatus};

/// A close item for a citation that resolves to none (or to several).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Candidate {
    /// Its key
    pub item_key: String,
    /// Its title
    pub title: String,
    /// Its citation key, when it has one
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation_key: Option<String>,
    /// Similarity to the citation, 0 to 1
    pub score: f64,
}

/// One cited key or DOI.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CitationLine {
    /// Line of the draft, from 1
    pub line: u64,
    /// Column (characters), from 1
    pub column: u64,
    /// Where the key starts in the draft, in characters
    pub offset: u64,
    /// The citation key, or DOI, as cited
    pub key: String,
    /// How it is written: [@key], [-@key], @key, \citep, …, doi
    pub syntax: String,
    /// Page or other locator given with it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// resolved, unresolved, ambiguous (several items carry the key) or malformed
    pub status: &'static str,
    /// The item it resolves to
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    /// That item's title
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How it resolved: citation_key, doi, or bib_doi (the .bib entry's DOI)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
    /// What is wrong with how it is written
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Unresolved: the closest items; ambiguous: the items carrying the key
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
}

/// One quotation attributed to a citation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct QuotationLine {
    /// Line of the draft, from 1
    pub line: u64,
    /// Where the quotation starts in the draft, in characters
    pub offset: u64,
    /// The quotation (its first 200 characters)
    pub text: String,
    /// A block quotation
    pub block: bool,
    /// The keys of the citation it is attributed to
    pub cited: Vec<String>,
    /// exact, fuzzy, not_found, no_fulltext (no indexed text to look in) or unresolved
    /// (its citation resolves to no item)
    pub status: &'static str,
    /// The item it was looked for in (the best match's, of several cited)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    /// The attachment whose text was read
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_key: Option<String>,
    /// Similarity of the best passage, 0 to 1 (1: exact)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The passage found (its first 300 characters)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage: Option<String>,
    /// Where the passage starts in the attachment's full text, in characters
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulltext_offset: Option<u64>,
    /// PDF page the passage starts on, where known
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// The page's printed label ("217", "iv"), when the text was read from the file
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_label: Option<String>,
    /// Page it ends on, when another
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_page: Option<u64>,
    /// Opens the PDF at the page: zotero://open-pdf/…?page=N (the page's number, as Zotero
    /// reads it, not its label)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A cited item that was retracted (Zotero's flag, or a Crossref notice).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RetractedLine {
    /// Its key
    pub item_key: String,
    /// Its title
    pub title: String,
    /// The keys it is cited by
    pub cited_as: Vec<String>,
    /// When it was retracted
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Why, as Retraction Watch gives it
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The retraction notice: its DOI, else a URL
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Where this is known from: zotero (the flag Zotero stored), else Crossref's notice's source (publisher, retraction-watch)
    pub source: String,
    /// The user chose to hide Zotero's retraction banner for it
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// An item of the collection the draft does not cite.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UncitedLine {
    /// Its key
    pub item_key: String,
    /// Its title
    pub title: String,
    /// Its citation key, when it has one
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation_key: Option<String>,
}

/// The counts of the whole check.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Summary {
    /// Cited keys and DOIs, each mention counted
    pub citations: u64,
    /// Citations that resolve to one item
    pub resolved: u64,
    /// Citations that resolve to none
    pub unresolved: u64,
    /// Citations whose key several items carry
    pub ambiguous: u64,
    /// Citations written wrongly (unterminated, no keys, a key twice in one citation)
    pub malformed: u64,
    /// Distinct items cited
    pub cited_items: u64,
    /// Quotations attributed to a citation
    pub quotations: u64,
    /// Found exactly
    pub exact: u64,
    /// Found only approximately
    pub fuzzy: u64,
    /// Not found in the cited full text
    pub not_found: u64,
    /// Not checked: no full text, or the citation is unresolved
    pub unchecked: u64,
    /// Cited items retracted
    pub retracted: u64,
    /// How retractions were checked: zotero (its own flags, database backend) or crossref (the cited items' DOIs)
    pub retractions_checked_with: CheckedWith,
    /// Cited items whose retraction status is unknown (no DOI, or Crossref could not be asked; zotero_check_retractions says why)
    #[serde(skip_serializing_if = "is_zero")]
    pub retractions_unchecked: u64,
    /// Requests sent to Crossref for the retraction check
    #[serde(skip_serializing_if = "is_zero")]
    pub crossref_requests: u64,
    /// Items of the collection not cited (when a collection was given)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncited: Option<u64>,
    /// Requests sent to Zotero for this check
    pub requests: u64,
}

/// Everything the check found.
#[derive(Debug, Default)]
pub struct Report {
    pub format: Option<Format>,
    pub summary: Summary,
    pub citations: Vec<CitationLine>,
    pub quotations: Vec<QuotationLine>,
    pub retracted: Vec<RetractedLine>,
    pub uncited: Vec<UncitedLine>,
}

/// A cited item Zotero flags retracted, from the entry it stored.
pub(super) fn zotero_flag_line(
    e: &Entry,
    r: &Map<String, Value>,
    cited_as: Vec<String>,
) -> RetractedLine {
    let str_of = |k: &str| r.get(k).and_then(|v| v.as_str()).map(str::to_string);
    RetractedLine {
        item_key: e.item_key.clone(),
        title: e.title.clone(),
        cited_as,
        date: str_of("date"),
        reasons: r
            .get("reasons")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        notice: str_of("doi").or_else(|| {
            r.get("urls")
                .and_then(|u| u.as_array())
                .and_then(|u| u.first())
                .and_then(|u| u.as_str())
                .map(str::to_string)
        }),
        source: "zotero".into(),
        hidden: r.get("hidden").and_then(|v| v.as_bool()).unwrap_or(false),
    }
}

/// A cited item Crossref publishes a retraction notice for (its gravest notice).
pub(super) fn crossref_line(st: &RetractionStatus, cited_as: Vec<String>) -> RetractedLine {
    let notice = st
        .notices
        .iter()
        .find(|n| RetractionState::of_kind(&n.kind) == RetractionState::Retracted);
    RetractedLine {
        item_key: st.item_key.clone(),
        title: st.title.clone(),
        cited_as,
        date: notice.and_then(|n| n.date.clone()),
        reasons: notice.map(|n| n.reasons.clone()).unwrap_or_default(),
        notice: notice.and_then(|n| n.doi.clone().or_else(|| n.url.clone())),
        source: notice.map_or_else(|| "crossref".into(), |n| n.source.clone()),
        hidden: false,
    }
}
