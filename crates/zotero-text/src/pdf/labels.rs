//! Page labels: the catalog's `/PageLabels` number tree (ISO 32000-1, 12.4.2), each range a
//! style (`D` decimal, `R`/`r` roman, `A`/`a` letters), a prefix `/P` and a start `/St`.
//! Without it, or past what it says, a page's label is its number.

use std::collections::HashSet;

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::obj::{num, resolve};
use crate::budget::Budget;
use crate::document::TextError;

/// Nodes of the tree read at most (a hostile tree cannot make us walk forever).
const MAX_NODES: usize = 10_000;

/// The label of each of the document's `count` pages.
pub(crate) fn labels(
    doc: &Document,
    count: usize,
    budget: &Budget,
) -> Result<Vec<String>, TextError> {
    let mut ranges = ranges(doc, budget)?;
    ranges.sort_by_key(|(start, _)| *start);
    let mut out = Vec::with_capacity(count);
    for index in 0..count {
        let range = ranges.iter().rev().find(|(start, _)| *start <= index);
        out.push(match range {
            Some((start, dict)) => label(doc, dict, index - start),
            None => (index + 1).to_string(),
        });
    }
    Ok(out)
}

/// The `(first page index, label dictionary)` pairs of the number tree.
fn ranges<'d>(
    doc: &'d Document,
    budget: &Budget,
) -> Result<Vec<(usize, &'d Dictionary)>, TextError> {
    let mut out = Vec::new();
    let Some(root) = doc.catalog().ok().and_then(|c| c.get(b"PageLabels").ok()) else {
        return Ok(out);
    };
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut stack: Vec<&Object> = vec![root];
    let mut nodes = 0usize;
    while let Some(node) = stack.pop() {
        budget.tick()?;
        nodes += 1;
        if nodes > MAX_NODES {
            break;
        }
        if let Object::Reference(id) = node {
            if !seen.insert(*id) {
                continue;
            }
        }
        let Ok(dict) = resolve(doc, node).as_dict() else {
            continue;
        };
        if let Ok(nums) = dict
            .get(b"Nums")
            .map(|o| resolve(doc, o))
            .and_then(Object::as_array)
        {
            for pair in nums.chunks(2) {
                if let [key, value] = pair {
                    let start = num(doc, key).filter(|k| *k >= 0.0 && *k < 1e9);
                    if let (Some(start), Ok(d)) = (start, resolve(doc, value).as_dict()) {
                        out.push((start as usize, d));
                    }
                }
            }
        }
        if let Ok(kids) = dict
            .get(b"Kids")
            .map(|o| resolve(doc, o))
            .and_then(Object::as_array)
        {
            stack.extend(kids.iter().rev());
        }
    }
    Ok(out)
}

/// The label of the page `offset` pages into the range of `dict`.
fn label(doc: &Document, dict: &Dictionary, offset: usize) -> String {
    let prefix = dict
        .get(b"P")
        .ok()
        .map(|o| resolve(doc, o))
        .and_then(|o| lopdf::decode_text_string(o).ok())
        .unwrap_or_default();
    let start = dict
        .get(b"St")
        .ok()
        .and_then(|o| num(doc, o))
        .filter(|s| *s >= 1.0 && *s < 1e9)
        .unwrap_or(1.0);
    let n = (start as usize).saturating_add(offset);
    let number = match dict.get(b"S").and_then(Object::as_name) {
        Ok(b"D") => n.to_string(),
        Ok(b"R") => roman(n),
        Ok(b"r") => roman(n).to_lowercase(),
        Ok(b"A") => letters(n),
        Ok(b"a") => letters(n).to_lowercase(),
        _ => String::new(),
    };
    format!("{prefix}{number}")
}

/// Upper-case roman numerals; past 3999 (no standard form) the decimal number.
fn roman(mut n: usize) -> String {
    if n == 0 || n > 3999 {
        return n.to_string();
    }
    const DIGITS: [(usize, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, digits) in DIGITS {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

/// A to Z, then AA to ZZ, AAA…; past 26 × 100 pages the decimal number.
fn letters(n: usize) -> String {
    if n == 0 || n > 2600 {
        return n.to_string();
    }
    let letter = char::from(b'A' + ((n - 1) % 26) as u8);
    std::iter::repeat_n(letter, (n - 1) / 26 + 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_and_letters() {
        assert_eq!(roman(4), "IV");
        assert_eq!(roman(1994), "MCMXCIV");
        assert_eq!(letters(1), "A");
        assert_eq!(letters(27), "AA");
        assert_eq!(letters(53), "AAA");
    }
}
