//! An NCBI esummary record (`esummary.fcgi?db=pubmed&id={pmid}&retmode=json` →
//! `result[pmid]`) → `journalArticle`, with the fields Zotero's PubMed XML.js fills from the
//! same article (its efetch XML): the title without its final period, authors "Kucsko G" as
//! last name and initials ("G."), the full journal name as publication title (a trailing
//! "(Place)" moved to the place), `source` (the NLM abbreviation) as journal abbreviation,
//! volume, issue, pages with abbreviated ranges written out ("54-8" → "54-58"; the `pii`
//! when there are none), the date (`2013 Aug 1` → `2013-08-01`; "2010 Sep-Oct" as written),
//! the ISSN (print, else electronic), the language, the DOI, and the PMID and PMCID — in
//! the `PMID`/`PMCID` fields the schema (version 41) gives `journalArticle`, else as
//! `PMID: …` / `PMCID: …` lines of `extra`, as Zotero writes them on older schemas. A
//! record of publication type "Preprint" is a `preprint` (repository = the journal, the
//! `pii` as archive id), as in PubMed XML.js. Not done: PubMed XML.js's title-casing of
//! journal names; esummary has no abstract and no MeSH terms (tags).

use serde_json::{Map, Value};

use super::{first_str, scalar_str};
use crate::mapping_error::MappingError;
use crate::schema::{schema, Schema};
use crate::text::{clean_author, clean_title, decode_entities, str_to_iso, trim_internal};
use crate::zotero_item::{DraftCreator, ZoteroItemDraft};

const SOURCE: &str = "PubMed";

fn record<'a>(answer: &'a Value, pmid: &str) -> Result<&'a Map<String, Value>, MappingError> {
    let obj = answer
        .as_object()
        .ok_or_else(|| MappingError::shape(SOURCE, "not a JSON object"))?;
    let rec = if obj.contains_key("uid") {
        obj
    } else {
        let result = obj
            .get("result")
            .and_then(Value::as_object)
            .ok_or_else(|| MappingError::shape(SOURCE, "no `result` object"))?;
        match result.get(pmid) {
            Some(Value::Object(r)) => r,
            Some(_) => {
                return Err(MappingError::shape(
                    SOURCE,
                    format!("`result.{pmid}` is not an object"),
                ))
            }
            None => {
                return Err(MappingError::NotFound {
                    source_name: SOURCE,
                    identifier: format!("PMID {pmid}"),
                })
            }
        }
    };
    if rec.contains_key("error") {
        return Err(MappingError::NotFound {
            source_name: SOURCE,
            identifier: format!("PMID {pmid}"),
        });
    }
    Ok(rec)
}

/// PubMed XML.js's page ranges: "54-8" → "54-58", "1021-31" → "1021-1031".
fn full_page_range(pages: &str) -> String {
    let mut out = String::with_capacity(pages.len() + 4);
    let mut rest = pages;
    while !rest.is_empty() {
        let start_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        if start_len == 0 {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
            continue;
        }
        let start = rest.get(..start_len).unwrap_or("");
        let after = rest.get(start_len..).unwrap_or("");
        out.push_str(start);
        rest = after;
        if let Some(tail) = after.strip_prefix('-') {
            let end_len = tail.bytes().take_while(u8::is_ascii_digit).count();
            if end_len > 0 {
                let end = tail.get(..end_len).unwrap_or("");
                out.push('-');
                if start_len > end_len {
                    out.push_str(start.get(..start_len - end_len).unwrap_or(""));
                }
                out.push_str(end);
                rest = tail.get(end_len..).unwrap_or("");
            }
        }
    }
    out
}

const SUFFIXES: &[&str] = &["Jr", "Sr", "II", "III", "IV", "2nd", "3rd"];

/// "Kucsko G" → ("G.", "Kucsko"); "van der Berg JH" → ("J. H.", "van der Berg");
/// "King ML Jr" → ("M. L., Jr", "King"). `None` when the name does not end in initials.
fn medline_name(name: &str) -> Option<(String, String)> {
    let mut words: Vec<&str> = name.split_whitespace().collect();
    let suffix = match words.last() {
        Some(w) if words.len() > 2 && SUFFIXES.contains(w) => words.pop(),
        _ => None,
    };
    let initials = words.pop()?;
    if words.is_empty() || initials.len() > 4 || !initials.chars().all(|c| c.is_uppercase()) {
        return None;
    }
    let (mut first, last) = clean_author(&format!("{}, {initials}", words.join(" ")), true);
    if let Some(s) = suffix {
        first = format!("{first}, {s}");
    }
    Some((first, last))
}

fn article_id<'a>(rec: &'a Map<String, Value>, idtype: &str) -> Option<&'a str> {
    rec.get("articleids")
        .and_then(Value::as_array)?
        .iter()
        .find(|a| a.get("idtype").and_then(Value::as_str) == Some(idtype))
        .and_then(|a| a.get("value"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// "doi: 10.1/x. pii: e123" → the pii.
fn elocation_pii(rec: &Map<String, Value>) -> Option<String> {
    let e = rec.get("elocationid").and_then(Value::as_str)?;
    let at = e.find("pii:")?;
    let rest = e.get(at + 4..)?.trim();
    let pii = rest.split_whitespace().next()?.trim_end_matches(['.', ';']);
    (!pii.is_empty()).then(|| pii.to_owned())
}

/// Maps an esummary answer (or the record itself) for `pmid`. A PMID esummary does not
/// know (`result.{pmid}.error`, or no record) is `MappingError::NotFound`. Section by
/// section in the order PubMed XML.js fills the item.
pub fn from_pubmed_summary(answer: &Value, pmid: &str) -> Result<ZoteroItemDraft, MappingError> {
    let rec = record(answer, pmid)?;
    let schema = schema()?;
    let preprint = rec
        .get("pubtype")
        .and_then(Value::as_array)
        .is_some_and(|t| t.iter().any(|x| x.as_str() == Some("Preprint")));
    let mut d = ZoteroItemDraft::new(if preprint {
        "preprint"
    } else {
        "journalArticle"
    });
    if let Some(title) = text(rec, "title") {
        let title = clean_title(&title);
        let title = title.strip_suffix('.').unwrap_or(&title);
        d.set(schema, "title", title);
    }
    set_pages(&mut d, schema, rec, preprint);
    if let Some(issn) = text(rec, "issn").or_else(|| text(rec, "essn")) {
        d.set(schema, "ISSN", &issn);
    }
    set_journal(&mut d, schema, rec, preprint);
    for k in ["volume", "issue"] {
        if let Some(v) = text(rec, k) {
            d.set(schema, k, &v);
        }
    }
    if let Some(pubdate) = text(rec, "pubdate") {
        let date = str_to_iso(&pubdate).unwrap_or(pubdate);
        d.set(schema, "date", &date);
    }
    for a in rec
        .get("authors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(creator) = creator(a) {
            d.push_creator(schema, creator);
        }
    }
    set_identifiers(&mut d, schema, rec, pmid);
    d.set(schema, "libraryCatalog", "PubMed");
    Ok(d)
}

/// A text property of the record (a number written out), entities decoded.
fn text(rec: &Map<String, Value>, k: &str) -> Option<String> {
    scalar_str(rec.get(k)).map(|v| decode_entities(&v))
}

/// The pages with their ranges written out, else the `pii`; a preprint's `pii` is its
/// archive id instead.
fn set_pages(d: &mut ZoteroItemDraft, schema: &Schema, rec: &Map<String, Value>, preprint: bool) {
    let pages = text(rec, "pages").map(|p| full_page_range(&p));
    let pii = article_id(rec, "pii")
        .map(str::to_owned)
        .or_else(|| elocation_pii(rec));
    if preprint {
        if let Some(pii) = &pii {
            d.set(schema, "archiveID", pii);
        }
    } else if let Some(p) = pages.or(pii) {
        d.set(schema, "pages", &p);
    }
}

/// The journal: its full name (a trailing "(Place)" moved to the place), else the NLM
/// abbreviation, as the publication title with the abbreviation beside it; a preprint's
/// journal is its repository.
fn set_journal(d: &mut ZoteroItemDraft, schema: &Schema, rec: &Map<String, Value>, preprint: bool) {
    let abbreviation = text(rec, "source");
    let mut journal = text(rec, "fulljournalname").map(|t| trim_internal(&t));
    if let Some(j) = journal.take() {
        // "Science (New York, N.Y.)": the place goes to the place field.
        let moved = j
            .strip_suffix(')')
            .and_then(|body| body.rfind(" (").map(|i| (body, i)))
            .and_then(|(body, i)| Some((body.get(..i)?.to_owned(), body.get(i + 2..)?.to_owned())));
        journal = Some(match moved {
            Some((name, place)) if !name.is_empty() => {
                d.set(schema, "place", &place);
                name
            }
            _ => j,
        });
    }
    let journal = journal.or_else(|| abbreviation.clone());
    if preprint {
        if let Some(j) = &journal {
            d.set(schema, "repository", j);
        }
    } else {
        if let Some(a) = &abbreviation {
            d.set(schema, "journalAbbreviation", a);
        }
        if let Some(j) = &journal {
            d.set(schema, "publicationTitle", j);
        }
    }
}

/// One of the record's authors: an editor or an author, "Kucsko G" split, a collective name
/// or a name not ending in initials in one field; `None` without a name.
fn creator(a: &Value) -> Option<DraftCreator> {
    let name = a
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())?;
    let authtype = a
        .get("authtype")
        .and_then(Value::as_str)
        .unwrap_or("Author");
    let role = if authtype.eq_ignore_ascii_case("editor") {
        "editor"
    } else {
        "author"
    };
    Some(match medline_name(name) {
        Some((first, last)) if authtype != "CollectiveName" => {
            DraftCreator::split(role, &first, &last)
        }
        _ => DraftCreator::single(role, name),
    })
}

/// The language, the DOI, the PMID (the record's own, else its uid, else the one asked
/// for) and the PMCID, these two in Extra where the schema has no field for them.
fn set_identifiers(d: &mut ZoteroItemDraft, schema: &Schema, rec: &Map<String, Value>, pmid: &str) {
    if let Some(lang) = first_str(rec.get("lang")) {
        d.set(schema, "language", lang);
    }
    if let Some(doi) = article_id(rec, "doi") {
        d.set(schema, "DOI", doi);
    }
    let uid = text(rec, "uid").unwrap_or_else(|| pmid.to_owned());
    let pmid = article_id(rec, "pubmed").map(str::to_owned).unwrap_or(uid);
    d.set_or_extra(schema, "PMID", &pmid);
    if let Some(pmcid) = article_id(rec, "pmc") {
        d.set_or_extra(schema, "PMCID", pmcid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fields;
    use serde_json::json;

    /// `esummary.fcgi?db=pubmed&id=23903748&retmode=json` in the documented JSON shape
    /// (esummary version 2.0 as JSON), with the values PubMed lists for the article of
    /// 10.1038/nature12373; `history` and `references` shortened.
    fn answer() -> Value {
        json!({
            "header": {"type": "esummary", "version": "0.3"},
            "result": {
                "uids": ["23903748"],
                "23903748": {
                    "uid": "23903748",
                    "pubdate": "2013 Aug 1",
                    "epubdate": "2013 Jul 31",
                    "source": "Nature",
                    "authors": [
                        {"name": "Kucsko G", "authtype": "Author", "clusterid": ""},
                        {"name": "Maurer PC", "authtype": "Author", "clusterid": ""},
                        {"name": "Yao NY", "authtype": "Author", "clusterid": ""},
                        {"name": "Kubo M", "authtype": "Author", "clusterid": ""},
                        {"name": "Noh HJ", "authtype": "Author", "clusterid": ""},
                        {"name": "Lo PK", "authtype": "Author", "clusterid": ""},
                        {"name": "Park H", "authtype": "Author", "clusterid": ""},
                        {"name": "Lukin MD", "authtype": "Author", "clusterid": ""}
                    ],
                    "lastauthor": "Lukin MD",
                    "title": "Nanometre-scale thermometry in a living cell.",
                    "sorttitle": "nanometre scale thermometry in a living cell",
                    "volume": "500",
                    "issue": "7460",
                    "pages": "54-8",
                    "lang": ["eng"],
                    "nlmuniqueid": "0410462",
                    "issn": "0028-0836",
                    "essn": "1476-4687",
                    "pubtype": ["Journal Article", "Research Support, N.I.H., Extramural"],
                    "recordstatus": "PubMed - indexed for MEDLINE",
                    "pubstatus": "256",
                    "articleids": [
                        {"idtype": "pubmed", "idtypen": 1, "value": "23903748"},
                        {"idtype": "doi", "idtypen": 3, "value": "10.1038/nature12373"},
                        {"idtype": "pii", "idtypen": 4, "value": "nature12373"},
                        {"idtype": "pmc", "idtypen": 8, "value": "PMC4221854"},
                        {"idtype": "mid", "idtypen": 5, "value": "NIHMS639418"},
                        {"idtype": "pmcid", "idtypen": 5, "value": "pmc-id: PMC4221854;manuscript-id: NIHMS639418;"}
                    ],
                    "history": [{"pubstatus": "entrez", "date": "2013/08/02 06:00"}],
                    "references": [],
                    "attributes": ["Has Abstract"],
                    "pmcrefcount": 300,
                    "fulljournalname": "Nature",
                    "elocationid": "doi: 10.1038/nature12373",
                    "doctype": "citation",
                    "srccontriblist": [],
                    "booktitle": "",
                    "medium": "",
                    "edition": "",
                    "publisherlocation": "",
                    "publishername": "",
                    "srcdate": "",
                    "reportnumber": "",
                    "availablefromurl": "",
                    "locationlabel": "",
                    "doccontriblist": [],
                    "docdate": "",
                    "bookname": "",
                    "chapter": "",
                    "sortpubdate": "2013/08/01 00:00",
                    "sortfirstauthor": "Kucsko G"
                }
            }
        })
    }

    #[test]
    fn journal_article() {
        let d = from_pubmed_summary(&answer(), "23903748").unwrap();
        assert_eq!(d.item_type, "journalArticle");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.1038/nature12373"),
                ("ISSN", "0028-0836"),
                ("PMCID", "PMC4221854"),
                ("PMID", "23903748"),
                ("date", "2013-08-01"),
                ("issue", "7460"),
                ("journalAbbreviation", "Nature"),
                ("language", "eng"),
                ("libraryCatalog", "PubMed"),
                ("pages", "54-58"),
                ("publicationTitle", "Nature"),
                ("title", "Nanometre-scale thermometry in a living cell"),
                ("volume", "500"),
            ])
        );
        let names: Vec<DraftCreator> = [
            ("G.", "Kucsko"),
            ("P. C.", "Maurer"),
            ("N. Y.", "Yao"),
            ("M.", "Kubo"),
            ("H. J.", "Noh"),
            ("P. K.", "Lo"),
            ("H.", "Park"),
            ("M. D.", "Lukin"),
        ]
        .iter()
        .map(|(f, l)| DraftCreator::split("author", f, l))
        .collect();
        assert_eq!(d.creators, names);
        assert!(d.extra_lines.is_empty());
    }

    #[test]
    fn editors_are_editors_and_a_name_without_initials_is_one_field() {
        let rec = json!({
            "uid": "222",
            "authors": [
                {"name": "Roe AB", "authtype": "Editor"},
                {"name": "Madonna", "authtype": "Author"},
                {"name": "  ", "authtype": "Author"},
                {"authtype": "Author"}
            ]
        });
        let d = from_pubmed_summary(&rec, "222").unwrap();
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("editor", "A. B.", "Roe"),
                DraftCreator::single("author", "Madonna"),
            ]
        );
    }

    #[test]
    fn preprint_collective_names_and_odd_dates() {
        let rec = json!({
            "uid": "111",
            "pubdate": "2010 Sep-Oct",
            "source": "bioRxiv",
            "fulljournalname": "bioRxiv : the preprint server for biology",
            "title": "A &lt;i&gt;C. elegans&lt;/i&gt; study.",
            "authors": [
                {"name": "van der Berg JH", "authtype": "Author"},
                {"name": "King ML Jr", "authtype": "Author"},
                {"name": "COVID-19 Genomics Consortium", "authtype": "CollectiveName"}
            ],
            "pubtype": ["Preprint"],
            "elocationid": "doi: 10.1101/2020.01.01.1. pii: 2020.01.01.1",
            "articleids": [{"idtype": "pmc", "value": "PMC999"}]
        });
        let d = from_pubmed_summary(&rec, "111").unwrap();
        assert_eq!(d.item_type, "preprint");
        assert_eq!(
            d.fields,
            fields(&[
                ("archiveID", "2020.01.01.1"),
                ("date", "2010 Sep-Oct"),
                ("libraryCatalog", "PubMed"),
                ("repository", "bioRxiv : the preprint server for biology"),
                ("title", "A <i>C. elegans</i> study"),
            ])
        );
        assert_eq!(d.extra_lines, vec!["PMID: 111", "PMCID: PMC999"]);
        assert_eq!(
            d.creators,
            vec![
                DraftCreator::split("author", "J. H.", "van der Berg"),
                DraftCreator::split("author", "M. L., Jr", "King"),
                DraftCreator::single("author", "COVID-19 Genomics Consortium"),
            ]
        );
    }

    #[test]
    fn journal_place_pages_and_errors() {
        let rec = json!({"uid": "5", "fulljournalname": "Science (New York, N.Y.)", "source": "Science", "pages": "1021-31, 1040-1", "pubdate": "2001"});
        let d = from_pubmed_summary(&rec, "5").unwrap();
        assert_eq!(
            d.fields.get("publicationTitle").map(String::as_str),
            Some("Science")
        );
        assert_eq!(
            d.fields.get("place").map(String::as_str),
            Some("New York, N.Y.")
        );
        assert_eq!(
            d.fields.get("pages").map(String::as_str),
            Some("1021-1031, 1040-1041")
        );
        assert_eq!(d.fields.get("date").map(String::as_str), Some("2001"));
        assert_eq!(full_page_range("e123"), "e123");
        assert_eq!(full_page_range("99-101"), "99-101");

        let unknown = json!({"header": {}, "result": {"uids": ["1"], "1": {"uid": "1", "error": "cannot get document summary"}}});
        assert!(matches!(
            from_pubmed_summary(&unknown, "1"),
            Err(MappingError::NotFound { .. })
        ));
        assert!(matches!(
            from_pubmed_summary(&json!({"result": {}}), "1"),
            Err(MappingError::NotFound { .. })
        ));
        assert!(from_pubmed_summary(&json!({"esummaryresult": ["Invalid uid"]}), "1").is_err());
        assert!(from_pubmed_summary(&json!("x"), "1").is_err());
    }
}
