//! The emulated library: loading the fixtures, building synthetic libraries, and rendering
//! objects with the derived fields the real server computes (`meta.numChildren`,
//! `meta.numItems`, `meta.numCollections`, `links.up`, `links.attachment`, own base URLs).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::libs::{rehome, Lib, LibInfo, REAL_API};
use super::stored::FullText;
use super::stored::ItemFile;

const ITEMS_JSON: &str = include_str!("../../../fixtures/library/items.json");
/// A paper with notes in note-editor HTML and annotations on its PDF and EPUB.
const READING_JSON: &str = include_str!("../../../fixtures/library/reading.json");
const COLLECTIONS_JSON: &str = include_str!("../../../fixtures/library/collections.json");
pub(crate) const KEYS_CURRENT_JSON: &str =
    include_str!("../../../fixtures/library/keys_current.json");
pub(crate) const ITEM_FIELDS_JSON: &str =
    include_str!("../../../fixtures/recorded/item_fields.json");

/// Characters of Zotero object keys (no 0, 1 or O).
const KEY_CHARS: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

/// The words synthetic titles are made of (tests pick queries from them).
pub const TITLE_WORDS: [&str; 20] = [
    "neural",
    "graph",
    "quantum",
    "protein",
    "language",
    "vision",
    "ocean",
    "climate",
    "market",
    "theory",
    "learning",
    "models",
    "networks",
    "dynamics",
    "analysis",
    "systems",
    "evolution",
    "memory",
    "attention",
    "sparse",
];

/// A library to serve: items and collections in the recorded JSON shape.
#[derive(Debug, Clone)]
pub struct Library {
    pub items: Vec<Value>,
    pub collections: Vec<Value>,
    /// The library version; raised to the highest object version if lower.
    pub version: u64,
    /// Full text by attachment key (`fulltext.rs`), each with the version it was written at.
    pub fulltext: BTreeMap<String, FullText>,
}

impl Library {
    /// A library without objects (version 0).
    pub fn empty() -> Library {
        Library {
            items: Vec::new(),
            collections: Vec::new(),
            version: 0,
            fulltext: BTreeMap::new(),
        }
    }

    /// The default library of `fixtures/library/` (recorded items plus hand-made ones).
    pub fn from_fixtures() -> Library {
        let mut items: Vec<Value> = serde_json::from_str(ITEMS_JSON).unwrap();
        items.extend(serde_json::from_str::<Vec<Value>>(READING_JSON).unwrap());
        let collections: Vec<Value> = serde_json::from_str(COLLECTIONS_JSON).unwrap();
        let mut lib = Library {
            items,
            collections,
            version: 0,
            fulltext: super::fulltext::fixtures(),
        };
        lib.version = lib.effective_version();
        lib
    }

    /// `n_items` journal articles and books with titles, creators, dates and tags
    /// (`tag-a` .. `tag-f`, varied), spread over three collections; deterministic per `seed`.
    pub fn synthetic(n_items: usize, seed: u64) -> Library {
        let mut rng = StdRng::seed_from_u64(seed);
        let words = TITLE_WORDS;
        let last_names = [
            "Smith",
            "Garcia",
            "Müller",
            "Nakamura",
            "Okafor",
            "Ivanova",
            "Chen",
            "Dubois",
            "Rossi",
            "Kowalski",
            "Andersson",
            "Silva",
        ];
        let first_names = [
            "Ada", "Bo", "Chidi", "Dana", "Eitan", "Fatima", "Goran", "Hana",
        ];
        let tags = ["tag-a", "tag-b", "tag-c", "tag-d", "tag-e", "tag-f"];
        let coll_keys: Vec<String> = (0..3).map(|_| random_key(&mut rng)).collect();
        let mut used = std::collections::HashSet::new();
        let mut items = Vec::with_capacity(n_items);
        for i in 0..n_items {
            let mut key = random_key(&mut rng);
            while !used.insert(key.clone()) {
                key = random_key(&mut rng);
            }
            let n_words = rng.random_range(2..6);
            let mut title: Vec<String> = (0..n_words)
                .map(|_| words[rng.random_range(0..words.len())].to_string())
                .collect();
            if let Some(first) = title.first_mut() {
                let mut c = first.chars();
                *first = c
                    .next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap();
            }
            let title = title.join(" ");
            let n_creators = rng.random_range(0..4);
            let creators: Vec<Value> = (0..n_creators)
                .map(|_| {
                    if rng.random_bool(0.1) {
                        json!({"creatorType": "author", "name": "Consortium of Synthetic Data"})
                    } else {
                        json!({"creatorType": "author",
                               "firstName": first_names[rng.random_range(0..first_names.len())],
                               "lastName": last_names[rng.random_range(0..last_names.len())]})
                    }
                })
                .collect();
            let year = rng.random_range(1950..2025);
            let month = rng.random_range(1..13);
            let date = if rng.random_bool(0.1) {
                String::new()
            } else {
                format!("{year}-{month:02}")
            };
            let item_tags: Vec<Value> = tags
                .iter()
                .filter(|_| rng.random_bool(0.3))
                .map(|t| json!({"tag": t}))
                .collect();
            let colls: Vec<Value> = coll_keys
                .iter()
                .filter(|_| rng.random_bool(0.3))
                .map(|k| json!(k))
                .collect();
            let added = format!(
                "2023-{:02}-{:02}T{:02}:{:02}:00Z",
                1 + i / 28 / 24 / 60 % 12,
                1 + i / 24 / 60 % 28,
                i / 60 % 24,
                i % 60
            );
            let version = (i + 1) as u64;
            let book = rng.random_bool(0.3);
            let mut data = json!({
                "key": key, "version": version,
                "itemType": if book { "book" } else { "journalArticle" },
                "title": title, "creators": creators, "abstractNote": "",
                "date": date, "language": "en", "url": "", "accessDate": "",
                "libraryCatalog": "", "callNumber": "", "rights": "", "extra": "",
                "tags": item_tags, "collections": colls, "relations": {},
                "dateAdded": added, "dateModified": added,
            });
            if book {
                data["publisher"] = json!("Synthetic Press");
                data["ISBN"] = json!("");
            } else {
                data["publicationTitle"] = json!("Journal of Synthetic Results");
                data["DOI"] = json!(format!("10.5555/synth.{i}"));
            }
            let mut meta = json!({});
            let summary = creator_summary(&data["creators"]);
            if !summary.is_empty() {
                meta["creatorSummary"] = json!(summary);
            }
            if !date.is_empty() {
                meta["parsedDate"] = json!(date);
            }
            items.push(wrap("items", &key, version, meta, data));
        }
        let collections = coll_keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let data = json!({"key": k, "version": 1, "name": format!("Synthetic {}", i + 1),
                                  "parentCollection": false, "relations": {}});
                wrap("collections", k, 1, json!({}), data)
            })
            .collect();
        Library {
            items,
            collections,
            version: n_items as u64,
            fulltext: BTreeMap::new(),
        }
    }

    /// The library version: at least the highest object version.
    pub(crate) fn effective_version(&self) -> u64 {
        self.items
            .iter()
            .chain(&self.collections)
            .filter_map(|o| o["version"].as_u64())
            .chain(self.fulltext.values().map(|f| f.version))
            .fold(self.version, u64::max)
    }
}

impl Library {
    /// A library serving these objects, re-homed to `info` (its `library` block and links).
    pub(crate) fn into_lib(self, info: LibInfo) -> Lib {
        let version = self.effective_version();
        let mut items = self.items;
        let mut collections = self.collections;
        for (kind, objs) in [("items", &mut items), ("collections", &mut collections)] {
            for o in objs.iter_mut() {
                rehome(o, &info, kind);
            }
        }
        let mut files = HashMap::new();
        for i in &items {
            let (Some(md5), Some(size)) = (
                i["data"]["md5"].as_str(),
                i["links"]["enclosure"]["length"].as_u64(),
            ) else {
                continue;
            };
            let key = i["key"].as_str().unwrap_or("").to_string();
            let hash = md5.to_string();
            files.insert(key, ItemFile { hash, size });
        }
        Lib {
            info,
            items,
            collections,
            version,
            fulltext: self.fulltext,
            files,
            delete_log: Vec::new(),
        }
    }
}

fn random_key(rng: &mut StdRng) -> String {
    (0..8)
        .map(|_| KEY_CHARS[rng.random_range(0..KEY_CHARS.len())] as char)
        .collect()
}

/// An object of the user library (synthetic libraries are built there, then re-homed).
pub(crate) fn wrap(kind: &str, key: &str, version: u64, meta: Value, data: Value) -> Value {
    let info = LibInfo::user();
    let path = info.id.path();
    json!({
        "key": key, "version": version,
        "library": info.json(),
        "links": {
            "self": {"href": format!("{REAL_API}/{path}/{kind}/{key}"), "type": "application/json"},
            "alternate": {"href": format!("{}/{kind}/{key}", info.www), "type": "text/html"},
        },
        "meta": meta, "data": data,
    })
}

/// What the key may see of a library's objects (`Zotero_Item::getUncachedResponseProps`):
/// without note access notes are not counted as children; without file access objects have
/// no `links.attachment` or `links.enclosure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Visible {
    pub(crate) notes: bool,
    pub(crate) files: bool,
}

impl Visible {
    pub(crate) const ALL: Visible = Visible {
        notes: true,
        files: true,
    };
}

/// `Smith`, `Smith and Chen`, `Smith et al.` from the creators list (as the real server does).
pub(crate) fn creator_summary(creators: &Value) -> String {
    let names: Vec<String> = creators
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    c["lastName"]
                        .as_str()
                        .or(c["name"].as_str())
                        .unwrap_or("")
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    match names.len() {
        0 => String::new(),
        1 => names[0].clone(),
        2 => format!("{} and {}", names[0], names[1]),
        _ => format!("{} et al.", names[0]),
    }
}

/// A child item's parent key, if any.
pub(crate) fn parent_of(item: &Value) -> Option<&str> {
    item["data"]["parentItem"].as_str()
}

pub(crate) fn is_deleted(obj: &Value) -> bool {
    match &obj["data"]["deleted"] {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_u64().unwrap_or(0) != 0,
        _ => false,
    }
}

fn rebase_links(links: &mut Value, base: &str) {
    if let Some(map) = links.as_object_mut() {
        for link in map.values_mut() {
            if let Some(href) = link["href"].as_str() {
                if let Some(rest) = href.strip_prefix(REAL_API) {
                    link["href"] = json!(format!("{base}{rest}"));
                }
            }
        }
    }
}

/// Where an item's children are found when rendering: by a look at every item (one item
/// rendered), or in a map made once (a page of a large library: a look at every item for each
/// of its items made a 10,000-item library's full read quadratic).
pub(crate) enum Kids<'a> {
    Scan(&'a [Value]),
    Map(HashMap<&'a str, Vec<&'a Value>>),
}

impl<'a> Kids<'a> {
    /// The map of every parent's children, in library order (trashed ones too).
    pub(crate) fn mapped(items: &'a [Value]) -> Kids<'a> {
        let mut map: HashMap<&str, Vec<&Value>> = HashMap::new();
        for c in items {
            if let Some(parent) = parent_of(c) {
                map.entry(parent).or_default().push(c);
            }
        }
        Kids::Map(map)
    }

    /// The children of `key` not in the trash, in library order.
    fn of(&self, key: &str) -> Vec<&'a Value> {
        match self {
            Kids::Scan(items) => items
                .iter()
                .filter(|c| parent_of(c) == Some(key) && !is_deleted(c))
                .collect(),
            Kids::Map(map) => map
                .get(key)
                .map(|v| v.iter().copied().filter(|c| !is_deleted(c)).collect())
                .unwrap_or_default(),
        }
    }
}

/// An item as served: derived `meta.numChildren`, `links.up`, `links.attachment`, own base URL.
pub(crate) fn render_item(lib: &Lib, item: &Value, base: &str, vis: Visible) -> Value {
    render_item_among(lib, item, base, vis, &Kids::Scan(&lib.items))
}

/// [`render_item`] with the children found through `kids`.
pub(crate) fn render_item_among(
    lib: &Lib,
    item: &Value,
    base: &str,
    vis: Visible,
    kids: &Kids<'_>,
) -> Value {
    let mut out = item.clone();
    let key = item["key"].as_str().unwrap_or("");
    let prefix = format!("{base}/{}/items", lib.id().path());
    if !out["links"].is_object() {
        out["links"] = json!({});
    }
    if !out["meta"].is_object() {
        out["meta"] = json!({});
    }
    rebase_links(&mut out["links"], base);
    out["links"]["self"] = json!({"href": format!("{prefix}/{key}"), "type": "application/json"});
    if let Some(parent) = parent_of(item) {
        out["links"]["up"] =
            json!({"href": format!("{prefix}/{parent}"), "type": "application/json"});
        if let Some(m) = out["meta"].as_object_mut() {
            m.remove("numChildren");
        }
        if let Some(n) = child_num_children(kids, item, vis) {
            out["meta"]["numChildren"] = n;
        }
    } else {
        let children: Vec<&Value> = kids.of(key);
        let counted = children
            .iter()
            .filter(|c| vis.notes || c["data"]["itemType"] == "attachment")
            .count();
        out["meta"]["numChildren"] = json!(counted);
        if let Some(links) = out["links"].as_object_mut() {
            links.remove("attachment");
        }
        let best = best_attachment(&children).filter(|_| vis.files);
        if let Some(best) = best {
            let mut link = json!({
                "href": format!("{prefix}/{}", best["key"].as_str().unwrap_or("")),
                "type": "application/json",
                "attachmentType": best["data"]["contentType"],
            });
            if let Some(len) = best["links"]["enclosure"]["length"].as_u64() {
                link["attachmentSize"] = json!(len);
            }
            out["links"]["attachment"] = link;
        }
    }
    if !vis.files {
        if let Some(links) = out["links"].as_object_mut() {
            links.remove("enclosure");
        }
    }
    out
}

/// `meta.numChildren` of a child item (`Zotero_Item::getUncachedResponseProps`): a note counts
/// its attachments; a PDF attachment its annotations, which depend on note access (without it
/// the server sends `false`); other attachments have none.
fn child_num_children(kids: &Kids<'_>, item: &Value, vis: Visible) -> Option<Value> {
    let d = &item["data"];
    let key = item["key"].as_str().unwrap_or("");
    let count = |ty: &str| {
        kids.of(key)
            .iter()
            .filter(|c| c["data"]["itemType"] == ty)
            .count()
    };
    match d["itemType"].as_str() {
        Some("note") => Some(json!(count("attachment"))),
        Some("attachment")
            if d["contentType"] == "application/pdf" && d["linkMode"] != "linked_url" =>
        {
            Some(if vis.notes {
                json!(count("annotation"))
            } else {
                json!(false)
            })
        }
        _ => None,
    }
}

/// The attachment the real server links from its parent: a stored file, PDF first, then EPUB,
/// then an HTML snapshot; oldest first among equals.
fn best_attachment<'a>(children: &[&'a Value]) -> Option<&'a Value> {
    let rank = |c: &Value| match c["data"]["contentType"].as_str() {
        Some("application/pdf") => 0,
        Some("application/epub+zip") => 1,
        Some("text/html") => 2,
        _ => 3,
    };
    children
        .iter()
        .filter(|c| c["data"]["itemType"] == "attachment")
        .filter(|c| {
            matches!(
                c["data"]["linkMode"].as_str(),
                Some("imported_file") | Some("imported_url")
            )
        })
        .filter(|c| rank(c) < 3)
        .min_by(|a, b| {
            (rank(a), a["data"]["dateAdded"].as_str().unwrap_or(""))
                .cmp(&(rank(b), b["data"]["dateAdded"].as_str().unwrap_or("")))
        })
        .copied()
}

/// A collection as served: derived `meta.numCollections`, `meta.numItems`, `links.up`.
pub(crate) fn render_collection(lib: &Lib, coll: &Value, base: &str) -> Value {
    let (items, collections) = (&lib.items, &lib.collections);
    let mut out = coll.clone();
    let key = coll["key"].as_str().unwrap_or("");
    let num_collections = collections
        .iter()
        .filter(|c| c["data"]["parentCollection"].as_str() == Some(key))
        .count();
    let num_items = items
        .iter()
        .filter(|i| !is_deleted(i))
        .filter(|i| {
            i["data"]["collections"]
                .as_array()
                .is_some_and(|a| a.iter().any(|k| k == key))
        })
        .count();
    if !out["links"].is_object() {
        out["links"] = json!({});
    }
    rebase_links(&mut out["links"], base);
    let prefix = format!("{base}/{}/collections", lib.id().path());
    out["links"]["self"] = json!({"href": format!("{prefix}/{key}"), "type": "application/json"});
    match coll["data"]["parentCollection"].as_str() {
        Some(parent) => {
            out["links"]["up"] =
                json!({"href": format!("{prefix}/{parent}"), "type": "application/atom+xml"})
        }
        None => {
            if let Some(l) = out["links"].as_object_mut() {
                l.remove("up");
            }
        }
    }
    out["meta"] = json!({"numCollections": num_collections, "numItems": num_items});
    out
}
