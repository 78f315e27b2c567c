//! Which of the works an outside service named the library holds: each work is matched by
//! its DOI, then by its normalized title and year (NFKC, case folded, punctuation and spacing
//! dropped), among the library's items that Zotero's quick search finds by the work's title
//! words.
//!
//! Why a search per work: the Web API cannot look items up by DOI (its quick search covers
//! titles, creators and years; `everything` adds full text and notes, not the DOI field), and
//! listing the whole library per call would cost a 10,000-item library 100 requests each
//! time. A title search costs one request per work of the page answered (at most
//! `limit`, 50), whatever the library's size; with Zotero's database configured
//! (`ZOTERO_DATA_DIR`) the same searches are read from the local database, no request at all.

use tokio_util::sync::CancellationToken;
use unicode_normalization_alignments::UnicodeNormalization;
use zotero_api::items::{ItemFilter, ItemListing, QuickSearchMode};
use zotero_api::Library;
use zotero_metadata::identifiers::fold_doi;

use crate::error::ToolError;

/// How many candidates one title search reads.
const CANDIDATES: u32 = 25;
/// How many title words a search uses (Zotero ANDs them).
const TITLE_WORDS: usize = 8;

/// What a work is known by, to find it in the library.
#[derive(Debug, Clone, Default)]
pub struct WorkKeys {
    pub title: Option<String>,
    pub year: Option<u32>,
    pub doi: Option<String>,
}

/// How a work was found in the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    Doi,
    TitleYear,
}

/// The library item that is the work, and how it was recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InLibrary {
    pub item_key: String,
    pub matched_by: MatchedBy,
}

/// A title as compared: NFKC, lower case, letters and digits only, one space between words.
pub fn normalize_title(title: &str) -> String {
    let folded: String = title
        .nfkc()
        .map(|(c, _)| c)
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first four-digit year in a Zotero date (`2017-06-12`, `May 01, 1980`, `06/2007`).
pub fn year_of(date: &str) -> Option<u32> {
    date.as_bytes()
        .windows(4)
        .enumerate()
        .find(|(i, w)| {
            w.iter().all(u8::is_ascii_digit)
                && !date.as_bytes().get(i + 4).is_some_and(u8::is_ascii_digit)
                && !i
                    .checked_sub(1)
                    .and_then(|p| date.as_bytes().get(p))
                    .is_some_and(u8::is_ascii_digit)
        })
        .and_then(|(_, w)| std::str::from_utf8(w).ok())
        .and_then(|y| y.parse().ok())
}

/// The library's item that is `work`, if any (one quick search by the title's words).
pub async fn find(
    lib: &Library<'_>,
    work: &WorkKeys,
    cancel: &CancellationToken,
) -> Result<Option<InLibrary>, ToolError> {
    let Some(title) = work.title.as_deref() else {
        return Ok(None);
    };
    let words: Vec<&str> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 2)
        .take(TITLE_WORDS)
        .collect();
    if words.is_empty() {
        return Ok(None);
    }
    let listing = ItemListing {
        filter: ItemFilter {
            query: Some(words.join(" ")),
            qmode: QuickSearchMode::TitleCreatorYear,
            top_only: true,
            ..ItemFilter::default()
        },
        sort: "dateModified".into(),
        direction: None,
        limit: CANDIDATES,
        start: 0,
    };
    let page = lib.list_items(&listing, cancel).await?.page;
    let doi = work.doi.as_deref().map(fold_doi);
    if let Some(doi) = &doi {
        let same = page
            .items
            .iter()
            .find(|i| i.doi.as_deref().is_some_and(|d| fold_doi(d) == *doi));
        if let Some(item) = same {
            return Ok(Some(InLibrary {
                item_key: item.item_key.clone(),
                matched_by: MatchedBy::Doi,
            }));
        }
    }
    let wanted = normalize_title(title);
    let same = page.items.iter().find(|i| {
        // An item with another DOI is another work, whatever its title.
        let other_doi = match (&doi, i.doi.as_deref().filter(|d| !d.trim().is_empty())) {
            (Some(d), Some(theirs)) => fold_doi(theirs) != *d,
            _ => false,
        };
        !other_doi
            && normalize_title(&i.title) == wanted
            && i.date.as_deref().and_then(year_of) == work.year
            && work.year.is_some()
    });
    Ok(same.map(|item| InLibrary {
        item_key: item.item_key.clone(),
        matched_by: MatchedBy::TitleYear,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_fold_compatibility_forms_case_and_punctuation() {
        assert_eq!(
            normalize_title("U-Net: Convolutional Networks for Biomedical Image Segmentation"),
            normalize_title("u net — convolutional networks for biomedical image segmentation.")
        );
        // NFKC: a ligature and full-width letters are their plain letters.
        assert_eq!(normalize_title("Eﬃcient ＴＥＸＴ"), "efficient text");
        assert_ne!(
            normalize_title("Deep learning"),
            normalize_title("Deep learnings")
        );
    }

    #[test]
    fn years_are_the_first_four_digits_standing_alone() {
        assert_eq!(year_of("2017-06-12"), Some(2017));
        assert_eq!(year_of("May 01, 1980"), Some(1980));
        assert_eq!(year_of("06/2007"), Some(2007));
        assert_eq!(year_of("12345"), None);
        assert_eq!(year_of(""), None);
    }
}
