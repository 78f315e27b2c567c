//! Query parameters as the real server parses them (`Zotero_API::parseQueryParams`), and the
//! `Link` header it builds from them (`Zotero_API::buildLinks`): non-default parameters only,
//! sorted by name, PHP `http_build_query` encoding.

use std::collections::BTreeMap;

use super::answer::BadRequest;

/// Which kind of listing a request asks for (validation differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Items,
    Collections,
    Tags,
    /// `/users/{id}/groups` (`Zotero_API::isValidFormat` for `groups`).
    Groups,
}

#[derive(Debug, Clone)]
pub(crate) struct Params {
    pub(crate) format: String,
    pub(crate) q: Option<String>,
    /// Lower case: `titlecreatoryear` (default), `everything`, `contains`, `startswith`.
    pub(crate) qmode: String,
    pub(crate) tag: Vec<String>,
    pub(crate) item_type: Vec<String>,
    pub(crate) item_key: Vec<String>,
    /// `collectionKey`: only these collections (`Zotero_Collections::search`); empty: all.
    pub(crate) collection_key: Vec<String>,
    pub(crate) since: Option<u64>,
    pub(crate) include_trashed: bool,
    pub(crate) sort: String,
    pub(crate) desc: bool,
    pub(crate) start: usize,
    /// 0 = no limit (format=keys/versions).
    pub(crate) limit: usize,
    /// The desktop app's quick search (`Zotero.Search`'s `quicksearch-*` conditions)
    /// instead of the web API's; set by the local API.
    pub(crate) desktop: bool,
    /// `include` for format=json, sorted and deduplicated (default `data`).
    pub(crate) include: Vec<String>,
    /// `style`, `locale`, `linkwrap` for citations and bibliographies.
    pub(crate) style: Option<String>,
    pub(crate) locale: Option<String>,
    pub(crate) linkwrap: bool,
    /// Parameters that differ from their defaults, for `Link` (values already joined).
    non_default: BTreeMap<String, String>,
}

use super::export::WEB_FORMATS as EXPORT_FORMATS;
const SORT_FIELDS: &[&str] = &[
    "title",
    "creator",
    "itemType",
    "date",
    "publisher",
    "publicationTitle",
    "journalAbbreviation",
    "language",
    "accessDate",
    "libraryCatalog",
    "callNumber",
    "rights",
    "extra",
    "dateAdded",
    "dateModified",
    "addedBy",
    "numItems",
    "serverDateModified",
    "collectionKeyList",
    "itemKeyList",
    "searchKeyList",
];

/// PHP's `(int)` of a string: leading optional sign and digits, else 0.
fn php_int(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n: i64 = digits
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .take(18)
        .collect::<String>()
        .parse()
        .unwrap_or(0);
    if neg {
        -n
    } else {
        n
    }
}

fn php_truthy(s: &str) -> bool {
    !s.is_empty() && s != "0"
}

fn default_direction(sort: &str) -> bool {
    sort.starts_with("date")
}

/// Parses and validates; `Err` is the plain-text body of a `400`.
pub(crate) fn parse(
    query: &[(String, String)],
    action: Action,
    single: bool,
) -> Result<Params, BadRequest> {
    // proper_parse_str: empty values are skipped; repeated names collect into a list.
    let mut raw: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, v) in query {
        if !v.is_empty() {
            raw.entry(k.as_str()).or_default().push(v.as_str());
        }
    }
    let last = |k: &str| raw.get(k).and_then(|v| v.last().copied());
    let mut nd = BTreeMap::new();

    let format = last("format").unwrap_or("json").to_string();
    let valid_format = match action {
        Action::Items => {
            EXPORT_FORMATS.contains(&format.as_str())
                || matches!(format.as_str(), "atom" | "bib" | "json")
                || (!single && matches!(format.as_str(), "keys" | "versions"))
        }
        Action::Collections => {
            format == "json" || (!single && (format == "keys" || format == "versions"))
        }
        Action::Tags => matches!(format.as_str(), "json" | "atom"),
        Action::Groups => matches!(format.as_str(), "json" | "atom" | "etags" | "versions"),
    };
    if !valid_format {
        return Err(format!("Invalid 'format' value '{format}'").into());
    }
    if format != "json" {
        nd.insert("format".into(), format.clone());
    }
    if format == "bib" {
        // `Zotero_API::parseQueryParams`: a bibliography is never paged or sorted.
        for key in ["order", "sort", "start", "limit", "direction"] {
            if raw.contains_key(key) {
                return Err(format!("'{key}' is not valid for format=bib").into());
            }
        }
    }
    let mut include = vec!["data".to_string()];
    if let Some(inc) = last("include") {
        if format != "json" {
            return Err("'include' is valid only for format=json".into());
        }
        let mut vals: Vec<&str> = inc.split(',').collect();
        vals.sort();
        vals.dedup();
        for v in &vals {
            let known = matches!(
                *v,
                "none" | "html" | "citation" | "bib" | "csljson" | "data"
            ) || EXPORT_FORMATS.contains(v);
            if !known {
                return Err(format!("Invalid 'include' value '{v}'").into());
            }
        }
        if vals != ["data"] {
            nd.insert("include".into(), vals.join(","));
        }
        include = vals.iter().map(|v| v.to_string()).collect();
    }
    let q = last("q").map(str::to_string);
    if let Some(q) = &q {
        nd.insert("q".into(), q.clone());
    }
    let mut qmode = match action {
        Action::Tags => "contains".to_string(),
        _ => "titlecreatoryear".to_string(),
    };
    if let Some(m) = last("qmode") {
        let valid: &[&str] = match action {
            Action::Tags => &["contains", "startswith"],
            Action::Items => &["titlecreatoryear", "everything"],
            Action::Collections | Action::Groups => &[],
        };
        let lower = m.to_lowercase();
        if !valid.contains(&lower.as_str()) {
            return Err(format!("Invalid 'qmode' value '{m}'").into());
        }
        nd.insert("qmode".into(), lower.clone());
        qmode = lower;
    }
    let include_trashed = last("includeTrashed").is_some_and(php_truthy);
    if include_trashed {
        nd.insert("includeTrashed".into(), "1".into());
    }
    let item_type: Vec<String> = raw
        .get("itemType")
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    if !item_type.is_empty() {
        nd.insert("itemType".into(), item_type.join(","));
    }
    let mut limit_forced = None;
    let mut item_key = Vec::new();
    if let Some(k) = last("itemKey") {
        item_key = k
            .trim_matches(',')
            .split(',')
            .filter(|k| k.len() == 8 && k.bytes().all(|b| b.is_ascii_alphanumeric()))
            .map(str::to_string)
            .collect();
        nd.insert("itemKey".into(), item_key.join(","));
        limit_forced = Some(100);
    }
    // `parseQueryParams`: outer commas trimmed, invalid keys dropped (`Zotero_ID::isValidKey`),
    // the limit forced to `MAX_OBJECT_KEYS`.
    let mut collection_key = Vec::new();
    if let Some(k) = last("collectionKey") {
        collection_key = k
            .trim_matches(',')
            .split(',')
            .filter(|k| super::util::is_valid_key(k))
            .map(str::to_string)
            .collect();
        nd.insert("collectionKey".into(), collection_key.join(","));
        limit_forced = Some(100);
    }
    let tag: Vec<String> = raw
        .get("tag")
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    if !tag.is_empty() {
        nd.insert("tag".into(), tag.join(","));
    }
    let mut since = None;
    if let Some(s) = last("since") {
        match s.parse::<f64>() {
            Ok(n) if s.trim() == s => since = Some(n.max(0.0) as u64),
            _ => return Err("Invalid value for 'since' parameter".into()),
        }
        nd.insert("since".into(), s.to_string());
    }

    let default_sort = match action {
        Action::Tags => "title",
        _ => "dateModified",
    };
    let mut sort = default_sort.to_string();
    let mut desc: Option<bool> = None;
    if let Some(s) = last("sort") {
        if s == "asc" || s == "desc" {
            desc = Some(s == "desc");
        } else if !SORT_FIELDS.contains(&s) {
            return Err(format!("Invalid 'sort' value '{s}'").into());
        } else if s == "numItems" && action != Action::Tags {
            return Err(format!("Invalid 'order' value '{s}'").into());
        } else if s == "itemKeyList" && (action != Action::Items || item_key.is_empty()) {
            return Err("order=itemKeyList requires the itemKey parameter".into());
        } else if matches!(s, "collectionKeyList" | "searchKeyList") {
            return Err(format!("order={s} is not valid for this request").into());
        } else {
            sort = s.to_string();
        }
    }
    let explicit_sort = last("sort").is_some_and(|s| s != "asc" && s != "desc");
    if desc.is_none() {
        if let Some(d) = last("direction") {
            if d != "asc" && d != "desc" {
                return Err(format!("Invalid 'direction' value '{d}'").into());
            }
            desc = Some(d == "desc");
        }
    }
    let desc = desc.unwrap_or(if explicit_sort {
        default_direction(&sort)
    } else {
        true
    });
    if sort != default_sort {
        nd.insert("sort".into(), sort.clone());
    }
    if desc != default_direction(&sort) {
        nd.insert("direction".into(), if desc { "desc" } else { "asc" }.into());
    }

    let start = last("start").map(php_int).unwrap_or(0).max(0) as usize;
    if start != 0 {
        nd.insert("start".into(), start.to_string());
    }
    let unlimited = format == "keys" || format == "versions";
    // `getLimitMax`/the defaults: a bibliography takes up to 150 items at once.
    let default_limit = match format.as_str() {
        "keys" | "versions" => 0,
        "bib" => super::cite::MAX_BIBLIOGRAPHY_ITEMS,
        _ => 25,
    };
    let limit = match (limit_forced, last("limit").map(php_int)) {
        (Some(l), _) => l,
        (None, Some(l)) if !unlimited && l > 100 => 100,
        (None, Some(l)) if l > 0 => l as usize,
        _ => default_limit,
    };
    if limit != default_limit {
        nd.insert("limit".into(), limit.to_string());
    }
    for k in ["style", "locale", "linkwrap"] {
        if let Some(v) = last(k) {
            nd.insert(k.into(), v.to_string());
        }
    }
    Ok(Params {
        include,
        style: last("style").map(str::to_string),
        locale: last("locale").map(str::to_string),
        linkwrap: last("linkwrap").is_some_and(php_truthy),
        format,
        q,
        qmode,
        tag,
        item_type,
        item_key,
        collection_key,
        since,
        include_trashed,
        sort,
        desc,
        start,
        limit,
        desktop: false,
        non_default: nd,
    })
}

/// PHP `urlencode`: alphanumerics and `-_.` stay, space becomes `+`, the rest `%XX`.
fn php_urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn query_string(p: &BTreeMap<String, String>) -> String {
    if p.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = p
        .iter()
        .map(|(k, v)| format!("{}={}", php_urlencode(k), php_urlencode(v)))
        .collect();
    format!("?{}", parts.join("&"))
}

/// The `Link` header value for a multi-object answer (`base` is the emulator's own URI).
pub(crate) fn link_header(base: &str, path: &str, total: usize, p: &Params) -> String {
    let uri = format!("{base}{path}");
    let (start, limit, total) = (p.start as i64, p.limit as i64, total as i64);
    let self_link = format!("{uri}{}", query_string(&p.non_default));
    let without_start = || {
        let mut m = p.non_default.clone();
        m.remove("start");
        m
    };
    let first = format!("{uri}{}", query_string(&without_start()));
    let mut prev = None;
    if start != 0 {
        let mut m = p.non_default.clone();
        let prev_start = start - limit;
        if prev_start <= 0 {
            m.remove("start");
        } else {
            m.insert("start".into(), prev_start.to_string());
        }
        prev = Some(format!("{uri}{}", query_string(&m)));
    }
    let mut last = None;
    let mut next = None;
    if start == 0 && limit >= total {
        last = Some(self_link.clone());
    } else if limit != 0 {
        let last_start = if start >= total {
            total - limit
        } else {
            let ls = total - (total % limit);
            if ls == total {
                total - limit
            } else {
                ls
            }
        };
        let mut m = p.non_default.clone();
        if last_start > 0 {
            m.insert("start".into(), last_start.to_string());
        } else {
            m.remove("start");
        }
        last = Some(format!("{uri}{}", query_string(&m)));
        let next_start = start + limit;
        if next_start < total {
            let mut m = p.non_default.clone();
            m.insert("start".into(), next_start.to_string());
            next = Some(format!("{uri}{}", query_string(&m)));
        }
    }
    let mut parts = Vec::new();
    if first != self_link {
        parts.push(format!("<{first}>; rel=\"first\""));
    }
    if let Some(p) = prev {
        parts.push(format!("<{p}>; rel=\"prev\""));
    }
    if let Some(n) = next {
        parts.push(format!("<{n}>; rel=\"next\""));
    }
    if let Some(l) = last.filter(|l| *l != self_link) {
        parts.push(format!("<{l}>; rel=\"last\""));
    }
    parts.push(format!("<https://www.zotero.org{path}>; rel=\"alternate\""));
    parts.join(", ")
}
