//! Citations and bibliographies as Zotero renders them with citeproc-js: on the web API
//! through its citation server (`Zotero_Cite` in zotero/dataserver: `format=bib`,
//! `include=bib,citation`, `style`, `locale`, `linkwrap`), and on the desktop
//! (`citeprocToHTML` and `Zotero.Cite.makeFormattedBibliographyOrCitationList` in
//! zotero/zotero). A few real styles are modelled, rendered simply but recognisably from the
//! item's fields and deterministic; what is guessed is listed in `fixtures/README.md`.

use serde_json::Value;

use super::answer::BadRequest;

/// Which of Zotero's renderers answers: they differ in defaults and wrapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Renderer {
    /// The web API's citation server: `<span>` around a citation, an XML prolog before a
    /// `format=bib` bibliography.
    Web,
    /// The desktop's own citeproc-js: a note style's citation is an `<ol>`, bibliographies
    /// carry COinS spans.
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Apa,
    ChicagoNotes,
    ChicagoShortNotes,
    ChicagoAuthorDate,
    Ieee,
    Nature,
}

/// The styles the emulator knows, by their id in the Zotero style repository.
const STYLES: &[(&str, Kind)] = &[
    ("apa", Kind::Apa),
    ("chicago-note-bibliography", Kind::ChicagoNotes),
    (
        "chicago-shortened-notes-bibliography",
        Kind::ChicagoShortNotes,
    ),
    ("chicago-author-date", Kind::ChicagoAuthorDate),
    ("ieee", Kind::Ieee),
    ("nature", Kind::Nature),
];

/// Items a `format=bib` request may cover (`Zotero_API::MAX_BIBLIOGRAPHY_ITEMS`); more
/// answer `413`.
pub(crate) const MAX_BIBLIOGRAPHY_ITEMS: usize = 150;

/// The web API's default style (`Zotero_API::$defaultParams`).
pub(crate) const WEB_DEFAULT_STYLE: &str = "chicago-note-bibliography";
/// The desktop's default style (`citeprocToHTML`).
pub(crate) const LOCAL_DEFAULT_STYLE: &str = "chicago-shortened-notes-bibliography";

/// A style the emulator can render.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    kind: Kind,
}

impl Style {
    fn numeric(self) -> bool {
        matches!(self.kind, Kind::Ieee | Kind::Nature)
    }
    fn note(self) -> bool {
        matches!(self.kind, Kind::ChicagoNotes | Kind::ChicagoShortNotes)
    }
}

/// A style by its id, or by its URL in the style repository (`http(s)://www.zotero.org/styles/ID`).
pub(crate) fn find_style(id_or_url: &str) -> Option<Style> {
    let id = [
        "https://www.zotero.org/styles/",
        "http://www.zotero.org/styles/",
    ]
    .iter()
    .find_map(|p| id_or_url.strip_prefix(p))
    .unwrap_or(id_or_url);
    STYLES
        .iter()
        .find(|(s, _)| *s == id)
        .map(|(_, kind)| Style { kind: *kind })
}

/// The web API's style check before it asks the citation server (`Zotero_Cite::buildURLPath`:
/// `/^(https?|[a-zA-Z0-9\-]+$)/`); a style that passes but the server does not have is also
/// `400 Invalid style` (the citation server's 400 `no style found`).
pub(crate) fn web_style(raw: Option<&str>) -> Result<Style, BadRequest> {
    let s = raw.unwrap_or(WEB_DEFAULT_STYLE);
    let shaped = s.starts_with("http")
        || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    match (shaped, find_style(s)) {
        (true, Some(style)) => Ok(style),
        _ => Err("Invalid style".into()),
    }
}

/// The desktop's style lookup: an installed style, else a download from the repository;
/// a failed download is `400 Invalid style: ID (…)`.
pub(crate) fn local_style(raw: Option<&str>) -> Result<Style, BadRequest> {
    let s = raw.filter(|s| !s.is_empty()).unwrap_or(LOCAL_DEFAULT_STYLE);
    find_style(s).ok_or_else(|| {
        format!("Invalid style: {s} (Error: Style not found at https://www.zotero.org/styles/{s})")
            .into()
    })
}

/// The locale the web API passes on (`buildURLPath`): `xx-YY` at the start of the value, else
/// U.S. English. (A bare `xx` becomes `Array-XX` there, a PHP slip, which the citation server
/// does not know: U.S. English.)
pub(crate) fn web_locale(raw: Option<&str>) -> String {
    let s = raw.unwrap_or("en-US");
    let b = s.as_bytes();
    let lower = |i: usize| b.get(i).is_some_and(u8::is_ascii_lowercase);
    let upper = |i: usize| b.get(i).is_some_and(u8::is_ascii_uppercase);
    if lower(0) && lower(1) && b.get(2) == Some(&b'-') && upper(3) && upper(4) {
        s.get(..5).unwrap_or("en-US").to_string()
    } else {
        "en-US".to_string()
    }
}

/// The locale the desktop uses: as given, a bare language taking its usual region (citeproc-js
/// does that for the languages it has).
pub(crate) fn local_locale(raw: Option<&str>) -> String {
    match raw.filter(|s| !s.is_empty()).unwrap_or("en-US") {
        "de" => "de-DE".into(),
        "fr" => "fr-FR".into(),
        "en" => "en-US".into(),
        other => other.to_string(),
    }
}

/// The locale terms a style uses; locales other than German and French render in U.S.
/// English, as the citation server does for a locale it has no file for.
struct Terms {
    and: &'static str,
    et_al: &'static str,
    no_date: &'static str,
}

fn terms(locale: &str) -> Terms {
    match locale {
        "de-DE" | "de-AT" | "de-CH" => Terms {
            and: "und",
            et_al: "u. a.",
            no_date: "o. J.",
        },
        "fr-FR" | "fr-CA" => Terms {
            and: "et",
            et_al: "et al.",
            no_date: "s. d.",
        },
        _ => Terms {
            and: "and",
            et_al: "et al.",
            no_date: "n.d.",
        },
    }
}

/// One rendering: a style in a locale, by one of the renderers.
pub(crate) struct Cite {
    style: Style,
    terms: Terms,
    linkwrap: bool,
    renderer: Renderer,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn field<'a>(item: &'a Value, name: &str) -> &'a str {
    item["data"][name].as_str().unwrap_or("").trim()
}

/// The four-digit year of a Zotero date (`2017-06-12`, `May 01, 1980`, `1993`).
pub(crate) fn year(date: &str) -> Option<String> {
    let chars: Vec<char> = date.chars().collect();
    chars
        .windows(4)
        .enumerate()
        .find(|(i, w)| {
            w.iter().all(char::is_ascii_digit)
                && (*i == 0 || !chars[i - 1].is_ascii_digit())
                && chars.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
        })
        .map(|(_, w)| w.iter().collect())
}

/// A creator as (family, given); a single-field name has no given name.
#[derive(Debug, Clone)]
pub(crate) struct Name {
    pub(crate) family: String,
    pub(crate) given: String,
}

/// The item's authors: creators of the type's primary kind (`author`, else the first type).
pub(crate) fn authors(item: &Value) -> Vec<Name> {
    let creators = item["data"]["creators"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let primary = if creators.iter().any(|c| c["creatorType"] == "author") {
        "author".to_string()
    } else {
        creators
            .first()
            .and_then(|c| c["creatorType"].as_str())
            .unwrap_or("author")
            .to_string()
    };
    creators
        .iter()
        .filter(|c| c["creatorType"] == primary.as_str())
        .map(|c| match c["name"].as_str() {
            Some(n) => Name {
                family: n.to_string(),
                given: String::new(),
            },
            None => Name {
                family: c["lastName"].as_str().unwrap_or("").to_string(),
                given: c["firstName"].as_str().unwrap_or("").to_string(),
            },
        })
        .collect()
}

/// `Aidan N.` → `A. N.`
fn initials(given: &str) -> String {
    given
        .split([' ', '.'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            let parts: Vec<String> = p
                .split('-')
                .filter_map(|h| h.chars().next())
                .map(|c| format!("{c}."))
                .collect();
            parts.join("-")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn container(item: &Value) -> &str {
    [
        "publicationTitle",
        "proceedingsTitle",
        "bookTitle",
        "websiteTitle",
        "blogTitle",
        "forumTitle",
        "encyclopediaTitle",
        "dictionaryTitle",
    ]
    .iter()
    .map(|f| field(item, f))
    .find(|v| !v.is_empty())
    .unwrap_or("")
}

fn pages(item: &Value) -> String {
    field(item, "pages").replace('-', "–")
}

impl Cite {
    pub(crate) fn new(style: Style, locale: &str, linkwrap: bool, renderer: Renderer) -> Cite {
        Cite {
            style,
            terms: terms(locale),
            linkwrap,
            renderer,
        }
    }

    fn link(&self, url: &str) -> String {
        if self.linkwrap {
            format!("<a href=\"{}\">{}</a>", esc(url), esc(url))
        } else {
            esc(url)
        }
    }

    fn doi_or_url(&self, item: &Value) -> Option<String> {
        let doi = field(item, "DOI");
        if !doi.is_empty() {
            return Some(self.link(&format!("https://doi.org/{doi}")));
        }
        let url = field(item, "url");
        (!url.is_empty()).then(|| self.link(url))
    }

    fn year_or_nd(&self, item: &Value) -> String {
        year(field(item, "date")).unwrap_or_else(|| self.terms.no_date.to_string())
    }

    /// `A, B, and C` with the locale's `and` (or `&`).
    fn join(&self, names: &[String], and: &str, serial_comma: bool) -> String {
        match names {
            [] => String::new(),
            [one] => one.clone(),
            [a, b] => format!("{a} {and} {b}"),
            [init @ .., last] => {
                let comma = if serial_comma { "," } else { "" };
                format!("{}{comma} {and} {last}", init.join(", "))
            }
        }
    }

    /// The names of an in-text citation: `Vaswani`, `Vaswani and Shazeer`, `Vaswani et al.`
    fn short_names(&self, item: &Value, and: &str) -> String {
        let a = authors(item);
        match a.as_slice() {
            [] => String::new(),
            [one] => one.family.clone(),
            [x, y] => format!("{} {and} {}", x.family, y.family),
            [first, ..] => format!("{} {}", first.family, self.terms.et_al),
        }
    }

    fn title(item: &Value) -> String {
        let t = field(item, "title");
        if t.is_empty() {
            field(item, "filename").to_string()
        } else {
            t.to_string()
        }
    }

    fn short_title(item: &Value) -> String {
        let s = field(item, "shortTitle");
        if s.is_empty() {
            Self::title(item)
        } else {
            s.to_string()
        }
    }

    /// The HTML inside one `csl-entry`.
    fn entry(&self, item: &Value, number: usize) -> String {
        let t = esc(&Self::title(item));
        let cont = esc(container(item));
        let vol = esc(field(item, "volume"));
        let pg = esc(&pages(item));
        let publisher = esc(field(item, "publisher"));
        let place = esc(field(item, "place"));
        let a = authors(item);
        let mut out = String::new();
        match self.style.kind {
            Kind::Apa => {
                let names: Vec<String> = a
                    .iter()
                    .map(|n| {
                        if n.given.is_empty() {
                            n.family.clone()
                        } else {
                            format!("{}, {}", n.family, initials(&n.given))
                        }
                    })
                    .collect();
                let names = esc(&self.join(&names, "&", true));
                if !names.is_empty() {
                    out.push_str(&format!("{names} "));
                }
                out.push_str(&format!("({}). ", self.year_or_nd(item)));
                if cont.is_empty() {
                    out.push_str(&format!("<i>{t}</i>."));
                    if !publisher.is_empty() {
                        out.push_str(&format!(" {publisher}."));
                    }
                } else {
                    out.push_str(&format!("{t}. <i>{cont}</i>"));
                    if !vol.is_empty() {
                        out.push_str(&format!(", <i>{vol}</i>"));
                    }
                    if !pg.is_empty() {
                        out.push_str(&format!(", {pg}"));
                    }
                    out.push('.');
                }
                if let Some(link) = self.doi_or_url(item) {
                    out.push_str(&format!(" {link}"));
                }
            }
            Kind::ChicagoNotes | Kind::ChicagoShortNotes | Kind::ChicagoAuthorDate => {
                let mut names: Vec<String> = a
                    .iter()
                    .enumerate()
                    .map(|(i, n)| match (i, n.given.is_empty()) {
                        (_, true) => n.family.clone(),
                        (0, false) => format!("{}, {}", n.family, n.given),
                        (_, false) => format!("{} {}", n.given, n.family),
                    })
                    .collect();
                if names.len() > 10 {
                    names.truncate(7);
                    let list = format!("{}, {}", names.join(", "), self.terms.et_al);
                    names = vec![list];
                }
                let names = esc(&self.join(&names, self.terms.and, true));
                if !names.is_empty() {
                    out.push_str(&format!("{}. ", names.trim_end_matches('.')));
                }
                if self.style.kind == Kind::ChicagoAuthorDate {
                    out.push_str(&format!("{}. ", self.year_or_nd(item)));
                }
                let dated = self.style.kind != Kind::ChicagoAuthorDate;
                if cont.is_empty() {
                    out.push_str(&format!("<i>{t}</i>."));
                    let imprint: Vec<&str> = [place.as_str(), publisher.as_str()]
                        .into_iter()
                        .filter(|s| !s.is_empty())
                        .collect();
                    if !imprint.is_empty() || dated {
                        let mut bits = imprint.join(": ");
                        if dated {
                            if !bits.is_empty() {
                                bits.push_str(", ");
                            }
                            bits.push_str(&self.year_or_nd(item));
                        }
                        out.push_str(&format!(" {bits}."));
                    }
                } else {
                    out.push_str(&format!("“{t}.” <i>{cont}</i>"));
                    if !vol.is_empty() {
                        out.push_str(&format!(" {vol}"));
                    }
                    if dated {
                        out.push_str(&format!(" ({})", self.year_or_nd(item)));
                    }
                    if !pg.is_empty() {
                        out.push_str(&format!(": {pg}"));
                    }
                    out.push('.');
                }
                if let Some(link) = self.doi_or_url(item) {
                    out.push_str(&format!(" {link}."));
                }
            }
            Kind::Ieee => {
                let names: Vec<String> = a
                    .iter()
                    .map(|n| {
                        if n.given.is_empty() {
                            n.family.clone()
                        } else {
                            format!("{} {}", initials(&n.given), n.family)
                        }
                    })
                    .collect();
                let names = if names.len() > 6 {
                    format!(
                        "{} <i>{}</i>",
                        esc(names.first().map_or("", String::as_str)),
                        self.terms.et_al
                    )
                } else {
                    esc(&self.join(&names, self.terms.and, true))
                };
                if !names.is_empty() {
                    out.push_str(&format!("{names}, "));
                }
                if cont.is_empty() {
                    out.push_str(&format!("<i>{t}</i>."));
                    if !publisher.is_empty() {
                        out.push_str(&format!(" {publisher}"));
                    }
                    out.push_str(&format!(", {}.", self.year_or_nd(item)));
                } else {
                    out.push_str(&format!("“{t},” <i>{cont}</i>"));
                    if !vol.is_empty() {
                        out.push_str(&format!(", vol. {vol}"));
                    }
                    if !pg.is_empty() {
                        out.push_str(&format!(", pp. {pg}"));
                    }
                    out.push_str(&format!(", {}", self.year_or_nd(item)));
                    let doi = field(item, "DOI");
                    if !doi.is_empty() {
                        out.push_str(&format!(", doi: {}", esc(doi)));
                    }
                    out.push('.');
                }
                let left = format!("[{number}]");
                return self.numbered(&left, &out);
            }
            Kind::Nature => {
                let names: Vec<String> = a
                    .iter()
                    .map(|n| {
                        if n.given.is_empty() {
                            n.family.clone()
                        } else {
                            format!("{}, {}", n.family, initials(&n.given))
                        }
                    })
                    .collect();
                let names = if names.len() > 5 {
                    format!(
                        "{} <i>{}</i>",
                        esc(names.first().map_or("", String::as_str)),
                        self.terms.et_al
                    )
                } else {
                    esc(&self.join(&names, "&amp;", false))
                };
                if !names.is_empty() {
                    out.push_str(&format!("{names} "));
                }
                if cont.is_empty() {
                    out.push_str(&format!("<i>{t}</i>. ({}{}).", publisher, {
                        let y = self.year_or_nd(item);
                        if publisher.is_empty() {
                            y
                        } else {
                            format!(", {y}")
                        }
                    }));
                } else {
                    out.push_str(&format!("{t}. <i>{cont}</i>"));
                    if !vol.is_empty() {
                        out.push_str(&format!(" <b>{vol}</b>"));
                    }
                    if !pg.is_empty() {
                        out.push_str(&format!(", {pg}"));
                    }
                    out.push_str(&format!(" ({}).", self.year_or_nd(item)));
                }
                let left = format!("{number}.");
                return self.numbered(&left, &out);
            }
        }
        out
    }

    /// A numbered entry's two parts, as citeproc-js writes `second-field-align`.
    fn numbered(&self, left: &str, right: &str) -> String {
        format!(
            "\n    <div class=\"csl-left-margin\" style=\"float: left; padding-right: 0.5em; text-align: right; width: 1em;\">{left}</div><div class=\"csl-right-inline\" style=\"margin: 0 .4em 0 1.5em;\">{right}</div>\n  "
        )
    }

    /// A citation of one item (the `citation` of `include=citation`, or one of the desktop's
    /// citation list).
    pub(crate) fn citation(&self, item: &Value) -> String {
        let inner = match self.style.kind {
            Kind::Apa => format!(
                "({}, {})",
                esc(&self.short_names(item, "&")),
                self.year_or_nd(item)
            ),
            Kind::ChicagoAuthorDate => format!(
                "({} {})",
                esc(&self.short_names(item, self.terms.and)),
                self.year_or_nd(item)
            ),
            Kind::ChicagoShortNotes => format!(
                "{}, “{}.”",
                esc(&self.short_names(item, self.terms.and)),
                esc(&Self::short_title(item))
            ),
            Kind::ChicagoNotes => {
                let a = authors(item);
                let names = match a.as_slice() {
                    [] => String::new(),
                    [one] => format!("{} {}", one.given, one.family),
                    [x, y] => format!(
                        "{} {} {} {} {}",
                        x.given, x.family, self.terms.and, y.given, y.family
                    ),
                    [first, ..] => format!("{} {} {}", first.given, first.family, self.terms.et_al),
                };
                let names = esc(names.trim());
                let cont = esc(container(item));
                let mut s = if names.is_empty() {
                    String::new()
                } else {
                    format!("{names}, ")
                };
                if cont.is_empty() {
                    s.push_str(&format!(
                        "<i>{}</i> ({})",
                        esc(&Self::title(item)),
                        self.year_or_nd(item)
                    ));
                } else {
                    s.push_str(&format!(
                        "“{},” <i>{cont}</i> ({})",
                        esc(&Self::title(item)),
                        self.year_or_nd(item)
                    ));
                }
                let pg = pages(item);
                if !pg.is_empty() {
                    s.push_str(&format!(": {}", esc(&pg)));
                }
                s.push('.');
                s
            }
            Kind::Ieee => "[1]".to_string(),
            Kind::Nature => "<sup>1</sup>".to_string(),
        };
        match self.renderer {
            // `Zotero_Cite::processCitationResponse`
            Renderer::Web => format!("<span>{inner}</span>"),
            Renderer::Local if self.style.note() => format!("<ol>\n\t<li>{inner}</li>\n</ol>"),
            Renderer::Local => inner,
        }
    }

    /// The bibliography of `items`: sorted by author, year and title, or numbered in the
    /// order given for a numeric style (citeproc-js numbers by order of appearance).
    pub(crate) fn bibliography(&self, items: &[&Value]) -> String {
        let mut items: Vec<&Value> = items.to_vec();
        if !self.style.numeric() {
            let key = |i: &Value| {
                let a = authors(i);
                let first = a
                    .first()
                    .map(|n| n.family.to_lowercase())
                    .unwrap_or_default();
                (first, year(field(i, "date")), Self::title(i).to_lowercase())
            };
            items.sort_by_key(|i| key(i));
        }
        let (line_height, hanging) = match self.style.kind {
            Kind::Apa => ("2", true),
            Kind::Ieee | Kind::Nature => ("1.35", false),
            _ => ("1.35", true),
        };
        let indent = match (hanging, self.renderer) {
            (false, _) => "",
            (true, Renderer::Web) => "padding-left: 1em; text-indent:-1em;",
            (true, Renderer::Local) => "margin-left: 2em; text-indent:-2em;",
        };
        let mut out = format!(
            "<div class=\"csl-bib-body\" style=\"line-height: {line_height}; {indent}\">\n"
        );
        for (i, item) in items.iter().enumerate() {
            let style = if self.style.numeric() {
                " style=\"clear: left; \""
            } else {
                ""
            };
            out.push_str(&format!(
                "  <div class=\"csl-entry\"{style}>{}</div>\n",
                self.entry(item, i + 1)
            ));
            if self.renderer == Renderer::Local {
                // The desktop adds COinS after each entry (`makeFormattedBibliography`).
                out.push_str(&format!(
                    "  <span class=\"Z3988\" title=\"url_ver=Z39.88-2004&amp;ctx_ver=Z39.88-2004&amp;rft.title={}\"></span>\n",
                    esc(&Self::title(item)).replace(' ', "%20")
                ));
            }
        }
        out.push_str("</div>");
        out
    }

    /// Whether only regular items are cited (the desktop filters the rest out).
    pub(crate) fn citable(&self, item: &Value) -> bool {
        self.renderer == Renderer::Web
            || !matches!(
                item["data"]["itemType"].as_str(),
                Some("note" | "attachment" | "annotation")
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vaswani() -> Value {
        json!({"data": {"itemType": "journalArticle", "title": "Attention Is All You Need",
            "shortTitle": "Attention",
            "creators": [{"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"},
                         {"creatorType": "author", "firstName": "Noam", "lastName": "Shazeer"},
                         {"creatorType": "author", "firstName": "Aidan N.", "lastName": "Gomez"}],
            "publicationTitle": "NeurIPS", "volume": "30", "pages": "5998-6008",
            "date": "2017-06-12", "DOI": "10.48550/arXiv.1706.03762"}})
    }

    #[test]
    fn styles_render_recognisably() {
        let v = vaswani();
        let apa = Cite::new(find_style("apa").unwrap(), "en-US", false, Renderer::Web);
        assert_eq!(apa.citation(&v), "<span>(Vaswani et al., 2017)</span>");
        let entry = apa.entry(&v, 1);
        assert!(
            entry.starts_with("Vaswani, A., Shazeer, N., &amp; Gomez, A. N. (2017)."),
            "{entry}"
        );
        assert!(entry.contains("https://doi.org/10.48550/arXiv.1706.03762"));
        let ieee = Cite::new(find_style("ieee").unwrap(), "en-US", false, Renderer::Local);
        assert_eq!(ieee.citation(&v), "[1]");
        assert!(ieee.entry(&v, 2).contains(">[2]</div>"));
        let short = Cite::new(local_style(None).unwrap(), "de-DE", false, Renderer::Local);
        assert_eq!(
            short.citation(&v),
            "<ol>\n\t<li>Vaswani u. a., “Attention.”</li>\n</ol>"
        );
    }

    #[test]
    fn styles_and_locales_are_checked_like_zotero() {
        assert!(web_style(None).is_ok());
        assert_eq!(
            web_style(Some("no such style")).unwrap_err().body(),
            "Invalid style"
        );
        assert!(web_style(Some("https://www.zotero.org/styles/ieee")).is_ok());
        assert!(web_style(Some("made-up-style")).is_err());
        assert!(local_style(Some("made-up"))
            .unwrap_err()
            .body()
            .starts_with("Invalid style: made-up"));
        assert_eq!(web_locale(Some("de-DE")), "de-DE");
        assert_eq!(web_locale(Some("de")), "en-US");
        assert_eq!(local_locale(Some("de")), "de-DE");
        assert_eq!(year("May 01, 1980").as_deref(), Some("1980"));
        assert_eq!(year("12345"), None);
    }
}
