//! `zotero_list_tags`: the library's tags with type and count, paged; by collection, by an
//! item filter, by a substring; sorted by name or count.

use serde_json::{json, Value};

use super::{is_trashed, Setup, Where, EVERYWHERE};

/// (name, type, items of the library carrying it)
type TagRow = (String, u64, u64);

fn rows(d: &Value) -> Vec<TagRow> {
    d["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["tag"].as_str().unwrap().to_string(),
                t["type"].as_u64().unwrap(),
                t["num_items"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn names(d: &Value) -> Vec<String> {
    rows(d).into_iter().map(|r| r.0).collect()
}

/// The tags of the stored items `keep` picks (not in the trash), by name; counted over the
/// whole library.
fn expected(s: &Setup, keep: impl Fn(&Value) -> bool) -> Vec<TagRow> {
    let items = s.items();
    let tags_of = |i: &Value| -> Vec<(String, u64)> {
        i["data"]["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["tag"].as_str().unwrap().to_string(),
                    t["type"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let mut out: Vec<TagRow> = Vec::new();
    for i in items.iter().filter(|i| !is_trashed(i) && keep(i)) {
        for (name, ty) in tags_of(i) {
            if out.iter().any(|(n, t, _)| *n == name && *t == ty) {
                continue;
            }
            let count = items
                .iter()
                .filter(|j| tags_of(j).contains(&(name.clone(), ty)))
                .count() as u64;
            out.push((name, ty, count));
        }
    }
    out.sort_by(|a, b| {
        a.0.to_lowercase()
            .cmp(&b.0.to_lowercase())
            .then(a.1.cmp(&b.1))
    });
    out
}

#[tokio::test]
async fn the_library_tags_come_by_name_with_type_and_count_page_by_page() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let mut all: Vec<TagRow> = Vec::new();
        let mut start = 0;
        let mut total = None;
        loop {
            let d = s
                .data("zotero_list_tags", json!({"limit": 10, "start": start}))
                .await;
            let t = d["total"].as_u64().unwrap();
            assert_eq!(*total.get_or_insert(t), t, "{at:?}");
            all.extend(rows(&d));
            match d["next_start"].as_u64() {
                Some(n) => start = n,
                None => break,
            }
        }
        let want = expected(&s, |_| true);
        assert_eq!(all, want, "{at:?}");
        assert_eq!(total, Some(want.len() as u64));
        // A tag only trashed items carry is not a tag of the library's items.
        assert!(!all.iter().any(|r| r.0 == "draft"), "{at:?}");
        let nlp = all.iter().find(|r| r.0 == "nlp").unwrap();
        assert_eq!((nlp.1, nlp.2), (0, 3), "{at:?}: typed by hand, on 3 items");
        let fiction = all.iter().find(|r| r.0 == "Fiction").unwrap();
        assert_eq!(fiction.1, 1, "{at:?}: automatic");
    }
}

#[tokio::test]
async fn tags_of_a_collection_a_filter_or_a_substring() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let list = |args: Value| s.data("zotero_list_tags", args);
        let d = list(json!({"collection_key": "RDLSTUP3"})).await;
        assert_eq!(names(&d), ["ml", "nlp", "transformers"], "{at:?}");
        // Counts are the whole library's, whatever the filter.
        assert_eq!(rows(&d)[1].2, 3);
        let d = list(json!({"item_tags": ["ml"]})).await;
        assert_eq!(names(&d), ["ml", "nlp", "transformers"], "{at:?}");
        let d = list(json!({"item_type": "film", "limit": 100})).await;
        let film = expected(&s, |i| i["data"]["itemType"] == "film");
        assert_eq!(rows(&d), film, "{at:?}");
        // "Deep learning" and "Deep Residual Learning …" (RESNET52 of reading.json).
        let d = list(json!({"item_query": "deep"})).await;
        assert_eq!(
            names(&d),
            ["ml", "nlp", "resnet", "transformers", "vision"],
            "{at:?}"
        );
        let d = list(json!({"item_query": "quokkanomics"})).await;
        assert_eq!(d["total"], 0, "{at:?}");
        list(json!({"item_query": "quokkanomics", "item_qmode": "everything"})).await;
        let sent = s.requests().pop().unwrap();
        assert!(sent
            .query
            .contains(&("itemQ".into(), "quokkanomics".into())));
        assert!(sent
            .query
            .contains(&("itemQMode".into(), "everything".into())));
        let d = list(json!({"query": "lock", "limit": 100})).await;
        let want: Vec<String> = expected(&s, |_| true)
            .into_iter()
            .map(|r| r.0)
            .filter(|n| n.contains("lock"))
            .collect();
        assert_eq!(names(&d), want, "{at:?}");
        assert_eq!(want.len(), 3);
        let sent = s.requests().pop().unwrap();
        assert!(sent.query.contains(&("q".into(), "lock".into())));
        assert!(sent.query.contains(&("qmode".into(), "contains".into())));
    }
}

#[tokio::test]
async fn tags_sort_by_count_on_the_web_and_by_name_on_the_desktop() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let d = s
            .data("zotero_list_tags", json!({"sort": "count", "limit": 100}))
            .await;
        let got = rows(&d);
        let sent = s.requests().pop().unwrap();
        assert!(sent.query.contains(&("sort".into(), "numItems".into())));
        assert!(sent.query.contains(&("direction".into(), "desc".into())));
        if at == Where::Local {
            // The desktop sorts tags by name whatever it is asked (its sort compares fields
            // tags do not have).
            assert_eq!(got, expected(&s, |_| true));
        } else {
            assert_eq!(got[0].0, "nlp", "{at:?}: the most used first");
            assert!(got.windows(2).all(|w| w[0].2 >= w[1].2), "{at:?}: {got:?}");
            let d = s
                .data(
                    "zotero_list_tags",
                    json!({"sort": "name", "direction": "desc", "limit": 100}),
                )
                .await;
            let mut want = expected(&s, |_| true);
            want.reverse();
            assert_eq!(rows(&d), want, "{at:?}");
        }
        let before = s.requests().len();
        for (args, field) in [
            (json!({"item_qmode": "everything"}), "item_qmode"),
            (json!({"query": ""}), "query"),
            (json!({"sort": "numItems"}), "sort"),
            (json!({"item_tags": ["a || b"]}), "item_tags[0]"),
        ] {
            let a = s.call("zotero_list_tags", args.clone()).await;
            let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
            assert_eq!(e["details"]["field"], field, "{args}");
        }
        assert_eq!(s.requests().len(), before);
    }
}
