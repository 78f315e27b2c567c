//! A request in the Zotero API's path language, parsed: the route below the library prefix
//! and the query parameters the web API reads (`q`, `qmode`, `tag`, `itemType`, `itemKey`,
//! `includeTrashed`, `since`, `sort`, `direction`, `limit`, `start`, `format`).

use percent_encoding::percent_decode_str;

/// What the path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/items`, `/items/top`, `/items/trash`, `/collections/{k}/items[/top]`.
    Items {
        collection: Option<String>,
        top: bool,
        trash: bool,
    },
    Item(String),
    Children(String),
    FullText(String),
    /// `/tags`, `/items/tags`, `/collections/{k}/items/tags`.
    Tags {
        collection: Option<String>,
    },
    /// `/collections`, `/collections/top`, `/collections/{k}/collections`.
    Collections {
        parent: Option<String>,
        top: bool,
    },
    Collection(String),
    /// The library itself (`/groups/{id}` asked with an empty path).
    Library,
    /// What the database does not serve (the caller asks another backend).
    Unsupported,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Params {
    pub q: Option<String>,
    pub everything: bool,
    pub tags: Vec<String>,
    pub item_type: Option<String>,
    pub item_keys: Vec<String>,
    pub include_trashed: bool,
    pub since: Option<i64>,
    pub sort: Option<String>,
    pub direction: Option<String>,
    pub limit: Option<usize>,
    pub start: usize,
    pub format: Option<String>,
    /// `include` other than `data`, or a `format` other than json/versions/keys: citations
    /// and exports the database cannot make (the caller asks the API).
    pub needs_api: bool,
    /// `retracted=1`: only items Zotero flags retracted (ours; the web API has no such filter).
    pub retracted: bool,
}

fn decode(s: &str) -> String {
    let plus = s.replace('+', " ");
    percent_decode_str(&plus).decode_utf8_lossy().into_owned()
}

pub(crate) fn parse(path_and_query: &str) -> (Route, Params) {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let mut params = Params::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = decode(v);
        match k {
            "q" => params.q = Some(v).filter(|s| !s.trim().is_empty()),
            "qmode" => params.everything = v == "everything",
            "tag" => params.tags.push(v),
            "itemType" => params.item_type = Some(v),
            "itemKey" => params
                .item_keys
                .extend(v.split(',').filter(|k| !k.is_empty()).map(str::to_string)),
            "includeTrashed" => params.include_trashed = v == "1" || v == "true",
            "since" => params.since = v.parse().ok(),
            "sort" => params.sort = Some(v),
            "direction" => params.direction = Some(v),
            "limit" => params.limit = v.parse().ok(),
            "start" => params.start = v.parse().unwrap_or(0),
            "format" => {
                params.needs_api |= !matches!(v.as_str(), "json" | "versions" | "keys");
                params.format = Some(v);
            }
            "include" => {
                params.needs_api |= v.split(',').any(|part| part.trim() != "data");
            }
            "retracted" => params.retracted = v == "1" || v == "true",
            _ => {}
        }
    }
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let seg: Vec<&str> = segments.iter().map(String::as_str).collect();
    let items = |collection: Option<&str>, top: bool, trash: bool| Route::Items {
        collection: collection.map(str::to_string),
        top,
        trash,
    };
    let route = match seg.as_slice() {
        [] => Route::Library,
        ["items"] => items(None, false, false),
        ["items", "top"] => items(None, true, false),
        ["items", "trash"] => items(None, false, true),
        ["items", "tags"] | ["tags"] => Route::Tags { collection: None },
        ["items", k] => Route::Item((*k).to_string()),
        ["items", k, "children"] => Route::Children((*k).to_string()),
        ["items", k, "fulltext"] => Route::FullText((*k).to_string()),
        ["collections"] => Route::Collections {
            parent: None,
            top: false,
        },
        ["collections", "top"] => Route::Collections {
            parent: None,
            top: true,
        },
        ["collections", k] => Route::Collection((*k).to_string()),
        ["collections", k, "collections"] => Route::Collections {
            parent: Some((*k).to_string()),
            top: false,
        },
        ["collections", k, "items"] => items(Some(k), false, false),
        ["collections", k, "items", "top"] => items(Some(k), true, false),
        ["collections", k, "items", "tags"] => Route::Tags {
            collection: Some((*k).to_string()),
        },
        _ => Route::Unsupported,
    };
    (route, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_parameters() {
        let (r, p) = parse("/collections/ABC/items/top?q=light%20yield&tag=a%20%7C%7C%20b&tag=-c&limit=5&start=10&includeTrashed=1");
        assert_eq!(
            r,
            Route::Items {
                collection: Some("ABC".into()),
                top: true,
                trash: false
            }
        );
        assert_eq!(p.q.as_deref(), Some("light yield"));
        assert_eq!(p.tags, vec!["a || b".to_string(), "-c".to_string()]);
        assert_eq!((p.limit, p.start, p.include_trashed), (Some(5), 10, true));
        assert_eq!(parse("/items/K1/fulltext").0, Route::FullText("K1".into()));
        assert_eq!(parse("/searches").0, Route::Unsupported);
    }
}
