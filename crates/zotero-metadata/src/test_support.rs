//! What the mapping tests share.

use std::collections::BTreeMap;

/// The expected fields of a mapped item, from `(name, value)` pairs.
pub(crate) fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
