//! Paging and sorting as tool arguments: a page's size and start, and a sort key.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use zotero_api::client::{DEFAULT_SORT, SORT_VALUES};

use super::base::{inline_schema, WholeNumber};
use crate::text::quote;

/// How many results one page holds: 1 to 100, 25 unless given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Limit(u32);

impl Limit {
    /// The most results one page may hold.
    pub const MAX: u32 = 100;
    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }

    /// `N` results, checked against 1 to 100 when compiled.
    pub const fn of<const N: u64>() -> Self {
        const { assert!(N >= 1 && N <= Limit::MAX as u64) };
        Self(N as u32)
    }
}

impl Default for Limit {
    fn default() -> Self {
        Self(25)
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = d.deserialize_any(WholeNumber {
            min: 1,
            max: u64::from(Limit::MAX),
        })?;
        u32::try_from(n).map(Self).map_err(de::Error::custom)
    }
}

inline_schema!(Limit, "Limit", { "type": "integer", "minimum": 1, "maximum": 100 });

/// Where a page starts in the result set: 0, or `next_start` from the previous answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Start(u64);

impl Start {
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for Start {
    fn from(n: u64) -> Self {
        Self(n)
    }
}

impl<'de> Deserialize<'de> for Start {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeNumber {
            min: 0,
            max: u64::MAX,
        })
        .map(Self)
    }
}

inline_schema!(Start, "Start", { "type": "integer", "minimum": 0 });

// ---------------------------------------------------------------------------------------
// Sort
// ---------------------------------------------------------------------------------------

/// A sort key Zotero documents for items, or the seed's `relevance` (which falls back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SortKey(String);

impl SortKey {
    /// The key as text.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Default for SortKey {
    fn default() -> Self {
        Self(DEFAULT_SORT.to_string())
    }
}

impl<'de> Deserialize<'de> for SortKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == DEFAULT_SORT || SORT_VALUES.contains(&s.as_str()) {
            Ok(Self(s))
        } else {
            Err(de::Error::custom(format!(
                "must be one of {DEFAULT_SORT}, {}; got '{}'",
                SORT_VALUES.join(", "),
                quote(&s)
            )))
        }
    }
}

// The seed publishes a plain string: the keys are listed by zotero_get_sort_values.
inline_schema!(SortKey, "SortKey", { "type": "string", "maxLength": 32 });
