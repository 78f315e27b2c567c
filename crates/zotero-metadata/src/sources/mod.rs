//! The metadata services' own answers (not CSL-JSON), each mapped to a `ZoteroItemDraft`
//! following the zotero/translators translator for that service:
//!
//! - `crossref`: a Crossref REST `message` (`api.crossref.org/works/{doi}`), turned into
//!   CSL-JSON the way Crossref's own CSL output names things, then through `csl`;
//! - `datacite`: DataCite's `data.attributes` (`api.datacite.org/dois/{doi}`), as
//!   Datacite JSON.js reads the same record;
//! - `arxiv`: an entry of arXiv's Atom API, as arXiv.org.js reads it;
//! - `openlibrary`: an Open Library `api/books?jscmd=data` record → `book`;
//! - `pubmed`: an NCBI esummary record → `journalArticle`, with the fields PubMed XML.js
//!   fills from the same article.

pub mod arxiv;
pub mod crossref;
pub mod datacite;
pub mod openlibrary;
pub mod pubmed;

pub use arxiv::{
    from_arxiv_atom, from_arxiv_entry, merge_arxiv_with_published, parse_arxiv_feed, ArxivEntry,
};
pub use crossref::{crossref_type_to_csl, crossref_work_to_csl, from_crossref_work};
pub use datacite::from_datacite;
pub use openlibrary::from_open_library;
pub use pubmed::from_pubmed_summary;

use serde_json::Value;

/// The first non-empty string of a JSON string or array of strings.
pub(crate) fn first_str(v: Option<&Value>) -> Option<&str> {
    match v? {
        Value::String(s) => Some(s.as_str()).filter(|s| !s.trim().is_empty()),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|s| !s.trim().is_empty()),
        _ => None,
    }
}

/// A JSON string or number as text.
pub(crate) fn scalar_str(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod robustness {
    //! Whatever the services send, the mappers answer with a draft or an error, never a panic.
    use super::*;
    use crate::text::{clean_author, clean_markup, str_to_iso};
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    const KEYS: &[&str] = &[
        "type",
        "title",
        "subtitle",
        "author",
        "editor",
        "container-author",
        "family",
        "given",
        "literal",
        "name",
        "issued",
        "accessed",
        "date-parts",
        "circa",
        "season",
        "raw",
        "literal",
        "message",
        "data",
        "attributes",
        "titles",
        "creators",
        "nameType",
        "types",
        "citeproc",
        "result",
        "uid",
        "1",
        "ISBN:1",
        "authors",
        "pages",
        "page",
        "pubdate",
        "articleids",
        "idtype",
        "value",
        "ISSN",
        "note",
        "container-title",
        "publisher",
        "relatedItems",
        "relationType",
        "dates",
        "publicationYear",
        "identifiers",
        "key",
    ];

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[-0-9a-zA-Z <>&;/:.,é]{0,12}".prop_map(Value::String),
            prop::sample::select(KEYS).prop_map(|k| Value::String(k.to_owned())),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                    Value::Object(
                        kv.into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<Map<_, _>>(),
                    )
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn json_mappers_never_panic(v in json_value()) {
            let _ = crate::from_csl_json(&v);
            let _ = crate::from_doi_csl_json(&v);
            let _ = from_crossref_work(&v);
            let _ = from_datacite(&v);
            let _ = from_open_library(&v, "1");
            let _ = from_pubmed_summary(&v, "1");
        }

        #[test]
        fn text_helpers_never_panic(s in "[-<>&;#x0-9a-zA-Z /.,:()\\[\\]é\u{a0}!]{0,40}") {
            let _ = from_arxiv_atom(&s);
            let _ = clean_markup(&s);
            let _ = clean_author(&s, true);
            let _ = clean_author(&s, false);
            let _ = str_to_iso(&s);
        }

        #[test]
        fn atom_like_input_never_panics(
            parts in prop::collection::vec(prop::sample::select(&[
                "<feed>", "</feed>", "<entry>", "</entry>", "<id>", "</id>",
                "http://arxiv.org/abs/1706.03762v1", "http://arxiv.org/api/errors#x",
                "<title>", "</title>", "<author><name>A B</name></author>", "<x a='1'/>",
                "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#x41;", "<", ">", "\"", "text",
            ][..]), 0..24)
        ) {
            let _ = from_arxiv_atom(&parts.concat());
        }
    }
}
