//! A work as OpenAlex or Crossref's reference list gives it, cut to the answer's sizes,
//! and how many works fit a page's characters.

use serde_json::Value;

use super::Work;
use crate::budget::json_chars;
use crate::service::research::in_library;
use zotero_metadata::identifiers::fold_doi;

/// What a missing field reads as.
static NULL: Value = Value::Null;

/// `v`'s field `key`, null when it has none.
pub(super) fn at<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&NULL)
}

/// The most authors named per work; `more_authors` says how many were left out.
pub const AUTHORS_SHOWN: usize = 3;
/// The most characters of a title or an author's name kept.
const TITLE_CHARS: usize = 300;
const AUTHOR_CHARS: usize = 100;

/// Keeps the works whose JSON fits in `chars` (at least one); whether some were left out.
pub(super) fn fit(works: &mut Vec<Work>, chars: usize) -> bool {
    let mut used = 0;
    for (n, w) in works.iter().enumerate() {
        used += approx_chars(w) + 1;
        if used > chars && n > 0 {
            works.truncate(n);
            return true;
        }
    }
    false
}

/// About what a work takes in the answer (its texts and the fields around them).
fn approx_chars(w: &Work) -> usize {
    const FIELDS: usize = 260;
    FIELDS
        + w.title.as_deref().map_or(0, json_chars)
        + w.authors.iter().map(|a| json_chars(a) + 1).sum::<usize>()
        + w.doi.as_deref().map_or(0, json_chars) * 2
        + w.openalex_id.as_deref().map_or(0, json_chars)
}

/// `W123` from OpenAlex's `https://openalex.org/W123`.
pub(super) fn short_id(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    let id = s.rsplit('/').next()?;
    (id.len() > 1 && id.starts_with('W') && id.bytes().skip(1).all(|b| b.is_ascii_digit()))
        .then(|| id.to_string())
}

pub(super) fn id_number(id: &str) -> u64 {
    id.get(1..).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", s.get(..at).unwrap_or_default()),
        None => s.to_string(),
    }
}

/// A work as OpenAlex answers it.
pub(super) fn work_of(w: &Value) -> Work {
    let authors: Vec<String> = at(w, "authorships")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            at(at(a, "author"), "display_name")
                .as_str()
                .or(at(a, "raw_author_name").as_str())
        })
        .map(|a| cut(a, AUTHOR_CHARS))
        .collect();
    let more_authors = authors.len().saturating_sub(AUTHORS_SHOWN);
    Work {
        title: at(w, "display_name")
            .as_str()
            .or(at(w, "title").as_str())
            .map(|t| cut(t, TITLE_CHARS)),
        authors: authors.into_iter().take(AUTHORS_SHOWN).collect(),
        more_authors,
        year: at(w, "publication_year")
            .as_u64()
            .and_then(|y| u32::try_from(y).ok()),
        doi: at(w, "doi")
            .as_str()
            .map(fold_doi)
            .filter(|d| d.starts_with("10.") && d.len() <= 300),
        openalex_id: at(w, "id").as_str().map(|i| cut(i, 100)),
        cited_by_count: at(w, "cited_by_count").as_u64(),
        cited_by_given: None,
        in_library: None,
    }
}

/// One entry of Crossref's `reference` list (`DOI`, `article-title`, `author` — the first
/// author's name —, `year`, or only `unstructured`).
pub(super) fn crossref_reference(r: &Value) -> Work {
    let title = at(r, "article-title")
        .as_str()
        .or(at(r, "volume-title").as_str())
        .or(at(r, "unstructured").as_str())
        .map(|t| cut(t, TITLE_CHARS));
    Work {
        title,
        authors: at(r, "author")
            .as_str()
            .map(|a| vec![cut(a, AUTHOR_CHARS)])
            .unwrap_or_default(),
        more_authors: 0,
        year: at(r, "year").as_str().and_then(in_library::year_of),
        doi: at(r, "DOI")
            .as_str()
            .map(fold_doi)
            .filter(|d| d.starts_with("10.") && d.len() <= 300),
        openalex_id: None,
        cited_by_count: None,
        cited_by_given: None,
        in_library: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_what_fits_and_at_least_one() {
        let w = Work {
            title: Some("x".repeat(1_000)),
            ..Work::default()
        };
        let mut works = vec![w.clone(), w.clone(), w];
        assert!(fit(&mut works, 2_000));
        assert_eq!(works.len(), 1);
        let mut one = vec![Work::default()];
        assert!(!fit(&mut one, 10));
    }
}
