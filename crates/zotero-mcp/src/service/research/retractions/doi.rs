//! The DOI an item is checked by, and DOIs read in their usual spellings.

use zotero_api::model::Item;

use super::short_title;

/// The DOI an item is checked by: its DOI field, else a `DOI:` line of Extra (where Zotero
/// keeps it for item types without the field); an error says why there is none.
pub(super) fn item_doi(item: &Item) -> Result<String, String> {
    if matches!(
        item.item_type.as_str(),
        "note" | "attachment" | "annotation"
    ) {
        return Err(format!("a {} has no DOI", item.item_type));
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
        return Err(
            "no DOI (neither the DOI field nor a 'DOI:' line in Extra): add one to \
                    check it"
                .into(),
        );
    };
    normalize_doi(&raw).ok_or_else(|| {
        format!(
            "its DOI '{}' is not a DOI (10.<prefix>/<suffix>): correct it to check it",
            short_title(&raw)
        )
    })
}

/// `https://doi.org/10.1/x`, `doi:10.1/x` → `10.1/x`; `None` when it is not a DOI.
pub fn normalize_doi(raw: &str) -> Option<String> {
    let mut d = raw.trim();
    for prefix in [
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ] {
        if d.len() >= prefix.len()
            && d.get(..prefix.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
        {
            d = d.get(prefix.len()..).unwrap_or_default().trim();
        }
    }
    let (prefix, suffix) = d.split_once('/')?;
    let ok = prefix.starts_with("10.")
        && prefix.len() > 3
        && !suffix.is_empty()
        && !d.chars().any(char::is_whitespace);
    ok.then(|| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dois_are_read_in_their_usual_spellings() {
        assert_eq!(
            normalize_doi(" https://doi.org/10.1000/XYZ ").as_deref(),
            Some("10.1000/XYZ")
        );
        assert_eq!(normalize_doi("doi:10.1/a").as_deref(), Some("10.1/a"));
        assert_eq!(normalize_doi("DOI:10.1/a").as_deref(), Some("10.1/a"));
        assert_eq!(normalize_doi("10.1/a b"), None);
        assert_eq!(normalize_doi("11.1/a"), None);
        assert_eq!(normalize_doi("10./a"), None);
        assert_eq!(normalize_doi("10.1000"), None);
    }
}
