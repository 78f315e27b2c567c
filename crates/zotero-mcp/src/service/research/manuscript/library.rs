//! The library as the check needs it, read once per call: each item's citation keys (the
//! `citationKey` field of Zotero 7+, Better BibTeX's `Citation Key:` line in Extra), DOIs
//! (the field and a `DOI:` line in Extra), title, first creator, year, best attachment and
//! retraction; looked up by key or DOI, and the closest items to a key that resolves to
//! none. Also the entries of a `.bib` file. Pure functions over item JSON and text.

use std::collections::HashMap;

use serde_json::{Map, Value};
use zotero_api::model::{text, WireObject};

use super::matching::{folded, similarity_at_least};
use zotero_metadata::identifiers::fold_doi;

/// One regular item of the library.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub item_key: String,
    pub title: String,
    pub citation_keys: Vec<String>,
    pub dois: Vec<String>,
    pub creator: Option<String>,
    pub year: Option<String>,
    /// The best attachment Zotero names (`links.attachment`): key and content type.
    pub attachment: Option<(String, String)>,
    /// The item has children (an attachment may be among them).
    pub has_children: bool,
    /// The retraction Zotero stored for it (`meta.retraction`, database backend).
    pub retraction: Option<Map<String, Value>>,
    /// Its title's words, first creator and year, lower case: what a key's parts are
    /// compared with.
    words: Vec<String>,
    /// Its citation keys and DOIs, then its title, `folded` once for `closest`.
    folded_keys: Vec<Vec<char>>,
    folded_title: Vec<char>,
}

/// The value of Extra's `label: value` lines (the label in any case).
fn extra_lines<'a>(extra: &'a str, label: &str) -> Vec<&'a str> {
    extra
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(label).then(|| v.trim())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

impl Entry {
    pub fn of(item: &WireObject) -> Entry {
        let d = &item.data;
        let extra = text(d, "extra").unwrap_or_default();
        let mut citation_keys: Vec<String> = text(d, "citationKey").into_iter().collect();
        for k in extra_lines(&extra, "Citation Key") {
            if !citation_keys.iter().any(|c| c == k) {
                citation_keys.push(k.to_string());
            }
        }
        let mut dois: Vec<String> = text(d, "DOI").map(|x| fold_doi(&x)).into_iter().collect();
        for x in extra_lines(&extra, "DOI") {
            let x = fold_doi(x);
            if !dois.contains(&x) {
                dois.push(x);
            }
        }
        let creator = d
            .get("creators")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .and_then(|c| {
                c.get("lastName")
                    .or_else(|| c.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let year = item
            .meta
            .get("parsedDate")
            .and_then(Value::as_str)
            .or_else(|| d.get("date").and_then(Value::as_str))
            .and_then(|s| {
                s.as_bytes()
                    .windows(4)
                    .position(|w| w.iter().all(u8::is_ascii_digit))
                    .and_then(|p| s.get(p..p + 4))
            })
            .map(str::to_string);
        let attachment = item.links.get("attachment").and_then(|a| {
            let href = a.get("href")?.as_str()?;
            let key = href.rsplit('/').next()?.to_string();
            let kind = a
                .get("attachmentType")
                .and_then(Value::as_str)
                .unwrap_or("");
            Some((key, kind.to_string()))
        });
        let has_children = item
            .meta
            .get("numChildren")
            .and_then(Value::as_u64)
            .is_none_or(|n| n > 0);
        let title = text(d, "title").unwrap_or_default();
        let mut words = words_of(&title);
        words.extend(creator.iter().map(|c| c.to_lowercase()));
        words.extend(year.iter().cloned());
        let folded_keys = citation_keys
            .iter()
            .chain(&dois)
            .map(|k| folded(k))
            .collect();
        Entry {
            item_key: item.key(),
            folded_title: folded(&title),
            folded_keys,
            title,
            words,
            citation_keys,
            dois,
            creator,
            year,
            attachment,
            has_children,
            retraction: item
                .meta
                .get("retraction")
                .and_then(Value::as_object)
                .cloned(),
        }
    }
}

/// The library's items, by citation key and by DOI.
#[derive(Debug, Default)]
pub struct LibraryIndex {
    pub entries: Vec<Entry>,
    by_key: HashMap<String, Vec<usize>>,
    by_key_folded: HashMap<String, Vec<usize>>,
    by_doi: HashMap<String, Vec<usize>>,
}

/// A close item for a key that resolves to none.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub index: usize,
    pub score: f64,
}

impl LibraryIndex {
    pub fn new(items: &[WireObject]) -> LibraryIndex {
        let mut index = LibraryIndex::default();
        for item in items {
            let t = item.item_type();
            if matches!(t.as_str(), "attachment" | "note" | "annotation") {
                continue;
            }
            let e = Entry::of(item);
            let n = index.entries.len();
            for k in &e.citation_keys {
                index.by_key.entry(k.clone()).or_default().push(n);
                index
                    .by_key_folded
                    .entry(k.to_lowercase())
                    .or_default()
                    .push(n);
            }
            for d in &e.dois {
                index.by_doi.entry(d.clone()).or_default().push(n);
            }
            index.entries.push(e);
        }
        index
    }

    /// The items with this citation key: as written, else in any case.
    pub fn by_key(&self, key: &str) -> &[usize] {
        self.by_key
            .get(key)
            .or_else(|| self.by_key_folded.get(&key.to_lowercase()))
            .map_or(&[], Vec::as_slice)
    }

    pub fn by_doi(&self, doi: &str) -> &[usize] {
        self.by_doi.get(&fold_doi(doi)).map_or(&[], Vec::as_slice)
    }

    pub fn get(&self, i: usize) -> Option<&Entry> {
        self.entries.get(i)
    }

    /// The (at most `n`) items closest to `key`: by its similarity to their citation keys or
    /// DOIs, and by how many of its parts (author, year, title words) they carry; `title`
    /// (from a `.bib` entry) adds its similarity to their titles. Best first, ties by library
    /// order. A similarity is only worked out as far as it could still place an entry: above
    /// the least score kept (0.4) and, once `n` are kept, above the last of them.
    pub fn closest(&self, key: &str, title: Option<&str>, n: usize) -> Vec<Candidate> {
        if n == 0 {
            return Vec::new();
        }
        let parts = key_parts(key);
        let key = folded(key);
        let title = title.map(folded);
        let mut kept: Vec<Candidate> = Vec::with_capacity(n + 1);
        let mut row = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            // An equal score does not displace a kept one: it comes later in the library.
            let floor = match kept.get(n - 1) {
                Some(last) if kept.len() >= n => last.score.max(MIN_SCORE),
                _ => MIN_SCORE,
            };
            let mut score = by_parts(&parts, &e.words) * 0.9;
            for k in &e.folded_keys {
                if let Some(s) = similarity_at_least(&key, k, floor.max(score), &mut row) {
                    score = score.max(s);
                }
            }
            if let Some(t) = &title {
                if let Some(s) = similarity_at_least(t, &e.folded_title, floor.max(score), &mut row)
                {
                    score = score.max(s);
                }
            }
            let places = score >= MIN_SCORE
                && (kept.len() < n || kept.last().is_some_and(|last| score > last.score));
            if places {
                let at = kept.partition_point(|c| c.score >= score);
                kept.insert(at, Candidate { index: i, score });
                kept.truncate(n);
            }
        }
        kept
    }
}

/// The least score of an item `closest` names.
const MIN_SCORE: f64 = 0.4;

/// The share of a key's parts an entry's words carry (a part of four letters or more also
/// matches as a prefix either way).
fn by_parts(parts: &[String], words: &[String]) -> f64 {
    if parts.is_empty() {
        return 0.0;
    }
    let hits = parts
        .iter()
        .filter(|p| {
            words.iter().any(|w| {
                w == *p
                    || (p.len() >= 4
                        && w.len() >= 4
                        && (w.starts_with(p.as_str()) || p.starts_with(w.as_str())))
            })
        })
        .count();
    hits as f64 / parts.len() as f64
}

fn words_of(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// A citation key's parts: runs of letters and runs of digits (`vaswani2017attention` →
/// vaswani, 2017, attention), lower case.
fn key_parts(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut digits = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let d = c.is_ascii_digit();
        if !cur.is_empty() && (d != digits || (c.is_uppercase() && !digits)) {
            parts.push(std::mem::take(&mut cur));
        }
        digits = d;
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.retain(|p| p.len() >= 2);
    parts
}

/// One entry of a `.bib` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BibEntry {
    pub key: String,
    pub doi: Option<String>,
    pub title: Option<String>,
}

/// The entries of a `.bib` file (`@string`, `@preamble` and `@comment` aside), each with its
/// key and, when given, DOI and title.
pub fn parse_bib(text: &str) -> Vec<BibEntry> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = text.get(i..).and_then(|r| r.find('@')) {
        let at = i + p;
        i = at + 1;
        let rest = text.get(at + 1..).unwrap_or("");
        let kind_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let kind = rest.get(..kind_len).unwrap_or("").to_ascii_lowercase();
        let after = rest.get(kind_len..).unwrap_or("").trim_start();
        let open = match after.chars().next() {
            Some(c @ ('{' | '(')) => c,
            _ => continue,
        };
        if kind.is_empty() || matches!(kind.as_str(), "string" | "preamble" | "comment") {
            continue;
        }
        let body_at = at + 1 + (rest.len() - after.len()) + 1;
        // The entry's end: its brackets balanced.
        let close = if open == '{' { '}' } else { ')' };
        let mut depth = 1usize;
        let mut end = text.len();
        for (n, c) in text.get(body_at..).unwrap_or("").char_indices() {
            if c == '{' || c == open {
                depth += 1;
            } else if c == '}' || c == close {
                depth -= 1;
                if depth == 0 {
                    end = body_at + n;
                    break;
                }
            }
        }
        let body = text.get(body_at..end).unwrap_or("");
        let Some((key, fields)) = body.split_once(',') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            continue;
        }
        out.push(BibEntry {
            key: key.to_string(),
            doi: bib_field(fields, "doi").map(|d| fold_doi(&d)),
            title: bib_field(fields, "title"),
        });
        i = end;
    }
    out
}

/// A field's value (`name = {…}` or `"…"`) in an entry's fields, braces dropped.
fn bib_field(fields: &str, name: &str) -> Option<String> {
    let lower = fields.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower.get(from..).and_then(|r| r.find(name)) {
        let at = from + p;
        from = at + name.len();
        let before = lower
            .get(..at)
            .and_then(|b| b.trim_end_matches([' ', '\t']).chars().next_back());
        if !before.is_none_or(|c| c == ',' || c == '\n' || c == '\r') {
            continue;
        }
        let rest = fields.get(at + name.len()..)?.trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = if let Some(r) = rest.strip_prefix('{') {
            let mut depth = 1usize;
            let mut end = r.len();
            for (n, c) in r.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = n;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            r.get(..end)?
        } else if let Some(r) = rest.strip_prefix('"') {
            r.get(..r.find('"')?)?
        } else {
            rest.split([',', '\n']).next()?
        };
        let v: String = value.chars().filter(|c| !matches!(c, '{' | '}')).collect();
        let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
        return Some(v).filter(|v| !v.is_empty());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(v: Value) -> WireObject {
        serde_json::from_value(v).unwrap()
    }

    fn library() -> LibraryIndex {
        LibraryIndex::new(&[
            wire(
                json!({"key": "VASWANI7", "meta": {"parsedDate": "2017-06-12", "numChildren": 1},
                "links": {"attachment": {"href": "https://api.zotero.org/users/1/items/VASPDF23", "attachmentType": "application/pdf"}},
                "data": {"itemType": "journalArticle", "title": "Attention Is All You Need",
                    "creators": [{"lastName": "Vaswani"}], "citationKey": "vaswani2017attention",
                    "DOI": "https://doi.org/10.48550/ARXIV.1706.03762"}}),
            ),
            wire(
                json!({"key": "SMITH001", "meta": {"retraction": {"date": "2021-01-01"}},
                "data": {"itemType": "book", "title": "Deep Things", "date": "2020",
                    "extra": "Citation Key: smith2020deep\ndoi: 10.1000/Extra"}}),
            ),
            wire(
                json!({"key": "NOTE0001", "data": {"itemType": "note", "citationKey": "smith2020deep"}}),
            ),
        ])
    }

    #[test]
    fn keys_and_dois_come_from_fields_and_extra() {
        let l = library();
        assert_eq!(l.entries.len(), 2);
        assert_eq!(l.by_key("vaswani2017attention"), [0]);
        assert_eq!(l.by_key("Smith2020Deep"), [1]);
        assert_eq!(l.by_doi("10.48550/arxiv.1706.03762"), [0]);
        assert_eq!(l.by_doi("doi:10.1000/extra"), [1]);
        assert!(l.by_key("nobody").is_empty());
        let v = &l.entries[0];
        assert_eq!(
            v.attachment,
            Some(("VASPDF23".into(), "application/pdf".into()))
        );
        assert_eq!(v.year.as_deref(), Some("2017"));
        assert!(l.entries[1].retraction.is_some());
    }

    #[test]
    fn the_closest_items_to_an_unknown_key() {
        let l = library();
        let c = l.closest("vaswani2017attn", None, 3);
        assert_eq!(c[0].index, 0);
        let c = l.closest("Vaswani17", None, 3);
        assert_eq!(c.first().map(|c| c.index), Some(0));
        assert!(l.closest("zzzz", None, 3).is_empty());
        let c = l.closest("whatever", Some("Deep things"), 3);
        assert_eq!(c[0].index, 1);
    }

    /// `closest` as it was written first: every similarity in full, then sorted.
    fn closest_in_full(
        l: &LibraryIndex,
        key: &str,
        title: Option<&str>,
        n: usize,
    ) -> Vec<Candidate> {
        use super::super::matching::similarity;
        let parts = key_parts(key);
        let mut all: Vec<Candidate> = l
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let by_key = e
                    .citation_keys
                    .iter()
                    .chain(&e.dois)
                    .map(|k| similarity(key, k))
                    .fold(0.0, f64::max);
                let by_title = title.map_or(0.0, |t| similarity(t, &e.title));
                let score = by_key.max(by_parts(&parts, &e.words) * 0.9).max(by_title);
                Candidate { index: i, score }
            })
            .filter(|c| c.score >= 0.4)
            .collect();
        all.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        all.truncate(n);
        all
    }

    #[test]
    fn the_closest_items_are_those_every_similarity_in_full_gives() {
        use proptest::prelude::*;
        let entry = ("[a-c]{2,6}[0-9]{0,4}", "[a-c ]{0,16}", "[a-c]{0,5}");
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(
                &(
                    proptest::collection::vec(entry, 0..30),
                    "[a-c]{1,6}[0-9]{0,4}",
                    proptest::option::of("[a-c ]{0,16}"),
                    0usize..5,
                ),
                |(entries, key, title, n)| {
                    let items: Vec<WireObject> = entries
                        .iter()
                        .enumerate()
                        .map(|(i, (k, t, c))| {
                            wire(json!({"key": format!("K{i:07}"), "data": {
                                "itemType": "book", "citationKey": k, "title": t,
                                "creators": [{"lastName": c}]}}))
                        })
                        .collect();
                    let l = LibraryIndex::new(&items);
                    let want = closest_in_full(&l, &key, title.as_deref(), n);
                    prop_assert_eq!(l.closest(&key, title.as_deref(), n), want);
                    Ok(())
                },
            )
            .unwrap();
    }

    #[test]
    fn bib_entries_with_doi_and_title() {
        let bib = "@string{x = {y}}\n@Article{vaswani2017,\n  title = {Attention {Is} All},\n  \
                   DOI = \"10.48550/arXiv.1706.03762\",\n}\n@comment{nothing}\n@book(smith, title={T})";
        assert_eq!(
            parse_bib(bib),
            vec![
                BibEntry {
                    key: "vaswani2017".into(),
                    doi: Some("10.48550/arxiv.1706.03762".into()),
                    title: Some("Attention Is All".into())
                },
                BibEntry {
                    key: "smith".into(),
                    doi: None,
                    title: Some("T".into())
                },
            ]
        );
    }
}
