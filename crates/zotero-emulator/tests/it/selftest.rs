//! Self-test of the Zotero Web API emulator (crates/zotero-emulator/): drives it with a plain hyper
//! client over HTTP and checks it behaves like api.zotero.org (auth, errors, search, filters,
//! sorting, paging, derived metadata). The injectable faults: `faults.rs`.

use std::collections::HashSet;

use bytes::Bytes;
use zotero_emulator::testing::{send, Resp, SendError};
use zotero_emulator::{Emulator, Library, API_KEY, USER_ID};

/// GET `url` (absolute, or a path on the emulator) with the given headers; an error if the
/// client does not receive a complete answer.
pub(crate) async fn get_with(
    emu: &Emulator,
    url: &str,
    headers: &[(&str, &str)],
) -> Result<Resp, SendError> {
    let mut h = vec![("Zotero-API-Version", "3")];
    h.extend_from_slice(headers);
    send(emu, "GET", url, &h, Bytes::new()).await
}

pub(crate) async fn get(emu: &Emulator, url: &str) -> Resp {
    get_with(emu, url, &[("Zotero-API-Key", API_KEY)])
        .await
        .unwrap()
}

pub(crate) fn items(path: &str) -> String {
    format!("/users/{USER_ID}/{path}")
}

fn key_set(r: &Resp) -> HashSet<String> {
    r.keys().into_iter().collect()
}

fn set(keys: &[&str]) -> HashSet<String> {
    keys.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn keys_current_and_authentication() {
    let emu = Emulator::start().await;
    let r = get(&emu, "/keys/current").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("zotero-api-version").as_deref(), Some("3"));
    let v = r.json();
    assert_eq!(v["userID"], USER_ID);
    assert_eq!(v["key"], API_KEY);
    assert_eq!(v["access"]["user"]["write"], true);

    let bearer = format!("Bearer {API_KEY}");
    let r = get_with(&emu, "/keys/current", &[("Authorization", &bearer)])
        .await
        .unwrap();
    assert_eq!(r.status, 200);

    for path in ["/keys/current".to_string(), items("items")] {
        let r = get_with(
            &emu,
            &path,
            &[("Zotero-API-Key", "WrongKey0123456789abcdef")],
        )
        .await
        .unwrap();
        assert_eq!((r.status, r.text().as_str()), (403, "Invalid key"));
    }
    let r = get_with(&emu, &items("items"), &[]).await.unwrap();
    assert_eq!(r.status, 403);
    let r = get(&emu, "/users/999/items").await;
    assert_eq!(r.status, 403);
    let r = get_with(&emu, &items("items"), &[("Authorization", "Bearer")])
        .await
        .unwrap();
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn single_items_and_derived_metadata() {
    let emu = Emulator::start().await;
    let r = get(&emu, &items("items/ZZZZZZZZ")).await;
    assert_eq!((r.status, r.text().as_str()), (404, "Not found"));
    assert!(r.header("last-modified-version").is_none());

    let r = get(&emu, &items("items/VASWANI7")).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("last-modified-version"),
        Some(emu.library_version().to_string())
    );
    let v = r.json();
    assert_eq!(v["data"]["title"], "Attention Is All You Need");
    assert_eq!(v["data"]["DOI"], "10.48550/arXiv.1706.03762");
    assert_eq!(v["meta"]["numChildren"], 2);
    assert_eq!(
        v["links"]["attachment"]["attachmentType"],
        "application/pdf"
    );
    assert_eq!(v["links"]["attachment"]["attachmentSize"], 2215244);
    assert!(v["links"]["self"]["href"]
        .as_str()
        .unwrap()
        .starts_with(&emu.uri()));

    let r = get(&emu, &items("items/VASWANI7/children")).await;
    assert_eq!(key_set(&r), set(&["VASPDF23", "VASNOTE4"]));
    for c in r.json().as_array().unwrap() {
        assert_eq!(c["data"]["parentItem"], "VASWANI7");
        assert!(c["links"]["up"]["href"]
            .as_str()
            .unwrap()
            .ends_with("/items/VASWANI7"));
        // A note counts its attachments, a PDF its annotations (`getUncachedResponseProps`).
        assert_eq!(c["meta"]["numChildren"], 0, "{c}");
    }
    let annotated = get(&emu, &items("items/RESPDF42")).await.json();
    assert_eq!(annotated["meta"]["numChildren"], 9);
    let epub = get(&emu, &items("items/RESEPB43")).await.json();
    assert!(epub["meta"].get("numChildren").is_none(), "{epub}");
    let pdf = get(&emu, &items("items/VASPDF23")).await.json();
    assert_eq!(pdf["data"]["contentType"], "application/pdf");
    assert_eq!(pdf["links"]["enclosure"]["length"], 2215244);
    let r = get(&emu, &items("items/ZZZZZZZZ/children")).await;
    assert_eq!(r.status, 404);
    // A recorded item without children in this library says so.
    assert_eq!(
        get(&emu, &items("items/Z6TE2UMT")).await.json()["meta"]["numChildren"],
        0
    );
}

#[tokio::test]
async fn quick_search() {
    let emu = Emulator::start().await;
    // A note matches on its title (its first line): "Key idea: self-attention ...".
    let r = get(&emu, &items("items?q=attention")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7", "VASNOTE4"]));
    let r = get(&emu, &items("items/top?q=attention")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7"]));
    let r = get(&emu, &items("items?q=VASWANI%202017")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7"]));
    let r = get(&emu, &items("items?q=vaswani+2016")).await;
    assert!(r.keys().is_empty());
    assert_eq!(r.header("total-results").as_deref(), Some("0"));
    // Accent-insensitive like the server's collation: "Jiménez".
    let r = get(&emu, &items("items?q=jimenez")).await;
    assert_eq!(key_set(&r), set(&["GIFZST3I"]));
    // Abstracts are not searched by the default mode, nor by "everything" without full text.
    let r = get(&emu, &items("items?q=transduction")).await;
    assert!(r.keys().is_empty());
    let r = get(&emu, &items("items?q=transduction&qmode=everything")).await;
    assert!(r.keys().is_empty());
    emu.set_fulltext("VASPDF23", "sequence transduction with attention");
    let r = get(&emu, &items("items?q=transduction&qmode=everything")).await;
    assert_eq!(key_set(&r), set(&["VASPDF23"]));
    // In /top a matching child shows its parent.
    let r = get(&emu, &items("items/top?q=transduction&qmode=everything")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7"]));
    let r = get(&emu, &items("items?q=x&qmode=bogus")).await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "Invalid 'qmode' value 'bogus'")
    );
    // A quoted phrase must match whole.
    let r = get(&emu, &items("items?q=%22all+you+need%22")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7"]));
    let r = get(&emu, &items("items?q=%22you+all%22")).await;
    assert!(r.keys().is_empty());
}

#[tokio::test]
async fn tag_and_item_type_filters() {
    let emu = Emulator::start().await;
    let nlp = set(&["VASWANI7", "NLPML6K7", "BERTDV82"]);
    assert_eq!(key_set(&get(&emu, &items("items?tag=nlp")).await), nlp);
    assert_eq!(key_set(&get(&emu, &items("items?tag=NLP")).await), nlp);
    let r = get(&emu, &items("items?tag=nlp&tag=ml")).await;
    assert_eq!(key_set(&r), set(&["NLPML6K7", "BERTDV82"]));
    let r = get(&emu, &items("items?tag=transformers%20%7C%7C%20ml")).await;
    assert_eq!(key_set(&r), nlp);
    let r = get(&emu, &items("items?tag=nlp&tag=-ml")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7"]));
    let r = get(&emu, &items("items?tag=no-such-tag")).await;
    assert!(r.keys().is_empty());
    let all = get(&emu, &items("items?limit=100")).await.json();
    let tagged_ml = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            i["data"]["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["tag"] == "ml")
        })
        .count();
    // A negation leaves annotations out (`Zotero_Items::search`).
    let annotations = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["data"]["itemType"] == "annotation")
        .count();
    assert!(annotations > 0);
    let r = get(&emu, &items("items?tag=-ml&limit=100")).await;
    assert_eq!(
        r.keys().len(),
        all.as_array().unwrap().len() - tagged_ml - annotations
    );

    let r = get(&emu, &items("items?itemType=-attachment&limit=100")).await;
    let v = r.json();
    assert!(!v.as_array().unwrap().is_empty());
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["data"]["itemType"] != "attachment"));
    assert!(r.keys().contains(&"VASNOTE4".to_string()));
    let r = get(
        &emu,
        &items("items?itemType=book%20%7C%7C%20journalArticle&limit=100"),
    )
    .await;
    let types: HashSet<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["itemType"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, set(&["book", "journalArticle"]));
    let r = get(&emu, &items("items?itemType=book&itemType=film")).await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "Cannot specify 'itemType' more than once")
    );
    let r = get(&emu, &items("items?itemType=paper")).await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "Invalid itemType 'paper'")
    );
}

#[tokio::test]
async fn sort_direction_and_validation() {
    let emu = Emulator::start().await;
    let r = get(&emu, &items("items?sort=relevance")).await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "Invalid 'sort' value 'relevance'")
    );
    let r = get(&emu, &items("items?direction=up")).await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "Invalid 'direction' value 'up'")
    );

    // Default: dateModified, newest first.
    let v = get(&emu, &items("items?limit=100")).await.json();
    let dates: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["dateModified"].as_str().unwrap())
        .collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
    // Title: ascending, case-insensitive.
    let v = get(&emu, &items("items/top?sort=title&limit=100"))
        .await
        .json();
    let titles: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["title"].as_str().unwrap().to_lowercase())
        .collect();
    let clean = |t: &String| {
        t.trim_start_matches(|c: char| !c.is_alphanumeric())
            .to_string()
    };
    assert!(
        titles.windows(2).all(|w| clean(&w[0]) <= clean(&w[1])),
        "{titles:?}"
    );
    let v = get(
        &emu,
        &items("items/top?sort=title&direction=desc&limit=100"),
    )
    .await
    .json();
    let rev: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["title"].as_str().unwrap().to_lowercase())
        .collect();
    assert_eq!(rev.first(), titles.last());
    // Creator: by the first creator's last name; items without creators last.
    let v = get(&emu, &items("items/top?sort=creator&limit=100"))
        .await
        .json();
    let names: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["meta"]["creatorSummary"]
                .as_str()
                .unwrap_or("")
                .to_lowercase()
        })
        .collect();
    let first_empty = names.iter().position(|n| n.is_empty()).unwrap();
    assert!(names[first_empty..].iter().all(|n| n.is_empty()));
    assert!(
        names[..first_empty].windows(2).all(|w| w[0] <= w[1]),
        "{names:?}"
    );
}

#[tokio::test]
async fn top_trash_and_formats() {
    let emu = Emulator::start().await;
    let all = get(&emu, &items("items?limit=100")).await;
    let top = get(&emu, &items("items/top?limit=100")).await;
    let all_v = all.json();
    let children = all_v
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["data"].get("parentItem").is_some())
        .count();
    assert!(children >= 4);
    assert_eq!(top.keys().len(), all.keys().len() - children);
    assert!(top
        .json()
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["data"].get("parentItem").is_none()));
    assert!(!all.keys().contains(&"TRASHD33".to_string()));
    let trash = get(&emu, &items("items/trash")).await;
    assert_eq!(trash.keys(), vec!["TRASHD33".to_string()]);

    let keys = get(&emu, &items("items?format=keys")).await;
    assert_eq!(keys.header("content-type").as_deref(), Some("text/plain"));
    let listed: HashSet<String> = keys.text().lines().map(str::to_string).collect();
    assert_eq!(listed, key_set(&all));
    let versions = get(&emu, &items("items?format=versions&since=6"))
        .await
        .json();
    let m = versions.as_object().unwrap();
    assert!(!m.is_empty() && m.values().all(|v| v.as_u64().unwrap() > 6));
    let v = emu.library_version().to_string();
    let r = get_with(
        &emu,
        &items("items"),
        &[
            ("Zotero-API-Key", API_KEY),
            ("If-Modified-Since-Version", &v),
        ],
    )
    .await
    .unwrap();
    assert_eq!((r.status, r.body.len()), (304, 0));
}

#[tokio::test]
async fn collections_and_counts() {
    let emu = Emulator::start().await;
    let r = get(&emu, &items("collections?limit=100")).await;
    let v = r.json();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["data"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Reading List") && names.contains(&"reading list"));
    let rl = get(&emu, &items("collections/RDLSTUP3")).await.json();
    assert_eq!(rl["meta"]["numItems"], 2);
    assert_eq!(rl["meta"]["numCollections"], 1);
    let top = get(&emu, &items("collections/top?limit=100")).await;
    assert!(top
        .json()
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["data"]["parentCollection"] == false));
    let sub = get(&emu, &items("collections/RDLSTUP3/collections")).await;
    assert_eq!(sub.keys(), vec!["TRNSFM52".to_string()]);
    let r = get(&emu, &items("collections/TRNSFM52/items")).await;
    assert_eq!(key_set(&r), set(&["VASWANI7", "BERTDV82"]));
    let r = get(&emu, &items("collections/ZZZZZZZZ/items")).await;
    assert_eq!((r.status, r.text().as_str()), (404, "Collection not found"));
    // Sherlock Holmes: the recorded count is served as computed from this library.
    let sh = get(&emu, &items("collections/9KH9TNSJ")).await.json();
    let inside = get(&emu, &items("collections/9KH9TNSJ/items?format=keys")).await;
    assert_eq!(
        sh["meta"]["numItems"].as_u64().unwrap() as usize,
        inside.text().lines().count()
    );

    emu.reset_counts();
    get(&emu, &items("items")).await;
    get(&emu, &items("items/top")).await;
    get(&emu, &items("collections")).await;
    assert_eq!(emu.count("GET", &items("items")), 2);
    assert_eq!(emu.count("GET", &items("collections")), 1);
    assert_eq!(emu.count("POST", "/"), 0);
    assert_eq!(emu.requests()[0].header("zotero-api-key"), Some(API_KEY));
}

#[tokio::test]
async fn paging_links_and_limit_cap() {
    let emu = Emulator::with_library(Library::synthetic(250, 7)).await;
    let r = get(&emu, &items("items?limit=500")).await;
    assert_eq!(r.keys().len(), 100);
    assert_eq!(r.header("total-results").as_deref(), Some("250"));
    let base = format!("{}/users/{USER_ID}/items", emu.uri());
    assert_eq!(r.link("next"), Some(format!("{base}?limit=100&start=100")));
    assert_eq!(r.link("last"), Some(format!("{base}?limit=100&start=200")));
    assert_eq!(r.link("first"), None);
    assert_eq!(r.link("prev"), None);
    assert_eq!(
        r.link("alternate"),
        Some(format!("https://www.zotero.org/users/{USER_ID}/items"))
    );
    let r = get(&emu, &items("items?limit=0")).await;
    assert_eq!(r.keys().len(), 25);

    // Walking `next` visits every item exactly once, in order, with the query kept.
    let mut seen = Vec::new();
    let mut url = items("items?sort=title&limit=30&tag=tag-a");
    let total = get(&emu, &url)
        .await
        .header("total-results")
        .unwrap()
        .parse::<usize>()
        .unwrap();
    let mut pages = 0;
    loop {
        let r = get(&emu, &url).await;
        assert_eq!(r.status, 200);
        pages += 1;
        if pages > 1 {
            assert!(r.link("first").unwrap().contains("sort=title"));
            assert!(r.link("prev").is_some());
        }
        seen.extend(r.keys());
        match r.link("next") {
            Some(next) => {
                assert!(next.contains("tag=tag-a") && next.contains("limit=30"));
                url = next;
            }
            None => break,
        }
    }
    assert!(total > 30);
    assert_eq!(seen.len(), total);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), total);
    assert_eq!(pages, total.div_ceil(30));

    // Synthetic libraries are deterministic per seed and have varied tags.
    let a = Library::synthetic(50, 1);
    let b = Library::synthetic(50, 1);
    assert_eq!(a.items, b.items);
    let tags: HashSet<String> = a
        .items
        .iter()
        .flat_map(|i| {
            i["data"]["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["tag"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(tags.len() >= 4);
}
