//! Retractions: Zotero's own flags (the database backend) in every item answer and in
//! `zotero_check_retractions`, and, without the database, Crossref's notices for the items'
//! DOIs from the emulator's Crossref (a retraction from Retraction Watch and the publisher, a
//! correction, an expression of concern, each reported as what it is), by keys, collection
//! and library, paged; the manners kept with Crossref (batched, `mailto` and a User-Agent with
//! the contact, `Retry-After` honoured) and no Zotero key sent there.

use serde_json::{json, Value};
use zotero_emulator::{
    Emulator, Fault, FaultKind, Library, MetadataHost, RetryAfter, API_KEY, USER_ID,
};

use crate::common::{env_for, in_process, spawn, Server};

const EMAIL: &str = "ada@lovelace-lab.org";
const RETRACTED: &str = "10.5555/emu.retracted.2019";
const NOTICE: &str = "10.5555/emu.retraction-notice.2021";
const CORRECTED: &str = "10.5555/emu.corrected.2020";
const CONCERN: &str = "10.5555/emu.concern.2018";
const CLEAN: &str = "10.1038/nature14539";
const COLLECTION: &str = "RETRCLL2";

fn item(key: &str, item_type: &str, title: &str, fields: Value, added: &str) -> Value {
    let mut data = json!({
        "key": key, "version": 1, "itemType": item_type, "title": title,
        "creators": [], "tags": [], "collections": [], "relations": {},
        "dateAdded": added, "dateModified": added,
    });
    for (k, v) in fields.as_object().unwrap() {
        data[k] = v.clone();
    }
    json!({"key": key, "version": 1, "data": data})
}

/// Eight top-level items, added in this order: each kind of notice, a notice itself, a
/// clean DOI, a DOI Crossref does not know, a DOI in Extra, a book without a DOI.
fn library() -> Library {
    let mut lib = Library::empty();
    let in_coll = json!([COLLECTION]);
    lib.items = vec![
        item(
            "RETRACT2",
            "journalArticle",
            "Emulated results that did not replicate",
            json!({"DOI": format!("https://doi.org/{}", RETRACTED.to_uppercase()), "collections": in_coll}),
            "2024-01-01T00:00:00Z",
        ),
        item(
            "CRRECTD2",
            "journalArticle",
            "A measurement with a typo",
            json!({"DOI": CORRECTED}),
            "2024-01-02T00:00:00Z",
        ),
        item(
            "CNCERN22",
            "journalArticle",
            "Data whose provenance is in question",
            json!({"DOI": CONCERN}),
            "2024-01-03T00:00:00Z",
        ),
        item(
            "NTICE222",
            "journalArticle",
            "Retraction notice",
            json!({"DOI": NOTICE}),
            "2024-01-04T00:00:00Z",
        ),
        item(
            "CLEAN222",
            "journalArticle",
            "Deep learning",
            json!({"DOI": CLEAN}),
            "2024-01-05T00:00:00Z",
        ),
        item(
            "UNKNWN22",
            "journalArticle",
            "Registered elsewhere",
            json!({"DOI": "10.5555/emu.nowhere"}),
            "2024-01-06T00:00:00Z",
        ),
        item(
            "EXTRA222",
            "report",
            "A report citing its DOI in Extra",
            json!({"extra": format!("Type: report\nDOI: {CORRECTED}")}),
            "2024-01-07T00:00:00Z",
        ),
        item(
            "NDI22222",
            "book",
            "A book",
            json!({"collections": in_coll}),
            "2024-01-08T00:00:00Z",
        ),
    ];
    lib.collections = vec![json!({
        "key": COLLECTION, "version": 1,
        "data": {"key": COLLECTION, "version": 1, "name": "To check", "parentCollection": false, "relations": {}}
    })];
    lib.version = 1;
    lib
}

async fn web() -> (Emulator, Server) {
    web_server(false).await
}

/// The server in process, or as the binary (whose log lines the test reads).
async fn web_server(binary: bool) -> (Emulator, Server) {
    let emu = Emulator::with_library(library()).await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend([
        ("ZOTERO_CROSSREF_BASE".to_string(), emu.crossref_base()),
        ("ZOTERO_FETCH_ALLOW_PRIVATE".to_string(), "1".to_string()),
        ("ZOTERO_CONTACT_EMAIL".to_string(), EMAIL.to_string()),
    ]);
    let server = if binary {
        spawn(&env).await
    } else {
        in_process(&env).await
    };
    (emu, server)
}

async fn check(server: &Server, args: Value) -> Value {
    let a = server.call("zotero_check_retractions", args).await;
    server.check_output("zotero_check_retractions", &a).await;
    a.expect_ok().clone()
}

fn by_key<'a>(data: &'a Value, key: &str) -> &'a Value {
    data["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["item_key"] == key)
        .unwrap_or_else(|| panic!("{key} in {data}"))
}

#[tokio::test]
async fn crossref_notices_are_reported_by_kind_and_source() {
    let (emu, server) = web().await;
    let d = check(&server, json!({})).await;
    assert_eq!(d["checked_with"], "crossref", "{d}");
    assert_eq!(d["total"], 8);
    assert!(d.get("next_start").is_none(), "{d}");
    // A retraction, said by Retraction Watch and by the publisher, with its notice.
    let r = by_key(&d, "RETRACT2");
    assert_eq!(r["status"], "retracted", "{r}");
    assert_eq!(r["doi"], RETRACTED.to_uppercase());
    let notices = r["notices"].as_array().unwrap();
    assert_eq!(notices.len(), 2, "{r}");
    let mut sources: Vec<&str> = notices
        .iter()
        .map(|n| n["source"].as_str().unwrap())
        .collect();
    sources.sort_unstable();
    assert_eq!(sources, ["publisher", "retraction-watch"]);
    for n in notices {
        assert_eq!(n["kind"], "retraction");
        assert_eq!(n["doi"], NOTICE);
        assert_eq!(n["url"], format!("https://doi.org/{NOTICE}"));
        assert_eq!(n["date"], "2021-03-15");
    }
    // A correction and an expression of concern are reported as such, never as retractions.
    let c = by_key(&d, "CRRECTD2");
    assert_eq!(c["status"], "corrected", "{c}");
    assert_eq!(c["notices"][0]["kind"], "correction");
    assert_eq!(c["notices"][0]["source"], "publisher");
    assert_eq!(c["notices"][0]["date"], "2021-01-11");
    let e = by_key(&d, "CNCERN22");
    assert_eq!(e["status"], "expression_of_concern", "{e}");
    assert_eq!(e["notices"][0]["kind"], "expression_of_concern");
    assert_eq!(e["notices"][0]["source"], "retraction-watch");
    // The notice itself is not retracted: it says what it retracts.
    let n = by_key(&d, "NTICE222");
    assert_eq!(n["status"], "clear", "{n}");
    assert_eq!(n["notice_for"][0]["doi"], RETRACTED);
    assert_eq!(n["notice_for"][0]["kind"], "retraction");
    assert_eq!(by_key(&d, "CLEAN222")["status"], "clear");
    // A DOI in Extra is checked; a DOI Crossref does not know, or none, cannot be.
    assert_eq!(by_key(&d, "EXTRA222")["status"], "corrected");
    let u = by_key(&d, "UNKNWN22");
    assert_eq!(u["status"], "not_checkable");
    assert!(
        u["reason"]
            .as_str()
            .unwrap()
            .contains("Crossref has no record"),
        "{u}"
    );
    let b = by_key(&d, "NDI22222");
    assert_eq!(b["status"], "not_checkable");
    assert!(b["reason"].as_str().unwrap().contains("no DOI"), "{b}");
    assert_eq!(
        d["counts"],
        json!({"retracted": 1, "corrected": 2, "expression_of_concern": 1, "clear": 2, "not_checkable": 2})
    );
    // One request for the page's DOIs, in the polite pool, with no Zotero key.
    let asked = emu.requests_to(MetadataHost::Crossref);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let r = &asked[0];
    assert_eq!(r.path, "/crossref/works");
    let filter = r.query_param("filter").unwrap();
    assert_eq!(filter.matches("doi:").count(), 7, "{filter}");
    assert_eq!(r.query_param("mailto"), Some(EMAIL));
    assert!(r.user_agent().unwrap().contains(&format!("mailto:{EMAIL}")));
    assert!(r.user_agent().unwrap().starts_with("zotero-mcp/"));
    for req in &asked {
        let all = format!("{} {:?} {:?}", req.path, req.query, req.headers);
        assert!(
            !all.contains(API_KEY),
            "the Zotero key reached Crossref: {all}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn keys_collections_and_pages_are_checked() {
    let (emu, server) = web().await;
    // By key, in the order given; a key the library lacks is said to be missing.
    let d = check(
        &server,
        json!({"item_keys": ["CNCERN22", "RETRACT2", "ABSENT22"]}),
    )
    .await;
    let keys: Vec<&str> = d["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["CNCERN22", "RETRACT2", "ABSENT22"]);
    assert_eq!(d["items"][0]["status"], "expression_of_concern");
    assert_eq!(d["items"][1]["status"], "retracted");
    assert_eq!(d["items"][2]["status"], "not_checkable");
    assert!(d["items"][2]["reason"]
        .as_str()
        .unwrap()
        .contains("ABSENT22"));
    // A collection's top-level items only.
    let d = check(&server, json!({"collection_key": COLLECTION})).await;
    assert_eq!(d["total"], 2, "{d}");
    assert_eq!(by_key(&d, "RETRACT2")["status"], "retracted");
    assert_eq!(by_key(&d, "NDI22222")["status"], "not_checkable");
    // The library in pages of three: every item once, in the order added.
    emu.reset_counts();
    let before = emu.count_to(MetadataHost::Crossref);
    let mut seen = Vec::new();
    let mut start = 0;
    let mut pages = 0;
    loop {
        let d = check(&server, json!({"limit": 3, "start": start})).await;
        pages += 1;
        for i in d["items"].as_array().unwrap() {
            seen.push(i["item_key"].as_str().unwrap().to_string());
        }
        match d["next_start"].as_u64() {
            Some(n) => start = n,
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        seen,
        [
            "RETRACT2", "CRRECTD2", "CNCERN22", "NTICE222", "CLEAN222", "UNKNWN22", "EXTRA222",
            "NDI22222"
        ]
    );
    // One Crossref request per page (the last page's book has no DOI: still one).
    assert_eq!(emu.count_to(MetadataHost::Crossref) - before, 3);
    let refused = server
        .call(
            "zotero_check_retractions",
            json!({"item_keys": ["RETRACT2"], "collection_key": COLLECTION}),
        )
        .await;
    let e = refused.expect_err("ZOTERO_VALIDATION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("not both"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn crossref_is_asked_again_after_its_wait_and_a_refusal_fails_the_items_not_the_call() {
    let (emu, server) = web().await;
    emu.inject(
        Fault::once(FaultKind::RateLimited {
            retry_after: RetryAfter::Seconds(1),
        })
        .on_host(MetadataHost::Crossref),
    );
    let d = check(&server, json!({"item_keys": ["RETRACT2"]})).await;
    assert_eq!(d["items"][0]["status"], "retracted", "{d}");
    assert_eq!(emu.count_to(MetadataHost::Crossref), 2);
    assert_eq!(emu.faults_pending(), 0);
    // Asked to wait an hour: the items are reported failed, saying why; none is "clear".
    emu.inject(
        Fault::times(
            FaultKind::RateLimited {
                retry_after: RetryAfter::Seconds(3600),
            },
            5,
        )
        .on_host(MetadataHost::Crossref),
    );
    let d = check(&server, json!({"item_keys": ["CLEAN222", "NDI22222"]})).await;
    assert_eq!(d["items"][0]["status"], "failed", "{d}");
    let reason = d["items"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("Crossref") && reason.contains("wait"),
        "{reason}"
    );
    assert_eq!(d["items"][1]["status"], "not_checkable");
    server.stop().await;
}

/// Keys of the database test (the standard fixture's keys hold 0 and 1, which no Zotero
/// key does, so tools refuse them): its retracted article, flagged as the fixture flags
/// `zotero_db::fixture::keys::RETRACTED`, a plain book, and two collections.
const FLAGGED: &str = "FLAGGED2";
const PLAIN: &str = "PLAINBK2";
const SUB: &str = "SUBCLL22";
const TOP: &str = "TPCLL222";

async fn database() -> (tempfile::TempDir, Emulator, Server) {
    let dir = tempfile::tempdir().unwrap();
    let b = zotero_db::fixture::Builder::create(dir.path()).unwrap();
    let flagged = b
        .item(
            1,
            FLAGGED,
            "journalArticle",
            &[
                ("title", "A fabricated result"),
                ("DOI", "10.5555/fake.2019"),
                ("date", "2019-03-00 March 2019"),
            ],
            &[("author", Some("Jan"), "Schön")],
            &[],
        )
        .unwrap();
    b.retract(
        flagged,
        r#"{"date":"2020-06-01","reasons":["Falsification/Fabrication of Data"],"urls":["https://retractionwatch.com/notice/1"],"doi":"10.5555/retraction.2020"}"#,
    )
    .unwrap();
    let plain = b
        .item(
            1,
            PLAIN,
            "book",
            &[("title", "A sound book"), ("DOI", "10.5555/sound.2018")],
            &[("author", Some("Ada"), "Lovelace")],
            &[],
        )
        .unwrap();
    let top = b.collection(1, TOP, "Science", None).unwrap();
    let sub = b.collection(1, SUB, "Biology", Some(top)).unwrap();
    b.file(top, plain).unwrap();
    b.file(sub, flagged).unwrap();
    drop(b);
    let emu = Emulator::start().await;
    let server = in_process(&[
        (
            "ZOTERO_DATA_DIR".to_string(),
            dir.path().to_string_lossy().into_owned(),
        ),
        ("ZOTERO_API_BASE".to_string(), emu.uri()),
        ("ZOTERO_CROSSREF_BASE".to_string(), emu.crossref_base()),
        ("ZOTERO_FETCH_ALLOW_PRIVATE".to_string(), "1".to_string()),
    ])
    .await;
    (dir, emu, server)
}

#[tokio::test]
async fn zoteros_flags_are_in_every_item_answer_and_checked_without_the_network() {
    let (_dir, emu, server) = database().await;
    // The item's metadata: Zotero's retraction, whole.
    let a = server
        .call("zotero_get_item_metadata", json!({"item_key": FLAGGED}))
        .await;
    server.check_output("zotero_get_item_metadata", &a).await;
    let r = &a.expect_ok()["item"]["retraction"];
    assert_eq!(r["date"], "2020-06-01", "{r}");
    assert_eq!(r["reasons"], json!(["Falsification/Fabrication of Data"]));
    assert_eq!(r["notice_doi"], "10.5555/retraction.2020");
    assert_eq!(r["urls"], json!(["https://retractionwatch.com/notice/1"]));
    let plain = server
        .call("zotero_get_item_metadata", json!({"item_key": PLAIN}))
        .await;
    assert!(plain.expect_ok()["item"].get("retraction").is_none());
    // As Markdown: a warning right under the title.
    let md = server
        .call(
            "zotero_get_item_metadata",
            json!({"item_key": FLAGGED, "format": "markdown"}),
        )
        .await;
    let md = md.expect_ok()["markdown"].as_str().unwrap().to_string();
    let warning = md.lines().nth(2).unwrap();
    assert!(warning.starts_with("> **Warning: retracted.**"), "{md}");
    assert!(warning.contains("(2020-06-01)"), "{md}");
    assert!(
        warning.contains("Falsification/Fabrication of Data"),
        "{md}"
    );
    assert!(
        warning.contains("[10.5555/retraction.2020](https://doi.org/10.5555/retraction.2020)"),
        "{md}"
    );
    // Listings and the item: a short marker on the flagged item only.
    for (tool, args) in [
        ("zotero_list_items", json!({"limit": 100})),
        ("zotero_search_items", json!({"query": "fabricated"})),
    ] {
        let a = server.call(tool, args).await;
        server.check_output(tool, &a).await;
        let d = a.expect_ok();
        let items = d["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{tool}: {d}");
        for i in items {
            let flagged = i["item_key"] == FLAGGED;
            assert_eq!(
                i.get("retracted"),
                flagged.then_some(&json!(true)),
                "{tool}: {i}"
            );
        }
    }
    let a = server
        .call("zotero_get_item", json!({"item_key": FLAGGED}))
        .await;
    server.check_output("zotero_get_item", &a).await;
    assert_eq!(a.expect_ok()["item"]["retracted"], true, "{}", a.envelope);
    // The check: the flagged items of the library, of a collection, or of keys.
    let d = check(&server, json!({})).await;
    assert_eq!(d["checked_with"], "zotero", "{d}");
    assert_eq!(d["total"], 1);
    assert_eq!(d["items_covered"], 2, "{d}");
    let r = &d["items"][0];
    assert_eq!(r["item_key"], FLAGGED);
    assert_eq!(r["status"], "retracted");
    assert_eq!(r["doi"], "10.5555/fake.2019");
    let n = &r["notices"][0];
    assert_eq!(n["source"], "zotero");
    assert_eq!(n["kind"], "retraction");
    assert_eq!(n["doi"], "10.5555/retraction.2020");
    assert_eq!(n["date"], "2020-06-01");
    assert_eq!(n["reasons"][0], "Falsification/Fabrication of Data");
    let d = check(&server, json!({"collection_key": SUB})).await;
    assert_eq!(d["items"][0]["item_key"], FLAGGED, "{d}");
    let d = check(&server, json!({"collection_key": TOP})).await;
    assert_eq!(d["total"], 0, "{d}");
    assert!(d["items"].as_array().unwrap().is_empty());
    let d = check(&server, json!({"item_keys": [PLAIN, FLAGGED]})).await;
    assert_eq!(d["items"][0]["status"], "clear", "{d}");
    assert_eq!(d["items"][1]["status"], "retracted");
    // Nothing left the machine: no API, no Crossref.
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
    server.stop().await;
}

/// Zotero's retraction data is stored as Retraction Watch sent it: a flag with huge texts
/// (a 5,000-character reason, a 20 KB DOI and URLs) is answered within the read budget,
/// each text cut to its bound, saying what was cut and where the rest is.
#[tokio::test]
async fn zoteros_huge_retraction_texts_are_cut_to_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let b = zotero_db::fixture::Builder::create(dir.path()).unwrap();
    let huge_doi = format!("10.5555/{}", "d".repeat(20_000));
    let mut ids = Vec::new();
    for n in 0..3 {
        let id = b
            .item(
                1,
                &format!("HUGEKEY{n}"),
                "journalArticle",
                &[
                    ("title", &"A fabricated result ".repeat(200)),
                    ("DOI", &format!("{huge_doi}{n}")),
                ],
                &[],
                &[],
            )
            .unwrap();
        ids.push(id);
    }
    let data = json!({
        "date": format!("2020-06-01{}", "9".repeat(5_000)),
        "reasons": (0..10).map(|i| format!("{i}{}", "r".repeat(5_000))).collect::<Vec<_>>(),
        "urls": (0..10).map(|i| format!("https://retractionwatch.com/{i}{}", "u".repeat(20_000))).collect::<Vec<_>>(),
        "doi": huge_doi,
    });
    for id in &ids {
        b.retract(*id, &data.to_string()).unwrap();
    }
    drop(b);
    let server = in_process(&[(
        "ZOTERO_DATA_DIR".to_string(),
        dir.path().to_string_lossy().into_owned(),
    )])
    .await;
    let a = server.call("zotero_check_retractions", json!({})).await;
    server.check_output("zotero_check_retractions", &a).await;
    let chars = a.text.chars().count();
    assert!(chars <= 20_000, "{chars} characters");
    let d = a.expect_ok();
    let item = &d["items"][0];
    assert_eq!(item["status"], "retracted", "{d}");
    assert!(item["title"].as_str().unwrap().chars().count() <= 121);
    assert!(
        item["doi"].as_str().unwrap().chars().count() <= 201,
        "{item}"
    );
    let n = &item["notices"][0];
    for reason in n["reasons"].as_array().unwrap() {
        assert!(reason.as_str().unwrap().chars().count() <= 501);
    }
    for key in ["doi", "url", "date"] {
        let len = n[key].as_str().unwrap().chars().count();
        assert!(len <= 501, "{key}: {len}");
    }
    let notes = d["truncated"].to_string();
    assert!(notes.contains("zotero_get_item_metadata"), "{notes}");
    server.stop().await;
}

#[tokio::test]
async fn a_cancelled_check_stops_waiting_for_crossref() {
    let (emu, server) = web_server(true).await;
    emu.inject(
        Fault::once(FaultKind::Slow(std::time::Duration::from_secs(3600)))
            .on_host(MetadataHost::Crossref),
    );
    // The client gives up once Crossref has the request (an event, not a delay): rmcp sends
    // notifications/cancelled when the call's future is dropped.
    let call = server.call_raw("zotero_check_retractions", json!({}));
    let asked = async {
        while emu.count_to(MetadataHost::Crossref) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        _ = call => panic!("the call ended while Crossref was still answering"),
        () = asked => {}
    }
    let ended = server
        .wait_for_log(std::time::Duration::from_secs(60), |v| {
            v["fields"]["message"] == "tool call finished"
                && v["fields"]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("cancelled"))
        })
        .await;
    assert!(ended, "the call did not end: {:#?}", server.stderr());
    assert_eq!(emu.count_to(MetadataHost::Crossref), 1);
    let d = check(&server, json!({"item_keys": ["RETRACT2"]})).await;
    assert_eq!(d["items"][0]["status"], "retracted");
    server.stop().await;
}

/// (progress, total) of each notification, in arrival order.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(f64, Option<f64>)>>>;

#[derive(Clone, Default)]
struct ProgressLog(Seen);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push((params.progress, params.total));
    }
}

#[tokio::test]
async fn sixty_dois_take_two_requests_and_progress_says_so() {
    use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let mut lib = Library::empty();
    const KEY_CHARS: &[u8] = b"23456789ABCDEFGH";
    for i in 0..60usize {
        let key = format!(
            "BULK{}{}22",
            char::from(KEY_CHARS[i / 16]),
            char::from(KEY_CHARS[i % 16])
        );
        lib.items.push(item(
            &key,
            "journalArticle",
            &format!("Bulk paper {i}"),
            json!({"DOI": format!("10.5555/emu.bulk.{i}")}),
            &format!("2024-02-01T00:{:02}:00Z", i),
        ));
    }
    lib.version = 1;
    let emu = Emulator::with_library(lib).await;
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend([
        ("ZOTERO_CROSSREF_BASE".to_string(), emu.crossref_base()),
        ("ZOTERO_FETCH_ALLOW_PRIVATE".to_string(), "1".to_string()),
    ]);
    let mut cmd = tokio::process::Command::new(crate::common::BIN);
    cmd.env_clear();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = ProgressLog::default();
    let client = log.clone().serve(transport).await.unwrap();
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("rc-1".into())));
    let mut params = CallToolRequestParams::new("zotero_check_retractions")
        .with_arguments(crate::common::obj(json!({})));
    params.meta = Some(meta);
    let answer = crate::common::to_answer(client.call_tool(params).await.unwrap());
    let d = answer.expect_ok();
    assert_eq!(d["total"], 60, "{d}");
    assert_eq!(d["counts"], json!({"not_checkable": 60}));
    // Fifty DOIs a request, without a contact: still batched, in the public pool.
    let asked = emu.requests_to(MetadataHost::Crossref);
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[0]
            .query_param("filter")
            .unwrap()
            .matches("doi:")
            .count(),
        50
    );
    assert!(asked.iter().all(|r| r.query_param("mailto").is_none()));
    for _ in 0..100 {
        if log.0.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = log.0.lock().unwrap().clone();
    assert_eq!(seen, [(50.0, Some(60.0)), (60.0, Some(60.0))]);
    let _ = client.cancel().await;
}
