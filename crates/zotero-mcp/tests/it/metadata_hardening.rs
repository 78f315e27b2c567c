//! `zotero_add_by_identifier` against metadata services that misbehave: a doi.org that
//! redirects to a private host, a service base on this machine without
//! `ZOTERO_FETCH_ALLOW_PRIVATE`, a DOI with dot segments, a service that echoes the NCBI key,
//! and records far over Zotero's field limits. Each is refused or cut, and nothing is
//! written that should not be.
//!
//! The emulator runs on loopback, so the tests that need it reachable while another
//! loopback address is private use the guard's test policy (no variable sets it): the
//! emulator's 127.0.0.1 plays the public internet, 127.0.0.2 a private host.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use zotero_emulator::{Emulator, HostedFile, API_KEY, USER_ID};

use crate::common::{env_for, in_process, in_process_configured, writes, Server};

/// 127.0.0.2 plays a private host; everything else (the emulator) is public.
fn private_is_127_0_0_2(ip: IpAddr) -> bool {
    ip == IpAddr::from([127, 0, 0, 2])
}

/// The metadata bases on the emulator, doi.org on its fake web host (where a test decides
/// what it answers).
fn env(emu: &Emulator, allow_private: bool) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.extend(
        [
            ("ZOTERO_DOI_BASE", emu.web_url("/doi")),
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_DATACITE_BASE", emu.datacite_base()),
            ("ZOTERO_ARXIV_API_BASE", emu.arxiv_api_base()),
            ("ZOTERO_OPENLIBRARY_BASE", emu.openlibrary_base()),
            ("ZOTERO_NCBI_BASE", emu.web_url("/ncbi")),
            ("ZOTERO_UNPAYWALL_BASE", emu.unpaywall_base()),
            ("ZOTERO_ARXIV_BASE", emu.arxiv_base()),
            ("ZOTERO_NCBI_API_KEY", NCBI_KEY.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    if allow_private {
        env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    }
    env
}

const NCBI_KEY: &str = "0123456789abcdef0123456789abcdef0123";

/// A "private" host on 127.0.0.2 answering CSL-JSON with this title; counts its connections.
async fn private_host(title: &'static str) -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.2", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut byte = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut byte).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&byte[..n]),
                    }
                }
                let body = json!({"type": "article-journal", "title": title}).to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.citationstyles.csl+json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(answer.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), count)
}

async fn add(server: &Server, args: Value) -> Value {
    server
        .call("zotero_add_by_identifier", args)
        .await
        .expect_ok()
        .clone()
}

#[tokio::test]
async fn a_doi_org_redirect_to_a_private_host_is_refused_and_nothing_is_written() {
    let emu = Emulator::start().await;
    let (private, connections) = private_host("Read from the private host").await;
    emu.redirect(
        "/doi/10.5555/redirected",
        &format!("{private}/internal/record"),
        302,
    );
    let server = in_process_configured(&env(&emu, false), |c| {
        c.net.fetch_policy = zotero_net::AddressPolicy::Refuse(private_is_127_0_0_2);
    })
    .await;
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/redirected"], "attach_pdf": false}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "failed", "{d}");
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("redirected to 127.0.0.2"), "{error}");
    assert!(error.contains("ZOTERO_FETCH_ALLOW_PRIVATE=1"), "{error}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));

    // What the guard prevents: with private addresses allowed, the private host's answer
    // becomes the item.
    let lax = in_process(&env(&emu, true)).await;
    let d = add(
        &lax,
        json!({"identifiers": ["10.5555/redirected"], "attach_pdf": false}),
    )
    .await;
    assert_eq!(d["results"][0]["status"], "created", "{d}");
    assert_eq!(d["results"][0]["title"], "Read from the private host");
    assert!(connections.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn a_service_base_on_this_machine_needs_zotero_fetch_allow_private() {
    let emu = Emulator::start().await;
    emu.add_crossref_work(zotero_emulator::crossref_article(
        "10.5555/local.1",
        "A local mirror's record",
        &[("Ada", "Lovelace")],
        2026,
    ));
    let server = in_process(&env(&emu, false)).await;
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/local.1"], "attach_pdf": false}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "failed", "{d}");
    let error = r["error"].as_str().unwrap();
    for named in [
        "ZOTERO_DOI_BASE",
        "ZOTERO_CROSSREF_BASE",
        "ZOTERO_DATACITE_BASE",
        "ZOTERO_FETCH_ALLOW_PRIVATE=1",
        "loopback",
    ] {
        assert!(error.contains(named), "{named}: {error}");
    }
    assert!(writes(&emu).is_empty(), "{:?}", writes(&emu));
    assert!(emu
        .requests()
        .iter()
        .all(|r| !r.path.starts_with("/crossref")));
}

#[tokio::test]
async fn a_doi_with_dot_segments_never_leaves_the_service_path() {
    let emu = Emulator::start().await;
    let server = in_process(&env(&emu, true)).await;
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/../../../x"], "dry_run": true}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "failed", "{d}");
    assert!(r["error"].as_str().unwrap().contains("'..'"), "{d}");
    assert!(
        emu.requests().iter().all(|r| !r.path.contains("..")
            && !r.path.starts_with("/x")
            && !r.path.starts_with("/web/x")),
        "{:?}",
        emu.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn the_ncbi_key_echoed_by_ncbi_never_reaches_the_answer() {
    let emu = Emulator::start().await;
    emu.serve(
        "/ncbi/entrez/eutils/esummary.fcgi",
        HostedFile {
            status: 400,
            ..HostedFile::new(
                format!(r#"{{"error":"API key invalid","api-key":"{NCBI_KEY}"}}"#),
                "application/json",
            )
        },
    );
    let server = in_process(&env(&emu, true)).await;
    let d = add(&server, json!({"identifiers": ["PMID: 123456"]})).await;
    let all = d.to_string();
    assert!(all.contains("API key invalid"), "{d}");
    assert!(all.contains("[redacted]"), "{d}");
    assert!(!all.contains(NCBI_KEY), "{d}");
}

#[tokio::test]
async fn oversized_metadata_is_cut_to_zoteros_limits_or_refused() {
    let emu = Emulator::start().await;
    let huge_title = "T".repeat(1_000_000);
    let mut work = zotero_emulator::crossref_article(
        "10.5555/huge.title",
        &huge_title,
        &[("Ada", "Lovelace")],
        2026,
    );
    work["abstract"] = json!("a");
    emu.add_crossref_work(work);
    let long_author = "F".repeat(300_000);
    let mut work = zotero_emulator::crossref_article(
        "10.5555/huge.abstract",
        "A normal title",
        &[(long_author.as_str(), "Lovelace")],
        2026,
    );
    work["abstract"] = json!("<jats:p>".to_string() + &"b".repeat(2_000_000) + "</jats:p>");
    emu.add_crossref_work(work);
    let server = in_process(&env(&emu, true)).await;

    // A title over the limit: refused, nothing written, a short answer.
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/huge.title"], "attach_pdf": false}),
    )
    .await;
    assert_eq!(d["results"][0]["status"], "failed");
    assert!(
        d["results"][0]["error"]
            .as_str()
            .unwrap()
            .contains("over Zotero's limit of 65535 bytes"),
        "{}",
        &d.to_string()[..2000.min(d.to_string().len())]
    );
    assert!(d.to_string().len() < 5_000, "{}", d.to_string().len());
    assert!(writes(&emu).is_empty());

    // An abstract and an author over the limits: cut, and said so.
    let d = add(
        &server,
        json!({"identifiers": ["10.5555/huge.abstract"], "attach_pdf": false}),
    )
    .await;
    let r = &d["results"][0];
    assert_eq!(r["status"], "created", "{}", &d.to_string()[..2000]);
    let cut = r["cut"].as_array().unwrap();
    assert!(
        cut.iter()
            .any(|c| c.as_str().unwrap().starts_with("abstractNote cut")),
        "{cut:?}"
    );
    assert!(
        cut.iter()
            .any(|c| c.as_str().unwrap().contains("creator name")),
        "{cut:?}"
    );
    assert!(d.to_string().len() < 5_000, "{}", d.to_string().len());
    let item = emu.item(r["item_key"].as_str().unwrap()).unwrap();
    let data = &item["data"];
    assert!(data["abstractNote"].as_str().unwrap().len() <= 65_535);
    assert!(
        data["creators"][0]["firstName"]
            .as_str()
            .unwrap()
            .chars()
            .count()
            <= 255
    );
    assert!(
        item.to_string().len() < 100_000,
        "{}",
        item.to_string().len()
    );
}
