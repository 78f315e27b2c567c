//! The desktop's endpoint table (`Zotero.Server.Endpoints` of Zotero 9's
//! `server_localAPI.js`): which paths below `/api/` exist, and their parameters. Literal
//! segments win over parameters, as the endpoints are registered in that order.

/// Where a multi-item endpoint takes its items from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ItemsFrom {
    Library,
    Trash,
    Collection(String),
    Children(String),
    Publications,
    Search(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `/api/`: the only endpoint that ignores the API version.
    Root,
    Schema,
    ItemTypes,
    ItemFields,
    ItemTypeFields,
    ItemTypeCreatorTypes,
    CreatorFields,
    Settings,
    /// `/collections` (all, nested too), `/collections/top`, `/collections/{k}/collections`.
    Collections {
        top: bool,
        parent: Option<String>,
    },
    Collection(String),
    Groups,
    Group,
    Items {
        from: ItemsFrom,
        top: bool,
        /// `…/tags`: the tags of those items.
        tags: bool,
    },
    Item(String),
    ItemFile {
        key: String,
        /// `…/file/view/url`: the URL as text instead of a redirect.
        url: bool,
    },
    ItemFullText(String),
    FullText,
    Searches,
    Search(String),
    Tags,
    Tag(String),
}

/// A matched endpoint with the path's `userID` and `groupID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) user: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) endpoint: Endpoint,
}

/// The endpoint of a request path, `None` for "No endpoint found".
pub(crate) fn route(path: &str) -> Option<Route> {
    let rest = path.strip_prefix("/api/")?;
    let segs: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('/').collect()
    };
    if segs.iter().any(|s| s.is_empty()) {
        return None;
    }
    let top = |endpoint| {
        Some(Route {
            user: None,
            group: None,
            endpoint,
        })
    };
    match segs.as_slice() {
        [] => top(Endpoint::Root),
        ["schema"] => top(Endpoint::Schema),
        ["itemTypes"] => top(Endpoint::ItemTypes),
        ["itemFields"] => top(Endpoint::ItemFields),
        ["itemTypeFields"] => top(Endpoint::ItemTypeFields),
        ["itemTypeCreatorTypes"] => top(Endpoint::ItemTypeCreatorTypes),
        ["creatorFields"] => top(Endpoint::CreatorFields),
        ["users", u, rest @ ..] => {
            let endpoint = match rest {
                ["settings"] => Endpoint::Settings,
                ["groups"] => Endpoint::Groups,
                ["groups", g] => {
                    return Some(Route {
                        user: Some(u.to_string()),
                        group: Some(g.to_string()),
                        endpoint: Endpoint::Group,
                    })
                }
                ["publications", "items", tail @ ..] => {
                    let (top, tags) = match tail {
                        [] => (false, false),
                        ["top"] => (true, false),
                        ["tags"] => (false, true),
                        _ => return None,
                    };
                    let from = ItemsFrom::Publications;
                    Endpoint::Items { from, top, tags }
                }
                _ => library_endpoint(rest)?,
            };
            Some(Route {
                user: Some(u.to_string()),
                group: None,
                endpoint,
            })
        }
        ["groups", g] => Some(Route {
            user: None,
            group: Some(g.to_string()),
            endpoint: Endpoint::Group,
        }),
        ["groups", g, rest @ ..] => Some(Route {
            user: None,
            group: Some(g.to_string()),
            endpoint: library_endpoint(rest)?,
        }),
        _ => None,
    }
}

/// The endpoints both `/users/{id}` and `/groups/{id}` have.
fn library_endpoint(rest: &[&str]) -> Option<Endpoint> {
    let items = |from, top, tags| Some(Endpoint::Items { from, top, tags });
    let s = |k: &&str| k.to_string();
    match rest {
        ["collections"] => Some(Endpoint::Collections {
            top: false,
            parent: None,
        }),
        ["collections", "top"] => Some(Endpoint::Collections {
            top: true,
            parent: None,
        }),
        ["collections", k, "collections"] => Some(Endpoint::Collections {
            top: false,
            parent: Some(s(k)),
        }),
        ["collections", k, "items", tail @ ..] => {
            let (top, tags) = top_and_tags(tail)?;
            items(ItemsFrom::Collection(s(k)), top, tags)
        }
        ["collections", k] => Some(Endpoint::Collection(s(k))),
        ["items", "trash", tail @ ..] if top_and_tags(tail).is_some() => {
            let (top, tags) = top_and_tags(tail)?;
            items(ItemsFrom::Trash, top, tags)
        }
        ["items", tail @ ..] if top_and_tags(tail).is_some() => {
            let (top, tags) = top_and_tags(tail)?;
            items(ItemsFrom::Library, top, tags)
        }
        ["items", k, "children"] => items(ItemsFrom::Children(s(k)), false, false),
        ["searches", k, "items"] => items(ItemsFrom::Search(s(k)), false, false),
        ["items", k] => Some(Endpoint::Item(s(k))),
        ["items", k, "file"] | ["items", k, "file", "view"] => Some(Endpoint::ItemFile {
            key: s(k),
            url: false,
        }),
        ["items", k, "file", "view", "url"] => Some(Endpoint::ItemFile {
            key: s(k),
            url: true,
        }),
        ["items", k, "fulltext"] => Some(Endpoint::ItemFullText(s(k))),
        ["fulltext"] => Some(Endpoint::FullText),
        ["searches"] => Some(Endpoint::Searches),
        ["searches", k] => Some(Endpoint::Search(s(k))),
        ["tags"] => Some(Endpoint::Tags),
        ["tags", t] => Some(Endpoint::Tag(s(t))),
        _ => None,
    }
}

/// `''`, `/top`, `/tags`, `/top/tags` after an item listing.
fn top_and_tags(tail: &[&str]) -> Option<(bool, bool)> {
    match tail {
        [] => Some((false, false)),
        ["top"] => Some((true, false)),
        ["tags"] => Some((false, true)),
        ["top", "tags"] => Some((true, true)),
        _ => None,
    }
}
