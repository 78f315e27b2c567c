//! Exports as Zotero's translators write them (`format=<export>` and `include=<export>`):
//! BibTeX, BibLaTeX, CSL JSON and RIS are modelled on the real translators' output; the
//! other formats answer with their Content-Type and a minimal body in the format's shape
//! (see `fixtures/README.md`).

use serde_json::{json, Value};

use super::cite::{authors, year};

/// Every export format of the web API (`Zotero_Translate::$exportFormats`).
pub(crate) const WEB_FORMATS: &[&str] = &[
    "bibtex",
    "biblatex",
    "bookmarks",
    "coins",
    "csljson",
    "csv",
    "endnote_xml",
    "evernote",
    "rdf_bibliontology",
    "rdf_dc",
    "rdf_zotero",
    "mods",
    "refer",
    "refworks_tagged",
    "ris",
    "tei",
    "wikipedia",
];

/// The desktop's export formats (`exportFormats` in `server_localAPI.js`): no EndNote XML,
/// Evernote or RefWorks Tagged.
pub(crate) const LOCAL_FORMATS: &[&str] = &[
    "bibtex",
    "biblatex",
    "bookmarks",
    "coins",
    "csljson",
    "csv",
    "mods",
    "refer",
    "rdf_bibliontology",
    "rdf_dc",
    "rdf_zotero",
    "ris",
    "tei",
    "wikipedia",
];

/// The web API's Content-Type of an export (`Zotero_API::getContentTypeForFormat`, the
/// translation server's `SERVER_CONTENT_TYPES`).
pub(crate) fn content_type(format: &str) -> &'static str {
    match format {
        "bibtex" | "biblatex" => "application/x-bibtex",
        "bookmarks" | "coins" => "text/html",
        "csljson" => "application/vnd.citationstyles.csl+json",
        "csv" => "text/csv",
        "mods" => "application/mods+xml",
        "rdf_bibliontology" | "rdf_dc" | "rdf_zotero" => "application/rdf+xml",
        "refer" | "ris" => "application/x-research-info-systems",
        "tei" | "endnote_xml" | "evernote" => "text/xml",
        "wikipedia" => "text/x-wiki",
        _ => "text/plain",
    }
}

fn field<'a>(item: &'a Value, name: &str) -> &'a str {
    item["data"][name].as_str().unwrap_or("").trim()
}

fn key(item: &Value) -> &str {
    item["key"].as_str().unwrap_or("")
}

/// Items a translator writes: notes, attachments and annotations are left out.
fn regular<'a>(items: &[&'a Value]) -> Vec<&'a Value> {
    items
        .iter()
        .copied()
        .filter(|i| {
            !matches!(
                i["data"]["itemType"].as_str(),
                Some("note" | "attachment" | "annotation")
            )
        })
        .collect()
}

fn xml_esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `Attention Is All` → `Attention {Is} {All}`: BibTeX keeps the capitals.
fn protect_caps(title: &str) -> String {
    title
        .split(' ')
        .enumerate()
        .map(|(i, w)| {
            if i > 0 && w.chars().next().is_some_and(char::is_uppercase) {
                format!("{{{w}}}")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bibtex_type(item_type: &str, latex: bool) -> &'static str {
    match (item_type, latex) {
        ("journalArticle" | "magazineArticle" | "newspaperArticle", _) => "article",
        ("book", _) => "book",
        ("bookSection", true) => "incollection",
        ("bookSection", false) => "inbook",
        ("conferencePaper", _) => "inproceedings",
        ("thesis", true) => "thesis",
        ("thesis", false) => "phdthesis",
        ("report", true) => "report",
        ("report", false) => "techreport",
        ("webpage", true) => "online",
        _ => "misc",
    }
}

/// The translator's citation key: first author, first word of the title, year.
fn cite_key(item: &Value) -> String {
    let author = authors(item)
        .first()
        .map(|n| n.family.to_lowercase())
        .unwrap_or_default();
    let word = field(item, "title")
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty() && !matches!(w.to_lowercase().as_str(), "a" | "an" | "the"))
        .unwrap_or("")
        .to_lowercase();
    let y = year(field(item, "date")).unwrap_or_default();
    let parts: Vec<String> = [author, word, y]
        .into_iter()
        .map(|p| p.chars().filter(|c| c.is_alphanumeric()).collect())
        .filter(|p: &String| !p.is_empty())
        .collect();
    if parts.is_empty() {
        format!("noauthor_{}", key(item).to_lowercase())
    } else {
        parts.join("_")
    }
}

fn bibtex(items: &[&Value], latex: bool) -> String {
    let mut out = String::new();
    for item in regular(items) {
        let ty = item["data"]["itemType"].as_str().unwrap_or("");
        let mut fields: Vec<(&str, String)> = Vec::new();
        let title = field(item, "title");
        if !title.is_empty() {
            fields.push(("title", protect_caps(title)));
        }
        for (name, zotero) in [
            ("volume", "volume"),
            ("number", "issue"),
            ("url", "url"),
            ("doi", "DOI"),
            ("isbn", "ISBN"),
            ("issn", "ISSN"),
            ("language", "language"),
            ("abstract", "abstractNote"),
            ("publisher", "publisher"),
        ] {
            let v = field(item, zotero);
            if !v.is_empty() {
                fields.push((name, v.to_string()));
            }
        }
        let cont = match ty {
            "conferencePaper" => field(item, "proceedingsTitle"),
            "bookSection" => field(item, "bookTitle"),
            _ => field(item, "publicationTitle"),
        };
        if !cont.is_empty() {
            let name = match (ty, latex) {
                ("conferencePaper" | "bookSection", _) => "booktitle",
                (_, true) => "journaltitle",
                (_, false) => "journal",
            };
            fields.push((name, cont.to_string()));
        }
        let names: Vec<String> = authors(item)
            .iter()
            .map(|n| {
                if n.given.is_empty() {
                    format!("{{{}}}", n.family)
                } else {
                    format!("{}, {}", n.family, n.given)
                }
            })
            .collect();
        if !names.is_empty() {
            fields.push(("author", names.join(" and ")));
        }
        let date = field(item, "date");
        if latex {
            if !date.is_empty() {
                fields.push(("date", date.to_string()));
            }
        } else if let Some(y) = year(date) {
            fields.push(("year", y));
        }
        let pages = field(item, "pages");
        if !pages.is_empty() {
            fields.push(("pages", pages.replace('-', "--")));
        }
        let tags: Vec<&str> = item["data"]["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["tag"].as_str())
            .collect();
        if !tags.is_empty() {
            fields.push(("keywords", tags.join(", ")));
        }
        out.push_str(&format!(
            "\n@{}{{{},\n",
            bibtex_type(ty, latex),
            cite_key(item)
        ));
        for (name, value) in fields {
            out.push_str(&format!("\t{name} = {{{value}}},\n"));
        }
        out.push_str("}\n");
    }
    out
}

fn csl_type(item_type: &str) -> &'static str {
    match item_type {
        "journalArticle" => "article-journal",
        "magazineArticle" => "article-magazine",
        "newspaperArticle" => "article-newspaper",
        "book" => "book",
        "bookSection" => "chapter",
        "conferencePaper" => "paper-conference",
        "thesis" => "thesis",
        "report" => "report",
        "webpage" => "webpage",
        "preprint" => "article",
        "film" => "motion_picture",
        "artwork" => "graphic",
        "manuscript" => "manuscript",
        _ => "document",
    }
}

/// One item as CSL JSON (`Zotero_Cite::retrieveItem`, `Zotero.Utilities.Item.itemToCSLJSON`).
pub(crate) fn csl_item(item: &Value, id: String) -> Value {
    let mut v = json!({"id": id, "type": csl_type(field(item, "itemType"))});
    for (csl, zotero) in [
        ("title", "title"),
        ("container-title", "publicationTitle"),
        ("container-title", "proceedingsTitle"),
        ("container-title", "bookTitle"),
        ("publisher", "publisher"),
        ("publisher-place", "place"),
        ("volume", "volume"),
        ("issue", "issue"),
        ("page", "pages"),
        ("language", "language"),
        ("DOI", "DOI"),
        ("ISBN", "ISBN"),
        ("ISSN", "ISSN"),
        ("URL", "url"),
        ("abstract", "abstractNote"),
        ("title-short", "shortTitle"),
    ] {
        let value = field(item, zotero);
        if !value.is_empty() && v.get(csl).is_none() {
            v[csl] = json!(value);
        }
    }
    let names: Vec<Value> = authors(item)
        .iter()
        .map(|n| {
            if n.given.is_empty() {
                json!({"literal": n.family})
            } else {
                json!({"family": n.family, "given": n.given})
            }
        })
        .collect();
    if !names.is_empty() {
        v["author"] = json!(names);
    }
    let date = field(item, "date");
    let parts: Vec<u32> = date
        .split(['-', '/'])
        .take(3)
        .map_while(|p| p.parse().ok())
        .collect();
    if year(date).is_some() && !parts.is_empty() && parts.first().is_some_and(|y| *y > 999) {
        v["issued"] = json!({"date-parts": [parts]});
    } else if let Some(y) = year(date).and_then(|y| y.parse::<u32>().ok()) {
        v["issued"] = json!({"date-parts": [[y]]});
    } else if !date.is_empty() {
        v["issued"] = json!({"literal": date});
    }
    v
}

fn ris_type(item_type: &str) -> &'static str {
    match item_type {
        "journalArticle" => "JOUR",
        "book" => "BOOK",
        "bookSection" => "CHAP",
        "conferencePaper" => "CONF",
        "thesis" => "THES",
        "report" => "RPRT",
        "webpage" => "ELEC",
        "film" => "MPCT",
        "artwork" => "ART",
        "manuscript" => "MANSCPT",
        "magazineArticle" => "MGZN",
        "newspaperArticle" => "NEWS",
        _ => "GEN",
    }
}

fn ris(items: &[&Value]) -> String {
    let mut out = String::new();
    for item in regular(items) {
        let mut line = |tag: &str, v: &str| {
            if !v.is_empty() {
                out.push_str(&format!("{tag}  - {v}\r\n"));
            }
        };
        line("TY", ris_type(field(item, "itemType")));
        line("TI", field(item, "title"));
        for n in authors(item) {
            if n.given.is_empty() {
                line("AU", &n.family);
            } else {
                line("AU", &format!("{}, {}", n.family, n.given));
            }
        }
        line("T2", field(item, "publicationTitle"));
        line("T2", field(item, "proceedingsTitle"));
        line("AB", field(item, "abstractNote"));
        let date = field(item, "date");
        if let Some(y) = year(date) {
            line("PY", &y);
        }
        line("DO", field(item, "DOI"));
        line("VL", field(item, "volume"));
        line("IS", field(item, "issue"));
        let pages = field(item, "pages");
        let mut pp = pages.splitn(2, '-');
        line("SP", pp.next().unwrap_or(""));
        line("EP", pp.next().unwrap_or(""));
        line("PB", field(item, "publisher"));
        line("CY", field(item, "place"));
        line("SN", field(item, "ISBN"));
        line("SN", field(item, "ISSN"));
        line("LA", field(item, "language"));
        line("UR", field(item, "url"));
        for t in item["data"]["tags"].as_array().into_iter().flatten() {
            line("KW", t["tag"].as_str().unwrap_or(""));
        }
        out.push_str("ER  - \r\n\r\n");
    }
    out
}

/// A minimal body in the shape of a format the emulator does not model in detail: one
/// record per item with its title (and creators where the format has a place for them).
fn minimal(format: &str, items: &[&Value]) -> String {
    let items = regular(items);
    let titles: Vec<String> = items
        .iter()
        .map(|i| field(i, "title").to_string())
        .collect();
    match format {
        "csv" => {
            let mut out =
                String::from("\"Key\",\"Item Type\",\"Publication Year\",\"Author\",\"Title\"\n");
            for i in &items {
                let a: Vec<String> = authors(i)
                    .iter()
                    .map(|n| format!("{}, {}", n.family, n.given))
                    .collect();
                out.push_str(&format!(
                    "\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n",
                    key(i),
                    field(i, "itemType"),
                    year(field(i, "date")).unwrap_or_default(),
                    a.join("; ").replace('"', "\"\""),
                    field(i, "title").replace('"', "\"\"")
                ));
            }
            out
        }
        "refer" | "refworks_tagged" => {
            let mut out = String::new();
            for i in &items {
                if format == "refer" {
                    out.push_str(&format!(
                        "%0 {}\n%T {}\n",
                        field(i, "itemType"),
                        field(i, "title")
                    ));
                    for n in authors(i) {
                        out.push_str(&format!("%A {}, {}\n", n.family, n.given));
                    }
                } else {
                    out.push_str(&format!(
                        "RT {}\nT1 {}\n",
                        field(i, "itemType"),
                        field(i, "title")
                    ));
                    for n in authors(i) {
                        out.push_str(&format!("A1 {}, {}\n", n.family, n.given));
                    }
                }
                out.push('\n');
            }
            out
        }
        "wikipedia" => titles
            .iter()
            .map(|t| format!("{{{{Citation\n| title = {t}\n}}}}\n"))
            .collect(),
        "coins" | "bookmarks" => {
            let spans: String = titles
                .iter()
                .map(|t| {
                    let t = xml_esc(t);
                    if format == "coins" {
                        format!("<span class=\"Z3988\" title=\"url_ver=Z39.88-2004&amp;rft.title={}\"></span>\n", t.replace(' ', "%20"))
                    } else {
                        format!("    <DT><A>{t}</A>\n")
                    }
                })
                .collect();
            if format == "coins" {
                spans
            } else {
                format!("<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks Menu</H1>\n<DL>\n{spans}</DL>\n")
            }
        }
        // The XML formats: a root with one record per item.
        _ => {
            let (open, close, record) = match format {
                "mods" => (
                    "<modsCollection xmlns=\"http://www.loc.gov/mods/v3\">",
                    "</modsCollection>",
                    "mods",
                ),
                "tei" => (
                    "<listBibl xmlns=\"http://www.tei-c.org/ns/1.0\">",
                    "</listBibl>",
                    "biblStruct",
                ),
                "endnote_xml" => ("<xml><records>", "</records></xml>", "record"),
                "evernote" => ("<en-export>", "</en-export>", "note"),
                _ => (
                    "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">",
                    "</rdf:RDF>",
                    "rdf:Description",
                ),
            };
            let body: String = titles
                .iter()
                .map(|t| format!("  <{record}><title>{}</title></{record}>\n", xml_esc(t)))
                .collect();
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{open}\n{body}{close}\n")
        }
    }
}

/// The export of `items` in `format`; `csl_id` names an item in CSL JSON (the web API
/// writes `libraryID/KEY`, the desktop's translator the item's URI).
pub(crate) fn export(format: &str, items: &[&Value], csl_id: &dyn Fn(&Value) -> String) -> String {
    match format {
        "bibtex" => bibtex(items, false),
        "biblatex" => bibtex(items, true),
        "ris" => ris(items),
        "csljson" => {
            let arr: Vec<Value> = regular(items)
                .iter()
                .map(|i| csl_item(i, csl_id(i)))
                .collect();
            serde_json::to_string_pretty(&arr).unwrap()
        }
        other => minimal(other, items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bibtex_and_ris_look_like_zoteros() {
        let v = json!({"key": "VASWANI7", "data": {"itemType": "journalArticle",
            "title": "Attention Is All You Need", "date": "2017-06-12", "pages": "5998-6008",
            "creators": [{"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"}],
            "publicationTitle": "NeurIPS", "tags": [{"tag": "nlp"}]}});
        let b = export("bibtex", &[&v], &|_| String::new());
        assert!(b.starts_with("\n@article{vaswani_attention_2017,\n"), "{b}");
        assert!(b.contains("\ttitle = {Attention {Is} {All} {You} {Need}},\n"));
        assert!(b.contains("\tpages = {5998--6008},\n"));
        let r = export("ris", &[&v], &|_| String::new());
        assert!(
            r.starts_with("TY  - JOUR\r\nTI  - Attention Is All You Need\r\n"),
            "{r}"
        );
        assert!(r.ends_with("ER  - \r\n\r\n"));
        let c: Value = serde_json::from_str(&export("csljson", &[&v], &|i| {
            format!("1/{}", i["key"].as_str().unwrap())
        }))
        .unwrap();
        assert_eq!(c[0]["issued"]["date-parts"], json!([[2017, 6, 12]]));
        assert_eq!(c[0]["id"], "1/VASWANI7");
        for f in WEB_FORMATS {
            assert!(!export(f, &[&v], &|_| String::new()).is_empty(), "{f}");
        }
    }
}
