//! `zotero_find_related` against the emulator's Zotero and its fake OpenAlex and Crossref:
//! references, citing works and both, most cited first; paging to the end with cursors
//! (also through a page cut by the answer's budget, on a work with 5,000 citing works);
//! in_library by DOI, by normalized title + year, and no match; Crossref's reference list
//! where OpenAlex has none; co-cited works; a 429 with Retry-After waited out; the manners
//! kept with OpenAlex (mailto, User-Agent with the contact) and no Zotero key sent there.

use serde_json::{json, Value};
use zotero_emulator::testing::create;
use zotero_emulator::{
    crossref_article, openalex_work, Emulator, Fault, FaultKind, MetadataHost, RetryAfter, API_KEY,
    USER_ID,
};

use crate::common::{env_for, in_process, Server};

const EMAIL: &str = "ada@lovelace-lab.org";
const TOOL: &str = "zotero_find_related";
/// The most characters of text an answer may hold.
const BUDGET: usize = 20_000;

async fn setup() -> (Emulator, Server) {
    setup_with(&[]).await
}

async fn setup_with(extra: &[(&str, &str)]) -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        [
            ("ZOTERO_OPENALEX_BASE", emu.openalex_base()),
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
            ("ZOTERO_CONTACT_EMAIL", EMAIL.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let server = in_process(&env).await;
    (emu, server)
}

async fn related(server: &Server, args: Value) -> Value {
    server.call(TOOL, args).await.expect_ok().clone()
}

fn titles(list: &Value) -> Vec<String> {
    list["works"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["title"].as_str().unwrap_or("").to_string())
        .collect()
}

fn counts(list: &Value) -> Vec<u64> {
    list["works"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["cited_by_count"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn an_items_references_and_citing_works_come_most_cited_first_marked_in_library() {
    let (emu, server) = setup().await;
    // RESNET52 holds DOI 10.1109/CVPR.2016.90 (OpenAlex W9000000002).
    let d = related(&server, json!({"item_keys": ["RESNET52"]})).await;
    assert_eq!(
        d["work"]["openalex_id"], "https://openalex.org/W9000000002",
        "{d}"
    );
    assert_eq!(d["work"]["in_library"], true);
    assert_eq!(d["work"]["item_key"], "RESNET52");

    let refs = &d["references"];
    assert_eq!(refs["source"], "OpenAlex");
    assert_eq!(refs["total"], 1);
    assert_eq!(
        titles(refs),
        ["ImageNet Large Scale Visual Recognition Challenge"]
    );
    assert_eq!(refs["works"][0]["doi"], "10.1007/s11263-015-0816-y");
    assert_eq!(refs["works"][0]["in_library"], false);
    assert!(refs.get("next_cursor").is_none(), "{d}");

    let citing = &d["citing"];
    assert_eq!(citing["total"], 2);
    assert_eq!(
        titles(citing),
        [
            "Attention Is All You Need",
            "A survey on deep learning in medical image analysis"
        ]
    );
    assert_eq!(counts(citing), [101234, 9123]);
    // Found by DOI: VASWANI7 holds 10.48550/arXiv.1706.03762 (OpenAlex writes it lower case).
    let attention = &citing["works"][0];
    assert_eq!(attention["in_library"], true, "{d}");
    assert_eq!(attention["item_key"], "VASWANI7");
    assert_eq!(attention["matched_by"], "doi");
    assert_eq!(
        attention["authors"],
        json!(["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"])
    );
    assert_eq!(attention["more_authors"], 5);
    assert_eq!(attention["year"], 2017);
    // Not in the library: the DOI is what zotero_add_by_identifier takes.
    let survey = &citing["works"][1];
    assert_eq!(survey["in_library"], false);
    assert!(survey.get("item_key").is_none());
    assert_eq!(survey["doi"], "10.1016/j.media.2017.07.005");

    // One direction at a time.
    let r = related(
        &server,
        json!({"dois": ["https://doi.org/10.1109/cvpr.2016.90"], "direction": "references"}),
    )
    .await;
    assert!(r.get("citing").is_none(), "{r}");
    assert_eq!(r["references"]["total"], 1);
    let c = related(
        &server,
        json!({"dois": ["10.1109/CVPR.2016.90"], "direction": "citing"}),
    )
    .await;
    assert!(c.get("references").is_none(), "{c}");
    assert_eq!(c["citing"]["total"], 2);
    // The lists were asked of OpenAlex by filter, sorted, with only the fields shown.
    let lists: Vec<_> = emu
        .requests_to(MetadataHost::OpenAlex)
        .into_iter()
        .filter(|r| r.path.ends_with("/works"))
        .collect();
    assert!(lists
        .iter()
        .all(|r| r.query_param("sort") == Some("cited_by_count:desc")));
    assert!(lists
        .iter()
        .any(|r| r.query_param("filter") == Some("cites:W9000000002")));
    assert!(lists
        .iter()
        .any(|r| r.query_param("filter") == Some("cited_by:W9000000002")));
    assert!(lists.iter().all(|r| r.query_param("select").is_some()));
}

/// A work the library holds under another title is found by its DOI, matched against every
/// DOI of the library (the DOI field, in any case, and `DOI:` lines of Extra), not only
/// among the items a title search finds.
#[tokio::test]
async fn works_held_under_another_title_are_found_by_doi() {
    let (emu, server) = setup().await;
    let survey = create(
        &emu,
        json!({"itemType": "journalArticle", "date": "2017",
               "title": "Deep learning for a billion medical images: lessons learned",
               "DOI": "10.1016/J.MEDIA.2017.07.005"}),
    )
    .await;
    let imagenet = create(
        &emu,
        json!({"itemType": "report", "date": "2015",
               "title": "ILSVRC, the technical report",
               "extra": "tex.note: x\nDOI: https://doi.org/10.1007/S11263-015-0816-Y"}),
    )
    .await;
    let before = emu.requests().len();
    let d = related(&server, json!({"item_keys": ["RESNET52"]})).await;
    let survey_work = &d["citing"]["works"][1];
    assert_eq!(survey_work["doi"], "10.1016/j.media.2017.07.005", "{d}");
    assert_eq!(survey_work["in_library"], true, "{d}");
    assert_eq!(survey_work["item_key"], survey.as_str());
    assert_eq!(survey_work["matched_by"], "doi");
    let reference = &d["references"]["works"][0];
    assert_eq!(reference["in_library"], true, "{d}");
    assert_eq!(reference["item_key"], imagenet.as_str());
    assert_eq!(reference["matched_by"], "doi");
    let to_zotero = emu.requests()[before..]
        .iter()
        .filter(|r| r.path.starts_with("/users/"))
        .count();
    eprintln!("requests to the Zotero API for 4 works: {to_zotero}");
}

#[tokio::test]
async fn citing_works_page_to_the_end_and_titles_match_by_normalized_title_and_year() {
    let (_emu, server) = setup().await;
    let (emu, server) = (_emu, server);
    // U-Net (W9000000003, 2015) is in the library without a DOI, its title written otherwise.
    let unet = create(
        &emu,
        json!({"itemType": "bookSection", "date": "2015",
               "title": "U-net — convolutional networks for biomedical image segmentation."}),
    )
    .await;
    // The survey's title, but another year: another work.
    create(
        &emu,
        json!({"itemType": "journalArticle", "date": "2016",
               "title": "A Survey on Deep Learning in Medical Image Analysis"}),
    )
    .await;

    // ImageNet (W9000000005) is cited by four works; one per page.
    let mut seen = Vec::new();
    let mut works = Vec::new();
    let mut args =
        json!({"dois": ["10.1007/s11263-015-0816-y"], "direction": "citing", "limit": 1});
    for _ in 0..10 {
        let d = related(&server, args.clone()).await;
        let list = &d["citing"];
        assert_eq!(list["total"], 4, "{d}");
        assert_eq!(list["works"].as_array().unwrap().len(), 1, "{d}");
        works.push(list["works"][0].clone());
        seen.extend(titles(list));
        match list["next_cursor"].as_str() {
            Some(next) => {
                args = json!({"dois": ["10.1007/s11263-015-0816-y"], "cursor": next, "limit": 1});
            }
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            "Deep Residual Learning for Image Recognition",
            "U-Net: Convolutional Networks for Biomedical Image Segmentation",
            "Deep learning",
            "A survey on deep learning in medical image analysis",
        ]
    );
    assert_eq!(works[0]["item_key"], "RESNET52");
    assert_eq!(works[1]["in_library"], true, "{}", works[1]);
    assert_eq!(works[1]["item_key"], unet.as_str());
    assert_eq!(works[1]["matched_by"], "title_year");
    assert_eq!(works[2]["item_key"], "NLPML6K7");
    assert_eq!(works[3]["in_library"], false, "{}", works[3]);
}

#[tokio::test]
async fn crossref_gives_the_references_of_a_work_openalex_does_not_know() {
    let (emu, server) = setup().await;
    let mut work = crossref_article(
        "10.5555/graph.1",
        "A paper only Crossref knows",
        &[("Ada", "Lovelace")],
        2020,
    );
    work["reference"] = json!([
        {"key": "ref1", "DOI": "10.1038/nature14539", "doi-asserted-by": "crossref",
         "article-title": "Deep learning", "author": "LeCun", "year": "2015",
         "journal-title": "Nature", "volume": "521", "first-page": "436"},
        {"key": "ref2", "unstructured": "Russakovsky O, et al. ImageNet Large Scale Visual Recognition Challenge. IJCV 2015."},
        {"key": "ref3", "DOI": "10.5555/elsewhere", "doi-asserted-by": "publisher",
         "article-title": "A work nobody holds", "author": "Nobody", "year": "1999"}
    ]);
    work["reference-count"] = json!(3);
    emu.add_crossref_work(work);
    let d = related(&server, json!({"dois": ["10.5555/graph.1"], "limit": 2})).await;
    let refs = &d["references"];
    assert_eq!(refs["source"], "Crossref", "{d}");
    assert_eq!(refs["total"], 3);
    assert!(
        refs["note"]
            .as_str()
            .unwrap()
            .contains("OpenAlex does not know"),
        "{d}"
    );
    assert_eq!(refs["works"][0]["doi"], "10.1038/nature14539");
    assert_eq!(refs["works"][0]["item_key"], "NLPML6K7");
    assert_eq!(refs["works"][0]["year"], 2015);
    assert!(refs["works"][1]["title"]
        .as_str()
        .unwrap()
        .starts_with("Russakovsky"));
    let next = refs["next_cursor"].as_str().expect("a third reference");
    let citing = &d["citing"];
    assert_eq!(citing["total"], 0);
    assert!(
        citing["note"]
            .as_str()
            .unwrap()
            .contains("OpenAlex does not know"),
        "{d}"
    );

    let d = related(
        &server,
        json!({"dois": ["10.5555/graph.1"], "cursor": next, "limit": 2}),
    )
    .await;
    let refs = &d["references"];
    assert_eq!(titles(refs), ["A work nobody holds"]);
    assert_eq!(refs["works"][0]["in_library"], false);
    assert!(refs.get("next_cursor").is_none(), "{d}");
    assert!(d.get("citing").is_none());
}

#[tokio::test]
async fn co_cited_works_are_those_most_often_in_the_given_works_reference_lists() {
    let (_emu, server) = setup().await;
    // The survey cites W1, W2, W3, W5; Attention Is All You Need (VASWANI7) cites W2, W1.
    let d = related(
        &server,
        json!({"item_keys": ["VASWANI7"],
               "dois": ["10.1016/j.media.2017.07.005", "10.5555/nowhere"],
               "direction": "co_cited", "limit": 3}),
    )
    .await;
    let list = &d["co_cited"];
    assert_eq!(list["total"], 4, "{d}");
    assert_eq!(
        titles(list),
        [
            "Deep learning",
            "Deep Residual Learning for Image Recognition",
            "U-Net: Convolutional Networks for Biomedical Image Segmentation"
        ]
    );
    let given: Vec<u64> = list["works"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["cited_by_given"].as_u64().unwrap())
        .collect();
    assert_eq!(given, [2, 2, 1]);
    assert_eq!(list["works"][0]["item_key"], "NLPML6K7");
    assert_eq!(d["not_found"], json!(["10.5555/nowhere"]));
    let next = list["next_cursor"].as_str().unwrap();
    let d = related(
        &server,
        json!({"item_keys": ["VASWANI7"],
               "dois": ["10.1016/j.media.2017.07.005", "10.5555/nowhere"],
               "cursor": next, "limit": 3}),
    )
    .await;
    assert_eq!(
        titles(&d["co_cited"]),
        ["ImageNet Large Scale Visual Recognition Challenge"]
    );
    assert!(d["co_cited"].get("next_cursor").is_none());
}

#[tokio::test]
async fn a_429_is_waited_out_as_retry_after_asks() {
    let (emu, server) = setup().await;
    emu.inject(
        Fault::once(FaultKind::RateLimited {
            retry_after: RetryAfter::Seconds(1),
        })
        .on_host(MetadataHost::OpenAlex),
    );
    let d = related(
        &server,
        json!({"dois": ["10.1109/CVPR.2016.90"], "direction": "citing"}),
    )
    .await;
    assert_eq!(d["citing"]["total"], 2, "{d}");
    assert_eq!(emu.faults_pending(), 0);
    let reqs = emu.requests_to(MetadataHost::OpenAlex);
    // The refused request, asked again once its wait was over, then the list.
    assert_eq!(reqs.len(), 3, "{reqs:?}");
    assert_eq!(reqs[0].path, reqs[1].path);
    assert!(reqs[1].at.duration_since(reqs[0].at) >= std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn openalex_hears_the_contact_and_never_the_zotero_key() {
    let (emu, server) = setup().await;
    related(&server, json!({"item_keys": ["RESNET52"]})).await;
    related(
        &server,
        json!({"item_keys": ["VASWANI7"], "dois": ["10.1016/j.media.2017.07.005"],
               "direction": "co_cited"}),
    )
    .await;
    let reqs = emu.requests_to(MetadataHost::OpenAlex);
    assert!(reqs.len() >= 5, "{reqs:?}");
    for r in &reqs {
        assert_eq!(r.query_param("mailto"), Some(EMAIL), "{r:?}");
        let ua = r.user_agent().unwrap_or_default();
        assert!(ua.contains(&format!("mailto:{EMAIL}")), "{ua}");
        assert!(r.header("zotero-api-key").is_none());
        assert!(r.header("authorization").is_none());
        assert!(!format!("{:?} {:?} {}", r.headers, r.query, r.path).contains(API_KEY));
    }
    // And the Zotero API did see the key: it is the same process.
    assert!(emu
        .requests()
        .iter()
        .any(|r| r.header("zotero-api-key") == Some(API_KEY)));
}

#[tokio::test]
async fn a_work_cited_5000_times_answers_within_the_budget_and_pages_on() {
    let (emu, server) = setup().await;
    let long = "Deep residual networks revisited at scale ".repeat(8);
    let authors: Vec<String> = (0..12)
        .map(|i| format!("Author Number {i} of a very long list"))
        .collect();
    let author_refs: Vec<&str> = authors.iter().map(String::as_str).collect();
    emu.add_openalex_works((0..5_000u64).map(|i| {
        openalex_work(
            &format!("W8{i:09}"),
            Some(&format!("10.5555/citing.{i}")),
            &format!("{i} {long}"),
            2020,
            5_000 - i,
            &author_refs,
            &["W9000000002"],
        )
    }));
    let args = json!({"dois": ["10.1109/CVPR.2016.90"], "direction": "citing", "limit": 50});
    let before = emu.requests().len();
    let a = server.call(TOOL, args).await;
    let to_zotero = emu.requests()[before..]
        .iter()
        .filter(|r| r.path.starts_with("/users/"))
        .count();
    assert!(
        a.text.chars().count() <= BUDGET,
        "{} characters",
        a.text.chars().count()
    );
    let list = &a.expect_ok()["citing"];
    assert_eq!(list["total"], 5_002);
    let first = titles(list);
    assert!(
        !first.is_empty() && first.len() < 50,
        "{} works",
        first.len()
    );
    assert!(first[0].chars().count() <= 301);
    // The library's DOIs in one page (a small library), then a title search per work no
    // DOI matched: never more than one request per work shown, plus the DOIs.
    eprintln!(
        "{} works shown, {to_zotero} requests to Zotero",
        first.len()
    );
    assert!(
        to_zotero <= first.len() + 1,
        "{to_zotero} requests for {} works",
        first.len()
    );
    let next = list["next_cursor"].as_str().expect("more to read");
    let b = server
        .call(
            TOOL,
            json!({"dois": ["10.1109/CVPR.2016.90"], "cursor": next}),
        )
        .await;
    assert!(b.text.chars().count() <= BUDGET);
    let second = &b.expect_ok()["citing"];
    let later = titles(second);
    assert!(!later.is_empty());
    assert!(later.iter().all(|t| !first.contains(t)), "a page repeated");
    // Read on from where the cut page stopped: the order goes on, nothing skipped.
    let all: Vec<u64> = counts(list).into_iter().chain(counts(second)).collect();
    assert!(all.windows(2).all(|w| w[0] >= w[1]), "{all:?}");
    let n = all.len() as u64;
    assert_eq!(all[0], 101234);
    assert_eq!(*all.last().unwrap(), 5_000 - (n - 3));
}

#[tokio::test]
async fn what_cannot_be_asked_is_refused_naming_the_field() {
    let (emu, server) = setup().await;
    let e = server
        .call(TOOL, json!({"item_keys": ["RESNET52", "VASWANI7"]}))
        .await
        .expect_err("ZOTERO_VALIDATION_ERROR")
        .clone();
    assert_eq!(e["details"]["field"], "item_keys", "{e}");
    let e = server
        .call(TOOL, json!({"dois": ["not a doi"]}))
        .await
        .expect_err("ZOTERO_VALIDATION_ERROR")
        .clone();
    assert_eq!(e["details"]["field"], "dois[0]", "{e}");
    let e = server
        .call(
            TOOL,
            json!({"dois": ["10.1109/CVPR.2016.90"], "cursor": "c.oa.W1.20.0.0.a&b"}),
        )
        .await
        .expect_err("ZOTERO_VALIDATION_ERROR")
        .clone();
    assert_eq!(e["details"]["field"], "cursor", "{e}");
    let e = server
        .call(
            TOOL,
            json!({"dois": ["10.1109/CVPR.2016.90"], "direction": "co_cited"}),
        )
        .await
        .expect_err("ZOTERO_VALIDATION_ERROR")
        .clone();
    assert!(e["message"].as_str().unwrap().contains("2 to 20"), "{e}");
    assert_eq!(emu.count_to(MetadataHost::OpenAlex), 0);
    // An item without a DOI says to give one.
    let e = server
        .call(TOOL, json!({"item_keys": ["X42A7DEE"]}))
        .await
        .expect_err("ZOTERO_VALIDATION_ERROR")
        .clone();
    assert!(e["message"].as_str().unwrap().contains("has no DOI"), "{e}");
}

#[tokio::test]
async fn an_openalex_key_goes_to_openalex_only_and_never_into_an_answer() {
    const KEY: &str = "oa-key-0123456789abcdef0123";
    let (emu, server) = setup_with(&[("ZOTERO_OPENALEX_API_KEY", KEY)]).await;
    related(&server, json!({"dois": ["10.1109/CVPR.2016.90"]})).await;
    let reqs = emu.requests_to(MetadataHost::OpenAlex);
    assert!(!reqs.is_empty());
    assert!(reqs.iter().all(|r| r.query_param("api_key") == Some(KEY)));
    assert!(emu
        .requests()
        .iter()
        .filter(|r| MetadataHost::of_path(&r.path) != Some(MetadataHost::OpenAlex))
        .all(|r| !format!("{:?} {:?}", r.headers, r.query).contains(KEY)));
    // A refusal from OpenAlex is answered without the key (the URL that carried it is never shown).
    emu.inject(Fault::once(FaultKind::Status(400)).on_host(MetadataHost::OpenAlex));
    let a = server
        .call(
            TOOL,
            json!({"dois": ["10.1109/CVPR.2016.90"], "direction": "citing"}),
        )
        .await;
    assert!(!a.ok(), "{}", a.envelope);
    assert!(!a.text.contains(KEY), "{}", a.text);
}
