//! Which items a listing or a search answers: the quick search, tags, item types, a
//! collection, `since`, the trash, top-level only, and sort direction, as query parameters.

use crate::library::ObjectKey;

/// How the quick search matches (`qmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuickSearchMode {
    /// Titles, creators and years (Zotero's default).
    #[default]
    TitleCreatorYear,
    /// Also the full text; the desktop app also every field, tags and notes.
    Everything,
}

impl QuickSearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            QuickSearchMode::TitleCreatorYear => "titleCreatorYear",
            QuickSearchMode::Everything => "everything",
        }
    }
}

/// Sort direction (`direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Asc => "asc",
            Direction::Desc => "desc",
        }
    }
}

/// Item types to keep (any of them) or to leave out (all of them): one `itemType`
/// condition, which is all Zotero takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemTypeFilter {
    pub types: Vec<String>,
    pub exclude: bool,
}

impl ItemTypeFilter {
    /// The `itemType` value: `a || b`, or `-a || b` to leave them out.
    fn param(&self) -> Option<String> {
        if self.types.is_empty() {
            return None;
        }
        let joined = self.types.join(" || ");
        Some(if self.exclude {
            format!("-{joined}")
        } else {
            joined
        })
    }
}

/// Which items a listing or a search answers, before paging.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemFilter {
    /// Quick search words (`q`).
    pub query: Option<String>,
    pub qmode: QuickSearchMode,
    /// Tags every item must carry, each matched as written.
    pub tags: Vec<String>,
    /// Tags no item may carry, each matched as written (none may start with `-`).
    pub exclude_tags: Vec<String>,
    /// Tag conditions in Zotero's own syntax (`a || b`, `-a`), sent as written: every one
    /// must hold.
    pub tag_conditions: Vec<String>,
    pub item_types: ItemTypeFilter,
    /// Only the items of this collection.
    pub collection: Option<ObjectKey>,
    /// Only items changed after this library version.
    pub since: Option<u64>,
    /// The trash instead of the library (not with `collection`).
    pub trashed: bool,
    /// Top-level items only (a matching child shows its parent); not for the trash.
    pub top_only: bool,
}

/// `tag` as a `tag=` filter value that Zotero matches literally.
/// Zotero trims a filter value before reading it, so the check is on the trimmed tag (as
/// stored, tags are trimmed too).
pub(crate) fn literal_tag(tag: &str) -> String {
    let tag = tag.trim();
    if tag.starts_with('-') {
        format!("\\{tag}")
    } else {
        tag.to_string()
    }
}

impl ItemFilter {
    /// The listing's path below the library: `/items[/top]`, `/items/trash` or
    /// `/collections/{key}/items[/top]`.
    pub(crate) fn path(&self) -> String {
        let top = if self.top_only && !self.trashed {
            "/top"
        } else {
            ""
        };
        match (&self.collection, self.trashed) {
            (_, true) => "/items/trash".to_string(),
            (Some(key), false) => format!("/collections/{key}/items{top}"),
            (None, false) => format!("/items{top}"),
        }
    }

    /// The filter's query parameters (`q`, `qmode`, `tag`, `itemType`, `since`), in that
    /// order.
    pub(crate) fn params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(q) = &self.query {
            out.push(("q", q.clone()));
            // Only when not the default, so the seed's search sends what it always sent.
            if self.qmode != QuickSearchMode::TitleCreatorYear {
                out.push(("qmode", self.qmode.as_str().to_string()));
            }
        }
        // Zotero reads a leading `-` in `tag` as NOT and `\-` as a literal hyphen (the
        // dataserver's getSearchParamValues, the desktop's buildSearchFromSearchSyntax), so
        // a tag is matched as written only when escaped.
        out.extend(self.tags.iter().map(|t| ("tag", literal_tag(t))));
        out.extend(
            self.exclude_tags
                .iter()
                .map(|t| ("tag", format!("-{}", t.trim()))),
        );
        out.extend(self.tag_conditions.iter().map(|t| ("tag", t.clone())));
        if let Some(types) = self.item_types.param() {
            out.push(("itemType", types));
        }
        if let Some(since) = self.since {
            out.push(("since", since.to_string()));
        }
        out
    }
}
