//! arXiv's API (`export.arxiv.org/api/query?id_list=…`, an Atom feed), read as zotero/
//! translators arXiv.org.js (`parseSingleEntry`) reads it:
//!
//! - a `preprint`: the title and abstract with whitespace collapsed, the date from `updated`
//!   (`YYYY-MM-DD`), authors split at the last space (cleanAuthor), the URL the entry's id
//!   without its version (`http://arxiv.org/abs/1706.03762`), `extra`
//!   `arXiv:1706.03762 [cs.CL]` (the primary category's full term; no category for old-style
//!   ids such as `hep-th/9901001`), `libraryCatalog: arXiv.org`;
//! - without a journal DOI: `repository: arXiv`, `archiveID: arXiv:<id>`,
//!   `DOI: 10.48550/arXiv.<id>`, and `version: N` in `extra` when a version was asked for;
//! - with a journal DOI (`arxiv:doi`): that DOI, and nothing of the above; the translator
//!   then looks the DOI up and takes the item type, volume, issue, pages, date, ISSN,
//!   publication title and journal abbreviation from it: `merge_arxiv_with_published`.
//!
//! Not kept: `arxiv:comment` (Zotero makes a note of it), the categories (Zotero makes tags of
//! their English names), `arxiv:journal_ref` (the translator ignores it).

use crate::mapping_error::MappingError;
use crate::schema::schema;
use crate::text::{clean_author, str_to_iso, trim_internal};
use crate::xml::{self, Element};
use crate::zotero_item::{DraftCreator, ZoteroItemDraft};

const SOURCE: &str = "arXiv";

/// One entry of an arXiv Atom feed, with what the mapping and the caller (the PDF link) need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArxivEntry {
    /// The arXiv id without version: `1706.03762`, `hep-th/9901001`.
    pub id: String,
    /// The version of the entry's id (`7` of `…/abs/1706.03762v7`).
    pub version: Option<u32>,
    /// The abstract page without version, as arXiv writes it (`http://arxiv.org/abs/…`).
    pub abs_url: String,
    /// The title, whitespace collapsed.
    pub title: String,
    /// The abstract, whitespace collapsed.
    pub summary: String,
    /// The authors' names, in order.
    pub authors: Vec<String>,
    /// `published` (first version), as sent.
    pub published: Option<String>,
    /// `updated` (this version), as sent.
    pub updated: Option<String>,
    /// `arxiv:doi`: the DOI of the published version.
    pub doi: Option<String>,
    /// `arxiv:journal_ref`.
    pub journal_ref: Option<String>,
    /// `arxiv:comment`.
    pub comment: Option<String>,
    /// `arxiv:primary_category/@term` (`cs.CL`).
    pub primary_category: Option<String>,
    /// Every `category/@term`.
    pub categories: Vec<String>,
    /// The `link` titled `pdf`.
    pub pdf_url: Option<String>,
}

fn text_of(e: &Element, name: &str) -> Option<String> {
    e.child_text(name)
        .map(|t| trim_internal(&t))
        .filter(|t| !t.is_empty())
}

/// "http://arxiv.org/abs/1706.03762v7" → ("1706.03762", Some(7)).
fn split_version(id: &str) -> (&str, Option<u32>) {
    if let Some(v) = id.rfind('v') {
        let digits = id.get(v + 1..).unwrap_or("");
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return (id.get(..v).unwrap_or(id), digits.parse().ok());
        }
    }
    (id, None)
}

fn parse_entry(e: &Element) -> Result<ArxivEntry, MappingError> {
    let id_url = text_of(e, "id").unwrap_or_default();
    if id_url.contains("/api/errors") {
        return Err(MappingError::Service {
            source_name: SOURCE,
            message: text_of(e, "summary").unwrap_or(id_url),
        });
    }
    let Some(abs_at) = id_url.find("/abs/") else {
        return Err(MappingError::shape(
            SOURCE,
            format!("entry id {id_url:?} is not an abstract page URL"),
        ));
    };
    let (unversioned, version) = split_version(&id_url);
    let id = unversioned.get(abs_at + 5..).unwrap_or("").to_owned();
    if id.is_empty() {
        return Err(MappingError::shape(SOURCE, "entry without an arXiv id"));
    }
    let authors = e
        .children_named("author")
        .filter_map(|a| text_of(a, "name"))
        .collect();
    let categories = e
        .children_named("category")
        .filter_map(|c| c.attr("term"))
        .map(str::to_owned)
        .collect();
    let pdf_url = e
        .children_named("link")
        .find(|l| l.attr("title") == Some("pdf"))
        .and_then(|l| l.attr("href"))
        .map(str::to_owned);
    Ok(ArxivEntry {
        id,
        version,
        abs_url: unversioned.to_owned(),
        title: text_of(e, "title").unwrap_or_default(),
        summary: text_of(e, "summary").unwrap_or_default(),
        authors,
        published: text_of(e, "published"),
        updated: text_of(e, "updated"),
        doi: text_of(e, "doi"),
        journal_ref: text_of(e, "journal_ref"),
        comment: text_of(e, "comment"),
        primary_category: e
            .child("primary_category")
            .and_then(|c| c.attr("term"))
            .map(str::to_owned),
        categories,
        pdf_url,
    })
}

/// The entries of an arXiv API answer. An error entry (arXiv's answer to a malformed id) is
/// `MappingError::Service` with arXiv's message; a feed without entries gives an empty list.
pub fn parse_arxiv_feed(atom: &str) -> Result<Vec<ArxivEntry>, MappingError> {
    let root = xml::parse(atom)?;
    if root.local_name() != "feed" {
        return Err(MappingError::shape(
            SOURCE,
            format!("root element <{}>, not <feed>", root.name),
        ));
    }
    root.children_named("entry").map(parse_entry).collect()
}

/// The draft of the first entry of an arXiv API answer (`id_list` with one id);
/// `MappingError::NotFound` when there is none.
pub fn from_arxiv_atom(atom: &str) -> Result<ZoteroItemDraft, MappingError> {
    let entries = parse_arxiv_feed(atom)?;
    let entry = entries.first().ok_or_else(|| MappingError::NotFound {
        source_name: SOURCE,
        identifier: "the requested id".into(),
    })?;
    from_arxiv_entry(entry, None)
}

/// The draft of one entry, as arXiv.org.js makes it before any DOI lookup.
/// `requested_version`: the version the user asked for, written to `extra` as the
/// translator does for a versioned URL.
pub fn from_arxiv_entry(
    entry: &ArxivEntry,
    requested_version: Option<u32>,
) -> Result<ZoteroItemDraft, MappingError> {
    let schema = schema()?;
    let mut d = ZoteroItemDraft::new("preprint");
    d.set(schema, "title", &entry.title);
    if let Some(date) = entry.updated.as_deref().and_then(str_to_iso) {
        d.set(schema, "date", &date);
    }
    for name in &entry.authors {
        let (first, last) = clean_author(name, false);
        d.push_creator(schema, DraftCreator::split("author", &first, &last));
    }
    d.set(schema, "abstractNote", &entry.summary);
    if let Some(doi) = &entry.doi {
        d.set(schema, "DOI", doi);
    }
    d.set(schema, "url", &entry.abs_url);
    let mut extra = format!("arXiv:{}", entry.id);
    if !entry.id.contains('/') {
        if let Some(cat) = &entry.primary_category {
            extra.push_str(&format!(" [{cat}]"));
        }
    }
    d.extra_lines.push(extra);
    if entry.doi.is_none() {
        d.set(schema, "publisher", "arXiv");
        d.set(schema, "number", &format!("arXiv:{}", entry.id));
        if let Some(v) = requested_version {
            d.extra_lines.push(format!("version: {v}"));
        }
        d.set(schema, "DOI", &format!("10.48550/arXiv.{}", entry.id));
    }
    d.set(schema, "libraryCatalog", "arXiv.org");
    Ok(d)
}

/// arXiv.org.js for an entry with a journal DOI: the arXiv draft takes the item type of the
/// published version (from the DOI's metadata) and its volume, issue, pages, date, ISSN,
/// and, when it has one, its publication title and journal abbreviation; title, creators,
/// abstract, URL, DOI and `extra` stay the arXiv ones. Unlike the translator, a published
/// version without a date keeps the arXiv date instead of none.
pub fn merge_arxiv_with_published(
    arxiv: &ZoteroItemDraft,
    published: &ZoteroItemDraft,
) -> Result<ZoteroItemDraft, MappingError> {
    let schema = schema()?;
    let mut d = arxiv.clone();
    d.change_type(schema, &published.item_type);
    for field in ["volume", "issue", "pages", "ISSN"] {
        match published.field(schema, field) {
            Some(v) => {
                d.set(schema, field, v);
            }
            None => {
                d.remove(schema, field);
            }
        }
    }
    if let Some(date) = published.field(schema, "date") {
        d.set(schema, "date", date);
    }
    if let Some(title) = published.field(schema, "publicationTitle") {
        d.set(schema, "publicationTitle", title);
        match published.field(schema, "journalAbbreviation") {
            Some(a) => {
                d.set(schema, "journalAbbreviation", a);
            }
            None => {
                d.remove(schema, "journalAbbreviation");
            }
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fields;

    /// `export.arxiv.org/api/query?id_list=1706.03762`, in the shape arXiv's API user manual
    /// documents (the abstract shortened, authors complete).
    const ATTENTION: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D1706.03762%26start%3D0%26max_results%3D10" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=&amp;id_list=1706.03762&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/Xz8AWV3oF3Ndug5hvMoUuv6Mm5E</id>
  <updated>2024-05-01T00:00:00-04:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">1</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">10</opensearch:itemsPerPage>
  <entry>
    <id>http://arxiv.org/abs/1706.03762v7</id>
    <updated>2023-08-02T00:41:18Z</updated>
    <published>2017-06-12T17:57:34Z</published>
    <title>Attention Is All You Need</title>
    <summary>  The dominant sequence transduction models are based on complex recurrent or
convolutional neural networks in an encoder-decoder configuration. We propose a
new simple network architecture, the Transformer.
</summary>
    <author>
      <name>Ashish Vaswani</name>
    </author>
    <author>
      <name>Noam Shazeer</name>
    </author>
    <author>
      <name>Niki Parmar</name>
    </author>
    <author>
      <name>Jakob Uszkoreit</name>
    </author>
    <author>
      <name>Llion Jones</name>
    </author>
    <author>
      <name>Aidan N. Gomez</name>
    </author>
    <author>
      <name>Lukasz Kaiser</name>
    </author>
    <author>
      <name>Illia Polosukhin</name>
    </author>
    <arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">15 pages, 5 figures</arxiv:comment>
    <link href="http://arxiv.org/abs/1706.03762v7" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/1706.03762v7" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>
"#;

    /// An entry with a journal DOI (1107.4612, a test case of arXiv.org.js).
    const WITH_DOI: &str = r#"<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <entry>
    <id>http://arxiv.org/abs/1107.4612v2</id>
    <updated>2012-01-11T10:08:40Z</updated>
    <published>2011-07-22T20:00:09Z</published>
    <title>Precision cosmology
  with galaxy clusters</title>
    <summary>We study clusters.</summary>
    <author><name>S. Planelles</name><arxiv:affiliation>Trieste</arxiv:affiliation></author>
    <author><name>D. Fabjan</name></author>
    <arxiv:doi>10.1111/j.1365-2966.2011.19851.x</arxiv:doi>
    <link title="doi" href="http://dx.doi.org/10.1111/j.1365-2966.2011.19851.x" rel="related"/>
    <arxiv:journal_ref>MNRAS 419 (2012) 3457</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/1107.4612v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/1107.4612v2" rel="related" type="application/pdf"/>
    <arxiv:primary_category term="astro-ph.CO" scheme="http://arxiv.org/schemas/atom"/>
    <category term="astro-ph.CO" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>"#;

    #[test]
    fn attention_is_a_preprint() {
        let entries = parse_arxiv_feed(ATTENTION).unwrap();
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(e.id, "1706.03762");
        assert_eq!(e.version, Some(7));
        assert_eq!(
            e.pdf_url.as_deref(),
            Some("http://arxiv.org/pdf/1706.03762v7")
        );
        assert_eq!(e.categories, vec!["cs.CL", "cs.LG"]);
        assert_eq!(e.comment.as_deref(), Some("15 pages, 5 figures"));
        let d = from_arxiv_atom(ATTENTION).unwrap();
        assert_eq!(d.item_type, "preprint");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.48550/arXiv.1706.03762"),
                ("abstractNote", "The dominant sequence transduction models are based on complex recurrent or convolutional neural networks in an encoder-decoder configuration. We propose a new simple network architecture, the Transformer."),
                ("archiveID", "arXiv:1706.03762"),
                ("date", "2023-08-02"),
                ("libraryCatalog", "arXiv.org"),
                ("repository", "arXiv"),
                ("title", "Attention Is All You Need"),
                ("url", "http://arxiv.org/abs/1706.03762"),
            ])
        );
        assert_eq!(d.extra_lines, vec!["arXiv:1706.03762 [cs.CL]"]);
        let names: Vec<(&str, &str)> = d
            .creators
            .iter()
            .map(|c| match &c.name {
                crate::CreatorName::Split {
                    first_name,
                    last_name,
                } => (first_name.as_str(), last_name.as_str()),
                crate::CreatorName::Single { name } => ("", name.as_str()),
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("Ashish", "Vaswani"),
                ("Noam", "Shazeer"),
                ("Niki", "Parmar"),
                ("Jakob", "Uszkoreit"),
                ("Llion", "Jones"),
                ("Aidan N.", "Gomez"),
                ("Lukasz", "Kaiser"),
                ("Illia", "Polosukhin"),
            ]
        );
        assert!(d.creators.iter().all(|c| c.creator_type == "author"));
        let v = from_arxiv_entry(e, Some(1)).unwrap();
        assert_eq!(
            v.extra_lines,
            vec!["arXiv:1706.03762 [cs.CL]", "version: 1"]
        );
    }

    #[test]
    fn journal_doi_then_merge() {
        let entries = parse_arxiv_feed(WITH_DOI).unwrap();
        let e = &entries[0];
        assert_eq!(e.journal_ref.as_deref(), Some("MNRAS 419 (2012) 3457"));
        let d = from_arxiv_entry(e, Some(2)).unwrap();
        assert_eq!(d.item_type, "preprint");
        assert_eq!(
            d.fields,
            fields(&[
                ("DOI", "10.1111/j.1365-2966.2011.19851.x"),
                ("abstractNote", "We study clusters."),
                ("date", "2012-01-11"),
                ("libraryCatalog", "arXiv.org"),
                ("title", "Precision cosmology with galaxy clusters"),
                ("url", "http://arxiv.org/abs/1107.4612"),
            ])
        );
        assert_eq!(d.extra_lines, vec!["arXiv:1107.4612 [astro-ph.CO]"]);
        assert_eq!(
            d.creators[0],
            DraftCreator::split("author", "S.", "Planelles")
        );

        let s = schema().unwrap();
        let mut published = ZoteroItemDraft::new("journalArticle");
        for (k, v) in [
            ("title", "Precision Cosmology with Galaxy Clusters"),
            (
                "publicationTitle",
                "Monthly Notices of the Royal Astronomical Society",
            ),
            ("journalAbbreviation", "MNRAS"),
            ("volume", "419"),
            ("issue", "4"),
            ("pages", "3457-3471"),
            ("date", "2012-02"),
            ("ISSN", "0035-8711"),
            ("publisher", "Oxford University Press"),
        ] {
            published.set(s, k, v);
        }
        let m = merge_arxiv_with_published(&d, &published).unwrap();
        assert_eq!(m.item_type, "journalArticle");
        assert_eq!(
            m.fields,
            fields(&[
                ("DOI", "10.1111/j.1365-2966.2011.19851.x"),
                ("ISSN", "0035-8711"),
                ("abstractNote", "We study clusters."),
                ("date", "2012-02"),
                ("issue", "4"),
                ("journalAbbreviation", "MNRAS"),
                ("libraryCatalog", "arXiv.org"),
                ("pages", "3457-3471"),
                (
                    "publicationTitle",
                    "Monthly Notices of the Royal Astronomical Society"
                ),
                ("title", "Precision cosmology with galaxy clusters"),
                ("url", "http://arxiv.org/abs/1107.4612"),
                ("volume", "419"),
            ])
        );
        assert_eq!(m.extra_lines, d.extra_lines);
        assert_eq!(m.creators, d.creators);
    }

    #[test]
    fn old_ids_errors_and_empty_feeds() {
        let old = r#"<feed xmlns="http://www.w3.org/2005/Atom"><entry>
            <id>http://arxiv.org/abs/hep-th/9901001v1</id><updated>1999-01-04T00:00:00Z</updated>
            <title>Old</title><author><name>Edward Witten</name></author>
            <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="hep-th"/>
            </entry></feed>"#;
        let d = from_arxiv_atom(old).unwrap();
        assert_eq!(d.extra_lines, vec!["arXiv:hep-th/9901001"]);
        assert_eq!(
            d.fields.get("archiveID").map(String::as_str),
            Some("arXiv:hep-th/9901001")
        );
        assert_eq!(
            d.fields.get("DOI").map(String::as_str),
            Some("10.48550/arXiv.hep-th/9901001")
        );

        let error = r#"<feed xmlns="http://www.w3.org/2005/Atom"><entry>
            <id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>
            <title>Error</title><summary>incorrect id format for 1234</summary>
            </entry></feed>"#;
        assert_eq!(
            from_arxiv_atom(error),
            Err(MappingError::Service {
                source_name: "arXiv",
                message: "incorrect id format for 1234".into()
            })
        );
        let empty =
            r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>ArXiv Query</title></feed>"#;
        assert!(matches!(
            from_arxiv_atom(empty),
            Err(MappingError::NotFound { .. })
        ));
        assert!(matches!(
            from_arxiv_atom("<html><body>busy</body></html>"),
            Err(MappingError::Shape { .. })
        ));
        assert!(matches!(
            from_arxiv_atom("<feed><entry>"),
            Err(MappingError::Xml(_))
        ));
        let no_id = r#"<feed><entry><title>T</title></entry></feed>"#;
        assert!(matches!(
            from_arxiv_atom(no_id),
            Err(MappingError::Shape { .. })
        ));
    }
}
