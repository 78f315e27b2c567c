//! `zotero_list_items` (paging, collection, tags, item types, since, trash, sort) and the
//! search's extensions (`qmode`, `item_type`, `collection_key`, the peer's `tag`).

use serde_json::{json, Value};

use super::{has_tag, is_top, is_trashed, key_set, keys, sorted, Setup, EVERYWHERE};

/// What the listing should hold: the stored items that pass `keep`, top-level and not in
/// the trash.
fn expected(s: &Setup, keep: impl Fn(&Value) -> bool) -> Vec<String> {
    sorted(
        s.items()
            .iter()
            .filter(|i| is_top(i) && !is_trashed(i) && keep(i))
            .map(|i| i["key"].as_str().unwrap().to_string()),
    )
}

#[tokio::test]
async fn every_top_level_item_comes_page_by_page_newest_first() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let mut seen: Vec<String> = Vec::new();
        let mut dates: Vec<String> = Vec::new();
        let mut start = 0;
        let mut total = None;
        loop {
            let d = s
                .data("zotero_list_items", json!({"limit": 7, "start": start}))
                .await;
            let t = d["total"].as_u64().unwrap();
            assert_eq!(*total.get_or_insert(t), t, "{at:?}: total is stable");
            let version = s.emu.library(s.id()).version();
            assert_eq!(d["library_version"], version, "{at:?}");
            for i in d["items"].as_array().unwrap() {
                let key = i["item_key"].as_str().unwrap();
                // (Some fixture keys, such as BOOKSF25, are not valid keys: no link.)
                if key
                    .chars()
                    .all(|c| "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ".contains(c))
                {
                    assert_eq!(i["zotero_url"], s.zotero_url(key), "{at:?}");
                }
                let stored = s.emu.library(s.id()).item(key).unwrap();
                dates.push(stored["data"]["dateModified"].as_str().unwrap().to_string());
                seen.push(key.to_string());
            }
            match d["next_start"].as_u64() {
                Some(n) => start = n,
                None => break,
            }
        }
        assert_eq!(sorted(&seen), expected(&s, |_| true), "{at:?}");
        assert_eq!(total, Some(seen.len() as u64));
        let mut newest_first = dates.clone();
        newest_first.sort_by(|a, b| b.cmp(a));
        assert_eq!(dates, newest_first, "{at:?}: dateModified, newest first");
    }
}

#[tokio::test]
async fn items_are_listed_by_collection_tags_and_types() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let list = |args: Value| s.data("zotero_list_items", args);
        let d = list(json!({"collection_key": "9KH9TNSJ", "limit": 100})).await;
        let in_sherlock = |i: &Value| {
            i["data"]["collections"]
                .as_array()
                .is_some_and(|c| c.iter().any(|k| k == "9KH9TNSJ"))
        };
        assert_eq!(key_set(&d), expected(&s, in_sherlock), "{at:?}");
        let d = list(json!({"tags": ["nlp"], "exclude_tags": ["ml"]})).await;
        assert_eq!(keys(&d), ["VASWANI7"], "{at:?}");
        let d = list(json!({"tags": ["nlp"], "limit": 100})).await;
        assert_eq!(key_set(&d), expected(&s, |i| has_tag(i, "nlp")), "{at:?}");
        // One type, several (a list or Zotero's `||`), and a type left out.
        let of_type = |types: &'static [&'static str]| {
            move |i: &Value| types.iter().any(|t| i["data"]["itemType"] == *t)
        };
        let d = list(json!({"item_type": "book", "limit": 100})).await;
        assert_eq!(key_set(&d), expected(&s, of_type(&["book"])), "{at:?}");
        for both in [json!(["book", "film"]), json!("book || film")] {
            let d = list(json!({"item_type": both, "limit": 100})).await;
            assert_eq!(
                key_set(&d),
                expected(&s, of_type(&["book", "film"])),
                "{at:?}"
            );
        }
        let d = list(json!({"item_type": "-attachment", "top_only": false, "limit": 100})).await;
        let mut not_attachments: Vec<String> = s
            .items()
            .iter()
            // A negated type filter leaves annotations out too (dataserver Items::search:
            // "a negation isn't asking for annotations").
            .filter(|i| {
                !is_trashed(i)
                    && i["data"]["itemType"] != "attachment"
                    && i["data"]["itemType"] != "annotation"
            })
            .map(|i| i["key"].as_str().unwrap().to_string())
            .collect();
        not_attachments.sort();
        assert_eq!(key_set(&d), not_attachments, "{at:?}");
        assert!(
            not_attachments.iter().any(|k| k == "VASNOTE4"),
            "child notes too"
        );
    }
}

#[tokio::test]
async fn an_unknown_type_or_collection_is_refused_clearly() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let before = s.requests().len();
        let a = s
            .call(
                "zotero_list_items",
                json!({"item_type": ["book", "bogusType"]}),
            )
            .await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(e["details"]["field"], "item_type", "{at:?}");
        assert!(e["message"].as_str().unwrap().contains("bogusType"), "{e}");
        let valid = e["details"]["valid_item_types"].as_array().unwrap();
        for t in ["book", "journalArticle", "attachment", "note"] {
            assert!(valid.contains(&json!(t)), "{at:?}: {t} in {valid:?}");
        }
        // Only the list of types was asked for, not the listing.
        let asked: Vec<String> = s.requests()[before..]
            .iter()
            .map(|r| r.path.clone())
            .collect();
        assert!(asked.iter().all(|p| p.ends_with("/itemTypes")), "{asked:?}");
        let a = s
            .call(
                "zotero_search_items",
                json!({"query": "x", "item_type": "bogusType"}),
            )
            .await;
        a.expect_err("ZOTERO_VALIDATION_ERROR");
        // The desktop would list the whole library for a collection it does not have.
        for (tool, args) in [
            ("zotero_list_items", json!({"collection_key": "ZZZZ2345"})),
            (
                "zotero_search_items",
                json!({"query": "a", "collection_key": "ZZZZ2345"}),
            ),
            ("zotero_list_tags", json!({"collection_key": "ZZZZ2345"})),
        ] {
            let a = s.call(tool, args).await;
            let e = a.expect_err("ZOTERO_NOT_FOUND");
            assert!(e["message"].as_str().unwrap().contains("ZZZZ2345"), "{e}");
        }
        // Bad shapes are refused before anything is sent.
        let before = s.requests().len();
        for (args, field) in [
            (json!({"item_type": ["book", "-note"]}), "item_type"),
            (json!({"item_type": "book; DROP"}), "item_type"),
            (
                json!({"trashed": true, "collection_key": "9KH9TNSJ"}),
                "trashed",
            ),
            (json!({"trashed": true, "top_only": true}), "top_only"),
            (json!({"sort": "relevance"}), "sort"),
            (json!({"direction": "up"}), "direction"),
            (json!({"since": -1}), "since"),
        ] {
            let a = s.call("zotero_list_items", args.clone()).await;
            let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
            assert_eq!(e["details"]["field"], field, "{args}");
        }
        assert_eq!(s.requests().len(), before, "{at:?}");
    }
}

#[tokio::test]
async fn since_the_trash_and_the_sort_order() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let first = s.data("zotero_list_items", json!({})).await;
        let version = first["library_version"].as_u64().unwrap();
        let d = s.data("zotero_list_items", json!({"since": version})).await;
        assert_eq!(d["total"], 0, "{at:?}: nothing changed yet");
        s.retitle("NLPML6K7", "Deep learning, revised").await;
        let d = s.data("zotero_list_items", json!({"since": version})).await;
        assert_eq!(keys(&d), ["NLPML6K7"], "{at:?}");
        assert_eq!(d["items"][0]["title"], "Deep learning, revised");
        assert!(d["library_version"].as_u64().unwrap() > version);

        let d = s.data("zotero_list_items", json!({"trashed": true})).await;
        let trashed: Vec<String> = sorted(
            s.items()
                .iter()
                .filter(|i| is_trashed(i))
                .map(|i| i["key"].as_str().unwrap()),
        );
        assert_eq!(key_set(&d), trashed, "{at:?}");
        assert_eq!(trashed, ["TRASHD33"]);
        let trash_only = s
            .data(
                "zotero_list_items",
                json!({"trashed": true, "top_only": false}),
            )
            .await;
        assert_eq!(key_set(&trash_only), trashed);

        let titles = |d: &Value| -> Vec<String> {
            d["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["title"].as_str().unwrap().to_string())
                .collect()
        };
        let asc = s
            .data(
                "zotero_list_items",
                json!({"tags": ["nlp"], "sort": "title"}),
            )
            .await;
        let asc = titles(&asc);
        assert_eq!(
            asc,
            [
                "Attention Is All You Need",
                "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                "Deep learning, revised"
            ],
            "{at:?}"
        );
        let desc = s
            .data(
                "zotero_list_items",
                json!({"tags": ["nlp"], "sort": "title", "direction": "desc"}),
            )
            .await;
        let mut reversed = asc.clone();
        reversed.reverse();
        assert_eq!(titles(&desc), reversed, "{at:?}");
    }
}

#[tokio::test]
async fn search_takes_qmode_item_type_collection_and_the_peer_tag() {
    for at in EVERYWHERE {
        let s = Setup::new(at).await;
        let search = |args: Value| s.data("zotero_search_items", args);
        // Words only in the PDF's full text: found by `everything`, as the parent item.
        s.emu
            .library(s.id())
            .set_fulltext("VASPDF23", "scaled dot-product quokkanomics");
        let d = search(json!({"query": "quokkanomics"})).await;
        assert_eq!(d["total"], 0, "{at:?}");
        let d = search(json!({"query": "quokkanomics", "qmode": "everything"})).await;
        assert_eq!(keys(&d), ["VASWANI7"], "{at:?}");
        let sent = s.requests().pop().unwrap();
        assert!(sent.query.contains(&("qmode".into(), "everything".into())));

        let d = search(json!({"query": "sherlock", "item_type": "film"})).await;
        assert_eq!(keys(&d), ["PG5ZCTJT"], "{at:?}");
        let d = search(json!({"query": "sherlock", "item_type": ["book"], "limit": 100})).await;
        assert!(d["total"].as_u64().unwrap() > 1);
        assert!(d["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["item_type"] == "book"));

        let d = search(json!({"query": "attention", "collection_key": "RDLSTUP3"})).await;
        assert_eq!(keys(&d), ["VASWANI7"], "{at:?}");
        let d = search(json!({"query": "attention", "collection_key": "RDLSTLW4"})).await;
        assert_eq!(d["total"], 0, "{at:?}");

        // The peer server's `tag`: a string or a list, in Zotero's syntax, all must hold.
        let d = search(json!({"query": "e", "tag": "transformers || ml"})).await;
        assert_eq!(key_set(&d), ["BERTDV82", "NLPML6K7", "VASWANI7"], "{at:?}");
        let d = search(json!({"query": "e", "tag": ["nlp", "-ml"]})).await;
        assert_eq!(keys(&d), ["VASWANI7"], "{at:?}");
        // With `tags` too: the conditions of both hold.
        let d = search(json!({"query": "e", "tags": ["nlp"], "tag": "-transformers"})).await;
        assert_eq!(keys(&d), ["NLPML6K7"], "{at:?}");
        let d = search(json!({"query": "e", "tags": ["ml"], "tag": ""})).await;
        assert_eq!(key_set(&d), ["BERTDV82", "NLPML6K7"], "{at:?}");
        // The seed's inputs alone still work as before.
        let d = search(json!({"query": "attention"})).await;
        assert!(keys(&d).contains(&"VASWANI7".to_string()));
    }
}
