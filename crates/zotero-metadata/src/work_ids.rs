//! What identifies a work, for finding it again: its identifiers in canonical form, and
//! whether a Zotero item carries one of them where Zotero keeps them — `DOI` (also a `DOI:`
//! line in `extra`), arXiv (`archiveID`, an `arXiv:` line in `extra`, the arXiv DOI, the
//! abs/pdf URL), `ISBN` (ISBN-10 and -13 alike) and `PMID` (the field or a `PMID:` line).
//! Every stored value is read with the same parser as the identifiers a user gives.

use serde_json::{Map, Value};

use crate::identifiers::{parse, Identifier};

/// A work's identifiers, each as [`Identifier::canonical`] writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkIds {
    pub doi: Option<String>,
    pub arxiv: Option<String>,
    pub isbn13: Vec<String>,
    pub pmid: Option<String>,
}

impl WorkIds {
    pub fn is_empty(&self) -> bool {
        self.doi.is_none() && self.arxiv.is_none() && self.isbn13.is_empty() && self.pmid.is_none()
    }

    /// Adds what `id` says (an arXiv DOI gives the arXiv id too).
    pub fn add(&mut self, id: &Identifier) {
        match id {
            Identifier::Doi(d) => {
                self.doi.get_or_insert_with(|| d.canonical().to_string());
            }
            Identifier::Isbn(i) => {
                if !self.isbn13.iter().any(|x| x == i.isbn13()) {
                    self.isbn13.push(i.isbn13().to_string());
                }
            }
            Identifier::Pmid(m) => {
                self.pmid.get_or_insert_with(|| m.canonical());
            }
            Identifier::Arxiv(_) | Identifier::Pmcid(_) => {}
        }
        if let Some(a) = id.arxiv_id() {
            self.arxiv.get_or_insert_with(|| a.canonical());
        }
    }

    /// Whether two sets name the same work (one identifier in common).
    pub fn overlaps(&self, other: &WorkIds) -> bool {
        let eq = |x: &Option<String>, y: &Option<String>| x.is_some() && x == y;
        eq(&self.doi, &other.doi)
            || eq(&self.arxiv, &other.arxiv)
            || eq(&self.pmid, &other.pmid)
            || self.isbn13.iter().any(|i| other.isbn13.contains(i))
    }

    /// The identifiers an item's `data` carries where Zotero keeps them.
    pub fn of_item(data: &Map<String, Value>) -> WorkIds {
        let field = |name: &str| data.get(name).and_then(Value::as_str).unwrap_or("");
        let mut ids = WorkIds::default();
        let mut read = |text: &str| {
            if let Ok(id) = parse(text) {
                ids.add(&id);
            }
        };
        read(field("DOI"));
        read(field("archiveID"));
        read(field("url"));
        read(field("PMID"));
        for isbn in field("ISBN").split([' ', ',', ';']) {
            read(isbn);
        }
        for line in field("extra").lines() {
            let Some((label, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match label.trim().to_ascii_lowercase().as_str() {
                // `arXiv:1706.03762 [cs.CL]`: the id is the first word.
                "arxiv" => read(&format!(
                    "arXiv:{}",
                    value.split_whitespace().next().unwrap_or("")
                )),
                "doi" | "isbn" => read(value),
                "pmid" => read(&format!("PMID:{value}")),
                _ => {}
            }
        }
        ids
    }

    /// Whether the item (its `data`) carries one of these identifiers.
    pub fn found_in(&self, data: &Map<String, Value>) -> bool {
        self.overlaps(&WorkIds::of_item(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn ids(input: &str) -> WorkIds {
        let mut w = WorkIds::default();
        w.add(&parse(input).unwrap());
        w
    }

    #[test]
    fn identifiers_are_found_where_zotero_keeps_them() {
        let doi = ids("10.1038/nature12373");
        assert!(doi.found_in(&data(json!({"DOI": "10.1038/NATURE12373"}))));
        assert!(doi.found_in(&data(json!({"DOI": "https://doi.org/10.1038/nature12373"}))));
        assert!(doi.found_in(&data(json!({"extra": "Type: x\nDOI: 10.1038/nature12373"}))));
        assert!(!doi.found_in(&data(json!({"DOI": "10.1038/nature1237"}))));

        let arxiv = ids("1706.03762");
        for d in [
            json!({"archiveID": "arXiv:1706.03762"}),
            json!({"extra": "arXiv:1706.03762 [cs]"}),
            json!({"DOI": "10.48550/arXiv.1706.03762"}),
            json!({"url": "http://arxiv.org/abs/1706.03762v5"}),
        ] {
            assert!(arxiv.found_in(&data(d.clone())), "{d}");
        }
        assert!(!arxiv.found_in(&data(json!({"extra": "arXiv:1706.03763"}))));
        assert!(
            ids("math/0611800").found_in(&data(json!({"archiveID": "arXiv:math.CA/0611800v2"})))
        );

        let isbn = ids("9780306406157");
        assert!(isbn.found_in(&data(json!({"ISBN": "0-306-40615-2"}))));
        assert!(isbn.found_in(&data(json!({"ISBN": "978-0-306-40615-7 0306406152"}))));
        let pmid = ids("PMID:31452104");
        assert!(pmid.found_in(&data(json!({"extra": "PMID: 31452104\nPMCID: PMC6784890"}))));
        assert!(pmid.found_in(&data(json!({"PMID": "31452104"}))));
        assert!(!pmid.found_in(&data(json!({"extra": "PMID: 3145210"}))));
    }

    #[test]
    fn the_same_work_overlaps_and_nothing_overlaps_nothing() {
        let mut a = ids("10.1038/nature12373");
        a.add(&parse("PMID:23903748").unwrap());
        assert!(a.overlaps(&ids("PMID 23903748")));
        assert!(!a.overlaps(&ids("PMID 23903749")));
        assert!(!WorkIds::default().overlaps(&WorkIds::default()));
    }
}
