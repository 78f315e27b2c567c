//! `zotero_cite` and `zotero_export` against the emulator, on the user library, a group and
//! the desktop's local API: rendered by Zotero (`format=bib`, `include=citation`, exports),
//! styles and locales passed on, an unknown style a validation error after exactly one
//! request (a malformed one after none), missing keys named, collection exports paged
//! within their size bound. Also the emulator's own answers for these formats (413 past 150
//! items, the Content-Types, the desktop's differences).

use serde_json::{json, Value};
use zotero_emulator::{Emulator, GroupSpec, KeyAccess, Library, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};
use zotero_emulator::testing::{get, lib, send};

const GROUP: u64 = 6021;
const VASWANI: &str = "VASWANI7";
const BERT: &str = "BERTDV82";
const DEEP: &str = "NLPML6K7";

async fn web(emu: &Emulator) -> Server {
    in_process(&env_for(&emu.uri(), USER_ID, API_KEY)).await
}

async fn local_only(emu: &Emulator) -> Server {
    let env: Vec<(String, String)> = [
        ("ZOTERO_LOCAL", "1".to_string()),
        ("ZOTERO_LOCAL_API_BASE", emu.local_uri()),
        ("ZOTERO_RETRY_MAX_ATTEMPTS", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    in_process(&env).await
}

async fn cite(s: &Server, args: Value) -> Value {
    s.call("zotero_cite", args).await.expect_ok().clone()
}

/// Every request either server received, as `path?query`.
fn all_requests(emu: &Emulator) -> Vec<String> {
    emu.requests()
        .into_iter()
        .chain(emu.local_requests())
        .map(|r| {
            let q: Vec<String> = r.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{}?{}", r.path, q.join("&"))
        })
        .collect()
}

/// The promises every backend keeps; `s` is a server on it, `library` the library to name.
async fn cite_conformance(emu: &Emulator, s: &Server, library: &str) {
    // A bibliography in APA (the default), rendered by Zotero: sorted by author.
    let data = cite(s, json!({"item_keys": [VASWANI, BERT], "library": library})).await;
    assert_eq!(data["style"], "apa");
    assert_eq!(data["count"], 2);
    let bib = data["bibliography"].as_str().unwrap();
    let lines: Vec<&str> = bib.lines().collect();
    assert_eq!(lines.len(), 2, "{bib}");
    assert!(
        lines[0].starts_with("Devlin, J., Chang, M.-W., Lee, K., & Toutanova, K. (2019)."),
        "{bib}"
    );
    assert!(lines[1].starts_with("Vaswani, A., Shazeer, N.,"), "{bib}");
    assert!(!bib.contains('<'), "text has no markup: {bib}");
    assert!(all_requests(emu)
        .iter()
        .any(|r| r.contains("format=bib") && r.contains("style=apa")));

    // Citations, one per item, in the order given; markdown keeps the emphasis of a style.
    let data = cite(
        s,
        json!({"item_keys": [VASWANI, DEEP], "mode": "citation", "library": library}),
    )
    .await;
    assert_eq!(
        data["citations"],
        json!([
            {"item_key": VASWANI, "citation": "(Vaswani et al., 2017)"},
            {"item_key": DEEP, "citation": "(LeCun et al., 2015)"}
        ])
    );
    let data = cite(
        s,
        json!({"item_keys": [VASWANI], "style": "nature", "format": "markdown", "library": library}),
    )
    .await;
    let md = data["bibliography"].as_str().unwrap();
    assert!(md.starts_with("1. Vaswani, A. *et al.* Attention Is All You Need. *Advances in Neural Information Processing Systems* **30**"), "{md}");
    let data = cite(
        s,
        json!({"item_keys": [VASWANI], "style": "ieee", "format": "html", "library": library}),
    )
    .await;
    assert!(data["bibliography"]
        .as_str()
        .unwrap()
        .contains("<div class=\"csl-left-margin\""));

    // The locale reaches Zotero, and changes the terms.
    let data = cite(
        s,
        json!({"item_keys": [VASWANI], "style": "chicago-shortened-notes-bibliography",
               "mode": "citation", "locale": "de-DE", "library": library}),
    )
    .await;
    assert_eq!(data["locale"], "de-DE");
    assert_eq!(
        data["citations"][0]["citation"],
        "Vaswani u. a., “Attention.”"
    );
    assert!(all_requests(emu).iter().any(|r| r.contains("locale=de-DE")));

    // A key not in the library is named, not silently dropped.
    let data = cite(
        s,
        json!({"item_keys": [VASWANI, "ZZZZZZZZ"], "library": library}),
    )
    .await;
    assert_eq!(data["count"], 1);
    assert_eq!(data["missing_keys"], json!(["ZZZZZZZZ"]));
    let data = cite(
        s,
        json!({"item_keys": ["ZZZZZZZZ", VASWANI], "mode": "citation", "library": library}),
    )
    .await;
    assert_eq!(data["missing_keys"], json!(["ZZZZZZZZ"]));

    // An unknown style: a validation error naming the field and where styles are listed,
    // after exactly one request.
    let before = all_requests(emu).len();
    let a = s
        .call(
            "zotero_cite",
            json!({"item_keys": [VASWANI], "style": "no-such-style", "library": library}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "style");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("https://www.zotero.org/styles"),
        "{e}"
    );
    assert_eq!(all_requests(emu).len(), before + 1);
    for mode in ["citation", "bibliography"] {
        let before = all_requests(emu).len();
        let a = s
            .call(
                "zotero_cite",
                json!({"item_keys": [VASWANI], "style": "made-up", "mode": mode, "library": library}),
            )
            .await;
        a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(all_requests(emu).len(), before + 1, "{mode}");
    }
    // One that cannot be a style id: refused before any request.
    let before = all_requests(emu).len();
    for bad in [
        json!({"style": "APA 7th"}),
        json!({"style": "../apa"}),
        json!({"locale": "german"}),
    ] {
        let mut args = json!({"item_keys": [VASWANI], "library": library});
        args.as_object_mut()
            .unwrap()
            .extend(bad.as_object().unwrap().clone());
        let a = s.call("zotero_cite", args).await;
        let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
        let field = e["details"]["field"].as_str().unwrap();
        assert!(field == "style" || field == "locale", "{e}");
    }
    assert_eq!(all_requests(emu).len(), before);
}

#[tokio::test]
async fn cite_on_the_user_library() {
    let emu = Emulator::start().await;
    let s = web(&emu).await;
    cite_conformance(&emu, &s, "user").await;
    // The web API's renderer: a `<span>` around each citation, gone in text.
    let data = cite(
        &s,
        json!({"item_keys": [VASWANI], "mode": "citation", "format": "html"}),
    )
    .await;
    assert_eq!(
        data["citations"][0]["citation"],
        "<span>(Vaswani et al., 2017)</span>"
    );
    let a = s.call("zotero_cite", json!({"item_keys": []})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_keys"
    );
    let fifty_one: Vec<String> = (0..51).map(|_| VASWANI.to_string()).collect();
    let a = s.call("zotero_cite", json!({"item_keys": fifty_one})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_keys"
    );
}

#[tokio::test]
async fn cite_on_a_group() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let s = web(&emu).await;
    cite_conformance(&emu, &s, &format!("group:{GROUP}")).await;
    assert!(emu
        .requests()
        .iter()
        .filter(|r| r.path.contains("/items"))
        .all(|r| r.path.starts_with(&format!("/groups/{GROUP}/"))));
}

#[tokio::test]
async fn cite_on_the_local_api() {
    let emu = Emulator::start().await;
    let s = local_only(&emu).await;
    cite_conformance(&emu, &s, "user").await;
    assert!(emu.requests().is_empty(), "the web API was asked");
    // The desktop's note styles cite as a numbered list; the text keeps one line.
    let data = cite(
        &s,
        json!({"item_keys": [VASWANI], "mode": "citation", "style": "chicago-note-bibliography", "format": "html"}),
    )
    .await;
    assert!(data["citations"][0]["citation"]
        .as_str()
        .unwrap()
        .starts_with("<ol>"));
}

async fn export(s: &Server, args: Value) -> Value {
    s.call("zotero_export", args).await.expect_ok().clone()
}

async fn export_conformance(emu: &Emulator, s: &Server, library: &str) {
    let data = export(
        s,
        json!({"item_keys": [VASWANI, BERT], "format": "bibtex", "library": library}),
    )
    .await;
    assert_eq!(data["format"], "bibtex");
    assert_eq!(data["content_type"], "application/x-bibtex");
    assert_eq!(
        (data["count"].clone(), data["total"].clone()),
        (json!(2), json!(2))
    );
    let text = data["text"].as_str().unwrap();
    assert!(text.contains("@article{vaswani_attention_2017,"), "{text}");
    assert!(text.contains("@inproceedings{devlin_bert_2019,"), "{text}");
    assert!(data.get("next_start").is_none());

    let data = export(
        s,
        json!({"item_keys": [VASWANI], "format": "ris", "library": library}),
    )
    .await;
    assert!(data["text"].as_str().unwrap().starts_with("TY  - JOUR\r\n"));
    let data = export(
        s,
        json!({"item_keys": [VASWANI], "format": "biblatex", "library": library}),
    )
    .await;
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("\tdate = {2017-06-12},"));
    // CSL JSON is one array whichever backend wrapped it how.
    let data = export(
        s,
        json!({"item_keys": [VASWANI], "format": "csljson", "library": library}),
    )
    .await;
    let csl: Value = serde_json::from_str(data["text"].as_str().unwrap()).unwrap();
    assert_eq!(csl[0]["title"], "Attention Is All You Need");
    assert_eq!(csl[0]["type"], "article-journal");
    let data = export(
        s,
        json!({"item_keys": [VASWANI], "format": "mods", "library": library}),
    )
    .await;
    assert!(data["text"].as_str().unwrap().contains("<modsCollection"));

    // Missing keys are named.
    let data = export(
        s,
        json!({"item_keys": ["ZZZZZZZZ", VASWANI], "library": library}),
    )
    .await;
    assert_eq!(data["missing_keys"], json!(["ZZZZZZZZ"]));

    // A collection, page by page: every item once, in order, next_start to the end.
    let mut start = 0;
    let mut seen = Vec::new();
    loop {
        let data = export(
            s,
            json!({"collection_key": "9KH9TNSJ", "format": "ris", "limit": 7, "start": start, "library": library}),
        )
        .await;
        assert!(data["count"].as_u64().unwrap() <= 7);
        seen.extend(
            data["text"]
                .as_str()
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("TI  - "))
                .map(str::to_string),
        );
        match data["next_start"].as_u64() {
            Some(next) => {
                assert_eq!(next, start + data["count"].as_u64().unwrap());
                start = next;
            }
            None => {
                assert_eq!(
                    data["total"].as_u64().unwrap(),
                    start + data["count"].as_u64().unwrap()
                );
                break;
            }
        }
    }
    let unique: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "an item came twice: {seen:?}");
    assert!(seen.len() >= 15, "{seen:?}");
    assert!(all_requests(emu)
        .iter()
        .any(|r| r.contains("/collections/9KH9TNSJ/items/top")));

    let a = s.call("zotero_export", json!({"library": library})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "item_keys"
    );
    let a = s
        .call(
            "zotero_export",
            json!({"item_keys": [VASWANI], "collection_key": "9KH9TNSJ", "library": library}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "collection_key"
    );
    let a = s
        .call(
            "zotero_export",
            json!({"item_keys": [VASWANI], "format": "docx", "library": library}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "format"
    );
}

#[tokio::test]
async fn export_on_the_user_library_a_group_and_the_local_api() {
    let emu = Emulator::start().await;
    emu.add_group(GroupSpec::new(GROUP, "Lab"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(GROUP, false)]));
    let s = web(&emu).await;
    export_conformance(&emu, &s, "user").await;
    export_conformance(&emu, &s, &format!("group:{GROUP}")).await;
    // A web-only format is answered by the web API.
    let data = export(&s, json!({"item_keys": [VASWANI], "format": "endnote_xml"})).await;
    assert!(data["text"].as_str().unwrap().contains("<records>"));

    let emu = Emulator::start().await;
    let s = local_only(&emu).await;
    export_conformance(&emu, &s, "user").await;
    assert!(emu.requests().is_empty());
    // The desktop has no EndNote XML export, and says so.
    let a = s
        .call(
            "zotero_export",
            json!({"item_keys": [VASWANI], "format": "endnote_xml"}),
        )
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("local API does not export endnote_xml"),
        "{e}"
    );
}

#[tokio::test]
async fn a_large_collection_export_stays_under_the_size_bound() {
    // 120 items with long abstracts: 50 of them would be far over the bound.
    let mut library = Library::synthetic(120, 7);
    for item in library.items.iter_mut() {
        item["data"]["abstractNote"] = json!("An abstract sentence that goes on. ".repeat(100));
        item["data"]["collections"] = json!(["SYNCL232"]);
    }
    library.collections.push(json!({"key": "SYNCL232", "version": 1,
        "data": {"key": "SYNCL232", "version": 1, "name": "All", "parentCollection": false, "relations": {}}}));
    let emu = Emulator::with_library(library).await;
    let s = web(&emu).await;
    let mut start = 0;
    let mut entries = 0;
    let mut pages = 0;
    loop {
        let a = s
            .call(
                "zotero_export",
                json!({"collection_key": "SYNCL232", "format": "biblatex", "limit": 50, "start": start}),
            )
            .await;
        assert!(a.text.len() < 100_000, "{} bytes", a.text.len());
        let data = a.expect_ok();
        assert!(data.get("truncated").is_none());
        entries += data["text"].as_str().unwrap().matches("\n@").count();
        pages += 1;
        match data["next_start"].as_u64() {
            Some(n) => start = n,
            None => break,
        }
    }
    assert_eq!(entries, 120);
    assert!(pages > 3, "{pages} pages");
}

#[tokio::test]
async fn the_emulator_renders_as_zotero_does() {
    let emu = Emulator::start().await;
    let items = lib("items");
    // format=bib: XHTML with its prolog; no paging headers; never sorted or paged.
    let r = get(
        &emu,
        &format!("{items}?itemKey={VASWANI},{BERT}&format=bib&style=apa"),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").unwrap(),
        "text/html; charset=UTF-8"
    );
    assert!(r
        .text()
        .starts_with("<?xml version=\"1.0\"?>\n<div class=\"csl-bib-body\""));
    assert!(r.header("total-results").is_none());
    let r = get(&emu, &format!("{items}?format=bib&limit=10")).await;
    assert_eq!(
        (r.status, r.text()),
        (400, "'limit' is not valid for format=bib".into())
    );
    // Web default style: chicago-note-bibliography; an unknown one: 400 Invalid style.
    let r = get(&emu, &format!("{items}/{VASWANI}?format=bib")).await;
    assert!(
        r.text().contains("Vaswani, Ashish, Noam Shazeer"),
        "{}",
        r.text()
    );
    let r = get(&emu, &format!("{items}/{VASWANI}?format=bib&style=nope")).await;
    assert_eq!((r.status, r.text()), (400, "Invalid style".into()));
    // include=bib,citation on JSON items, without data unless asked.
    let r = get(
        &emu,
        &format!("{items}/{VASWANI}?include=bib,citation&style=apa"),
    )
    .await;
    let v = r.json();
    assert!(v.get("data").is_none());
    assert_eq!(v["citation"], "<span>(Vaswani et al., 2017)</span>");
    assert!(v["bib"]
        .as_str()
        .unwrap()
        .starts_with("<div class=\"csl-bib-body\""));
    // The export Content-Types.
    for (format, ct) in [
        ("bibtex", "application/x-bibtex"),
        ("csljson", "application/vnd.citationstyles.csl+json"),
        ("ris", "application/x-research-info-systems"),
        ("csv", "text/csv"),
        ("rdf_zotero", "application/rdf+xml"),
        ("wikipedia", "text/x-wiki"),
        ("tei", "text/xml"),
    ] {
        let r = get(&emu, &format!("{items}?itemKey={VASWANI}&format={format}")).await;
        assert_eq!(r.status, 200, "{format}");
        assert_eq!(r.header("content-type").unwrap(), ct, "{format}");
        assert_eq!(r.header("total-results").as_deref(), Some("1"), "{format}");
    }
    let r = get(&emu, &format!("{items}?itemKey={VASWANI}&format=csljson")).await;
    assert!(r.json()["items"].is_array());

    // More than 150 items in a bibliography: 413.
    let emu = Emulator::with_library(Library::synthetic(151, 3)).await;
    let r = get(&emu, &format!("{items}?format=bib")).await;
    assert_eq!(
        (r.status, r.text()),
        (
            413,
            "Cannot generate bibliography with more than 150 items".into()
        )
    );
    let emu = Emulator::with_library(Library::synthetic(150, 3)).await;
    let r = get(&emu, &format!("{items}?format=bib&style=ieee")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.text().matches("class=\"csl-entry\"").count(), 150);

    // The desktop: its own default style, text/plain exports, `Invalid style: …`.
    let emu = Emulator::start().await;
    let local = format!("{}/users/0/items", emu.local_uri());
    let h = [("Zotero-API-Version", "3")];
    let r = send(
        &emu,
        "GET",
        &format!("{local}/{VASWANI}?format=bib"),
        &h,
        "",
    )
    .await
    .unwrap();
    assert_eq!(r.header("content-type").unwrap(), "text/html");
    assert!(r.text().contains("class=\"Z3988\""));
    let r = send(
        &emu,
        "GET",
        &format!("{local}/{VASWANI}?include=citation"),
        &h,
        "",
    )
    .await
    .unwrap();
    assert_eq!(
        r.json()["citation"],
        "<ol>\n\t<li>Vaswani et al., “Attention.”</li>\n</ol>"
    );
    let r = send(
        &emu,
        "GET",
        &format!("{local}/{VASWANI}?format=bib&style=nope"),
        &h,
        "",
    )
    .await
    .unwrap();
    assert_eq!(r.status, 400);
    assert!(r.text().starts_with("Invalid style: nope"), "{}", r.text());
    let r = send(
        &emu,
        "GET",
        &format!("{local}?itemKey={VASWANI}&format=bibtex"),
        &h,
        "",
    )
    .await
    .unwrap();
    assert_eq!(r.header("content-type").unwrap(), "text/plain");
    assert_eq!(r.header("total-results").as_deref(), Some("1"));
    let r = send(&emu, "GET", &format!("{local}?format=endnote_xml"), &h, "")
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.text()),
        (400, "Invalid 'format' value 'endnote_xml'".into())
    );
}

#[tokio::test]
async fn a_huge_bibliography_is_cut_and_says_so() {
    // Two items whose titles are 40 KB each: Zotero's bibliography of both is over 80 KB.
    let mut library = Library::from_fixtures();
    for item in library.items.iter_mut() {
        if item["key"] == VASWANI || item["key"] == BERT {
            item["data"]["title"] = json!("Lengthy ".repeat(5_000));
        }
    }
    let emu = Emulator::with_library(library).await;
    let s = web(&emu).await;
    for mode in ["bibliography", "citation"] {
        let a = s
            .call(
                "zotero_cite",
                json!({"item_keys": [VASWANI, BERT], "mode": mode, "style": "chicago-note-bibliography"}),
            )
            .await;
        assert!(a.text.len() < 100_000, "{mode}: {} bytes", a.text.len());
        assert_eq!(a.expect_ok()["truncated"], true, "{mode}");
    }
}
