//! The item sorts of Zotero's web API: one list for the database's answers and for the
//! client and tools above (zotero-api's `SORT_VALUES` is [`ITEM_SORTS`]).

/// The item sorts the web API documents (zotero-api.md), in its order: what a client offers.
pub const ITEM_SORTS: [&str; 15] = [
    "dateAdded",
    "dateModified",
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "addedBy",
];

/// Sorts the web API also accepts for items though it does not document them for items
/// (`numItems` is a tags sort): the database accepts them as the API does, a client does not
/// offer them.
const ALSO_ACCEPTED: [&str; 2] = ["numItems", "serverDateModified"];

/// Whether the web API accepts `sort` for items (any other is answered 400).
pub fn accepts_item_sort(sort: &str) -> bool {
    ITEM_SORTS.contains(&sort) || ALSO_ACCEPTED.contains(&sort)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_sorts_and_two_more_are_accepted() {
        for sort in ITEM_SORTS.into_iter().chain(ALSO_ACCEPTED) {
            assert!(accepts_item_sort(sort), "{sort}");
        }
        assert!(!accepts_item_sort("relevance"));
        assert!(!accepts_item_sort("Title"));
    }
}
