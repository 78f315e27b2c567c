//! Property tests through the BUILT binary over stdio, against the stateful Zotero emulator.
//!
//! 1. Pagination (`zotero_search_items`, `zotero_list_collections`): for any synthetic library
//!    (0..=230 items), `limit` (1..=100), quick-search query (one or two title words, or a
//!    year), optional tag and sort, walking `next_start` from 0 visits every matching item
//!    exactly once, in the expected order, with `total` equal to the number of matches on every
//!    page; any random `start` returns exactly the expected slice. The expected set and order are
//!    computed here from the library JSON, independently of the server.
//! 2. Status mapping: every HTTP status Zotero can answer (400..=599 and the named ones) maps to
//!    the documented error code, with `error.details.status` equal to the status, one request
//!    per call when `ZOTERO_RETRY_MAX_ATTEMPTS=1`.
//! 3. Argument fuzzing: random argument objects (real field names, junk keys, values of every
//!    JSON type) for all four tools never break the server; invalid arguments (as modelled here
//!    from the input schemas) are a `ZOTERO_VALIDATION_ERROR` naming an invalid field and reach
//!    no upstream request; valid ones are never rejected locally.
//!
//! Each proptest case builds its own tokio runtime, emulator and server process.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
mod emulator;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use common::{env_for, spawn, Server};
use emulator::{Emulator, Fault, FaultKind, Library, API_KEY, USER_ID};
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use serde_json::{json, Map, Value};

const WORDS: [&str; 20] = emulator::TITLE_WORDS;
const TAGS: [&str; 6] = ["tag-a", "tag-b", "tag-c", "tag-d", "tag-e", "tag-f"];
const KEY_ALPHABET: &str = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        max_shrink_iters: 64,
        // Regression files would land in the shared checkout; failures print their input.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().expect("tokio runtime")
}

async fn start(lib: Library, extra_env: &[(&str, &str)]) -> (Emulator, Server) {
    let emu = Emulator::with_library(lib).await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        extra_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let server = spawn(&env).await;
    (emu, server)
}

// ---------------------------------------------------------------------------------------------
// 1. Pagination
// ---------------------------------------------------------------------------------------------

/// What a walk searches for.
#[derive(Debug, Clone)]
enum Query {
    Words(Vec<&'static str>),
    Year(u32),
}

impl Query {
    fn text(&self) -> String {
        match self {
            Query::Words(w) => w.join(" "),
            Query::Year(y) => y.to_string(),
        }
    }

    /// Zotero's quick search (titlecreatoryear): every part is in the title or a creator's
    /// name (case-insensitive), or is the year of the date.
    fn matches(&self, item: &Value) -> bool {
        let data = &item["data"];
        match self {
            Query::Words(words) => {
                let title = data["title"].as_str().unwrap_or("").to_lowercase();
                let names: Vec<String> = data["creators"]
                    .as_array()
                    .map(|cs| {
                        cs.iter()
                            .map(|c| match c["name"].as_str() {
                                Some(n) => n.to_lowercase(),
                                None => format!(
                                    "{} {}",
                                    c["firstName"].as_str().unwrap_or(""),
                                    c["lastName"].as_str().unwrap_or("")
                                )
                                .to_lowercase(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                words
                    .iter()
                    .all(|w| title.contains(w) || names.iter().any(|n| n.contains(w)))
            }
            Query::Year(y) => data["date"]
                .as_str()
                .is_some_and(|d| d.starts_with(&y.to_string())),
        }
    }
}

fn query_strategy() -> impl Strategy<Value = Query> {
    prop_oneof![
        3 => proptest::sample::subsequence(WORDS.to_vec(), 1..=2).prop_map(Query::Words),
        1 => (1950u32..2025).prop_map(Query::Year),
    ]
}

/// The keys the search must return, in the order Zotero sorts them.
fn expected_search(lib: &Library, q: &Query, tag: Option<&str>, sort: Option<&str>) -> Vec<String> {
    let mut hits: Vec<(usize, &Value)> = lib
        .items
        .iter()
        .enumerate()
        .filter(|(_, it)| q.matches(it))
        .filter(|(_, it)| {
            tag.is_none_or(|t| {
                it["data"]["tags"]
                    .as_array()
                    .is_some_and(|ts| ts.iter().any(|x| x["tag"] == t))
            })
        })
        .collect();
    match sort {
        // relevance (falls back to dateModified), dateModified, dateAdded: newest first.
        None | Some("dateModified") | Some("dateAdded") => hits.sort_by(|(ia, a), (ib, b)| {
            let ka = a["data"]["dateModified"].as_str().unwrap_or("");
            let kb = b["data"]["dateModified"].as_str().unwrap_or("");
            kb.cmp(ka).then(ib.cmp(ia))
        }),
        // title: A to Z, then by version (oldest first).
        Some("title") => hits.sort_by(|(ia, a), (ib, b)| {
            let ta = a["data"]["title"].as_str().unwrap_or("").to_lowercase();
            let tb = b["data"]["title"].as_str().unwrap_or("").to_lowercase();
            ta.cmp(&tb).then(ia.cmp(ib))
        }),
        Some(other) => panic!("no expected order for sort {other}"),
    }
    hits.iter()
        .map(|(_, it)| it["key"].as_str().unwrap().to_string())
        .collect()
}

fn page_keys(data: &Value) -> Vec<String> {
    data["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {data}"))
        .iter()
        .map(|i| i["item_key"].as_str().unwrap().to_string())
        .collect()
}

fn search_args(q: &Query, tag: Option<&str>, sort: Option<&str>, limit: u64, start: u64) -> Value {
    let mut args = json!({"query": q.text(), "limit": limit, "start": start});
    if let Some(t) = tag {
        args["tags"] = json!([t]);
    }
    if let Some(s) = sort {
        args["sort"] = json!(s);
    }
    args
}

/// Checks one page against the expected ordering and returns its `next_start`.
fn check_search_page(
    data: &Value,
    expected: &[String],
    limit: u64,
    start: u64,
    sort: Option<&str>,
) -> Option<u64> {
    let total = expected.len() as u64;
    assert_eq!(data["total"], json!(total), "total on page start={start}");
    let lo = (start as usize).min(expected.len());
    let hi = (start.saturating_add(limit) as usize).min(expected.len());
    assert_eq!(
        page_keys(data),
        expected[lo..hi].to_vec(),
        "page start={start} limit={limit}"
    );
    let want_next = (start + limit < total).then_some(start + limit);
    let next = data.get("next_start").and_then(Value::as_u64);
    assert_eq!(next, want_next, "next_start on page start={start}: {data}");
    match sort {
        None => assert_eq!(data["sort_used"], "dateModified"),
        Some(_) => assert!(data.get("sort_used").is_none(), "{data}"),
    }
    next
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn paging_visits_every_match_once(
        n in 0usize..=230,
        seed in any::<u64>(),
        limit in prop_oneof![1u64..=10, 1u64..=100],
        q in query_strategy(),
        tag in proptest::option::weighted(0.3, proptest::sample::select(TAGS.to_vec())),
        sort in proptest::sample::select(vec![None, Some("dateModified"), Some("dateAdded"), Some("title")]),
        starts in proptest::collection::vec(0u64..=260, 1..4),
        coll_limit in 1u64..=4,
    ) {
        let lib = Library::synthetic(n, seed);
        let expected = expected_search(&lib, &q, tag, sort);
        let coll_keys: BTreeSet<String> = lib
            .collections
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect();
        let num_items: BTreeMap<String, u64> = coll_keys
            .iter()
            .map(|k| {
                let count = lib
                    .items
                    .iter()
                    .filter(|i| {
                        i["data"]["collections"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|c| c == k.as_str()))
                    })
                    .count();
                (k.clone(), count as u64)
            })
            .collect();

        runtime().block_on(async {
            let (_emu, server) = start(lib, &[]).await;

            // Walk next_start from 0.
            let mut seen: Vec<String> = Vec::new();
            let mut start = 0u64;
            let mut pages = 0;
            loop {
                let a = server
                    .call("zotero_search_items", search_args(&q, tag, sort, limit, start))
                    .await;
                let data = a.expect_ok();
                let next = check_search_page(data, &expected, limit, start, sort);
                seen.extend(page_keys(data));
                pages += 1;
                assert!(pages <= 232, "walk does not end");
                match next {
                    Some(s) => {
                        assert!(s > start, "next_start {s} does not advance from {start}");
                        start = s;
                    }
                    None => break,
                }
            }
            let unique: HashSet<&String> = seen.iter().collect();
            assert_eq!(unique.len(), seen.len(), "an item was visited twice: {seen:?}");
            assert_eq!(seen, expected, "the walk visits every match once, in order");

            // Random starts: exactly the expected slice.
            for &s in &starts {
                let a = server
                    .call("zotero_search_items", search_args(&q, tag, sort, limit, s))
                    .await;
                check_search_page(a.expect_ok(), &expected, limit, s, sort);
            }

            // Collections: walk them too.
            let mut seen_colls: Vec<String> = Vec::new();
            let mut start = 0u64;
            loop {
                let a = server
                    .call(
                        "zotero_list_collections",
                        json!({"limit": coll_limit, "start": start}),
                    )
                    .await;
                let data = a.expect_ok();
                assert_eq!(data["total"], json!(coll_keys.len()), "{data}");
                let page = data["collections"].as_array().unwrap();
                let want_len = (coll_keys.len() as u64).saturating_sub(start).min(coll_limit);
                assert_eq!(page.len() as u64, want_len, "{data}");
                for c in page {
                    let key = c["collection_key"].as_str().unwrap().to_string();
                    assert_eq!(c["num_items"], json!(num_items[&key]), "{c}");
                    seen_colls.push(key);
                }
                match data.get("next_start").and_then(Value::as_u64) {
                    Some(s) => {
                        assert_eq!(s, start + coll_limit);
                        start = s;
                    }
                    None => break,
                }
            }
            let unique: BTreeSet<String> = seen_colls.iter().cloned().collect();
            assert_eq!(unique.len(), seen_colls.len(), "a collection twice: {seen_colls:?}");
            assert_eq!(unique, coll_keys);
            server.stop().await;
        });
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Status mapping
// ---------------------------------------------------------------------------------------------

/// The documented mapping, written out independently of the server's.
fn expected_code(status: u16) -> &'static str {
    match status {
        401 | 403 => "ZOTERO_AUTH_ERROR",
        404 => "ZOTERO_NOT_FOUND",
        429 => "ZOTERO_RATE_LIMITED",
        400 | 409 | 412 | 413 | 415 | 422 => "ZOTERO_VALIDATION_ERROR",
        _ => "ZOTERO_UPSTREAM_ERROR",
    }
}

fn status_strategy() -> impl Strategy<Value = u16> {
    prop_oneof![
        2 => 400u16..=599,
        1 => proptest::sample::select(vec![400u16, 401, 403, 404, 409, 412, 413, 415, 422, 429, 500, 502, 503, 504]),
    ]
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn every_status_maps_to_its_code(
        calls in proptest::collection::vec((status_strategy(), any::<bool>()), 1..6),
        seed in any::<u64>(),
    ) {
        let lib = Library::synthetic(5, seed);
        let item_key = lib.items[0]["key"].as_str().unwrap().to_string();
        runtime().block_on(async {
            let (emu, server) = start(lib, &[("ZOTERO_RETRY_MAX_ATTEMPTS", "1")]).await;
            for (status, use_item) in calls {
                let before = emu.requests().len();
                let (tool, args, prefix) = if use_item {
                    ("zotero_get_item", json!({"item_key": item_key}), format!("/users/{USER_ID}/items/"))
                } else {
                    ("zotero_list_collections", json!({}), format!("/users/{USER_ID}/collections"))
                };
                emu.inject(Fault::once(FaultKind::Status(status)).on(&prefix));
                let a = server.call(tool, args).await;
                let err = a.expect_err(expected_code(status));
                assert_eq!(err["details"]["status"], json!(status), "{tool} with {status}: {}", a.envelope);
                assert!(err["details"].get("field").is_none(), "{}", a.envelope);
                assert!(!err["message"].as_str().unwrap_or("").is_empty());
                assert_eq!(emu.requests().len() - before, 1, "{tool} with {status}: one attempt only");
            }
            // The server still works after all of that.
            let ok = server.call("zotero_list_collections", json!({})).await;
            assert_eq!(ok.expect_ok()["total"], 3);
            server.stop().await;
        });
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Argument fuzzing
// ---------------------------------------------------------------------------------------------

const TOOLS: [(&str, &[&str]); 4] = [
    (
        "zotero_search_items",
        &["query", "limit", "sort", "start", "offset", "tags"],
    ),
    ("zotero_list_collections", &["limit", "start"]),
    ("zotero_get_item", &["item_key"]),
    ("zotero_get_sort_values", &[]),
];

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{1,12}",
        "[23456789A-Z01]{7,9}",
        "[ -~]{0,10}",
        any::<String>().prop_map(|s| s.chars().take(12).collect()),
        proptest::sample::select(vec![
            "ABC/../x",
            "relevance",
            "title",
            "-tag-a",
            "a || b",
            " ",
            "%2F",
            "\u{0}"
        ])
        .prop_map(String::from),
    ]
}

fn any_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..=103).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        proptest::sample::select(vec![
            0.0f64, -0.0, 1.0, 5.0, 2.5, -1.0, 100.0, 100.5, 101.0, 1e300, -1e300, 1.8e19, 0.1
        ])
        .prop_map(|f| json!(f)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any_number(),
        any_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{0,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Values aimed at a field: often valid, often just off.
fn field_value(field: &'static str, lib_keys: Vec<String>) -> BoxedStrategy<Value> {
    let aimed: BoxedStrategy<Value> = match field {
        "query" => prop_oneof![
            proptest::sample::select(WORDS.to_vec()).prop_map(Value::from),
            any_string().prop_map(Value::from),
        ]
        .boxed(),
        "limit" => prop_oneof![(1u64..=100).prop_map(Value::from), any_number()].boxed(),
        "start" | "offset" => prop_oneof![(0u64..=300).prop_map(Value::from), any_number()].boxed(),
        "sort" => proptest::sample::select(vec![
            "relevance",
            "dateAdded",
            "dateModified",
            "title",
            "creator",
            "date",
            "bogus",
            "",
        ])
        .prop_map(Value::from)
        .boxed(),
        "tags" => proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(TAGS.to_vec()).prop_map(Value::from),
                Just(json!("")),
                Just(json!(5)),
            ],
            0..4,
        )
        .prop_map(Value::Array)
        .boxed(),
        "item_key" => prop_oneof![
            proptest::sample::select(if lib_keys.is_empty() {
                vec!["X42A7DEE".to_string()]
            } else {
                lib_keys
            })
            .prop_map(Value::from),
            "[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}".prop_map(Value::from),
            any_string().prop_map(Value::from),
        ]
        .boxed(),
        _ => any_json().boxed(),
    };
    prop_oneof![3 => aimed, 1 => any_json(), 1 => Just(Value::Null)].boxed()
}

/// Values a field accepts.
fn valid_value(field: &'static str, lib_keys: Vec<String>) -> BoxedStrategy<Value> {
    match field {
        "query" => prop_oneof![
            proptest::sample::select(WORDS.to_vec()).prop_map(Value::from),
            "[a-z0-9 ]{1,12}".prop_map(Value::from),
        ]
        .boxed(),
        "limit" => prop_oneof![
            (1u64..=100).prop_map(Value::from),
            proptest::sample::select(vec![1.0f64, 5.0, 100.0]).prop_map(|f| json!(f)),
        ]
        .boxed(),
        "start" | "offset" => (0u64..=300).prop_map(Value::from).boxed(),
        "sort" => proptest::sample::select(vec![
            "relevance",
            "dateAdded",
            "dateModified",
            "title",
            "creator",
            "date",
        ])
        .prop_map(Value::from)
        .boxed(),
        "tags" => proptest::sample::subsequence(TAGS.to_vec(), 0..=2)
            .prop_map(|t| json!(t))
            .boxed(),
        "item_key" => prop_oneof![
            3 => proptest::sample::select(lib_keys).prop_map(Value::from),
            1 => "[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}".prop_map(Value::from),
        ]
        .boxed(),
        _ => any_json().boxed(),
    }
}

/// Arguments the schema accepts: required fields always, optional ones half the time, and at
/// most one of `start`/`offset`.
fn valid_args(tool: usize, lib_keys: Vec<String>) -> BoxedStrategy<Map<String, Value>> {
    let (_, fields) = TOOLS[tool];
    let known: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
        .iter()
        .map(|&f| {
            let value = valid_value(f, lib_keys.clone());
            let value = if matches!(f, "query" | "item_key") {
                value.prop_map(Some).boxed()
            } else {
                proptest::option::weighted(0.5, value).boxed()
            };
            value
                .prop_map(move |v| v.map(|v| (f.to_string(), v)))
                .boxed()
        })
        .collect();
    known
        .prop_map(|known| {
            let mut m = Map::new();
            for (k, v) in known.into_iter().flatten() {
                if k == "offset" && m.contains_key("start") {
                    continue;
                }
                m.insert(k, v);
            }
            m
        })
        .boxed()
}

/// Valid arguments (40 %), valid arguments with one field or junk key set to something else
/// (40 %), or fields and values drawn at random (20 %).
fn args_strategy(tool: usize, lib_keys: Vec<String>) -> BoxedStrategy<Map<String, Value>> {
    let (_, fields) = TOOLS[tool];
    let mut keys: Vec<&'static str> = vec![
        "qury", "", "Limit", "query", "item_key", "tags", "offset", "start", "start ", "x",
    ];
    keys.extend(fields.iter().copied());
    keys.extend(fields.iter().copied());
    let perturbed = (
        valid_args(tool, lib_keys.clone()),
        proptest::sample::select(keys.clone()),
        prop_oneof![
            3 => proptest::sample::select(keys).prop_flat_map({
                let lib_keys = lib_keys.clone();
                move |k| field_value(k, lib_keys.clone())
            }),
            1 => any_json(),
        ],
    )
        .prop_map(|(mut m, k, v)| {
            m.insert(k.to_string(), v);
            m
        });
    let wild_known: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
        .iter()
        .map(|&f| {
            proptest::option::weighted(0.6, field_value(f, lib_keys.clone()))
                .prop_map(move |v| v.map(|v| (f.to_string(), v)))
                .boxed()
        })
        .collect();
    let wild = wild_known.prop_map(|known| known.into_iter().flatten().collect::<Map<_, _>>());
    prop_oneof![
        2 => valid_args(tool, lib_keys),
        2 => perturbed,
        1 => wild,
    ]
    .boxed()
}

/// The fields that make these arguments invalid, from the input schemas (empty = valid).
/// `null` counts as absent for the known fields.
fn invalid_fields(tool: &str, allowed: &[&str], args: &Map<String, Value>) -> BTreeSet<String> {
    let mut bad = BTreeSet::new();
    for k in args.keys() {
        if !allowed.contains(&k.as_str()) {
            bad.insert(k.clone());
        }
    }
    let get = |f: &str| args.get(f).filter(|v| !v.is_null());
    let integer_in = |v: &Value, min: f64, max: f64| match v {
        Value::Number(n) => match n.as_u64() {
            Some(u) => (u as f64) >= min && (u as f64) <= max,
            None => n
                .as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f >= min && f <= max),
        },
        _ => false,
    };
    match tool {
        "zotero_search_items" => {
            if get("query").is_none_or(|v| v.as_str().is_none_or(|s| s.trim().is_empty())) {
                bad.insert("query".into());
            }
            if get("limit").is_some_and(|v| !integer_in(v, 1.0, 100.0)) {
                bad.insert("limit".into());
            }
            for f in ["start", "offset"] {
                if get(f).is_some_and(|v| !integer_in(v, 0.0, u64::MAX as f64)) {
                    bad.insert(f.into());
                }
            }
            if get("start").is_some() && get("offset").is_some() {
                bad.insert("offset".into());
            }
            // The sort keys Zotero documents, plus the seed's relevance (which falls back).
            let known_sort = |v: &Value| {
                v.as_str().is_some_and(|s| {
                    [
                        "relevance",
                        "dateAdded",
                        "dateModified",
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
                        "addedBy",
                    ]
                    .contains(&s)
                })
            };
            if get("sort").is_some_and(|v| !known_sort(v)) {
                bad.insert("sort".into());
            }
            if let Some(tags) = get("tags") {
                let ok = tags.as_array().is_some_and(|a| {
                    let strings: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                    let unique: HashSet<&str> = strings.iter().copied().collect();
                    strings.len() == a.len()
                        && strings.iter().all(|s| !s.is_empty())
                        && unique.len() == strings.len()
                });
                if !ok {
                    bad.insert("tags".into());
                }
            }
        }
        "zotero_list_collections" => {
            if get("limit").is_some_and(|v| !integer_in(v, 1.0, 100.0)) {
                bad.insert("limit".into());
            }
            if get("start").is_some_and(|v| !integer_in(v, 0.0, u64::MAX as f64)) {
                bad.insert("start".into());
            }
        }
        "zotero_get_item" => {
            let is_key = get("item_key").and_then(Value::as_str).is_some_and(|k| {
                k.chars().count() == 8 && k.chars().all(|c| KEY_ALPHABET.contains(c))
            });
            if !is_key {
                bad.insert("item_key".into());
            }
        }
        _ => {}
    }
    bad
}

fn fuzz_calls(lib_keys: Vec<String>) -> impl Strategy<Value = Vec<(usize, Map<String, Value>)>> {
    proptest::collection::vec(
        (0usize..4).prop_flat_map(move |t| (Just(t), args_strategy(t, lib_keys.clone()))),
        1..10,
    )
}

/// A small start (not one of the huge numbers) and a sort the emulator accepts.
fn expect_search_ok(args: &Map<String, Value>) -> bool {
    let small = |f: &str| {
        args.get(f)
            .is_none_or(|v| v.is_null() || v.as_f64().is_some_and(|n| n <= 1e6))
    };
    let sort_ok = args.get("sort").is_none_or(|s| {
        s.is_null()
            || matches!(
                s.as_str(),
                Some("relevance" | "dateAdded" | "dateModified" | "title" | "creator" | "date")
            )
    });
    small("start") && small("offset") && sort_ok
}

const FUZZ_SEED: u64 = 7;

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn random_arguments_are_validated_before_any_request(
        calls in fuzz_calls(
            Library::synthetic(12, FUZZ_SEED)
                .items
                .iter()
                .map(|i| i["key"].as_str().unwrap().to_string())
                .collect()
        ),
    ) {
        let lib = Library::synthetic(12, FUZZ_SEED);
        let lib_keys: HashSet<String> = lib
            .items
            .iter()
            .map(|i| i["key"].as_str().unwrap().to_string())
            .collect();
        runtime().block_on(async {
            let (emu, server) = start(lib, &[("ZOTERO_RETRY_MAX_ATTEMPTS", "1")]).await;
            for (tool, args) in calls {
                let (name, allowed) = TOOLS[tool];
                let bad = invalid_fields(name, allowed, &args);
                let before = emu.requests().len();
                let result = server
                    .call_raw(name, Value::Object(args.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("{name} {args:?}: protocol error {e}"));
                let a = common::to_answer(result);
                let sent = emu.requests().len() - before;
                let ctx = format!("{name} {}: {}", Value::Object(args.clone()), a.envelope);
                let field = a.details()["field"].as_str().map(str::to_string);

                // Anything that names a field was decided locally.
                if field.is_some() {
                    assert_eq!(a.code(), "ZOTERO_VALIDATION_ERROR", "{ctx}");
                    assert_eq!(sent, 0, "a rejected call reached Zotero: {ctx}");
                }
                if !bad.is_empty() {
                    a.expect_err("ZOTERO_VALIDATION_ERROR");
                    let field = field.unwrap_or_else(|| panic!("no details.field: {ctx}"));
                    assert!(bad.contains(&field), "field {field} is not one of {bad:?}: {ctx}");
                    assert_eq!(sent, 0, "{ctx}");
                    continue;
                }
                assert!(field.is_none(), "valid arguments rejected: {ctx}");
                match name {
                    "zotero_get_sort_values" => {
                        assert_eq!(a.expect_ok()["default"], "relevance", "{ctx}");
                        assert_eq!(sent, 0, "{ctx}");
                    }
                    "zotero_get_item" => {
                        let key = args["item_key"].as_str().unwrap();
                        if lib_keys.contains(key) {
                            assert_eq!(a.expect_ok()["item"]["item_key"], key, "{ctx}");
                        } else {
                            a.expect_err("ZOTERO_NOT_FOUND");
                            assert_eq!(a.details()["status"], 404, "{ctx}");
                        }
                    }
                    "zotero_list_collections" => {
                        if expect_search_ok(&args) {
                            assert_eq!(a.expect_ok()["total"], 3, "{ctx}");
                        }
                        assert_eq!(sent, 1, "{ctx}");
                    }
                    _ => {
                        if expect_search_ok(&args) {
                            let data = a.expect_ok();
                            let limit = args.get("limit").and_then(Value::as_f64).unwrap_or(25.0);
                            let n = data["items"].as_array().map_or(0, Vec::len);
                            assert!(n as f64 <= limit, "{ctx}");
                        } else {
                            assert!(!a.ok() || data_is_page(a.data()), "{ctx}");
                        }
                        assert!(sent >= 1, "{ctx}");
                    }
                }
            }
            let a = server.call("zotero_get_sort_values", json!({})).await;
            assert_eq!(a.expect_ok()["fallback"], "dateModified");
            server.stop().await;
        });
    }
}

fn data_is_page(data: &Value) -> bool {
    data["items"].is_array() && data["total"].is_u64()
}
