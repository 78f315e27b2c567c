//! What was taken out of a note, counted and bounded, and the note it made.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

/// At most this many different things are reported as removed; the rest are counted together.
pub const MAX_REPORTED: usize = 32;

/// How long a reported name may be, in characters.
pub(super) const MAX_NAME_CHARS: usize = 40;

/// A note's HTML as Zotero stores it, and what was removed to make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SanitizedNote {
    pub html: String,
    pub removed: Vec<Removed>,
}

/// Something taken out of a note, and how many times.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Removed {
    pub kind: RemovedKind,
    /// An element's or attribute's name, a URL scheme (`none` for a URL without one), or `…`
    /// for what is past [`MAX_REPORTED`].
    pub name: String,
    pub count: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemovedKind {
    // Plain comments, not docs: docs on the variants would publish each as a schema of its own.
    // An element removed with everything in it (script, style, …).
    Element,
    // An element removed, what it held kept.
    Tag,
    // An attribute removed (event handlers, `style`, an image's `src`, …).
    Attribute,
    // A link or image URL removed for its scheme.
    UrlScheme,
    // A comment (or CDATA, which HTML reads as one).
    Comment,
    // Anything more, past `MAX_REPORTED` different things.
    Other,
}

/// What was removed, counted, at most [`MAX_REPORTED`] different things.
#[derive(Default)]
pub(super) struct Report(BTreeMap<(RemovedKind, String), usize>);

impl Report {
    pub(super) fn add(&mut self, kind: RemovedKind, name: &str) {
        let name: String = name.chars().take(MAX_NAME_CHARS).collect();
        let key = if self.0.contains_key(&(kind, name.clone())) || self.0.len() < MAX_REPORTED {
            (kind, name)
        } else {
            (RemovedKind::Other, "…".to_string())
        };
        *self.0.entry(key).or_insert(0) += 1;
    }

    pub(super) fn into_vec(self) -> Vec<Removed> {
        self.0
            .into_iter()
            .map(|((kind, name), count)| Removed { kind, name, count })
            .collect()
    }
}
