//! The DOI an item is checked by, and why an item has none to check.

use zotero_api::model::Item;
use zotero_metadata::identifiers::doi_shaped;

use super::short_title;

/// Why an item cannot be checked by its DOI; the message becomes the item's `reason`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoDoi {
    /// Notes, attachments and annotations are not works.
    #[error("a {item_type} has no DOI")]
    NotAWork { item_type: String },
    #[error("no DOI (neither the DOI field nor a 'DOI:' line in Extra): add one to check it")]
    Missing,
    /// `shown` is the DOI as written, shortened as titles are.
    #[error("its DOI '{shown}' is not a DOI (10.<prefix>/<suffix>): correct it to check it")]
    Malformed { shown: String },
}

/// The DOI an item is checked by: its DOI field, else a `DOI:` line of Extra (where Zotero
/// keeps it for item types without the field), its link or label taken off.
pub(crate) fn item_doi(item: &Item) -> Result<String, NoDoi> {
    if matches!(
        item.item_type.as_str(),
        "note" | "attachment" | "annotation"
    ) {
        return Err(NoDoi::NotAWork {
            item_type: item.item_type.clone(),
        });
    }
    let from_extra = || {
        item.extra.as_deref().and_then(|e| {
            e.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("doi")
                    .then(|| v.trim().to_string())
            })
        })
    };
    let Some(raw) = item.doi.clone().or_else(from_extra) else {
        return Err(NoDoi::Missing);
    };
    doi_shaped(&raw)
        .map(str::to_string)
        .ok_or_else(|| NoDoi::Malformed {
            shown: short_title(&raw),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(item_type: &str, doi: Option<&str>, extra: Option<&str>) -> Item {
        Item {
            item_key: "ABCD2345".into(),
            version: 1,
            item_type: item_type.into(),
            title: "A title".into(),
            creators: Vec::new(),
            date: None,
            doi: doi.map(Into::into),
            url: None,
            abstract_note: None,
            tags: Vec::new(),
            extra: extra.map(Into::into),
            attachments: None,
            retraction: None,
        }
    }

    #[test]
    fn an_items_doi_comes_from_its_field_or_extra() {
        let doi = |i: &Item| item_doi(i).ok();
        assert_eq!(
            doi(&item(
                "journalArticle",
                Some("https://doi.org/10.1/X"),
                None
            ))
            .as_deref(),
            Some("10.1/X")
        );
        assert_eq!(
            doi(&item("report", None, Some("Type: x\nDOI: doi:10.2/y"))).as_deref(),
            Some("10.2/y")
        );
    }

    #[test]
    fn an_item_without_a_doi_says_why_as_before() {
        let reason = |i: &Item| item_doi(i).err().map(|e| e.to_string());
        assert_eq!(
            reason(&item("note", Some("10.1/x"), None)).as_deref(),
            Some("a note has no DOI")
        );
        assert_eq!(
            reason(&item("book", None, Some("Type: x"))).as_deref(),
            Some("no DOI (neither the DOI field nor a 'DOI:' line in Extra): add one to check it")
        );
        assert_eq!(
            reason(&item("book", Some("11.1/x"), None)).as_deref(),
            Some("its DOI '11.1/x' is not a DOI (10.<prefix>/<suffix>): correct it to check it")
        );
    }
}
