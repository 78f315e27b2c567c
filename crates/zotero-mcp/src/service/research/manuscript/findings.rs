//! The CPU-bound findings of a check, computed on a blocking thread (`work`): each citation
//! resolved in the library (the closest items for a key it lacks), and each quotation
//! looked for in its cited items' full texts. Each group's items and keys are gathered once,
//! so the work grows with the citations and quotations, not their product.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use zotero_api::fulltext::DocumentKind;
use zotero_api::{LibraryRef, ObjectKey};

use super::cites::{Cite, KeyKind};
use super::draft::Parsed;
use super::fetch::ItemText;
use super::library::{BibEntry, LibraryIndex};
use super::matching;
use super::work::Work;
use super::{round, shorten, Candidate, CitationLine, QuotationLine, CANDIDATES, QUOTE_CHARS};

/// The citations resolved: a line each, and the item each resolves to (an index into the
/// library's entries).
pub struct Resolved {
    pub rows: Vec<CitationLine>,
    pub items: Vec<Option<usize>>,
    /// Each citation group's items (in the order of the text, repeats next to each other
    /// dropped) and keys.
    pub group_items: HashMap<usize, Vec<usize>>,
    pub group_keys: HashMap<usize, Vec<String>>,
    /// Each resolved item's keys as cited.
    pub cited_as: BTreeMap<usize, BTreeSet<String>>,
}

/// Resolves each citation of `parsed` in `index` (and the `.bib` file's DOIs).
pub fn resolve_all(index: &LibraryIndex, parsed: &Parsed, work: &Work) -> Resolved {
    let mut out = Resolved {
        rows: Vec::with_capacity(parsed.cites.len()),
        items: Vec::with_capacity(parsed.cites.len()),
        group_items: HashMap::new(),
        group_keys: HashMap::new(),
        cited_as: BTreeMap::new(),
    };
    for (c, at) in parsed.cites.iter().zip(&parsed.cite_at) {
        if !work.go(1) {
            break;
        }
        let (row, one) = resolve_one(index, parsed.bib.as_ref(), c, *at, work);
        out.group_keys
            .entry(c.group)
            .or_default()
            .push(c.key.clone());
        if let Some(i) = one {
            let items = out.group_items.entry(c.group).or_default();
            if items.last() != Some(&i) {
                items.push(i);
            }
            out.cited_as.entry(i).or_default().insert(c.key.clone());
        }
        out.items.push(one);
        out.rows.push(row);
    }
    out
}

/// One citation's line, and the item it resolves to.
fn resolve_one(
    index: &LibraryIndex,
    bib: Option<&HashMap<String, BibEntry>>,
    c: &Cite,
    (line, column, offset): (u64, u64, u64),
    work: &Work,
) -> (CitationLine, Option<usize>) {
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
    let (found, via) = resolve(index, bib, c);
    if c.key.is_empty() {
        row.status = "malformed";
    } else if let Some(bib) = bib {
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
            // The closest items: a look at every entry of the library.
            work.go(index.entries.len());
            let title = bib
                .and_then(|b| b.get(&c.key))
                .and_then(|e| e.title.as_deref());
            row.candidates = index
                .closest(&c.key, title, CANDIDATES)
                .into_iter()
                .filter_map(|k| candidate(index, k.index, k.score))
                .collect();
        }
        several => {
            row.status = "ambiguous";
            row.candidates = several
                .iter()
                .filter_map(|i| candidate(index, *i, 1.0))
                .collect();
        }
    }
    (row, one)
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

/// Each quotation of `parsed` looked for in the full texts of the items its citation
/// resolves to: the best match among them, else the best miss.
pub fn match_quotes(
    parsed: &Parsed,
    resolved: &Resolved,
    index: &LibraryIndex,
    texts: &HashMap<usize, ItemText>,
    library: LibraryRef,
    work: &Work,
) -> Vec<QuotationLine> {
    let mut out = Vec::with_capacity(parsed.quotes.len());
    for (q, (line, _, offset)) in parsed.quotes.iter().zip(&parsed.quote_at) {
        if !work.go(q.text.len()) {
            break;
        }
        let mut row = QuotationLine {
            line: *line,
            offset: *offset,
            text: shorten(&q.text, QUOTE_CHARS),
            block: q.block,
            cited: resolved
                .group_keys
                .get(&q.group)
                .cloned()
                .unwrap_or_default(),
            status: "unresolved",
            item_key: None,
            attachment_key: None,
            score: None,
            passage: None,
            fulltext_offset: None,
            page: None,
            page_label: None,
            end_page: None,
            link: None,
        };
        let items = resolved
            .group_items
            .get(&q.group)
            .map_or(&[][..], Vec::as_slice);
        let mut best: Option<(f64, usize, &ItemText, matching::Found)> = None;
        let mut best_miss: Option<(f64, usize, &ItemText)> = None;
        for i in items {
            let Some(t) = texts.get(i) else { continue };
            match t.hay.find_with(&q.text, work) {
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
            // Pages read from the file have printed labels; Zotero's index has numbers only.
            row.page_label = f
                .page
                .and_then(|p| usize::try_from(p).ok()?.checked_sub(1))
                .and_then(|i| t.labels.get(i))
                .cloned();
            row.link = (t.kind == DocumentKind::Pdf).then(|| {
                let select = ObjectKey::parse(&t.attachment_key)
                    .map(|k| library.zotero_url(&k))
                    .unwrap_or_default();
                let open = select.replacen("zotero://select/", "zotero://open-pdf/", 1);
                // Zotero's handler reads `page` as a page NUMBER (`pageIndex = page - 1`),
                // never a label: the label is reported beside it.
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
        out.push(row);
    }
    out
}
