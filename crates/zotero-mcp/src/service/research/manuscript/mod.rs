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
mod draft;
mod fetch;
mod findings;
pub mod library;
pub mod matching;
pub mod quotes;
mod report;
mod work;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use zotero_api::items::ItemFilter;
use zotero_api::model::{Item, WireObject};
use zotero_api::{LibraryRef, ObjectKey};

use crate::error::ToolError;
use crate::service::research::retractions::{self, CheckedWith, RetractionState};
use crate::service::ZoteroService;
use cites::Format;
use fetch::fetch_texts;
use library::LibraryIndex;
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

/// The check of `draft` in `library` (the default when `None`). The reading of the draft,
/// the resolution of its citations and the matching of its quotations run on blocking
/// threads (`work`), each stopping once the call is cancelled.
pub async fn check(
    svc: &Arc<ZoteroService>,
    library: Option<LibraryRef>,
    draft: Draft,
    cancel: &CancellationToken,
) -> Result<Report, ToolError> {
    let Draft {
        text,
        format,
        bib,
        collection,
    } = draft;
    let parsed = work::blocking(cancel, move |work| {
        draft::parse(&text, format, bib.as_deref(), work)
    })
    .await?;
    let lib = svc.library(library)?;
    let mut report = Report {
        format: Some(parsed.format),
        ..Report::default()
    };
    let mut requests = 0u64;
    let pages = |n: usize| (n as u64).div_ceil(100).max(1);

    let items = if parsed.cites.is_empty() {
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
    // Each cite → the item it resolves to (an index into the library's entries).
    let (items, parsed, index, resolved) = work::blocking(cancel, move |work| {
        let index = LibraryIndex::new(&items);
        let resolved = findings::resolve_all(&index, &parsed, work);
        (items, parsed, index, resolved)
    })
    .await?;
    for row in &resolved.rows {
        match row.status {
            "resolved" => report.summary.resolved += 1,
            "ambiguous" => report.summary.ambiguous += 1,
            "unresolved" => report.summary.unresolved += 1,
            _ => {}
        }
    }
    report.summary.citations = parsed.cites.len() as u64;
    report.summary.malformed = parsed.cites.iter().filter(|c| c.problem.is_some()).count() as u64;
    let cited: BTreeSet<usize> = resolved.items.iter().flatten().copied().collect();
    report.summary.cited_items = cited.len() as u64;

    // The items each quotation is attributed to, and their texts, read once each.
    let wanted: BTreeSet<usize> = parsed
        .quotes
        .iter()
        .filter_map(|q| resolved.group_items.get(&q.group))
        .flatten()
        .copied()
        .collect();
    let (texts, fetched) = fetch_texts(svc, lib.name(), &index, &wanted, cancel).await?;
    requests += fetched;
    let name = lib.name();
    let (parsed, index, resolved, quotations) = work::blocking(cancel, move |work| {
        let lines = findings::match_quotes(&parsed, &resolved, &index, &texts, name, work);
        (parsed, index, resolved, lines)
    })
    .await?;
    for row in &quotations {
        match row.status {
            "exact" => report.summary.exact += 1,
            "fuzzy" => report.summary.fuzzy += 1,
            "not_found" => report.summary.not_found += 1,
            _ => report.summary.unchecked += 1,
        }
    }
    report.quotations = quotations;
    report.summary.quotations = parsed.quotes.len() as u64;

    retracted(
        svc,
        (&cited, &index, &items),
        &resolved,
        &mut report,
        cancel,
    )
    .await?;
    report.citations = resolved.rows;
    report.summary.retracted = report.retracted.len() as u64;

    if let Some(collection) = &collection {
        requests += uncited(&lib, collection, (&cited, &index), &mut report, cancel).await?;
    }
    report.summary.requests = requests;
    Ok(report)
}

/// The retracted cited items: Zotero's own flags with its database (in the items read);
/// else Crossref's notices for the cited items' DOIs (50 DOIs a request).
async fn retracted(
    svc: &Arc<ZoteroService>,
    (cited, index, items): (&BTreeSet<usize>, &LibraryIndex, &[WireObject]),
    resolved: &findings::Resolved,
    report: &mut Report,
    cancel: &CancellationToken,
) -> Result<(), ToolError> {
    let cited_as = |i: usize| -> Vec<String> {
        resolved
            .cited_as
            .get(&i)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default()
    };
    let checked_with = CheckedWith::of(svc);
    report.summary.retractions_checked_with = checked_with;
    if checked_with == CheckedWith::Zotero {
        for i in cited {
            let Some(e) = index.get(*i) else { continue };
            let Some(r) = &e.retraction else { continue };
            report.retracted.push(zotero_flag_line(e, r, cited_as(*i)));
        }
    } else if !cited.is_empty() {
        let by_key: HashMap<String, &WireObject> = items.iter().map(|o| (o.key(), o)).collect();
        let mut of_item: Vec<(usize, Item)> = Vec::new();
        for i in cited {
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
    Ok(())
}

/// The items of `collection` the draft never cites; answers the requests sent.
async fn uncited(
    lib: &zotero_api::Library<'_>,
    collection: &ObjectKey,
    (cited, index): (&BTreeSet<usize>, &LibraryIndex),
    report: &mut Report,
    cancel: &CancellationToken,
) -> Result<u64, ToolError> {
    let filter = ItemFilter {
        top_only: true,
        collection: Some(collection.clone()),
        ..ItemFilter::default()
    };
    let members = lib.all_items_wire(&filter, cancel).await?;
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
    Ok((members.len() as u64).div_ceil(100).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

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
                // Groups are in the order of the text and disjoint (what `quotes` relies on).
                for pair in cites.windows(2) {
                    let (a, b) = (&pair[0], &pair[1]);
                    if a.group == b.group {
                        prop_assert_eq!((a.group_start, a.group_end), (b.group_start, b.group_end));
                    } else {
                        prop_assert!(a.group < b.group && a.group_end <= b.group_start);
                    }
                }
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
