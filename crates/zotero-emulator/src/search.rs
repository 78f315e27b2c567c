//! Item and collection searches as the real server runs them (`Zotero_Items::search`):
//! quick search (`q`/`qmode`), `tag` and `itemType` sets, `itemKey`, `since`, trash, `/top`
//! (a matching child shows its parent), and sorting with the server's tie-breakers.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::answer::BadRequest;
use super::library::{creator_summary, is_deleted, parent_of};
use super::libs::Lib;
use super::params::Params;

/// Which items a listing starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    All,
    Trash,
    Children(String),
    Collection(String),
}

/// Accent- and case-folding like MySQL's `utf8mb4_unicode_ci` (approximately).
pub(crate) fn fold(s: &str) -> String {
    s.chars()
        .flat_map(|c| c.to_lowercase())
        .map(|c| match c {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
            'ç' | 'ć' | 'č' => 'c',
            'ď' | 'đ' => 'd',
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => 'e',
            'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
            'ł' => 'l',
            'ñ' | 'ń' | 'ň' => 'n',
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => 'o',
            'ř' => 'r',
            'ś' | 'š' | 'ş' => 's',
            'ť' => 't',
            'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => 'u',
            'ý' | 'ÿ' => 'y',
            'ź' | 'ż' | 'ž' => 'z',
            other => other,
        })
        .collect()
}

/// `Zotero_Utilities::parseSearchString`: quoted phrases stay whole, the rest splits on
/// whitespace; stray quotes and apostrophes at word edges are dropped.
pub(crate) fn parse_search_string(q: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = q;
    while !rest.is_empty() {
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        if let Some(after) = trimmed.strip_prefix('"') {
            if let Some(end) = after.find('"') {
                parts.push(after[..end].to_string());
                rest = &after[end + 1..];
                continue;
            }
        }
        let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        let word = trimmed[..end].trim_matches(|c| c == '"' || c == '\'');
        if !word.is_empty() {
            parts.push(word.to_string());
        }
        rest = &trimmed[end..];
    }
    parts
}

/// A note's title: its first line of text, HTML removed.
pub(crate) fn note_title(note: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    let mut tag = String::new();
    for c in note.chars() {
        match c {
            '<' => {
                in_tag = true;
                tag.clear();
            }
            '>' if in_tag => {
                in_tag = false;
                let t = tag.to_ascii_lowercase();
                if t.starts_with("/p")
                    || t.starts_with("br")
                    || t.starts_with("/h")
                    || t.starts_with("/div")
                {
                    text.push('\n');
                }
            }
            _ if in_tag => tag.push(c),
            _ => text.push(c),
        }
    }
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", " ");
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// The title the server searches and sorts on (base-mapped title fields, note titles).
fn title_of(item: &Value) -> String {
    let d = &item["data"];
    for f in ["title", "caseName", "nameOfAct", "subject"] {
        if let Some(t) = d[f].as_str() {
            if !t.is_empty() {
                return t.to_string();
            }
        }
    }
    d["note"].as_str().map(note_title).unwrap_or_default()
}

/// The stored SQL date `YYYY-MM-DD` (`0000-00-00` when unparseable), from `meta.parsedDate`.
fn sql_date(item: &Value) -> String {
    let d = &item["data"];
    let raw = ["date", "dateDecided", "dateEnacted", "issueDate"]
        .iter()
        .find_map(|f| d[*f].as_str().filter(|s| !s.is_empty()));
    let Some(raw) = raw else {
        return String::new();
    };
    if let Some(p) = item["meta"]["parsedDate"].as_str() {
        let mut parts: Vec<&str> = p.split('-').collect();
        parts.resize(3, "00");
        return parts.join("-");
    }
    let year: String = raw
        .as_bytes()
        .windows(4)
        .find(|w| w.iter().all(u8::is_ascii_digit))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .unwrap_or_else(|| "0000".into());
    format!("{year}-00-00")
}

fn quick_match(lib: &Lib, item: &Value, part: &str, everything: bool) -> bool {
    let needle = fold(part);
    if fold(&title_of(item)).contains(&needle) {
        return true;
    }
    let creators = item["data"]["creators"].as_array();
    if creators.is_some_and(|cs| {
        cs.iter().any(|c| {
            let full = match c["name"].as_str() {
                Some(n) => n.to_string(),
                None => format!(
                    "{} {}",
                    c["firstName"].as_str().unwrap_or(""),
                    c["lastName"].as_str().unwrap_or("")
                ),
            };
            fold(full.trim()).contains(&needle)
        })
    }) {
        return true;
    }
    let date = sql_date(item);
    if date.len() >= 4 && date[..4] == *part {
        return true;
    }
    everything
        && item["key"]
            .as_str()
            .and_then(|k| lib.fulltext.get(k))
            .is_some_and(|t| fold(&t.content).contains(&needle))
}

/// Item JSON properties that are not item fields (`Zotero.Search`'s `field` condition
/// looks at item fields only).
const NOT_FIELDS: &[&str] = &[
    "key",
    "version",
    "itemType",
    "parentItem",
    "collections",
    "relations",
    "tags",
    "creators",
    "dateAdded",
    "dateModified",
    "deleted",
    "inPublications",
    "note",
    "linkMode",
    "contentType",
    "charset",
    "filename",
    "md5",
    "mtime",
    "path",
];

/// One word of the desktop app's quick search (`Zotero.Search.prototype.addCondition` for
/// `quicksearch-*`): the exact key, creators, and for `titleCreatorYear` the title,
/// publication, short title, court, year and citation key; for `everything` any field, tag,
/// note, annotation text or comment, and the full text.
fn desktop_match(lib: &Lib, item: &Value, part: &str, everything: bool) -> bool {
    let needle = fold(part);
    let d = &item["data"];
    let has = |v: &Value| v.as_str().is_some_and(|s| fold(s).contains(&needle));
    if item["key"] == part {
        return true;
    }
    let creators = d["creators"].as_array().into_iter().flatten();
    if creators.into_iter().any(|c| {
        ["name", "firstName", "lastName"]
            .iter()
            .any(|f| has(&c[*f]))
    }) {
        return true;
    }
    if !everything {
        let fields = [
            "title",
            "caseName",
            "nameOfAct",
            "subject",
            "publicationTitle",
            "shortTitle",
            "court",
            "citationKey",
        ];
        let year = sql_date(item);
        return fields.iter().any(|f| has(&d[*f]))
            || year.get(..4).is_some_and(|y| y.contains(part));
    }
    let fields =
        d.as_object().into_iter().flatten().any(|(k, v)| {
            !NOT_FIELDS.contains(&k.as_str()) && !k.starts_with("annotation") && has(v)
        });
    let tags = d["tags"].as_array().into_iter().flatten();
    fields
        || tags.into_iter().any(|t| has(&t["tag"]))
        || ["note", "annotationText", "annotationComment"]
            .iter()
            .any(|f| has(&d[*f]))
        || item["key"]
            .as_str()
            .and_then(|k| lib.fulltext.get(k))
            .is_some_and(|t| fold(&t.content).contains(&needle))
}

/// `tag`/`itemType` syntax: leading `-` negates, `\-` is a literal hyphen, ` || ` is OR.
fn search_sets(values: &[String]) -> Vec<(bool, Vec<String>)> {
    values
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(|v| {
            let (neg, v) = match v.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (
                    false,
                    v.strip_prefix('\\')
                        .filter(|r| r.starts_with('-'))
                        .unwrap_or(v),
                ),
            };
            let parts = split_or(v);
            (neg, parts)
        })
        .collect()
}

fn split_or(v: &str) -> Vec<String> {
    // preg_split("/\s+\|\|\s+/")
    let mut out = Vec::new();
    let mut cur = String::new();
    let tokens: Vec<&str> = v.split("||").collect();
    for (i, t) in tokens.iter().enumerate() {
        cur.push_str(t);
        let last = i + 1 == tokens.len();
        let next = tokens.get(i + 1).copied().unwrap_or("");
        if !last && t.ends_with(char::is_whitespace) && next.starts_with(char::is_whitespace) {
            out.push(cur.trim_end().to_string());
            cur.clear();
        } else if !last {
            cur.push_str("||");
        }
    }
    out.push(cur.trim_start().to_string());
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

fn tag_eq(a: &str, b: &str) -> bool {
    fold(a.trim_end()) == fold(b.trim_end())
}

fn has_tag(item: &Value, names: &[String]) -> bool {
    item["data"]["tags"].as_array().is_some_and(|tags| {
        tags.iter()
            .filter_map(|t| t["tag"].as_str())
            .any(|t| names.iter().any(|n| tag_eq(t, n)))
    })
}

/// Indices into `lib.items` of the matching items, sorted, before paging.
pub(crate) fn search_items(
    lib: &Lib,
    scope: &Scope,
    top: bool,
    p: &Params,
    valid_types: &[String],
) -> Result<Vec<usize>, BadRequest> {
    let items = &lib.items;
    let type_sets = search_sets(&p.item_type);
    if type_sets.len() > 1 {
        return Err("Cannot specify 'itemType' more than once".into());
    }
    for (_, types) in &type_sets {
        if let Some(bad) = types.iter().find(|t| !valid_types.contains(t)) {
            return Err(format!("Invalid itemType '{bad}'").into());
        }
    }
    let tag_sets = search_sets(&p.tag);
    let mut tag_filters = Vec::new();
    for (neg, names) in &tag_sets {
        let any = items.iter().any(|i| has_tag(i, names));
        if !any {
            if *neg {
                continue;
            }
            return Ok(Vec::new());
        }
        tag_filters.push((*neg, names));
    }
    let has_negation = tag_sets.iter().any(|(n, _)| *n);
    let parts = p.q.as_deref().map(parse_search_string).unwrap_or_default();
    let everything = p.qmode == "everything";
    let trash_only = *scope == Scope::Trash;

    let mut matched: Vec<usize> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let d = &item["data"];
        let ok_scope = match scope {
            Scope::All | Scope::Trash => true,
            Scope::Children(k) => parent_of(item) == Some(k.as_str()),
            Scope::Collection(k) => d["collections"]
                .as_array()
                .is_some_and(|a| a.iter().any(|c| c == k.as_str())),
        };
        if !ok_scope {
            continue;
        }
        if trash_only && !is_deleted(item) || !trash_only && !p.include_trashed && is_deleted(item)
        {
            continue;
        }
        let it = d["itemType"].as_str().unwrap_or("");
        if let Some((neg, types)) = type_sets.first() {
            if types.iter().any(|t| t == it) == *neg || (*neg && it == "annotation") {
                continue;
            }
        }
        if has_negation && it == "annotation" {
            continue;
        }
        if tag_filters
            .iter()
            .any(|(neg, names)| has_tag(item, names) == *neg)
        {
            continue;
        }
        if !p.item_key.is_empty() && !p.item_key.iter().any(|k| d["key"] == k.as_str()) {
            continue;
        }
        let matches = |part: &String| {
            if p.desktop {
                desktop_match(lib, item, part, everything)
            } else {
                quick_match(lib, item, part, everything)
            }
        };
        if !parts.iter().all(matches) {
            continue;
        }
        // The desktop's `titleCreatorYear` adds `noChildren`: child items never match.
        if p.desktop && !parts.is_empty() && !everything && parent_of(item).is_some() {
            continue;
        }
        matched.push(i);
    }
    if top {
        let by_key: HashMap<&str, usize> = items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| it["key"].as_str().map(|k| (k, i)))
            .collect();
        // Like COALESCE(topLevelItemID, itemID): a matching child shows its parent.
        let mut seen = HashSet::new();
        // An annotation's parent is an attachment: climb to the top-level item
        // (`itemTopLevel.topLevelItemID`), a few levels at most.
        let top_of = |mut i: usize| {
            for _ in 0..4 {
                match parent_of(&items[i]) {
                    Some(parent) => i = *by_key.get(parent)?,
                    None => return Some(i),
                }
            }
            None
        };
        matched = matched
            .into_iter()
            .filter_map(top_of)
            .filter(|i| seen.insert(*i))
            .filter(|i| p.include_trashed || trash_only || !is_deleted(&items[*i]))
            .collect();
    }
    if let Some(since) = p.since {
        matched.retain(|i| items[*i]["version"].as_u64().unwrap_or(0) > since);
    }
    sort_items(lib, &mut matched, p);
    Ok(matched)
}

/// The name `sort=itemType` sorts by: the en-US name of the types `/itemTypes` lists, plus
/// "Attachment" (`Zotero_Items::search`).
fn item_type_name(t: &str) -> String {
    if t != "annotation" && super::schema::schema().item_type(t).is_some() {
        super::mappings::localized(t)
    } else {
        t.to_string()
    }
}

/// Computes an item's sort value.
type SortKey = Box<dyn Fn(&Value) -> String>;

fn sort_items(lib: &Lib, idx: &mut [usize], p: &Params) {
    let items = &lib.items;
    let (empty_first, key): (bool, SortKey) = match p.sort.as_str() {
        "dateAdded" | "addedBy" => (false, Box::new(|i| str_field(i, "dateAdded"))),
        "dateModified" | "serverDateModified" => {
            (false, Box::new(|i| str_field(i, "dateModified")))
        }
        "title" => (
            true,
            Box::new(|i| fold(title_of(i).trim_start_matches(|c: char| !c.is_alphanumeric()))),
        ),
        "creator" => (
            false,
            Box::new(|i| {
                let s = i["meta"]["creatorSummary"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| creator_summary(&i["data"]["creators"]));
                fold(&s)
            }),
        ),
        "itemType" => (
            true,
            Box::new(|i| item_type_name(i["data"]["itemType"].as_str().unwrap_or(""))),
        ),
        "date" => (true, Box::new(sql_date)),
        "itemKeyList" => {
            let order = p.item_key.clone();
            (
                true,
                Box::new(move |i| {
                    let k = i["key"].as_str().unwrap_or("");
                    format!("{:08}", order.iter().position(|o| o == k).unwrap_or(0))
                }),
            )
        }
        field => {
            let f = field.to_string();
            (false, Box::new(move |i| fold(&str_field(i, &f))))
        }
    };
    let keys: HashMap<usize, String> = idx.iter().map(|i| (*i, key(&items[*i]))).collect();
    idx.sort_by(|a, b| {
        let (ka, kb) = (&keys[a], &keys[b]);
        let mut ord = Ordering::Equal;
        if !empty_first {
            ord = ka.is_empty().cmp(&kb.is_empty());
        }
        let va = items[*a]["version"].as_u64().unwrap_or(0);
        let vb = items[*b]["version"].as_u64().unwrap_or(0);
        let ord = ord.then(ka.cmp(kb)).then(va.cmp(&vb)).then(a.cmp(b));
        if p.desc {
            ord.reverse()
        } else {
            ord
        }
    });
}

fn str_field(item: &Value, f: &str) -> String {
    item["data"][f].as_str().unwrap_or("").to_string()
}

/// Collections of a listing (`parent`: `Some(None)` = top level, `Some(Some(k))` = subcollections).
pub(crate) fn search_collections(
    lib: &Lib,
    parent: Option<Option<&str>>,
    p: &Params,
) -> Result<Vec<usize>, BadRequest> {
    let mut idx: Vec<usize> = lib
        .collections
        .iter()
        .enumerate()
        .filter(|(_, c)| match parent {
            None => true,
            Some(want) => c["data"]["parentCollection"].as_str() == want,
        })
        // `AND key IN (…)` only when some key survived parsing.
        .filter(|(_, c)| {
            p.collection_key.is_empty()
                || p.collection_key
                    .iter()
                    .any(|k| c["key"].as_str() == Some(k.as_str()))
        })
        .filter(|(_, c)| {
            p.q.as_ref()
                .is_none_or(|q| fold(c["data"]["name"].as_str().unwrap_or("")).contains(&fold(q)))
        })
        .filter(|(_, c)| {
            p.since
                .is_none_or(|s| c["version"].as_u64().unwrap_or(0) > s)
        })
        .map(|(i, _)| i)
        .collect();
    let by_name = match p.sort.as_str() {
        "title" => true,
        "dateModified" | "dateAdded" | "serverDateModified" => false,
        other => return Err(format!("Invalid 'sort' value '{other}'").into()),
    };
    let cols = &lib.collections;
    idx.sort_by(|a, b| {
        let name = |i: &usize| fold(cols[*i]["data"]["name"].as_str().unwrap_or(""));
        let ver = |i: &usize| cols[*i]["version"].as_u64().unwrap_or(0);
        let ord = if by_name {
            name(a).cmp(&name(b))
        } else {
            Ordering::Equal
        };
        let ord = ord.then(ver(a).cmp(&ver(b))).then(a.cmp(b));
        if p.desc {
            ord.reverse()
        } else {
            ord
        }
    });
    Ok(idx)
}
