//! `zotero_check_manuscript` end to end on the emulator: citations of each syntax resolved
//! through `citationKey` and Better BibTeX's Extra line (and DOIs), broken and unknown ones
//! reported with candidates, quotations found exactly (curly quotes, line breaks,
//! hyphenation, ellipses, across a page break) or fuzzily or not at all with page and
//! `zotero://open-pdf` link, a collection's uncited items, paging, drafts read from files
//! under `ZOTERO_UPLOAD_ROOTS` (a 5 MB one refused), the request count, and retractions from
//! Zotero's database.

use serde_json::{json, Value};
use zotero_emulator::{Emulator, FullText, Library, MetadataHost, API_KEY, USER_ID};

use crate::common::{env_for, in_process, Server};

const TOOL: &str = "zotero_check_manuscript";

/// The PDF's text: two pages (a form feed between), a word hyphenated across a line.
const PDF: &str = "Abstract. The dominant sequence transduction models are based on complex \
recurrent or convolutional neural networks. We propose a new simple network archi-\ntecture, \
the Transformer, based solely on attention mechanisms.\u{c}Experiments on two machine \
translation tasks show these models to be superior in quality while being more \
parallelizable and requiring significantly less time to train.";

fn item(key: &str, title: &str, data: Value) -> Value {
    let mut d = json!({"key": key, "version": 1, "itemType": "journalArticle", "title": title,
        "creators": [], "tags": [], "collections": [], "relations": {},
        "dateAdded": "2024-01-01T00:00:00Z", "dateModified": "2024-01-01T00:00:00Z"});
    if let (Some(d), Some(extra)) = (d.as_object_mut(), data.as_object()) {
        d.extend(extra.clone());
    }
    json!({"key": key, "version": 1, "meta": {}, "links": {}, "data": d})
}

/// A PDF attachment of `parent`, as the fixtures store one.
fn attachment(key: &str, parent: &str, content_type: &str, added: &str) -> Value {
    json!({"key": key, "version": 1, "meta": {}, "links": {},
           "data": {"key": key, "version": 1, "itemType": "attachment", "parentItem": parent,
                    "linkMode": "imported_file", "title": "Full Text PDF",
                    "contentType": content_type, "filename": format!("{key}.pdf"),
                    "tags": [], "relations": {}, "dateAdded": added, "dateModified": added}})
}

fn library() -> Library {
    let mut lib = Library::empty();
    lib.items = vec![
        item(
            "VASWANI2",
            "Attention Is All You Need",
            json!({"citationKey": "vaswani2017attention", "date": "2017",
                   "creators": [{"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"}],
                   "DOI": "10.48550/arXiv.1706.03762", "collections": ["MSCLLN22"]}),
        ),
        attachment(
            "VASPDF22",
            "VASWANI2",
            "application/pdf",
            "2024-01-02T00:00:00Z",
        ),
        item(
            "SMITHBK2",
            "Deep Things",
            json!({"itemType": "book", "extra": "Citation Key: smith2020deep\nDOI: 10.1000/deep",
                   "collections": ["MSCLLN22"]}),
        ),
        item(
            "UNCITED2",
            "Never Cited At All",
            json!({"collections": ["MSCLLN22"]}),
        ),
        item("TWINA222", "Twin One", json!({"citationKey": "twin2021"})),
        item("TWINB222", "Twin Two", json!({"citationKey": "twin2021"})),
    ];
    lib.collections.push(json!({"key": "MSCLLN22", "version": 1,
        "data": {"key": "MSCLLN22", "version": 1, "name": "Draft sources", "parentCollection": false, "relations": {}}}));
    lib.fulltext
        .insert("VASPDF22".into(), FullText::pdf(PDF, 2, 2));
    lib
}

async fn setup(extra: &[(&str, &str)]) -> (Emulator, Server) {
    let emu = Emulator::with_library(library()).await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    // Without Zotero's database, cited items' retractions are asked of (the emulator's)
    // Crossref.
    env.push(("ZOTERO_CROSSREF_BASE".into(), emu.crossref_base()));
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let s = in_process(&env).await;
    (emu, s)
}

/// The paths of the requests sent to Zotero (the emulator also records its other hosts').
fn zotero_paths(emu: &Emulator) -> Vec<String> {
    emu.requests()
        .iter()
        .map(|r| r.path.clone())
        .filter(|p| p.starts_with("/users/") || p.starts_with("/groups/"))
        .collect()
}

fn of_kind<'a>(data: &'a Value, kind: &str) -> Vec<&'a Value> {
    data["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

#[tokio::test]
async fn pandoc_citations_resolve_by_citation_key_and_extra_with_candidates_for_the_rest() {
    let (emu, s) = setup(&[]).await;
    let draft =
        "# Draft\n\nTransformers [@vaswani2017attention, p. 2] and books [see @smith2020deep; \
                 -@vaswani2017attention].\n@smith2020deep argues more [-@vaswani2017attention]. \
                 Unknown [@vaswani2017attn] and [@twin2021]; broken [@smith2020deep, p. 4\n\n\
                 Mail me@example.org. `[@incode]`\n";
    let a = s.call(TOOL, json!({"text": draft})).await;
    let data = a.expect_ok();
    s.check_output(TOOL, &a).await;
    assert_eq!(data["format"], "markdown");
    let c = of_kind(data, "citation");
    let keys: Vec<&str> = c.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "vaswani2017attention",
            "smith2020deep",
            "vaswani2017attention",
            "smith2020deep",
            "vaswani2017attention",
            "vaswani2017attn",
            "twin2021",
            "smith2020deep"
        ]
    );
    assert_eq!(c[0]["item_key"], "VASWANI2");
    assert_eq!(c[0]["via"], "citation_key");
    assert_eq!(c[0]["locator"], "p. 2");
    assert_eq!(
        (c[0]["line"].as_u64(), c[0]["column"].as_u64()),
        (Some(3), Some(16))
    );
    assert_eq!(
        c[1]["item_key"], "SMITHBK2",
        "Better BibTeX's line in Extra"
    );
    assert_eq!(c[2]["syntax"], "[-@key]");
    assert_eq!(c[3]["syntax"], "@key");
    assert_eq!(c[5]["status"], "unresolved");
    assert_eq!(c[5]["candidates"][0]["item_key"], "VASWANI2");
    assert_eq!(c[6]["status"], "ambiguous");
    assert_eq!(c[6]["candidates"].as_array().unwrap().len(), 2);
    assert_eq!(c[7]["status"], "resolved");
    assert!(c[7]["problem"].as_str().unwrap().contains("unterminated"));
    let sum = &data["summary"];
    assert_eq!(sum["citations"], 8);
    assert_eq!(sum["resolved"], 6);
    assert_eq!(sum["unresolved"], 1);
    assert_eq!(sum["ambiguous"], 1);
    assert_eq!(sum["malformed"], 1);
    assert_eq!(sum["cited_items"], 2);
    // The library, read once (six items: one page); no quotation, so no full text.
    assert_eq!(sum["requests"], 1);
    let reads: Vec<String> = zotero_paths(&emu);
    assert_eq!(reads, [format!("/users/{USER_ID}/items/top")]);
    s.stop().await;
}

#[tokio::test]
async fn latex_citations_are_checked_against_the_bib_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let bib = root.join("refs.bib");
    std::fs::write(
        &bib,
        "@article{vaswani2017attention, title={Attention}}\n\
         @article{transformer, title = {Attention Is All You Need}, doi = {10.48550/ARXIV.1706.03762}}\n",
    )
    .unwrap();
    let tex = root.join("draft.tex");
    std::fs::write(
        &tex,
        "\\section{Intro}\nAs \\citet{vaswani2017attention} show \\citep[p.~3]{transformer, smith2020deep}.\n\
         See \\parencite{nope} and \\autocite{vaswani2017attention} and \\textcite{smith2020deep}.\n\
         % \\cite{commented}\nBroken \\cite{vaswani2017attention\n\nEnd.",
    )
    .unwrap();
    let roots = root.display().to_string();
    let (_emu, s) = setup(&[("ZOTERO_UPLOAD_ROOTS", &roots)]).await;
    let a = s
        .call(
            TOOL,
            json!({"file_path": tex.display().to_string(), "bib_path": bib.display().to_string()}),
        )
        .await;
    let data = a.expect_ok();
    assert_eq!(data["format"], "latex");
    let c = of_kind(data, "citation");
    let got: Vec<(&str, &str, &str)> = c
        .iter()
        .map(|c| {
            (
                c["key"].as_str().unwrap(),
                c["syntax"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("vaswani2017attention", "\\citet", "resolved"),
            ("transformer", "\\citep", "resolved"),
            ("smith2020deep", "\\citep", "resolved"),
            ("nope", "\\parencite", "unresolved"),
            ("vaswani2017attention", "\\autocite", "resolved"),
            ("smith2020deep", "\\textcite", "resolved"),
            ("", "\\cite", "malformed"),
        ]
    );
    assert_eq!(
        c[1]["via"], "bib_doi",
        "the .bib entry's DOI finds the item"
    );
    assert_eq!(c[1]["item_key"], "VASWANI2");
    assert_eq!(c[1]["locator"], "p. 3");
    assert_eq!(c[2]["problem"], "not in the .bib file");
    assert!(c[6]["problem"].as_str().unwrap().contains("unterminated"));
    // A path outside the roots is refused by the upload path policy.
    let a = s.call(TOOL, json!({"file_path": "/etc/hostname"})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "file_path"
    );
    s.stop().await;
}

#[tokio::test]
async fn quotations_are_found_exactly_fuzzily_or_not_with_pages_and_links() {
    let (emu, s) = setup(&[]).await;
    let draft = "They write “We propose a new simple network architecture, the Transformer” \
        [@vaswani2017attention, p. 1].\n\
        Also \"based solely on attention\nmechanisms\" [@vaswani2017attention].\n\
        And \"complex recurrent … neural networks\" [@vaswani2017attention].\n\
        Over the page: \"the Transformer, based solely on attention mechanisms. Experiments on two \
        machine translation\" [@vaswani2017attention].\n\n\
        > We propose a novel simple network architecture, the Transformer, based only\n\
        > on attention mechanisms [@vaswani2017attention]\n\n\
        Never said: \"colorless green ideas sleep furiously\" [@vaswani2017attention].\n\
        No text: \"a quotation of the book here\" [@smith2020deep]. \
        Unknown: \"a quotation of nobody at all\" [@nobody].\n";
    let a = s.call(TOOL, json!({"text": draft})).await;
    let data = a.expect_ok();
    s.check_output(TOOL, &a).await;
    let q = of_kind(data, "quotation");
    let status: Vec<&str> = q.iter().map(|q| q["status"].as_str().unwrap()).collect();
    assert_eq!(
        status,
        [
            "exact",
            "exact",
            "exact",
            "exact",
            "fuzzy",
            "not_found",
            "no_fulltext",
            "unresolved"
        ],
        "{q:#?}"
    );
    assert_eq!(q[0]["item_key"], "VASWANI2");
    assert_eq!(q[0]["attachment_key"], "VASPDF22");
    assert_eq!(q[0]["score"], 1.0);
    assert_eq!(q[0]["page"], 1);
    assert_eq!(
        q[0]["link"],
        "zotero://open-pdf/library/items/VASPDF22?page=1"
    );
    let at = q[0]["fulltext_offset"].as_u64().unwrap() as usize;
    assert!(PDF
        .chars()
        .skip(at)
        .collect::<String>()
        .starts_with("We propose"));
    assert!(q[0]["passage"]
        .as_str()
        .unwrap()
        .contains("archi-\ntecture"));
    // Split across the page break: starts on page 1, ends on page 2.
    assert_eq!(
        (q[3]["page"].as_u64(), q[3]["end_page"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(q[4]["block"].as_bool().unwrap());
    let score = q[4]["score"].as_f64().unwrap();
    assert!((0.6..1.0).contains(&score), "{score}");
    assert!(q[5]["score"].as_f64().unwrap() < 0.6);
    let sum = &data["summary"];
    assert_eq!(
        (sum["quotations"].as_u64(), sum["exact"].as_u64()),
        (Some(8), Some(4))
    );
    assert_eq!(
        (sum["fuzzy"].as_u64(), sum["not_found"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(sum["unchecked"], 2);
    // The library once, the PDF's text once for all its quotations; the book has no
    // attachment (its children are asked for, as Zotero names no best one).
    let paths: Vec<String> = zotero_paths(&emu);
    let fulltext = paths.iter().filter(|p| p.ends_with("/fulltext")).count();
    assert_eq!(fulltext, 1, "{paths:?}");
    assert_eq!(
        sum["requests"].as_u64(),
        Some(paths.len() as u64),
        "{paths:?}"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_collection_s_uncited_items_and_paging_through_the_findings() {
    let (_emu, s) = setup(&[]).await;
    let mut draft = String::new();
    for n in 0..120 {
        draft.push_str(&format!(
            "Claim {n} [@vaswani2017attention, p. {n}] and [@missing{n}].\n"
        ));
    }
    let args = json!({"text": draft, "collection_key": "MSCLLN22"});
    let a = s.call(TOOL, args.clone()).await;
    assert!(a.text.chars().count() <= 20_000, "{}", a.text.len());
    let first = a.expect_ok().clone();
    assert_eq!(first["total"], 242);
    let mut seen: Vec<Value> = first["findings"].as_array().unwrap().clone();
    let mut next = first["next_start"].as_u64();
    assert_eq!(next, Some(seen.len() as u64));
    while let Some(start) = next {
        let mut more = args.clone();
        more["start"] = json!(start);
        let a = s.call(TOOL, more).await;
        assert!(a.text.chars().count() <= 20_000);
        let data = a.expect_ok();
        assert_eq!(data["summary"], first["summary"]);
        seen.extend(data["findings"].as_array().unwrap().iter().cloned());
        next = data["next_start"].as_u64();
    }
    assert_eq!(seen.len(), 242);
    let uncited: Vec<&Value> = seen.iter().filter(|f| f["kind"] == "uncited").collect();
    let keys: Vec<&str> = uncited
        .iter()
        .map(|u| u["item_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["SMITHBK2", "UNCITED2"]);
    assert_eq!(first["summary"]["uncited"], 2);
    // Only the problems: the unresolved keys and the uncited items.
    let mut only = args.clone();
    only["problems_only"] = json!(true);
    let a = s.call(TOOL, only).await;
    assert_eq!(a.expect_ok()["total"], 122);
    // Past the end: says where the end is.
    let mut past = args.clone();
    past["start"] = json!(243);
    let a = s.call(TOOL, past).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "start"
    );
    s.stop().await;
}

#[tokio::test]
async fn plain_text_dois_resolve_through_the_doi_field_and_extra() {
    let (_emu, s) = setup(&[]).await;
    let draft =
        "See https://doi.org/10.48550/arXiv.1706.03762 and doi:10.1000/DEEP. Also 10.9999/none.";
    let a = s.call(TOOL, json!({"text": draft})).await;
    let data = a.expect_ok();
    assert_eq!(data["format"], "text");
    let c = of_kind(data, "citation");
    let got: Vec<(&str, &str)> = c
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("10.48550/arxiv.1706.03762", "resolved"),
            ("10.1000/deep", "resolved"),
            ("10.9999/none", "unresolved")
        ]
    );
    assert_eq!(c[1]["item_key"], "SMITHBK2");
    assert_eq!(c[0]["via"], "doi");
    s.stop().await;
}

#[tokio::test]
async fn a_draft_over_5_mb_is_refused_and_a_draft_needs_one_source() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let big = root.join("big.md");
    std::fs::write(&big, "x".repeat(5_000_001)).unwrap();
    let roots = root.display().to_string();
    let (emu, s) = setup(&[("ZOTERO_UPLOAD_ROOTS", &roots)]).await;
    let a = s
        .call(TOOL, json!({"file_path": big.display().to_string()}))
        .await;
    let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
    assert_eq!(e["details"]["field"], "file_path");
    let msg = a.envelope["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("5000001 bytes") && msg.contains("5 MB"),
        "{msg}"
    );
    let a = s.call(TOOL, json!({"text": "y".repeat(5_000_001)})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "text"
    );
    let a = s.call(TOOL, json!({})).await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "text"
    );
    let a = s
        .call(
            TOOL,
            json!({"text": "x", "file_path": big.display().to_string()}),
        )
        .await;
    assert_eq!(
        a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
        "file_path"
    );
    // Nothing reached Zotero.
    assert!(emu.requests().is_empty());
    s.stop().await;
}

#[tokio::test]
async fn retracted_sources_come_from_zotero_s_database() {
    let dir = tempfile::tempdir().unwrap();
    let b = zotero_db::fixture::Builder::create(dir.path()).unwrap();
    let fields = |title, doi| vec![("title", title), ("DOI", doi), ("date", "2019")];
    let retracted = b
        .item(
            1,
            "RETRACT2",
            "journalArticle",
            &fields("A fabricated result", "10.5555/fake.2019"),
            &[],
            &[],
        )
        .unwrap();
    b.retract(
        retracted,
        r#"{"date":"2020-06-01","reasons":["Falsification/Fabrication of Data"],"urls":["https://retractionwatch.com/notice/1"],"doi":"10.5555/retraction.2020"}"#,
    )
    .unwrap();
    let sound = b
        .item(
            1,
            "ARTICLE2",
            "journalArticle",
            &fields("Photosynthesis", "10.1234/jps.2017.1"),
            &[],
            &[],
        )
        .unwrap();
    b.attachment(
        1,
        "ARTPDF22",
        Some(sound),
        "Full Text PDF",
        "a.pdf",
        Some((PDF, 2)),
    )
    .unwrap();
    drop(b);
    let s = in_process(&[(
        "ZOTERO_DATA_DIR".to_string(),
        dir.path().to_string_lossy().into_owned(),
    )])
    .await;
    let draft = "A result (doi:10.5555/fake.2019) and \"based solely on attention mechanisms\" \
                 (doi:10.1234/jps.2017.1).";
    let a = s.call(TOOL, json!({"text": draft})).await;
    let data = a.expect_ok();
    let r = of_kind(data, "retracted");
    assert_eq!(r.len(), 1, "{data:#}");
    assert_eq!(r[0]["item_key"], "RETRACT2");
    assert_eq!(r[0]["date"], "2020-06-01");
    assert_eq!(r[0]["notice"], "10.5555/retraction.2020");
    assert_eq!(r[0]["reasons"][0], "Falsification/Fabrication of Data");
    assert_eq!(r[0]["source"], "zotero");
    assert_eq!(r[0]["cited_as"], json!(["10.5555/fake.2019"]));
    assert_eq!(data["summary"]["retracted"], 1);
    // The quotation, found in the PDF's text Zotero cached (.zotero-ft-cache).
    let q = of_kind(data, "quotation");
    assert_eq!(q[0]["status"], "exact", "{q:#?}");
    assert_eq!(q[0]["attachment_key"], "ARTPDF22");
    assert_eq!(q[0]["page"], 1);
    s.stop().await;
}

/// With the web API, the cited items' DOIs are checked against Crossref's notices in one
/// request: a retraction is reported with its notice and source, an expression of concern
/// and a correction are not retractions, and an item without a DOI counts as unchecked.
#[tokio::test]
async fn retracted_sources_come_from_crossref_without_the_database() {
    let emu = Emulator::with_library({
        let mut lib = library();
        lib.items.extend([
            item(
                "RETRCTD2",
                "A Retracted Study",
                json!({"citationKey": "gone2019", "DOI": "10.5555/emu.retracted.2019"}),
            ),
            item(
                "CONCERN2",
                "A Study Under Concern",
                json!({"citationKey": "doubt2018", "DOI": "10.5555/emu.concern.2018"}),
            ),
            item(
                "CORRECT2",
                "A Corrected Study",
                json!({"citationKey": "fixed2020", "DOI": "10.5555/emu.corrected.2020"}),
            ),
        ]);
        lib
    })
    .await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_CROSSREF_BASE".into(), emu.crossref_base()));
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    let s = in_process(&env).await;
    let text =
        "As shown [@gone2019; @doubt2018], and [@fixed2020], and [@twin2021] and [@smith2020deep].";
    let a = s.call(TOOL, json!({"text": text})).await;
    let data = a.expect_ok().clone();
    s.check_output(TOOL, &a).await;
    let sum = &data["summary"];
    assert_eq!(sum["retractions_checked_with"], "crossref", "{data}");
    assert_eq!(sum["retracted"], 1, "{data}");
    let r = of_kind(&data, "retracted");
    assert_eq!(r.len(), 1, "{data}");
    assert_eq!(r[0]["item_key"], "RETRCTD2");
    assert_eq!(r[0]["cited_as"], json!(["gone2019"]));
    assert!(
        r[0]["notice"].as_str().is_some_and(|n| !n.is_empty()),
        "{}",
        r[0]
    );
    assert_ne!(r[0]["source"], "zotero");
    // The concern and the correction are not retractions; every cited item has a DOI
    // (SMITHBK2's in Extra; Crossref does not know it: unchecked); the ambiguous
    // twin2021 resolves to no item.
    assert_eq!(sum["retractions_unchecked"], 1, "{data}");
    assert_eq!(sum["crossref_requests"], 1);
    let asked = emu.requests_to(MetadataHost::Crossref);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let filter = asked[0].query_param("filter").unwrap();
    assert!(filter.contains("10.5555/emu.retracted.2019"), "{filter}");
    s.stop().await;
}

/// A draft of `bytes` bytes written as one paragraph: short lines, no blank line, no
/// citation (what once took the check a time growing with the square of its size).
fn one_paragraph(bytes: usize) -> String {
    let line = "A short line of a draft written as one long paragraph, \"quoted\" or not\n";
    line.repeat(bytes / line.len())
}

#[tokio::test]
async fn other_calls_are_answered_while_a_long_draft_is_checked() {
    // The test's runtime has one thread (the server's has two): were the reading of the
    // draft done on it, no other call would be answered until the check ended.
    let (_emu, s) = setup(&[]).await;
    let answer = {
        let check = s.call_raw(TOOL, json!({"text": one_paragraph(4_900_000)}));
        let sort = s.call_raw("zotero_get_sort_values", json!({}));
        tokio::pin!(check);
        tokio::select! {
            biased;
            r = &mut check => panic!("the check answered before the call sent after it: {r:?}"),
            r = sort => assert_ne!(r.unwrap().is_error, Some(true)),
        }
        check.await.unwrap()
    };
    let a = crate::common::to_answer(answer);
    assert_eq!(a.expect_ok()["summary"]["citations"], 0, "{:?}", a.envelope);
    s.stop().await;
}

#[tokio::test]
async fn a_cancelled_check_stops_reading_the_draft_and_the_next_call_is_answered() {
    let emu = Emulator::with_library(library()).await;
    let env = env_for(&emu.uri(), USER_ID, API_KEY);
    let s = crate::common::spawn(&env).await;
    let started = |v: &Value| v["fields"]["message"] == "tool call started";
    let call = s.call_raw(TOOL, json!({"text": one_paragraph(4_900_000)}));
    let running = async {
        while !s.wait_for_log(std::time::Duration::ZERO, started).await {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    // The client gives up once the check runs: rmcp sends notifications/cancelled when the
    // call's future is dropped.
    tokio::select! {
        r = call => panic!("the check ended before it was cancelled: {r:?}"),
        () = running => {}
    }
    // The call ends, as cancelled, only once its work on the draft has ended (the check
    // waits for its blocking work; that this work stops soon after a cancellation is
    // `draft.rs`'s unit tests'); the server then answers the next call.
    let ended = s
        .wait_for_log(std::time::Duration::from_secs(60), |v| {
            v["fields"]["message"] == "tool call finished"
                && v["fields"]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("cancelled"))
        })
        .await;
    assert!(ended, "the check did not stop: {:#?}", s.stderr());
    s.call("zotero_get_sort_values", json!({}))
        .await
        .expect_ok();
    s.stop().await;
}
