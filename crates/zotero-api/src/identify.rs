//! Adding a work found by its identifier: is it in the library already (by DOI, arXiv id,
//! ISBN or PMID), and creating it from a draft of fields, exactly once.
//!
//! The web API cannot search fields such as `DOI` (its quick search covers titles,
//! creators, years and, in `everything` mode, full text and notes), so candidates are found
//! by the work's title words and by the identifier itself, then compared field by field:
//! `DOI` (also a `DOI:` line in `extra`), `archiveID`/`extra`/`url`/arXiv DOI for arXiv,
//! `ISBN` (ISBN-10 and -13 compared as ISBN-13), and a `PMID:` line in `extra`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::items::{ItemFilter, ItemListing, QuickSearchMode};
use crate::model::Creator;
use crate::write::creator_to_wire;

/// What identifies a work, each in its canonical form: a DOI in lower case, an arXiv id
/// without its version, ISBNs as 13 digits, a PMID as digits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkIds {
    pub doi: Option<String>,
    pub arxiv: Option<String>,
    pub isbn13: Vec<String>,
    pub pmid: Option<String>,
}

impl WorkIds {
    pub fn is_empty(&self) -> bool {
        self.doi.is_none() && self.arxiv.is_none() && self.isbn13.is_empty() && self.pmid.is_none()
    }

    /// Whether the item (its `data`) carries one of these identifiers.
    pub fn found_in(&self, data: &Map<String, Value>) -> bool {
        let field = |name: &str| data.get(name).and_then(Value::as_str).unwrap_or("");
        let extra = field("extra");
        let extra_value = |label: &str| -> Vec<String> {
            extra
                .lines()
                .filter_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case(label)
                        .then(|| v.trim().to_string())
                })
                .collect()
        };
        if let Some(doi) = &self.doi {
            let mut dois = vec![field("DOI").to_string()];
            dois.extend(extra_value("DOI"));
            if dois.iter().any(|d| clean_doi(d) == *doi) {
                return true;
            }
        }
        if let Some(id) = &self.arxiv {
            let id = id.to_lowercase();
            let doi = clean_doi(field("DOI"));
            let archive = field("archiveID").to_lowercase();
            let url = field("url").to_lowercase();
            let in_extra = extra.lines().any(|l| {
                let l = l.trim().to_lowercase();
                l.strip_prefix("arxiv:")
                    .map(|rest| without_version(rest.split_whitespace().next().unwrap_or("")) == id)
                    .unwrap_or(false)
            });
            if doi == format!("10.48550/arxiv.{id}")
                || without_version(archive.strip_prefix("arxiv:").unwrap_or("")) == id
                || in_extra
                || ["arxiv.org/abs/", "arxiv.org/pdf/"].iter().any(|p| {
                    url.split(p)
                        .nth(1)
                        .is_some_and(|rest| without_version(rest.trim_end_matches(".pdf")) == id)
                })
            {
                return true;
            }
        }
        if !self.isbn13.is_empty() {
            let isbns = field("ISBN")
                .split([' ', ',', ';'])
                .filter_map(isbn13_of)
                .collect::<Vec<_>>();
            if isbns.iter().any(|i| self.isbn13.contains(i)) {
                return true;
            }
        }
        if let Some(pmid) = &self.pmid {
            if field("PMID").trim() == pmid || extra_value("PMID").iter().any(|p| p == pmid) {
                return true;
            }
        }
        false
    }
}

/// A DOI as compared: trimmed, without a `doi:` or resolver prefix, in lower case.
pub fn clean_doi(doi: &str) -> String {
    let d = doi.trim();
    let lower = d.to_lowercase();
    let stripped = [
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ]
    .iter()
    .find_map(|p| lower.strip_prefix(p))
    .unwrap_or(&lower);
    stripped.trim().to_string()
}

/// An arXiv id as compared: without its `vN`, and an old-style id without its subject class
/// (`math.CA/0611800` is `math/0611800`: the class is not part of the identifier).
fn without_version(id: &str) -> String {
    let id = id.trim().trim_end_matches('/');
    let owned;
    let id = match id.split_once('/') {
        Some((archive, number)) if archive.contains('.') => {
            owned = format!("{}/{number}", archive.split('.').next().unwrap_or(archive));
            owned.as_str()
        }
        _ => id,
    };
    match id.rfind('v') {
        Some(at)
            if at > 0
                && id
                    .get(at + 1..)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            id.get(..at).unwrap_or(id).to_string()
        }
        _ => id.to_string(),
    }
}

/// An ISBN-10 or -13 (hyphens allowed) as its 13 digits; `None` for anything else.
pub fn isbn13_of(raw: &str) -> Option<String> {
    let chars: Vec<char> = raw
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    match chars.len() {
        13 if chars.iter().all(char::is_ascii_digit) => Some(chars.iter().collect()),
        10 if chars.iter().take(9).all(char::is_ascii_digit)
            && chars
                .last()
                .is_some_and(|c| c.is_ascii_digit() || *c == 'X') =>
        {
            let mut digits: Vec<u32> = vec![9, 7, 8];
            digits.extend(chars.iter().take(9).filter_map(|c| c.to_digit(10)));
            let sum: u32 = digits
                .iter()
                .enumerate()
                .map(|(i, d)| if i % 2 == 0 { *d } else { d * 3 })
                .sum();
            let check = (10 - sum % 10) % 10;
            digits.push(check);
            Some(
                digits
                    .iter()
                    .map(|d| char::from_digit(*d, 10).unwrap_or('0'))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// A new item drafted from a service's metadata.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    pub item_type: String,
    /// Zotero field names and values; a field the type's template lacks is left out and
    /// reported.
    pub fields: BTreeMap<String, String>,
    pub creators: Vec<Creator>,
    pub tags: Vec<String>,
    pub collections: Vec<String>,
}

/// What creating a draft did.
#[derive(Debug, Clone)]
pub struct CreatedDraft {
    pub key: String,
    pub version: u64,
    pub data: Map<String, Value>,
    /// Fields of the draft the item type has no place for.
    pub left_out: Vec<String>,
}

/// How many candidates each search reads.
const CANDIDATES: u32 = 50;
/// How many title words a search uses (Zotero ANDs them).
const TITLE_WORDS: usize = 8;

impl Library<'_> {
    /// An item of this library (not in the trash) that is the same work: candidates by
    /// title words and by each identifier as a quick search, compared by identifiers.
    pub async fn find_same_work(
        &self,
        title: &str,
        ids: &WorkIds,
        cancel: &CancellationToken,
    ) -> Result<Option<(String, String)>, ZoteroError> {
        if ids.is_empty() {
            return Ok(None);
        }
        let words: Vec<&str> = title
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2)
            .take(TITLE_WORDS)
            .collect();
        let mut queries: Vec<(String, QuickSearchMode)> = Vec::new();
        if !words.is_empty() {
            queries.push((words.join(" "), QuickSearchMode::TitleCreatorYear));
        }
        for id in [&ids.doi, &ids.arxiv, &ids.pmid].into_iter().flatten() {
            queries.push((id.clone(), QuickSearchMode::Everything));
        }
        for (query, qmode) in queries {
            let listing = ItemListing {
                filter: ItemFilter {
                    query: Some(query),
                    qmode,
                    ..ItemFilter::default()
                },
                sort: "dateModified".into(),
                direction: None,
                limit: CANDIDATES,
                start: 0,
            };
            let page = self.list_items_wire(&listing, cancel).await?;
            for object in page {
                if ids.found_in(&object.data) {
                    let key = object.key.clone().unwrap_or_default();
                    let title = object
                        .data
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    return Ok(Some((key, title)));
                }
            }
        }
        Ok(None)
    }

    /// Creates the draft from its type's template, exactly once (own key and write token).
    pub async fn create_draft(
        &self,
        draft: &Draft,
        cancel: &CancellationToken,
    ) -> Result<CreatedDraft, ZoteroError> {
        self.require_write(false, cancel).await?;
        let mut object = self.client.template(&draft.item_type, None, cancel).await?;
        let mut left_out = Vec::new();
        for (field, value) in &draft.fields {
            let settable = object.contains_key(field)
                && !matches!(
                    field.as_str(),
                    "itemType" | "creators" | "tags" | "collections" | "relations"
                );
            if settable {
                object.insert(field.clone(), Value::from(value.as_str()));
            } else {
                left_out.push(field.clone());
            }
        }
        object.insert(
            "creators".into(),
            Value::Array(draft.creators.iter().map(creator_to_wire).collect()),
        );
        object.insert(
            "tags".into(),
            Value::Array(draft.tags.iter().map(|t| json!({ "tag": t })).collect()),
        );
        object.insert("collections".into(), json!(draft.collections));
        let wire = self.create_object(object, cancel).await?;
        Ok(CreatedDraft {
            key: wire.key.clone().unwrap_or_default(),
            version: wire.version.unwrap_or(0),
            data: wire.data,
            left_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn identifiers_are_found_where_zotero_keeps_them() {
        let doi = WorkIds {
            doi: Some("10.1038/nature12373".into()),
            ..WorkIds::default()
        };
        assert!(doi.found_in(&data(json!({"DOI": "10.1038/NATURE12373"}))));
        assert!(doi.found_in(&data(json!({"DOI": "https://doi.org/10.1038/nature12373"}))));
        assert!(doi.found_in(&data(json!({"extra": "Type: x\nDOI: 10.1038/nature12373"}))));
        assert!(!doi.found_in(&data(json!({"DOI": "10.1038/nature1237"}))));

        let arxiv = WorkIds {
            arxiv: Some("1706.03762".into()),
            ..WorkIds::default()
        };
        for d in [
            json!({"archiveID": "arXiv:1706.03762"}),
            json!({"extra": "arXiv:1706.03762 [cs]"}),
            json!({"DOI": "10.48550/arXiv.1706.03762"}),
            json!({"url": "http://arxiv.org/abs/1706.03762v5"}),
        ] {
            assert!(arxiv.found_in(&data(d.clone())), "{d}");
        }
        assert!(!arxiv.found_in(&data(json!({"extra": "arXiv:1706.03763"}))));
        let old = WorkIds {
            arxiv: Some("math/0611800".into()),
            ..WorkIds::default()
        };
        assert!(old.found_in(&data(json!({"archiveID": "arXiv:math.CA/0611800v2"}))));

        let isbn = WorkIds {
            isbn13: vec!["9780306406157".into()],
            ..WorkIds::default()
        };
        assert!(isbn.found_in(&data(json!({"ISBN": "0-306-40615-2"}))));
        assert!(isbn.found_in(&data(json!({"ISBN": "978-0-306-40615-7 0306406152"}))));
        let pmid = WorkIds {
            pmid: Some("31452104".into()),
            ..WorkIds::default()
        };
        assert!(pmid.found_in(&data(json!({"extra": "PMID: 31452104\nPMCID: PMC6784890"}))));
        assert!(!pmid.found_in(&data(json!({"extra": "PMID: 314521040"}))));
    }

    #[test]
    fn isbn_10_becomes_13() {
        assert_eq!(isbn13_of("0-306-40615-2").as_deref(), Some("9780306406157"));
        assert_eq!(isbn13_of("080442957X").as_deref(), Some("9780804429573"));
        assert_eq!(isbn13_of("12345"), None);
    }
}
