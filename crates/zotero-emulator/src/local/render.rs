//! The local API's objects as the desktop writes them (`toResponseJSON` with its own
//! `apiURL`): items, collections, groups, tags, files as `file://` URLs, full text, and the
//! type/field endpoints; and which of them answers each endpoint.

use serde_json::{json, Value};

use super::super::library::{
    is_deleted, render_collection, render_item_among, Kids, Visible, ITEM_FIELDS_JSON,
};
use super::super::libs::{Lib, LibraryId};
use super::super::params::{self, Action};
use super::super::search::{self, Scope};
use super::super::{mappings, reads, schema, Answer};
use super::data::{json_answer, many, one, sort_error, Ctx, Obj};
use super::routes::{Endpoint, ItemsFrom};
use super::{parse_int, query, text, LOCAL_DATA_DIR};

/// Answers an endpoint of a known library.
pub(crate) fn endpoint(ctx: &Ctx, ep: &Endpoint) -> Answer {
    let none = schema::DroppedFields::new();
    let view = schema::SchemaView::new(&none);
    match ep {
        Endpoint::Root => text(200, "Nothing to see here."),
        Endpoint::Schema => text(501, "The emulator does not serve the local /schema"),
        Endpoint::ItemTypes => mappings::item_types(),
        Endpoint::ItemFields => mappings::item_fields(view),
        Endpoint::ItemTypeFields | Endpoint::ItemTypeCreatorTypes => {
            type_details(ctx, ep == &Endpoint::ItemTypeFields)
        }
        Endpoint::CreatorFields => json_answer(&json!([
            {"field": "firstName", "localized": "First"},
            {"field": "lastName", "localized": "Last"},
            {"field": "name", "localized": "Name"},
        ])),
        Endpoint::Settings => Answer::raw(200, b"{}".to_vec(), "application/json"),
        Endpoint::Collections { top, parent } => collections(ctx, *top, parent.as_deref()),
        Endpoint::Collection(key) => match collection(ctx, key) {
            Some(o) => one(ctx, o),
            None => text(404, "Not found"),
        },
        Endpoint::Groups => {
            let groups = groups(ctx);
            // The list's version is the user library's, whatever the groups'.
            let v = ctx.desktop.libs[&LibraryId::USER].version;
            many(ctx, groups, Some(v))
        }
        Endpoint::Group => group(ctx),
        Endpoint::Items { from, top, tags } => items(ctx, from, *top, *tags),
        Endpoint::Item(key) => match item(ctx, key) {
            Some(o) => one(ctx, o),
            None => text(404, "Not found"),
        },
        Endpoint::ItemFile { key, url } => file(ctx, key, *url),
        Endpoint::ItemFullText(key) => item_fulltext(ctx, key),
        Endpoint::FullText => fulltext(ctx),
        Endpoint::Searches => many(ctx, Vec::new(), Some(ctx.lib().version)),
        Endpoint::Search(_) => text(404, "Not found"),
        Endpoint::Tags => {
            let tags = tags(ctx);
            many(ctx, tags, Some(ctx.lib().version))
        }
        Endpoint::Tag(t) => {
            // `decodeURIComponent(tag.replaceAll('+', '%20'))`
            let name = super::super::util::percent_decode(&t.replace('+', "%20"));
            let tag = tag(ctx, &name);
            many(ctx, vec![tag], Some(ctx.lib().version))
        }
    }
}

const WWW: &str = "https://www.zotero.org";

/// The `library` block: the user library is "My Library" on the desktop.
fn library_json(ctx: &Ctx, lib: &Lib) -> Value {
    let path = lib.id().path();
    let name = match lib.id() {
        LibraryId::User(_) => "My Library".to_string(),
        LibraryId::Group(_) => lib.info.name.clone(),
    };
    json!({"type": lib.id().kind(), "id": lib.id().number(), "name": name,
           "links": {"self": {"href": format!("{}/{path}", ctx.api), "type": "application/json"},
                     "alternate": {"href": format!("{WWW}/{path}"), "type": "text/html"}}})
}

fn localize(ctx: &Ctx, lib: &Lib, mut v: Value, kind: &str) -> Value {
    let key = v["key"].as_str().unwrap_or("").to_string();
    v["library"] = library_json(ctx, lib);
    let alternate = format!("{WWW}/{}/{kind}/{key}", lib.id().path());
    v["links"]["alternate"] = json!({"href": alternate, "type": "text/html"});
    v
}

fn obj(v: Value) -> Obj {
    Obj {
        key: v["key"].as_str().map(str::to_string),
        version: v["version"].as_u64(),
        json: v,
    }
}

/// An item's JSON; a stored file's enclosure is its `file://` URL.
fn item_obj(ctx: &Ctx, lib: &Lib, item: &Value, kids: &Kids<'_>) -> Obj {
    let mut v = render_item_among(lib, item, &ctx.api, Visible::ALL, kids);
    // The desktop's `toResponseJSON`: only regular items count children; every other item
    // says 0. Its `toJSON` always writes an annotation's author name, empty or not.
    let item_type = v["data"]["itemType"].as_str().unwrap_or("").to_string();
    if matches!(item_type.as_str(), "note" | "attachment" | "annotation") {
        v["meta"]["numChildren"] = json!(0);
    }
    if item_type == "annotation" && v["data"].get("annotationAuthorName").is_none() {
        v["data"]["annotationAuthorName"] = json!("");
    }
    if v["links"]["enclosure"].is_object() {
        v["links"]["enclosure"]["href"] = json!(file_url(item).unwrap_or_default());
    }
    obj(localize(ctx, lib, v, "items"))
}

pub(crate) fn item(ctx: &Ctx, key: &str) -> Option<Obj> {
    let lib = ctx.lib();
    let i = lib.item_index(key)?;
    Some(item_obj(ctx, lib, &lib.items[i], &Kids::Scan(&lib.items)))
}

/// The request's item filters for the web API's search (the desktop's quick search and
/// sorting are its own; results and order may differ, as Zotero documents).
fn search_query(ctx: &Ctx, tags: bool) -> Vec<(String, String)> {
    let req = ctx.req;
    let (q, qmode, tag) = if tags {
        ("itemQ", "itemQMode", "itemTag")
    } else {
        ("q", "qmode", "tag")
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut push = |k: &str, v: &str| pairs.push((k.to_string(), v.to_string()));
    if let Some(v) = query(req, q) {
        push("q", v);
    }
    if let Some(v) = query(req, qmode) {
        push("qmode", v);
    }
    for (k, v) in &req.query {
        if k == tag {
            push("tag", v);
        } else if k == "itemType" {
            push("itemType", v);
        }
    }
    if let Some(v) = query(req, "itemKey") {
        push("itemKey", v);
    }
    if query(req, "includeTrashed") == Some("1") {
        push("includeTrashed", "1");
    }
    if sort_error(req).is_none() {
        if let Some(s) = query(req, "sort").filter(|s| *s != "numItems") {
            push("sort", s);
        }
        if let Some(d) = query(req, "direction") {
            push("direction", d);
        }
    }
    pairs
}

/// `Zotero.Server.LocalAPI.Items`: every item the endpoint covers (no default limit).
pub(crate) fn items(ctx: &Ctx, from: &ItemsFrom, top: bool, tags: bool) -> Answer {
    let lib = ctx.lib();
    let scope = match from {
        ItemsFrom::Library | ItemsFrom::Publications => Scope::All,
        ItemsFrom::Trash => Scope::Trash,
        ItemsFrom::Collection(k) if lib.collections.iter().any(|c| c["key"] == k.as_str()) => {
            Scope::Collection(k.clone())
        }
        // `Zotero.Search`'s `collectionID` condition returns without adding anything when
        // the collection does not exist: the search covers the whole library.
        ItemsFrom::Collection(_) => Scope::All,
        ItemsFrom::Children(k) => Scope::Children(k.clone()),
        ItemsFrom::Search(_) => return text(404, "Not found"),
    };
    let mut p = match params::parse(&search_query(ctx, tags), Action::Items, false) {
        Ok(p) => p,
        Err(e) => return text(400, e.body()),
    };
    p.desktop = true;
    let mut idx = match search::search_items(lib, &scope, top, &p, &reads::valid_item_types()) {
        Ok(v) => v,
        Err(e) => return text(400, e.body()),
    };
    let data = |i: &usize| &lib.items[*i]["data"];
    match from {
        ItemsFrom::Collection(_) => idx.retain(|i| data(i)["itemType"] != "annotation"),
        ItemsFrom::Publications => idx.retain(|i| data(i)["inPublications"] == true),
        _ => {}
    }
    if tags {
        return many(ctx, tag_objs(ctx, Some(&idx)), Some(lib.version));
    }
    let kids = Kids::mapped(&lib.items);
    let objs = idx
        .iter()
        .map(|i| item_obj(ctx, lib, &lib.items[*i], &kids))
        .collect();
    many(ctx, objs, Some(lib.version))
}

fn collection_obj(ctx: &Ctx, lib: &Lib, coll: &Value) -> Obj {
    let v = render_collection(lib, coll, &ctx.api);
    obj(localize(ctx, lib, v, "collections"))
}

pub(crate) fn collection(ctx: &Ctx, key: &str) -> Option<Obj> {
    let lib = ctx.lib();
    let c = lib.collections.iter().find(|c| c["key"] == key)?;
    Some(collection_obj(ctx, lib, c))
}

/// Collections by name under `parent` (top level for `None`), their subcollections after
/// each when `recursive` (`Zotero.Collections.getByLibrary(…, true)`).
fn collections_under<'a>(lib: &'a Lib, parent: Option<&str>, recursive: bool) -> Vec<&'a Value> {
    let mut level: Vec<&Value> = lib
        .collections
        .iter()
        .filter(|c| c["data"]["parentCollection"].as_str() == parent && !is_deleted(c))
        .collect();
    level.sort_by_key(|c| search::fold(c["data"]["name"].as_str().unwrap_or("")));
    let mut out = Vec::new();
    for c in level {
        out.push(c);
        if recursive {
            out.extend(collections_under(lib, c["key"].as_str(), true));
        }
    }
    out
}

pub(crate) fn collections(ctx: &Ctx, top: bool, parent: Option<&str>) -> Answer {
    let lib = ctx.lib();
    let list = match parent {
        Some(k) if !lib.collections.iter().any(|c| c["key"] == k) => {
            // `getByParent(false)` throws: the server's bare 500 without a body.
            let mut a = Answer::empty(500);
            a.bare = true;
            return a;
        }
        Some(k) => collections_under(lib, Some(k), false),
        None => collections_under(lib, None, !top),
    };
    let objs = list.iter().map(|c| collection_obj(ctx, lib, c)).collect();
    many(ctx, objs, Some(lib.version))
}

/// A group as the desktop describes it (`Zotero.Group.toResponseJSON` with group details):
/// no dates, owner or settings.
fn group_obj(ctx: &Ctx, id: u64) -> Option<Obj> {
    let g = ctx.desktop.group(id)?;
    let lib = ctx.desktop.libs.get(&LibraryId::Group(id))?;
    let v = json!({
        "id": id, "version": g.version,
        "links": {"self": {"href": format!("{}/groups/{id}", ctx.api), "type": "application/json"},
                  "alternate": {"href": format!("{WWW}/groups/{id}"), "type": "text/html"}},
        "meta": {"numItems": lib.items.len()},
        "data": {"id": id, "version": g.version, "name": g.spec.name,
                 "description": g.spec.description},
    });
    // Groups have no key: `format=versions` calls each one "undefined".
    Some(Obj {
        key: None,
        version: Some(g.version),
        json: v,
    })
}

/// Every group the desktop has, by name.
pub(crate) fn groups(ctx: &Ctx) -> Vec<Obj> {
    let mut gs: Vec<_> = ctx
        .desktop
        .groups
        .values()
        .filter(|g| g.spec.on_desktop)
        .collect();
    gs.sort_by_key(|g| search::fold(&g.spec.name));
    gs.iter()
        .filter_map(|g| group_obj(ctx, g.spec.id))
        .collect()
}

pub(crate) fn group(ctx: &Ctx) -> Answer {
    match group_obj(ctx, ctx.lib.number()) {
        Some(o) => one(ctx, o),
        None => text(404, "Not found"),
    }
}

/// `getLocalFileURL`: stored files in the data directory, linked files where they are;
/// `None` (the desktop's `false`) without a file name or path.
fn file_url(item: &Value) -> Option<String> {
    let d = &item["data"];
    let enc = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    match d["linkMode"].as_str()? {
        "linked_file" => d["path"]
            .as_str()
            .filter(|p| !p.is_empty())
            .map(|p| format!("file://{}", enc(p))),
        "linked_url" => None,
        _ => {
            let name = d["filename"].as_str().filter(|f| !f.is_empty())?;
            let key = item["key"].as_str().unwrap_or("");
            Some(format!(
                "file://{}/storage/{key}/{}",
                enc(LOCAL_DATA_DIR),
                enc(name)
            ))
        }
    }
}

fn is_file_attachment(item: &Value) -> bool {
    item["data"]["itemType"] == "attachment" && item["data"]["linkMode"] != "linked_url"
}

/// `…/items/{k}/file` and `/file/view`: a redirect to the `file://` URL; `/file/view/url`:
/// the URL as text.
pub(crate) fn file(ctx: &Ctx, key: &str, as_text: bool) -> Answer {
    let lib = ctx.lib();
    let Some(i) = lib.item_index(key) else {
        return text(404, "Not found");
    };
    let item = &lib.items[i];
    if !is_file_attachment(item) {
        return text(400, &format!("Not a file attachment: {key}"));
    }
    let url = file_url(item).unwrap_or_else(|| "false".into());
    if as_text {
        return text(200, &url);
    }
    Answer::empty(302).header("Location", url)
}

/// `Zotero.Fulltext.isCachedMIMEType`: the types whose text the desktop keeps in a cache
/// file, the only ones its local API serves full text for.
const CACHED_MIME_TYPES: [&str; 3] = ["application/pdf", "text/html", "application/epub+zip"];

/// The local API's body: every count the desktop has (`?? undefined` leaves out only the
/// missing ones, a 0 stays), in the order `ItemFullText.run` writes them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct LocalFullText<'a> {
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    indexed_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    indexed_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_chars: Option<u64>,
}

/// `…/items/{k}/fulltext` (Zotero 8+): the attachment's indexed text. 404 unless it is a
/// file attachment of a type the desktop caches the text of, and the text is there;
/// `Last-Modified-Version` is the full text's synced version.
pub(crate) fn item_fulltext(ctx: &Ctx, key: &str) -> Answer {
    let lib = ctx.lib();
    let cached = |i: &Value| {
        let ct = i["data"]["contentType"].as_str().unwrap_or("");
        is_file_attachment(i) && CACHED_MIME_TYPES.contains(&ct)
    };
    let found = lib
        .item_index(key)
        .filter(|i| cached(&lib.items[*i]))
        .and_then(|_| lib.fulltext.get(key));
    let Some(ft) = found else {
        return text(404, "Not found");
    };
    let body = LocalFullText {
        content: &ft.content,
        indexed_pages: ft.indexed_pages,
        total_pages: ft.total_pages,
        indexed_chars: ft.indexed_chars,
        total_chars: ft.total_chars,
    };
    // `JSON.stringify(…, null, 4)`, keys in the order written (a `Value` would sort them).
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(&body, &mut ser).unwrap();
    Answer::raw(200, out, "application/json").header("Last-Modified-Version", ft.version)
}

/// `…/fulltext?since=N` (Zotero 8+): `{key: version}` of the full texts newer than N (all
/// of them for 0); `since` is required (`parseInt(null)` is `NaN`).
pub(crate) fn fulltext(ctx: &Ctx) -> Answer {
    let raw = query(ctx.req, "since");
    let Some(since) = raw.and_then(parse_int) else {
        let shown = raw.unwrap_or("null");
        return text(400, &format!("Invalid 'since' value '{shown}'"));
    };
    let lib = ctx.lib();
    let mut m = serde_json::Map::new();
    for (key, ft) in lib.fulltext.iter() {
        if lib.item_index(key).is_none() {
            continue;
        }
        if since == 0 || ft.version as i64 > since {
            m.insert(key.clone(), json!(ft.version));
        }
    }
    super::data::json_answer(&Value::Object(m))
}

fn tag_json(lib: &Lib, name: &str, ty: Option<u64>) -> Obj {
    let enc: String = name
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
            b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')' => {
                (b as char).to_string()
            }
            b' ' => "+".into(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let path = format!("{}/tags/{enc}", lib.id().path());
    let num = lib
        .items
        .iter()
        .filter(|i| {
            i["data"]["tags"].as_array().into_iter().flatten().any(|t| {
                t["tag"] == name && ty.is_none_or(|ty| t["type"].as_u64().unwrap_or(0) == ty)
            })
        })
        .count();
    // The self link is on the web API: the desktop does not pass its own URL there.
    let v = json!({"tag": name,
        "links": {"self": {"href": format!("https://api.zotero.org/{path}"), "type": "application/json"},
                  "alternate": {"href": format!("http://zotero.org/{path}"), "type": "text/html"}},
        "meta": {"type": ty.unwrap_or(0), "numItems": num}});
    Obj {
        key: None,
        version: None,
        json: v,
    }
}

/// The tags of some items (`Some`: an item listing's `/tags`, filtered by `q`) or of the
/// whole library, by name; `numItems` counts the whole library.
pub(crate) fn tag_objs(ctx: &Ctx, within: Option<&[usize]>) -> Vec<Obj> {
    let lib = ctx.lib();
    let mut tags: Vec<(String, u64)> = Vec::new();
    let all: Vec<usize> = (0..lib.items.len()).collect();
    for i in within.unwrap_or(&all) {
        for t in lib.items[*i]["data"]["tags"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let e = (
                t["tag"].as_str().unwrap_or("").to_string(),
                t["type"].as_u64().unwrap_or(0),
            );
            if !tags.contains(&e) {
                tags.push(e);
            }
        }
    }
    if let (Some(q), Some(_)) = (query(ctx.req, "q"), within) {
        let starts = query(ctx.req, "qmode") == Some("startsWith");
        tags.retain(|(n, _)| {
            if starts {
                n.starts_with(q)
            } else {
                n.contains(q)
            }
        });
    }
    tags.sort_by(|a, b| {
        search::fold(&a.0)
            .cmp(&search::fold(&b.0))
            .then(a.1.cmp(&b.1))
    });
    tags.iter()
        .map(|(n, ty)| tag_json(lib, n, Some(*ty)))
        .collect()
}

pub(crate) fn tags(ctx: &Ctx) -> Vec<Obj> {
    tag_objs(ctx, None)
}

/// `…/tags/{tag}`: always one tag, counted over every type.
pub(crate) fn tag(ctx: &Ctx, name: &str) -> Obj {
    tag_json(ctx.lib(), name, None)
}

/// `/itemTypeFields` and `/itemTypeCreatorTypes?itemType=…`, with English labels.
pub(crate) fn type_details(ctx: &Ctx, fields: bool) -> Answer {
    let t = query(ctx.req, "itemType").and_then(|t| schema::schema().item_type(t));
    let Some(t) = t else {
        return text(400, "Invalid or missing 'itemType' value");
    };
    let rows: Vec<Value> = if fields {
        let labels: Vec<Value> = serde_json::from_str(ITEM_FIELDS_JSON).unwrap();
        t.fields
            .iter()
            .map(|f| {
                let label = labels
                    .iter()
                    .find(|l| l["field"] == f.as_str())
                    .and_then(|l| l["localized"].as_str())
                    .map_or_else(|| mappings::localized(f), str::to_string);
                json!({"field": f, "localized": label})
            })
            .collect()
    } else {
        t.creator_types
            .iter()
            .map(|c| json!({"creatorType": c, "localized": mappings::localized(c)}))
            .collect()
    };
    super::data::json_answer(&Value::Array(rows))
}
