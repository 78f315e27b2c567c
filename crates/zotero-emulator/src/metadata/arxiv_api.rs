//! The fake arXiv API: `GET /api/query?id_list=…[&start=&max_results=]` answers an Atom 1.0
//! feed (`application/atom+xml`) with OpenSearch totals and one `<entry>` per known id, in the
//! shape of arXiv's API User's Manual (§3.3, §3.4, §5.2). A malformed id makes the whole answer
//! a single entry titled `Error`, as the manual says; an unknown well-formed id is left out.

use super::super::util::xml_escape;
use super::super::{Answer, Recorded};
use super::{query as param, MetaState};

const ATOM: &str = "http://www.w3.org/2005/Atom";
const OPENSEARCH: &str = "http://a9.com/-/spec/opensearch/1.1/";
const ARXIV_NS: &str = "http://arxiv.org/schemas/atom";

/// A paper on the fake arXiv API, for [`crate::Emulator::add_arxiv_entry`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArxivPaper {
    /// The id without version: `2101.00001` or `hep-th/9901001`.
    pub id: String,
    /// The latest version (1 for a new paper).
    pub version: u32,
    pub title: String,
    pub summary: String,
    /// Names with an optional `arxiv:affiliation`.
    pub authors: Vec<(String, Option<String>)>,
    /// When v1 was submitted (`2017-06-12T17:57:34Z`).
    pub published: String,
    /// When the latest version was submitted.
    pub updated: String,
    /// `arxiv:doi`: the journal's DOI, when the authors gave one.
    pub doi: Option<String>,
    pub journal_ref: Option<String>,
    pub comment: Option<String>,
    pub primary_category: String,
    /// Every category, the primary one first.
    pub categories: Vec<String>,
}

impl ArxivPaper {
    /// A v1 paper in `cs.LG` by one author, submitted 2024-01-15.
    pub fn new(id: &str, title: &str) -> ArxivPaper {
        ArxivPaper {
            id: id.to_string(),
            version: 1,
            title: title.to_string(),
            summary: format!("  We study {}.\n", title.to_lowercase()),
            authors: vec![("Ada Lovelace".to_string(), None)],
            published: "2024-01-15T18:00:01Z".to_string(),
            updated: "2024-01-15T18:00:01Z".to_string(),
            doi: None,
            journal_ref: None,
            comment: None,
            primary_category: "cs.LG".to_string(),
            categories: vec!["cs.LG".to_string()],
        }
    }

    /// The `<entry>` arXiv's API writes for it.
    pub fn to_entry(&self) -> String {
        let v = format!("{}v{}", self.id, self.version);
        let mut s = format!(
            "  <entry>\n    <id>http://arxiv.org/abs/{v}</id>\n    <updated>{}</updated>\n    \
             <published>{}</published>\n    <title>{}</title>\n    <summary>{}</summary>\n",
            self.updated,
            self.published,
            xml_escape(&self.title),
            xml_escape(&self.summary)
        );
        for (name, affiliation) in &self.authors {
            s.push_str(&format!(
                "    <author>\n      <name>{}</name>\n",
                xml_escape(name)
            ));
            if let Some(a) = affiliation {
                s.push_str(&format!(
                    "      <arxiv:affiliation xmlns:arxiv=\"{ARXIV_NS}\">{}</arxiv:affiliation>\n",
                    xml_escape(a)
                ));
            }
            s.push_str("    </author>\n");
        }
        if let Some(doi) = &self.doi {
            let d = xml_escape(doi);
            s.push_str(&format!(
                "    <arxiv:doi xmlns:arxiv=\"{ARXIV_NS}\">{d}</arxiv:doi>\n    \
                 <link title=\"doi\" href=\"http://dx.doi.org/{d}\" rel=\"related\"/>\n"
            ));
        }
        if let Some(c) = &self.comment {
            s.push_str(&format!(
                "    <arxiv:comment xmlns:arxiv=\"{ARXIV_NS}\">{}</arxiv:comment>\n",
                xml_escape(c)
            ));
        }
        if let Some(j) = &self.journal_ref {
            s.push_str(&format!(
                "    <arxiv:journal_ref xmlns:arxiv=\"{ARXIV_NS}\">{}</arxiv:journal_ref>\n",
                xml_escape(j)
            ));
        }
        s.push_str(&format!(
            "    <link href=\"http://arxiv.org/abs/{v}\" rel=\"alternate\" type=\"text/html\"/>\n    \
             <link title=\"pdf\" href=\"http://arxiv.org/pdf/{v}\" rel=\"related\" type=\"application/pdf\"/>\n    \
             <arxiv:primary_category xmlns:arxiv=\"{ARXIV_NS}\" term=\"{}\" scheme=\"{ARXIV_NS}\"/>\n",
            xml_escape(&self.primary_category)
        ));
        for c in &self.categories {
            s.push_str(&format!(
                "    <category term=\"{}\" scheme=\"{ARXIV_NS}\"/>\n",
                xml_escape(c)
            ));
        }
        s.push_str("  </entry>\n");
        s
    }
}

/// `1706.03762v7` → (`1706.03762`, Some(7)).
fn split_version(id: &str) -> (&str, Option<u32>) {
    if let Some(pos) = id.rfind('v') {
        let (base, v) = (&id[..pos], &id[pos + 1..]);
        if !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            && base.ends_with(|c: char| c.is_ascii_digit())
        {
            return (base, v.parse().ok());
        }
    }
    (id, None)
}

/// The `<entry>` blocks of an Atom feed: (id without version, version, the block).
pub(crate) fn entries(atom: &str) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    let mut rest = atom;
    while let Some(start) = rest.find("<entry") {
        let Some(end) = rest[start..].find("</entry>") else {
            break;
        };
        let block = &rest[start..start + end + "</entry>".len()];
        rest = &rest[start + end + "</entry>".len()..];
        let id = between(block, "<id>", "</id>").unwrap_or_default();
        let id = id.trim();
        let id = id
            .strip_prefix("http://arxiv.org/abs/")
            .or_else(|| id.strip_prefix("https://arxiv.org/abs/"))
            .unwrap_or(id);
        let (base, v) = split_version(id);
        out.push((
            base.to_string(),
            v.unwrap_or(1),
            format!("  {}\n", block.trim()),
        ));
    }
    out
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let i = s.find(open)? + open.len();
    let j = s[i..].find(close)? + i;
    Some(&s[i..j])
}

/// arXiv's id forms: `YYMM.NNNN[N]` (since 2007) and `archive[.SC]/YYMMNNN` (before), with an
/// optional `vN`.
pub(crate) fn well_formed(id: &str) -> bool {
    let (base, _) = split_version(id);
    if let Some((yymm, num)) = base.split_once('.') {
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if yymm.len() == 4 && digits(yymm) && (4..=5).contains(&num.len()) && digits(num) {
            return true;
        }
    }
    if let Some((archive, num)) = base.split_once('/') {
        let (arch, sub) = archive.split_once('.').unwrap_or((archive, ""));
        let arch_ok = !arch.is_empty() && arch.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        let sub_ok =
            sub.is_empty() || (sub.len() == 2 && sub.bytes().all(|b| b.is_ascii_uppercase()));
        return arch_ok && sub_ok && num.len() == 7 && num.bytes().all(|b| b.is_ascii_digit());
    }
    false
}

fn feed(query_echo: &str, total: usize, start: usize, per_page: usize, entries: &str) -> Answer {
    let today = super::super::util::iso_now();
    let date = today.get(..10).unwrap_or("2025-01-01");
    let echo = xml_escape(query_echo);
    let link = query_echo
        .replace('=', "%3D")
        .replace('&', "%26")
        .replace(',', "%2C");
    let id = super::super::util::md5_hex(query_echo.as_bytes());
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed xmlns=\"{ATOM}\">\n  \
         <link href=\"http://arxiv.org/api/query?{link}\" rel=\"self\" type=\"application/atom+xml\"/>\n  \
         <title type=\"html\">ArXiv Query: {echo}</title>\n  <id>http://arxiv.org/api/{id}</id>\n  \
         <updated>{date}T00:00:00-04:00</updated>\n  \
         <opensearch:totalResults xmlns:opensearch=\"{OPENSEARCH}\">{total}</opensearch:totalResults>\n  \
         <opensearch:startIndex xmlns:opensearch=\"{OPENSEARCH}\">{start}</opensearch:startIndex>\n  \
         <opensearch:itemsPerPage xmlns:opensearch=\"{OPENSEARCH}\">{per_page}</opensearch:itemsPerPage>\n\
         {entries}</feed>\n"
    );
    Answer::raw(
        200,
        body.into_bytes(),
        "application/atom+xml; charset=utf-8",
    )
}

/// The entry arXiv's API answers for a bad request.
fn error_entry(anchor: &str, message: &str) -> String {
    let anchor = xml_escape(anchor);
    format!(
        "  <entry>\n    <id>http://arxiv.org/api/errors#{anchor}</id>\n    <title>Error</title>\n    \
         <summary>{}</summary>\n    <updated>2007-10-12T00:00:00-04:00</updated>\n    \
         <link href=\"http://arxiv.org/api/errors#{anchor}\" rel=\"alternate\" type=\"text/html\"/>\n    \
         <author>\n      <name>arXiv api core</name>\n    </author>\n  </entry>\n",
        xml_escape(message)
    )
}

/// `GET /api/query`.
pub(crate) fn query(meta: &MetaState, req: &Recorded, rest: &str) -> Answer {
    if rest.trim_end_matches('/') != "/api/query" {
        return Answer::raw(
            404,
            b"<html><body><h1>Not Found</h1></body></html>".to_vec(),
            "text/html; charset=utf-8",
        );
    }
    let id_list = param(req, "id_list").unwrap_or("");
    let search = param(req, "search_query").unwrap_or("");
    let start_s = param(req, "start").unwrap_or("0");
    let max_s = param(req, "max_results").unwrap_or("10");
    let echo =
        format!("search_query={search}&id_list={id_list}&start={start_s}&max_results={max_s}");
    let Ok(start) = start_s.parse::<usize>() else {
        let e = error_entry("start_must_be_an_integer", "start must be an integer");
        return feed(&echo, 1, 0, 1, &e);
    };
    let Ok(max) = max_s.parse::<usize>() else {
        let e = error_entry(
            "max_results_must_be_an_integer",
            "max_results must be an integer",
        );
        return feed(&echo, 1, 0, 1, &e);
    };
    let ids: Vec<&str> = id_list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = ids.iter().find(|id| !well_formed(id)) {
        let e = error_entry(
            &format!("incorrect_id_format_for_{bad}"),
            &format!("incorrect id format for {bad}"),
        );
        return feed(&echo, 1, 0, 1, &e);
    }
    // Searches are not emulated: only `id_list` finds papers.
    let found: Vec<String> = ids
        .iter()
        .filter_map(|id| {
            let (base, v) = split_version(id);
            let (latest, entry) = meta.arxiv.get(base)?;
            match v {
                None => Some(entry.clone()),
                Some(v) if v == *latest => Some(entry.clone()),
                Some(v) if v < *latest => {
                    // That version's entry: the same metadata under its versioned id.
                    Some(
                        entry
                            .replace(&format!("{base}v{latest}<"), &format!("{base}v{v}<"))
                            .replace(&format!("{base}v{latest}\""), &format!("{base}v{v}\"")),
                    )
                }
                Some(_) => None,
            }
        })
        .collect();
    let page: String = found.iter().skip(start).take(max).cloned().collect();
    feed(&echo, found.len(), start, max, &page)
}
