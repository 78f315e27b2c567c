//! Conformance of `zotero_add_by_identifier` against the emulator's Zotero and its fake
//! metadata hosts: each identifier kind, each outcome (created, already in the library, the
//! same work twice in a call, not found, malformed), the PDF (arXiv's, Unpaywall's, none),
//! dry runs, read-only libraries, and the manners kept with each host (user agent, contact,
//! batching, spacing; the Zotero key never sent there).

use std::time::Instant;

use serde_json::{json, Value};
use zotero_emulator::{Emulator, MetadataHost, API_KEY, USER_ID};

use crate::common::{env_for, in_process, writes, Server};

const EMAIL: &str = "ada@lovelace-lab.org";

async fn setup(email: bool) -> (Emulator, Server) {
    let emu = Emulator::start().await;
    emu.add_catalogue_arxiv_pdfs();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        [
            ("ZOTERO_DOI_BASE", emu.doi_base()),
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_DATACITE_BASE", emu.datacite_base()),
            ("ZOTERO_ARXIV_API_BASE", emu.arxiv_api_base()),
            ("ZOTERO_OPENLIBRARY_BASE", emu.openlibrary_base()),
            ("ZOTERO_NCBI_BASE", emu.ncbi_base()),
            ("ZOTERO_UNPAYWALL_BASE", emu.unpaywall_base()),
            ("ZOTERO_ARXIV_BASE", emu.arxiv_base()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    if email {
        env.push(("ZOTERO_CONTACT_EMAIL".into(), EMAIL.into()));
    }
    let server = in_process(&env).await;
    (emu, server)
}

async fn add(server: &Server, args: Value) -> Value {
    server
        .call("zotero_add_by_identifier", args)
        .await
        .expect_ok()
        .clone()
}

fn item_posts(emu: &Emulator) -> usize {
    emu.requests()
        .iter()
        .filter(|r| {
            r.method == "POST"
                && r.path == format!("/users/{USER_ID}/items")
                && String::from_utf8_lossy(&r.body).contains("\"itemType\"")
                && !String::from_utf8_lossy(&r.body).contains("\"attachment\"")
        })
        .count()
}

#[tokio::test]
async fn a_doi_becomes_an_item_with_its_open_access_pdf_and_never_twice() {
    let (emu, server) = setup(true).await;
    let d = add(
        &server,
        json!({"identifiers": ["https://doi.org/10.1038/nature12373"]}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{d}");
    assert_eq!(r["kind"], "doi");
    assert_eq!(r["item_type"], "journalArticle");
    assert_eq!(r["pdf"], "attached", "{d}");
    assert_eq!(r["pdf_source"], "Unpaywall");
    let key = r["item_key"].as_str().unwrap();
    let item = emu.item(key).unwrap();
    let data = &item["data"];
    assert_eq!(
        data["DOI"].as_str().unwrap().to_lowercase(),
        "10.1038/nature12373"
    );
    assert!(!data["title"].as_str().unwrap().is_empty());
    assert_eq!(data["creators"].as_array().unwrap().len(), 8);
    for f in ["publicationTitle", "volume", "pages", "date"] {
        assert!(!data[f].as_str().unwrap_or("").is_empty(), "{f}: {data}");
    }
    // The PDF hangs under it, checked to be a PDF.
    let pdf_key = r["pdf_attachment_key"].as_str().unwrap();
    assert_eq!(emu.item(pdf_key).unwrap()["data"]["parentItem"], key);
    assert_eq!(
        emu.item(pdf_key).unwrap()["data"]["contentType"],
        "application/pdf"
    );
    assert_eq!(d["created"], 1);

    // Again, written another way: found in the library, nothing created, the PDF already there.
    let posts = item_posts(&emu);
    let d = add(&server, json!({"identifiers": ["doi:10.1038/NATURE12373"]})).await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "already_in_library", "{d}");
    assert_eq!(r["item_key"], key);
    assert_eq!(r["pdf"], "already_attached", "{d}");
    assert_eq!(item_posts(&emu), posts);
    assert_eq!(d["already_in_library"], 1);
}

#[tokio::test]
async fn arxiv_papers_come_as_preprints_with_their_pdf_and_the_library_copy_is_found() {
    let (emu, server) = setup(false).await;
    let d = add(
        &server,
        json!({"identifiers": ["arXiv:hep-th/9711200", "https://arxiv.org/abs/1706.03762v5",
                               "1512.03385"],
               "tags": ["to-read"]}),
    )
    .await;
    let (a, b, c) = (&d["results"][0], &d["results"][1], &d["results"][2]);
    assert_eq!(a["status"], "created", "{d}");
    assert_eq!(a["pdf"], "attached", "{d}");
    assert_eq!(a["pdf_source"], "arXiv");
    let data = emu.item(a["item_key"].as_str().unwrap()).unwrap()["data"].clone();
    assert!(
        data["extra"]
            .as_str()
            .unwrap_or("")
            .contains("hep-th/9711200")
            || data["archiveID"] == "arXiv:hep-th/9711200",
        "{data}"
    );
    assert_eq!(data["tags"], json!([{"tag": "to-read"}]));
    // 1706.03762 is VASWANI7 in the fixture library, which has its PDF: nothing added.
    assert_eq!(b["status"], "already_in_library", "{d}");
    assert_eq!(b["item_key"], "VASWANI7");
    assert_eq!(b["pdf"], "already_attached", "{d}");
    assert_eq!(b["pdf_attachment_key"], "VASPDF23");
    // 1512.03385 is RESNET52 (found by its title, compared by its arXiv id).
    assert_eq!(c["status"], "already_in_library", "{d}");
    assert_eq!(c["item_key"], "RESNET52");
    // The three ids went to arXiv's API in one request.
    assert_eq!(emu.count_to(MetadataHost::ArxivApi), 1);
}

#[tokio::test]
async fn isbns_pmids_and_pmcids_and_one_work_named_three_ways() {
    let (emu, server) = setup(true).await;
    let d = add(
        &server,
        json!({"identifiers": ["ISBN 0-13-110362-8", "PMID: 23903748", "PMC4221854",
                               "10.1038/nature12373"]}),
    )
    .await;
    let res = d["results"].as_array().unwrap();
    assert_eq!(res[0]["status"], "created", "{d}");
    assert_eq!(res[0]["item_type"], "book");
    assert_eq!(res[0]["pdf"], "none_open_access", "{d}");
    let book = emu.item(res[0]["item_key"].as_str().unwrap()).unwrap();
    assert!(book["data"]["ISBN"]
        .as_str()
        .unwrap()
        .contains("9780131103627"));
    assert_eq!(res[1]["status"], "created", "{d}");
    let key = res[1]["item_key"].clone();
    // The same article by its PMCID and its DOI: the one item, not three.
    for r in &res[2..] {
        assert_eq!(r["status"], "same_as_earlier", "{d}");
        assert_eq!(r["item_key"], key);
    }
    assert_eq!(d["created"], 2);
    assert_eq!(item_posts(&emu), 2);
    // One summary request for PubMed, one id conversion.
    assert_eq!(emu.count_to(MetadataHost::Ncbi), 2);
}

#[tokio::test]
async fn what_cannot_be_read_or_found_is_said_per_identifier() {
    let (emu, server) = setup(false).await;
    let d = add(
        &server,
        json!({"identifiers": ["10.1038", "978-0-13-110362-6", "10.9999/does-not-exist",
                               "not an identifier", "hep-th/9711200"], "attach_pdf": false}),
    )
    .await;
    let res = d["results"].as_array().unwrap();
    let statuses: Vec<&str> = res.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        ["failed", "failed", "not_found", "failed", "created"],
        "{d}"
    );
    assert!(res[0]["error"].as_str().unwrap().contains("DOI"), "{d}");
    assert!(
        res[1]["error"].as_str().unwrap().contains("check digit"),
        "{d}"
    );
    assert!(res[3]["error"].as_str().unwrap().contains("DOI"), "{d}");
    assert_eq!(res[4]["pdf"], "not_searched");
    assert_eq!(d["not_added"], 4);
    assert_eq!(item_posts(&emu), 1);
}

#[tokio::test]
async fn without_a_contact_address_unpaywall_is_never_asked() {
    let (emu, server) = setup(false).await;
    let d = add(&server, json!({"identifiers": ["10.1038/sdata.2016.18"]})).await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{d}");
    assert_eq!(r["pdf"], "not_searched");
    assert!(r["pdf_reason"]
        .as_str()
        .unwrap()
        .contains("ZOTERO_CONTACT_EMAIL"));
    assert_eq!(emu.count_to(MetadataHost::Unpaywall), 0);
}

#[tokio::test]
async fn a_dry_run_looks_everything_up_and_writes_nothing() {
    let (emu, server) = setup(true).await;
    let d = add(
        &server,
        json!({"identifiers": ["10.1038/sdata.2016.18", "1706.03762"], "dry_run": true}),
    )
    .await;
    assert_eq!(d["results"][0]["status"], "would_create", "{d}");
    assert_eq!(d["results"][1]["status"], "already_in_library");
    assert_eq!(d["dry_run"], true);
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
}

#[tokio::test]
async fn a_library_the_key_cannot_write_is_refused_before_any_service_is_asked() {
    use zotero_emulator::{GroupSpec, KeyAccess, Library};
    let (emu, server) = setup(true).await;
    emu.add_group(GroupSpec::new(4002, "Readers"), Library::from_fixtures());
    emu.set_key_access(KeyAccess::groups(&[(4002, false)]));
    let a = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": ["10.1038/nature12373"], "library": "group:4002"}),
        )
        .await;
    a.expect_err("ZOTERO_AUTH_ERROR");
    for host in MetadataHost::ALL {
        assert_eq!(emu.count_to(host), 0, "{host:?}");
    }
    assert!(writes(&emu).is_empty());
}

#[tokio::test]
async fn twenty_identifiers_keep_each_hosts_manners() {
    let (emu, server) = setup(true).await;
    let ids = [
        "10.1038/nature12373",
        "10.1038/nature14539",
        "10.1038/sdata.2016.18",
        "10.1007/978-3-319-24574-4_28",
        "10.1109/CVPR.2016.90",
        "10.1023/A:1026654312961",
        "10.5072/zenodo.8142113",
        "1512.03385",
        "hep-th/9711200",
        "1706.03762",
        "9780131103627",
        "0465026850",
        "PMID 23903748",
        "26017442",
        "26978244",
        "PMC4221854",
        "PMC4792175",
        "https://doi.org/10.1038/NATURE14539",
        "arXiv:1512.03385v1",
        "ISBN 978-0-465-02685-2",
    ];
    let started = Instant::now();
    let d = add(&server, json!({"identifiers": ids})).await;
    let wall = started.elapsed();
    let res = d["results"].as_array().unwrap();
    assert_eq!(res.len(), 20);
    assert!(
        res.iter().all(|r| r["status"] != "failed"),
        "{}",
        serde_json::to_string_pretty(&d).unwrap()
    );
    let mut counts = Vec::new();
    for host in MetadataHost::ALL {
        let got = emu.requests_to(host);
        counts.push(format!("{host:?} {}", got.len()));
        for r in &got {
            let ua = r.user_agent().unwrap_or("");
            assert!(ua.starts_with("zotero-mcp/"), "{host:?}: {ua}");
            // The metadata services are told who asks (the PDF host is a file download).
            if host != MetadataHost::OpenAccess {
                assert!(ua.contains(EMAIL), "{host:?}: {ua}");
            }
            // The Zotero key never leaves for another host.
            assert!(r.header("zotero-api-key").is_none(), "{host:?}");
            assert!(r.header("authorization").is_none(), "{host:?}");
            assert!(!r.path.contains(API_KEY) && !format!("{:?}", r.query).contains(API_KEY));
        }
    }
    // Batched where the service takes batches; paced as each asks.
    assert_eq!(emu.count_to(MetadataHost::ArxivApi), 1);
    // Two or more requests each (the converter and the summary; several works), so the
    // spacing is measured, not skipped. The client paces when a request starts (NCBI 3 a
    // second, Crossref 10); the emulator sees when it arrives, which a loaded machine delays
    // by a few to tens of ms more for one request than the next. Unpaced requests would
    // arrive within a few ms of each other, so three quarters of the pace tells them apart
    // without measuring the machine's load.
    let gap = emu
        .min_interval(MetadataHost::Ncbi)
        .expect("two NCBI requests");
    assert!(gap.as_millis() >= 250, "NCBI requests {gap:?} apart");
    let gap = emu
        .min_interval(MetadataHost::Crossref)
        .expect("several Crossref requests");
    assert!(gap.as_millis() >= 75, "Crossref requests {gap:?} apart");
    eprintln!(
        "20 identifiers: {} created, {} already in the library, in {wall:?}; requests per host: {}",
        d["created"],
        d["already_in_library"],
        counts.join(", ")
    );
}

#[tokio::test]
async fn created_items_go_into_the_collection_with_the_tags() {
    let (emu, server) = setup(false).await;
    let d = add(
        &server,
        json!({"identifiers": ["0465026850", "10.1038/sdata.2016.18"],
               "collection_name": "attention MECHANISMS", "tags": ["lab", "2026"],
               "attach_pdf": false}),
    )
    .await;
    for r in d["results"].as_array().unwrap() {
        assert_eq!(r["status"], "created", "{d}");
        let data = emu.item(r["item_key"].as_str().unwrap()).unwrap()["data"].clone();
        assert_eq!(data["collections"], json!(["ATTNDP62"]));
        assert_eq!(data["tags"], json!([{"tag": "lab"}, {"tag": "2026"}]));
        // Fetched from the web: when, as Zotero records it.
        if !data["url"].as_str().unwrap_or("").is_empty() {
            assert!(
                data["accessDate"].as_str().unwrap().starts_with("20"),
                "{data}"
            );
        }
    }
    // An unknown collection is refused before anything is looked up or written.
    let a = server
        .call(
            "zotero_add_by_identifier",
            json!({"identifiers": ["0131103628"], "collection_name": "No such"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
}

#[tokio::test]
async fn pdfs_that_are_not_open_or_not_pdfs_leave_the_item_and_say_why() {
    let (emu, server) = setup(true).await;
    // A closed article: Unpaywall knows it and has no open copy.
    emu.add_crossref_work(zotero_emulator::crossref_article(
        "10.5555/closed.2026.1",
        "A closed article",
        &[("Ada", "Lovelace")],
        2026,
    ));
    emu.add_unpaywall(json!({"doi": "10.5555/closed.2026.1", "is_oa": false,
                             "best_oa_location": null, "oa_locations": []}));
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/closed.2026.1", "10.1007/978-3-319-24574-4_28"]}),
    )
    .await;
    let res = d["results"].as_array().unwrap();
    assert_eq!(res[0]["status"], "created", "{d}");
    assert_eq!(res[0]["pdf"], "none_open_access", "{d}");
    assert_eq!(res[1]["status"], "created", "{d}");
    assert_eq!(res[1]["item_type"], "bookSection");
    assert_eq!(res[1]["pdf"], "failed", "{d}");
    assert!(
        res[1]["pdf_reason"].as_str().unwrap().contains("PDF"),
        "{d}"
    );
    // No attachment was left behind by the refused download.
    let key = res[1]["item_key"].as_str().unwrap();
    assert!(emu
        .items()
        .iter()
        .all(|i| i["data"]["parentItem"] != json!(key)));
}

#[tokio::test]
async fn a_rate_limited_service_is_asked_again_after_its_wait() {
    use zotero_emulator::{Fault, FaultKind, RetryAfter};
    let (emu, server) = setup(false).await;
    emu.inject(
        Fault::once(FaultKind::RateLimited {
            retry_after: RetryAfter::Seconds(1),
        })
        .on_host(MetadataHost::OpenLibrary),
    );
    emu.inject(
        Fault::once(FaultKind::Unavailable {
            retry_after: None,
            backoff: None,
        })
        .on_host(MetadataHost::ArxivApi),
    );
    let d = add(
        &server,
        json!({"identifiers": ["9780131103627", "hep-th/9711200"], "attach_pdf": false}),
    )
    .await;
    for r in d["results"].as_array().unwrap() {
        assert_eq!(r["status"], "created", "{d}");
    }
    assert_eq!(emu.count_to(MetadataHost::OpenLibrary), 2);
    assert_eq!(emu.count_to(MetadataHost::ArxivApi), 2);
    assert_eq!(emu.faults_pending(), 0);
}

#[tokio::test]
async fn progress_is_reported_per_identifier_and_a_cancel_stops_the_rest() {
    use std::sync::{Arc, Mutex};
    use tokio_util::sync::CancellationToken;
    use zotero_mcp::tools::{ToolContext, ToolName};
    let emu = Emulator::start().await;
    let mut env: std::collections::HashMap<String, String> =
        env_for(&emu.uri(), USER_ID, API_KEY).into_iter().collect();
    for (k, v) in [
        ("ZOTERO_DOI_BASE", emu.doi_base()),
        ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
        ("ZOTERO_OPENLIBRARY_BASE", emu.openlibrary_base()),
        ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
    ] {
        env.insert(k.into(), v);
    }
    let config = zotero_mcp::config::Config::from_map(&env).unwrap();
    let svc = zotero_mcp::service::ZoteroService::new(&config).unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let ctx = ToolContext {
        svc: Arc::new(svc),
        cancel,
        // The client cancels once two identifiers are done.
        progress: Some(Arc::new(move |done, total| {
            log.lock().unwrap().push((done, total));
            if done >= 2 {
                stop.cancel();
            }
        })),
        confirm: None,
    };
    let tool = ToolName::from_name("zotero_add_by_identifier").unwrap();
    let args = json!({"identifiers": ["9780131103627", "0465026850", "10.1109/CVPR.2016.90",
                                      "10.1038/nature12373"], "attach_pdf": false});
    let data = tool
        .call(&ctx, args.as_object().cloned())
        .await
        .expect("an answer");
    let statuses: Vec<&str> = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["created", "created", "not_attempted", "not_attempted"],
        "{data}"
    );
    assert_eq!(data["created"], 2);
    assert_eq!(*seen.lock().unwrap(), [(1, 4), (2, 4)]);
    // What was not attempted was not created either.
    assert_eq!(item_posts(&emu), 2);
}

#[test]
fn the_add_command_prints_what_was_added() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let emu = rt.block_on(Emulator::start());
    let out = std::process::Command::new(crate::common::BIN)
        .args(["add", "0465026850", "not-an-id", "--tag", "cli", "--no-pdf"])
        .env_clear()
        .env("ZOTERO_API_BASE", emu.uri())
        .env("ZOTERO_USER_ID", USER_ID.to_string())
        .env("ZOTERO_API_KEY", API_KEY)
        .env("ZOTERO_OPENLIBRARY_BASE", emu.openlibrary_base())
        .env("ZOTERO_FETCH_ALLOW_PRIVATE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // One identifier could not be added: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stdout} {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("0465026850\tadded\t"), "{stdout}");
    assert!(lines[1].starts_with("not-an-id\tfailed"), "{stdout}");
    assert!(stderr.contains("not-an-id"), "{stderr}");
    let key = lines[0].split('\t').nth(2).unwrap();
    let item = emu.item(key).unwrap();
    assert_eq!(item["data"]["itemType"], "book");
    assert_eq!(item["data"]["tags"], json!([{"tag": "cli"}]));
    drop(rt);
}

#[tokio::test]
async fn crossref_and_datacite_answer_when_content_negotiation_cannot() {
    use zotero_emulator::{Fault, FaultKind};
    let (emu, server) = setup(false).await;
    // doi.org fails (every retry): Crossref's own record is used.
    emu.inject(Fault::times(FaultKind::Status(500), 3).on_host(MetadataHost::Doi));
    let d = add(
        &server,
        json!({"identifiers": ["10.1038/sdata.2016.18"], "attach_pdf": false}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{d}");
    let data = emu.item(r["item_key"].as_str().unwrap()).unwrap()["data"].clone();
    assert_eq!(data["libraryCatalog"], "Crossref", "{data}");
    assert_eq!(data["creators"].as_array().unwrap().len(), 53);
    // A DataCite DOI: a dataset, through content negotiation with DataCite.
    let d = add(
        &server,
        json!({"identifiers": ["10.5072/zenodo.8142113"], "attach_pdf": false}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{d}");
    assert_eq!(r["item_type"], "dataset", "{d}");
}

#[tokio::test]
async fn a_book_added_twice_by_its_two_isbns_is_found_the_second_time() {
    let (emu, server) = setup(false).await;
    let first = add(&server, json!({"identifiers": ["9780131103627"]})).await;
    let key = first["results"][0]["item_key"].clone();
    let posts = item_posts(&emu);
    let again = add(&server, json!({"identifiers": ["0-13-110362-8"]})).await;
    assert_eq!(
        again["results"][0]["status"], "already_in_library",
        "{again}"
    );
    assert_eq!(again["results"][0]["item_key"], key);
    assert_eq!(item_posts(&emu), posts);
}
