//! Changes to objects that exist: items (fields, tags, collections, trash) and collections
//! (name, parent), never losing a change made in Zotero meanwhile.
//!
//! A change is kept as intent (set these fields; add and remove these tags and
//! collections), not as a new copy of the object, so it can be applied again to whatever the
//! object has become. Every write names the version it was computed from (`version` in a
//! `POST` array, 50 objects at a time); Zotero refuses it (`412`) if the object changed since.
//! The object is then read again and the change re-applied when no field it sets was changed
//! elsewhere (tags and collections are sets: what Zotero added meanwhile stays); otherwise
//! the object is left as Zotero has it and the outcome names each field with both values.
//!
//! Each object is all or nothing (one object in one `POST`), and each gets its own outcome:
//! a failure of one never hides the success of another. An answer that was lost (or a call
//! cancelled mid-write) is settled by reading the objects again: the change is there or not.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::library::ObjectKey;
pub use crate::model::{field_value, ObjectKind};

mod apply;
mod batch;
mod merge;
mod read;
#[cfg(test)]
mod tests;

/// Zotero takes at most this many objects in one write (and keys in one read or delete).
pub const WRITE_BATCH: usize = 50;

/// Additions to and removals from a set-valued property (an item's tags or collections).
/// `replace` is turned into additions and removals against the object as first read, so a
/// value Zotero added after that read is kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetEdit {
    pub add: Vec<String>,
    pub remove: Vec<String>,
    pub replace: Option<Vec<String>>,
    /// Tags only: (old name, new name). Decided on the object as it is when written: one
    /// carrying the old name (exactly, of either type) carries the new one instead, once,
    /// as a manual tag (what Zotero's own rename does); one without it is left as it is.
    pub rename: Vec<(String, String)>,
}

impl SetEdit {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty()
            && self.remove.is_empty()
            && self.replace.is_none()
            && self.rename.is_empty()
    }
}

/// The change asked for on one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub key: ObjectKey,
    /// Fields and their new values, by their Zotero names (`""` clears a text field;
    /// `deleted: true` trashes, `false` restores; a collection's `parentCollection: false`
    /// makes it top-level).
    pub set: BTreeMap<String, Value>,
    /// Items only: tags (manual tags are added; a removal removes the tag of any type; a
    /// rename applies only where the old name is).
    pub tags: SetEdit,
    /// Items only: collection keys.
    pub collections: SetEdit,
    /// The version the caller last saw: when set, an object changed since then is not
    /// written (`Stale`), because which of its fields changed cannot be known.
    pub expect_version: Option<u64>,
}

impl Edit {
    pub fn new(key: ObjectKey) -> Self {
        Self {
            key,
            set: BTreeMap::new(),
            tags: SetEdit::default(),
            collections: SetEdit::default(),
            expect_version: None,
        }
    }
}

/// One field of one object, before → after.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A field this change sets that was changed in Zotero since it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub field: String,
    /// The value when this call first read the object.
    pub before: Value,
    /// What this call would have written.
    pub yours: Value,
    /// What Zotero has now.
    pub in_zotero: Value,
}

/// What happened to one object.
#[derive(Debug, Clone, PartialEq)]
pub enum EditStatus {
    /// Written; `changes` lists what.
    Changed,
    /// Nothing to do: the object already was as asked.
    Unchanged,
    /// Dry run: `changes` is what would be written.
    WouldChange,
    /// Not written: fields it sets were changed in Zotero meanwhile.
    Conflict(Vec<Conflict>),
    /// Not written: the object changed since `expect_version`.
    Stale {
        current_version: u64,
    },
    NotFound,
    /// Not written: Zotero refused it (`code` is its HTTP status), or the call failed.
    Failed {
        code: u16,
        message: String,
    },
    /// Not attempted: the call was cancelled before this object's turn.
    NotAttempted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditOutcome {
    pub key: ObjectKey,
    pub status: EditStatus,
    /// The object's version after this call (its new version when written).
    pub version: Option<u64>,
    pub changes: Vec<FieldChange>,
    /// The object's `data` as this call last knew it (after the write when written).
    pub data: Option<Map<String, Value>>,
}

/// Reports (objects done, objects in all).
pub type EditProgress<'a> = &'a (dyn Fn(u64, u64) + Send + Sync);
