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
//!
//! Each proptest case builds its own tokio runtime, emulator and server process.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::prop_support::{config, runtime, start, TAGS, WORDS};
use proptest::prelude::*;
use serde_json::{json, Value};
use zotero_emulator::{Fault, FaultKind, Library, USER_ID};

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
