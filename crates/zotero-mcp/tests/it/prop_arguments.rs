//! Property tests through the BUILT binary over stdio, against the stateful Zotero emulator.
//!
//! Argument fuzzing: random argument objects (real field names, junk keys, values of every
//!    JSON type) for all four tools never break the server; invalid arguments (as modelled here
//!    from the input schemas) are a `ZOTERO_VALIDATION_ERROR` naming an invalid field and reach
//!    no upstream request; valid ones are never rejected locally.
//!
//! Each proptest case builds its own tokio runtime, emulator and server process.

use std::collections::{BTreeSet, HashSet};

use crate::prop_support::{config, runtime, start, KEY_ALPHABET, TAGS, WORDS};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use zotero_emulator::Library;

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
            // Errors name the element: `tags[2]` (not a string, empty, or a repeat).
            if let Some(tags) = get("tags") {
                match tags.as_array() {
                    None => {
                        bad.insert("tags".into());
                    }
                    Some(a) => {
                        let mut seen = HashSet::new();
                        for (i, t) in a.iter().enumerate() {
                            let ok = t.as_str().is_some_and(|s| !s.is_empty() && seen.insert(s));
                            if !ok {
                                bad.insert(format!("tags[{i}]"));
                            }
                        }
                    }
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
                let a = crate::common::to_answer(result);
                server.check_output(name, &a).await;
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
