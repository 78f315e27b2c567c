//! Checking a draft against the library (`zotero_check_manuscript`): its citations parsed
//! (`cites`), resolved through the library's citation keys and DOIs (`library`), its
//! quotations attributed to citations (`quotes`) and looked for in the cited items' full
//! texts (`matching`), the cited items retracted (Zotero's flags with its database, else
//! Crossref's notices for their DOIs, 50 a request), and a collection's items the draft
//! never cites.
//!
//! Requests to Zotero per draft: the library's top-level items, 100 a request (the web API
//! finds no citation key by `q`: its quick search reads titles, creators, years and full
//! texts only, so the keys are read from the items themselves, once, not per key); then one
//! full-text request per cited item that a quotation is attributed to (plus one listing of
//! its attachments when Zotero names no best attachment), at most [`FETCH_CONCURRENCY`] at
//! a time, each item read once per call; and the chosen collection's items, 100 a request.

pub mod cites;
mod fetch;
pub mod library;
pub mod matching;
pub mod quotes;
mod report;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use zotero_api::fulltext::DocumentKind;
use zotero_api::items::ItemFilter;
use zotero_api::model::{Item, WireObject};
use zotero_api::{LibraryRef, ObjectKey};

use crate::mcp::envelope::ToolError;
use crate::service::research::retractions::{self, CheckedWith, RetractionState};
use crate::service::ZoteroService;
use cites::{Cite, Format, KeyKind};
use fetch::{fetch_texts, ItemText};
use library::{BibEntry, LibraryIndex};
use report::{crossref_line, zotero_flag_line};

pub use report::{
    Candidate, CitationLine, QuotationLine, Report, RetractedLine, Summary, UncitedLine,
};

/// The most bytes of a draft (or a `.bib` file) checked: 5 MB.
pub const MAX_DRAFT_BYTES: u64 = 5_000_000;
/// Full texts fetched at once.
pub const FETCH_CONCURRENCY: usize = 4;
/// The most characters of a quotation repeated in the answer.
const QUOTE_CHARS: usize = 200;
/// Candidates given for a key that resolves to no item.
const CANDIDATES: usize = 3;

/// What to check.
pub struct Draft {
    pub text: String,
    /// How it is written; `None`: detected.
    pub format: Option<Format>,
    /// The text of a `.bib` file whose keys the citations must be among.
    pub bib: Option<String>,
    /// A collection whose items the draft should all cite.
    pub collection: Option<ObjectKey>,
}

/// Byte offset → line, column and character offset, for a text read once.
struct Positions {
    /// Byte offset of each line's start.
    lines: Vec<usize>,
}

impl Positions {
    fn new(text: &str) -> Positions {
        let mut lines = vec![0];
        lines.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Positions { lines }
    }

    /// (line, column, character offset) of byte `at`.
    fn of(&self, text: &str, at: usize) -> (u64, u64, u64) {
        let line = self.lines.partition_point(|s| *s <= at).max(1);
        let line_start = self.lines.get(line - 1).copied().unwrap_or(0);
        let column = text.get(line_start..at).map_or(0, |s| s.chars().count()) + 1;
        let offset = text.get(..at).map_or(0, |s| s.chars().count());
        (line as u64, column as u64, offset as u64)
    }
}

/// The text of a quotation as repeated in the answer: its first [`QUOTE_CHARS`] characters.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The check of `draft` in `library` (the default when `None`).
pub async fn check(
    svc: &Arc<ZoteroService>,
    library: Option<LibraryRef>,
    draft: Draft,
    cancel: &CancellationToken,
) -> Result<Report, ToolError> {
    let text = draft.text.as_str();
    let format = draft.format.unwrap_or_else(|| Format::detect(text));
    let cites = cites::parse(text, format);
    let quotes = quotes::find(text, format, &cites);
    let lib = svc.library(library)?;
    let mut report = Report {
        format: Some(format),
        ..Report::default()
    };
    let mut requests = 0u64;
    let pages = |n: usize| (n as u64).div_ceil(100).max(1);

    let items = if cites.is_empty() {
        Vec::new()
    } else {
        let filter = ItemFilter {
            top_only: true,
            ..ItemFilter::default()
        };
        let items = lib.all_items_wire(&filter, cancel).await?;
        requests += pages(items.len());
        items
    };
    let index = LibraryIndex::new(&items);
    let bib: Option<HashMap<String, BibEntry>> = draft.bib.as_deref().map(|b| {
        library::parse_bib(b)
            .into_iter()
            .map(|e| (e.key.clone(), e))
            .collect()
    });

    // Each cite → the item it resolves to (an index into the library's entries).
    let positions = Positions::new(text);
    let mut resolved: Vec<Option<usize>> = Vec::with_capacity(cites.len());
    for c in &cites {
        let (line, column, offset) = positions.of(text, c.start);
        let mut row = CitationLine {
            line,
            column,
            offset,
            key: c.key.clone(),
            syntax: c.syntax.label(),
            locator: c.locator.clone(),
            status: "unresolved",
            item_key: None,
            title: None,
            via: None,
            problem: c.problem.clone(),
            candidates: Vec::new(),
        };
        let (found, via) = resolve(&index, bib.as_ref(), c);
        if c.key.is_empty() {
            row.status = "malformed";
        } else if let Some(bib) = &bib {
            if c.kind == KeyKind::CitationKey && !bib.contains_key(&c.key) {
                let note = "not in the .bib file";
                row.problem = Some(match row.problem.take() {
                    Some(p) => format!("{p}; {note}"),
                    None => note.to_string(),
                });
            }
        }
        let mut one = None;
        match found.as_slice() {
            _ if c.key.is_empty() => {}
            [i] => {
                row.status = "resolved";
                one = Some(*i);
                if let Some(e) = index.get(*i) {
                    row.item_key = Some(e.item_key.clone());
                    row.title = Some(e.title.clone());
                }
                row.via = via;
            }
            [] => {
                let title = bib
                    .as_ref()
                    .and_then(|b| b.get(&c.key))
                    .and_then(|e| e.title.as_deref());
                row.candidates = index
                    .closest(&c.key, title, CANDIDATES)
                    .into_iter()
                    .filter_map(|k| candidate(&index, k.index, k.score))
                    .collect();
            }
            several => {
                row.status = "ambiguous";
                row.candidates = several
                    .iter()
                    .filter_map(|i| candidate(&index, *i, 1.0))
                    .collect();
            }
        }
        match row.status {
            "resolved" => report.summary.resolved += 1,
            "ambiguous" => report.summary.ambiguous += 1,
            "unresolved" => report.summary.unresolved += 1,
            _ => {}
        }
        resolved.push(one);
        report.citations.push(row);
    }
    report.summary.citations = cites.len() as u64;
    report.summary.malformed = cites.iter().filter(|c| c.problem.is_some()).count() as u64;
    let cited: BTreeSet<usize> = resolved.iter().flatten().copied().collect();
    report.summary.cited_items = cited.len() as u64;

    // The items each quotation is attributed to, and their texts, read once each.
    let items_of = |group: usize| -> Vec<usize> {
        let mut v: Vec<usize> = cites
            .iter()
            .zip(&resolved)
            .filter(|(c, _)| c.group == group)
            .filter_map(|(_, r)| *r)
            .collect();
        v.dedup();
        v
    };
    let wanted: BTreeSet<usize> = quotes.iter().flat_map(|q| items_of(q.group)).collect();
    let (texts, fetched) = fetch_texts(svc, lib.name(), &index, &wanted, cancel).await?;
    requests += fetched;
    for q in &quotes {
        let (line, _, offset) = positions.of(text, q.start);
        let keys: Vec<String> = cites
            .iter()
            .filter(|c| c.group == q.group)
            .map(|c| c.key.clone())
            .collect();
        let mut row = QuotationLine {
            line,
            offset,
            text: shorten(&q.text, QUOTE_CHARS),
            block: q.block,
            cited: keys,
            status: "unresolved",
            item_key: None,
            attachment_key: None,
            score: None,
            passage: None,
            fulltext_offset: None,
            page: None,
            end_page: None,
            link: None,
        };
        let items = items_of(q.group);
        let mut best: Option<(f64, usize, &ItemText, matching::Found)> = None;
        let mut best_miss: Option<(f64, usize, &ItemText)> = None;
        for i in &items {
            let Some(t) = texts.get(i) else { continue };
            match t.hay.find(&q.text) {
                Ok(f) => {
                    if best.as_ref().is_none_or(|b| f.score > b.0) {
                        best = Some((f.score, *i, t, f));
                    }
                }
                Err(score) => {
                    if best_miss.as_ref().is_none_or(|b| score > b.0) {
                        best_miss = Some((score, *i, t));
                    }
                }
            }
        }
        if let Some((score, i, t, f)) = best {
            row.status = if f.exact { "exact" } else { "fuzzy" };
            row.item_key = index.get(i).map(|e| e.item_key.clone());
            row.attachment_key = Some(t.attachment_key.clone());
            row.score = Some(round(score));
            row.passage = Some(f.passage);
            row.fulltext_offset = Some(f.start as u64);
            row.page = f.page;
            row.end_page = f.end_page;
            row.link = (t.kind == DocumentKind::Pdf).then(|| {
                let select = ObjectKey::parse(&t.attachment_key)
                    .map(|k| lib.name().zotero_url(&k))
                    .unwrap_or_default();
                let open = select.replacen("zotero://select/", "zotero://open-pdf/", 1);
                match f.page {
                    Some(p) => format!("{open}?page={p}"),
                    None => open,
                }
            });
        } else if let Some((score, i, t)) = best_miss {
            row.status = "not_found";
            row.item_key = index.get(i).map(|e| e.item_key.clone());
            row.attachment_key = Some(t.attachment_key.clone());
            row.score = Some(round(score));
        } else if let Some(i) = items.first() {
            row.status = "no_fulltext";
            row.item_key = index.get(*i).map(|e| e.item_key.clone());
        }
        match row.status {
            "exact" => report.summary.exact += 1,
            "fuzzy" => report.summary.fuzzy += 1,
            "not_found" => report.summary.not_found += 1,
            _ => report.summary.unchecked += 1,
        }
        report.quotations.push(row);
    }
    report.summary.quotations = quotes.len() as u64;

    // Retracted cited items: Zotero's own flags with its database (in the items read
    // above); else Crossref's notices for the cited items' DOIs (50 DOIs a request).
    let cited_as = |i: usize| -> Vec<String> {
        let keys: BTreeSet<String> = cites
            .iter()
            .zip(&resolved)
            .filter(|(_, r)| **r == Some(i))
            .map(|(c, _)| c.key.clone())
            .collect();
        keys.into_iter().collect()
    };
    let checked_with = CheckedWith::of(svc);
    report.summary.retractions_checked_with = checked_with;
    if checked_with == CheckedWith::Zotero {
        for i in &cited {
            let Some(e) = index.get(*i) else { continue };
            let Some(r) = &e.retraction else { continue };
            report.retracted.push(zotero_flag_line(e, r, cited_as(*i)));
        }
    } else if !cited.is_empty() {
        let by_key: HashMap<String, &WireObject> = items.iter().map(|o| (o.key(), o)).collect();
        let mut of_item: Vec<(usize, Item)> = Vec::new();
        for i in &cited {
            let Some(e) = index.get(*i) else { continue };
            if let Some(o) = by_key.get(&e.item_key) {
                of_item.push((*i, o.to_item()));
            }
        }
        let (which, cited_items): (Vec<usize>, Vec<Item>) = of_item.into_iter().unzip();
        let (statuses, sent) =
            retractions::check_items_counted(svc, cited_items, None, cancel).await?;
        report.summary.crossref_requests = sent;
        for (i, st) in which.into_iter().zip(statuses) {
            match st.status {
                RetractionState::Retracted => {
                    report.retracted.push(crossref_line(&st, cited_as(i)));
                }
                RetractionState::NotCheckable | RetractionState::Failed => {
                    report.summary.retractions_unchecked += 1;
                }
                _ => {}
            }
        }
    }
    report.summary.retracted = report.retracted.len() as u64;

    // The collection's items never cited.
    if let Some(collection) = &draft.collection {
        let filter = ItemFilter {
            top_only: true,
            collection: Some(collection.clone()),
            ..ItemFilter::default()
        };
        let members = lib.all_items_wire(&filter, cancel).await?;
        requests += pages(members.len());
        let cited_keys: BTreeSet<&str> = cited
            .iter()
            .filter_map(|i| index.get(*i))
            .map(|e| e.item_key.as_str())
            .collect();
        for m in LibraryIndex::new(&members).entries {
            if !cited_keys.contains(m.item_key.as_str()) {
                report.uncited.push(UncitedLine {
                    item_key: m.item_key,
                    title: m.title,
                    citation_key: m.citation_keys.into_iter().next(),
                });
            }
        }
        report.summary.uncited = Some(report.uncited.len() as u64);
    }
    report.summary.requests = requests;
    Ok(report)
}

fn candidate(index: &LibraryIndex, i: usize, score: f64) -> Option<Candidate> {
    let e = index.get(i)?;
    Some(Candidate {
        item_key: e.item_key.clone(),
        title: e.title.clone(),
        citation_key: e.citation_keys.first().cloned(),
        score: round(score),
    })
}

/// The items a cite resolves to, and how: its key among the library's citation keys (or its
/// DOI among their DOIs), else the DOI its `.bib` entry gives.
fn resolve(
    index: &LibraryIndex,
    bib: Option<&HashMap<String, BibEntry>>,
    c: &Cite,
) -> (Vec<usize>, Option<&'static str>) {
    if c.key.is_empty() {
        return (Vec::new(), None);
    }
    if c.kind == KeyKind::Doi {
        return (index.by_doi(&c.key).to_vec(), Some("doi"));
    }
    let by_key = index.by_key(&c.key);
    if !by_key.is_empty() {
        return (by_key.to_vec(), Some("citation_key"));
    }
    let bib_doi = bib
        .and_then(|b| b.get(&c.key))
        .and_then(|e| e.doi.as_deref())
        .map(|d| index.by_doi(d).to_vec())
        .unwrap_or_default();
    (bib_doi, Some("bib_doi"))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_lines_columns_and_characters() {
        let t = "ab\nçd [@x]\n";
        let p = Positions::new(t);
        let at = t.find('[').unwrap();
        assert_eq!(p.of(t, at), (2, 4, 6));
        assert_eq!(p.of(t, 0), (1, 1, 0));
    }

    #[test]
    fn quotations_are_shortened_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}

/// Whatever the draft, bib or quotation, the parsers and the matcher neither panic nor
/// answer spans outside the text or off a character boundary.
#[cfg(test)]
mod prop {
    use proptest::prelude::*;

    use super::cites::{parse, Format};
    use super::library::parse_bib;
    use super::matching::{normalize, pieces, Haystack};
    use super::quotes;

    /// Characters the syntaxes are made of, far more often than chance would give them.
    fn draft() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => proptest::sample::select(vec![
                "[", "]", "@", "-@", ";", ",", " ", "\n", "\n\n", "{", "}", "\\cite", "\\citep",
                "\\textcite", "[p.~3]", "%", "\\%", "`", "```", "> ", "“", "”", "\"", "``", "''",
                "…", "...", "[...]", "10.", "1234/", "doi:", "\\begin{quote}", "\\end{quote}",
                "\\enquote{", "key", "a1", "é", "漢", "🙂", "-\n", "\u{c}", "\u{ad}",
            ]).prop_map(str::to_string),
            1 => any::<String>(),
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn parsers_never_panic_and_spans_stay_in_the_text(text in draft()) {
            for format in [Format::Markdown, Format::Latex, Format::Text] {
                let cites = parse(&text, format);
                for c in &cites {
                    prop_assert!(c.start <= c.end && c.end <= text.len());
                    prop_assert!(c.group_start <= c.group_end && c.group_end <= text.len());
                    prop_assert!(text.is_char_boundary(c.start) && text.is_char_boundary(c.end));
                }
                for q in quotes::find(&text, format, &cites) {
                    prop_assert!(q.start <= q.end && q.end <= text.len());
                }
            }
            let _ = Format::detect(&text);
            let _ = parse_bib(&text);
        }

        #[test]
        fn matching_never_panics(text in draft(), quote in draft()) {
            let n = normalize(&text);
            prop_assert_eq!(n.map.len(), n.text.len());
            let _ = pieces(&quote);
            let hay = Haystack::new(text.clone(), Some(2));
            if let Ok(found) = hay.find(&quote) {
                prop_assert!(found.start <= found.end);
                prop_assert!(found.end <= text.chars().count());
            }
            // A quotation taken from the text is found in it exactly (a hyphen before a
            // line break aside: the quotation, its words joined by spaces, keeps it).
            let words: Vec<&str> = text.split_whitespace().take(6).collect();
            let taken = words.join(" ");
            if taken.chars().filter(|c| c.is_alphanumeric()).count() >= 3 && !text.contains('-') {
                let found = hay.find(&taken);
                prop_assert!(found.is_ok_and(|f| f.exact), "{taken:?} in {text:?}");
            }
        }
    }
}
