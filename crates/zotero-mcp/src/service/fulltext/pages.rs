//! `pages` of `zotero_get_item_fulltext`: `"3"`, `"iv"`, `"12-14"`, `"2,5-7"`. Each part
//! names a page by its printed label or by its 1-based position; when a part could be both
//! (`"3"` where the third page is labelled `1` and another page `3`), the LABEL wins, since it
//! is what a citation names. A range takes every page between its two ends in document order.
//! Each selected page's part of the text opens with its [`header`].

use zotero_text::Page;

/// The longest page label a page header repeats.
const LABEL_CHARS: usize = 40;

/// The header line of a page's part of the text (what the search index counts a page's
/// offsets after).
pub fn header(label: &str) -> String {
    let clean: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(LABEL_CHARS)
        .collect();
    format!("=== Page {clean} ===\n\n")
}

/// The longest `pages` accepted, and the most parts in it.
pub const MAX_SPEC_CHARS: usize = 200;
pub const MAX_PARTS: usize = 50;

/// Why `pages` could not be used; the message says what would be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PagesError {
    #[error("'pages' must be page labels or numbers, single or as ranges, separated by commas (e.g. \"3\", \"iv\", \"12-14\", \"2,5-7\"), at most {MAX_SPEC_CHARS} characters and {MAX_PARTS} parts")]
    Malformed,
    #[error("the document has no page labelled or numbered '{part}'; it has {count} pages{}", labels_hint(.first, .last))]
    NoSuchPage {
        part: String,
        count: usize,
        first: Option<String>,
        last: Option<String>,
    },
}

fn labels_hint(first: &Option<String>, last: &Option<String>) -> String {
    match (first, last) {
        (Some(f), Some(l)) => format!(", labelled {f} to {l}"),
        _ => String::new(),
    }
}

/// The position (0-based) of the page `part` names: a label first, else a 1-based number.
fn resolve(pages: &[Page], part: &str) -> Option<usize> {
    if let Some(i) = pages.iter().position(|p| p.label == part) {
        return Some(i);
    }
    let n: usize = part.parse().ok()?;
    (1..=pages.len()).contains(&n).then(|| n - 1)
}

/// The positions `spec` selects, in document order, each once.
pub fn select(pages: &[Page], spec: &str) -> Result<Vec<usize>, PagesError> {
    let spec = spec.trim();
    if spec.is_empty() || spec.chars().count() > MAX_SPEC_CHARS {
        return Err(PagesError::Malformed);
    }
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    if parts.len() > MAX_PARTS || parts.iter().any(|p| p.is_empty()) {
        return Err(PagesError::Malformed);
    }
    let missing = |part: &str| PagesError::NoSuchPage {
        part: part.to_string(),
        count: pages.len(),
        first: pages.first().map(|p| p.label.clone()),
        last: pages.last().map(|p| p.label.clone()),
    };
    let mut chosen = vec![false; pages.len()];
    for part in parts {
        // A label may itself hold a hyphen (`A-1`): the whole part is tried first.
        let (from, to) = match resolve(pages, part) {
            Some(i) => (i, i),
            None => {
                let (a, b) = part.split_once('-').ok_or_else(|| missing(part))?;
                let (a, b) = (a.trim(), b.trim());
                if a.is_empty() || b.is_empty() {
                    return Err(PagesError::Malformed);
                }
                let from = resolve(pages, a).ok_or_else(|| missing(a))?;
                let to = resolve(pages, b).ok_or_else(|| missing(b))?;
                (from.min(to), from.max(to))
            }
        };
        for slot in chosen.iter_mut().take(to + 1).skip(from) {
            *slot = true;
        }
    }
    Ok(chosen
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| c.then_some(i))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zotero_text::PageStatus;

    fn doc(labels: &[&str]) -> Vec<Page> {
        labels
            .iter()
            .enumerate()
            .map(|(i, l)| Page {
                index: i as u32,
                label: l.to_string(),
                status: PageStatus::Text,
                text: String::new(),
                glyphs: vec![],
                view_box: [0.0; 4],
                rotation: 0,
            })
            .collect()
    }

    #[test]
    fn labels_numbers_and_ranges() {
        let d = doc(&["i", "ii", "iii", "iv", "1", "2", "3", "A-1"]);
        assert_eq!(select(&d, "iv").unwrap(), [3]);
        // "3" is a label here (the 7th page): the label wins over the 3rd position.
        assert_eq!(select(&d, "3").unwrap(), [6]);
        // "8" is no label: the 8th page.
        assert_eq!(select(&d, "8").unwrap(), [7]);
        assert_eq!(select(&d, "ii-iv").unwrap(), [1, 2, 3]);
        assert_eq!(select(&d, "2, iv-1 ,A-1").unwrap(), [3, 4, 5, 7]);
        assert_eq!(select(&d, "3-1").unwrap(), [4, 5, 6]);
        assert!(matches!(
            select(&d, "ix"),
            Err(PagesError::NoSuchPage { count: 8, .. })
        ));
        let e = select(&d, "9").unwrap_err().to_string();
        assert!(e.contains("labelled i to A-1"), "{e}");
        for bad in ["", " , ", "1,,2", "-3", "2-"] {
            assert_eq!(select(&d, bad), Err(PagesError::Malformed), "{bad}");
        }
        assert_eq!(
            select(&d, &"1,".repeat(60)).unwrap_err(),
            PagesError::Malformed
        );
    }
}
