//! What an outside answer cannot make the metadata client do: reach a private address (a
//! configured base or a redirect hop), leave a service's base path, show a configured
//! secret, or turn an oversized answer into an oversized message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zotero_metadata::services::{MetadataServices, Service, ServiceError, ServicesConfig};
use zotero_net::{AddressPolicy, RetryPolicy, Secrets};

const NCBI_KEY: &str = "0123456789abcdef0123456789abcdef0123";

fn config(base: &str, policy: AddressPolicy) -> ServicesConfig {
    let bases: HashMap<Service, String> = Service::ALL
        .into_iter()
        .map(|s| (s, format!("{base}/{}", s.variable().to_lowercase())))
        .collect();
    ServicesConfig {
        bases,
        contact_email: Some("ada@lovelace-lab.org".into()),
        ncbi_api_key: Some(NCBI_KEY.into()),
        openalex_api_key: None,
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_wait: Duration::from_secs(5),
        },
        min_interval_override: Some(Duration::ZERO),
        policy,
        secrets: Secrets::new([NCBI_KEY, "zotero-api-key-0123456789"]),
    }
}

/// A listener on 127.0.0.2 that counts the connections it gets (and answers none).
async fn counting_listener() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.2", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(sock);
        }
    });
    (format!("http://{addr}"), count)
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused_and_nothing_reaches_it() {
    // The mock (127.0.0.1) plays the public doi.org; 127.0.0.2 plays a private host.
    fn refused(ip: IpAddr) -> bool {
        ip == IpAddr::from([127, 0, 0, 2])
    }
    let mock = MockServer::start().await;
    let (private, connections) = counting_listener().await;
    Mock::given(method("GET"))
        .and(path("/zotero_doi_base/10.1/abc"))
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", format!("{private}/admin")),
        )
        .mount(&mock)
        .await;
    let s = MetadataServices::new(config(&mock.uri(), AddressPolicy::Refuse(refused))).unwrap();
    let e = s
        .doi_csl("10.1/abc", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("redirected to 127.0.0.2"), "{text}");
    assert!(text.contains("ZOTERO_FETCH_ALLOW_PRIVATE=1"), "{text}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    // Not retried: doi.org was asked once.
    assert_eq!(mock.received_requests().await.unwrap().len(), 1);

    // The same redirect is followed when private addresses are allowed.
    let lax = MetadataServices::new(config(&mock.uri(), AddressPolicy::Any)).unwrap();
    let _ = lax.doi_csl("10.1/abc", &CancellationToken::new()).await;
    assert!(connections.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn a_base_on_this_machine_needs_the_allow_variable() {
    let mock = MockServer::start().await;
    let port = mock.address().port();
    let cancel = CancellationToken::new();
    for base in [mock.uri(), format!("http://localhost:{port}")] {
        let s = MetadataServices::new(config(&base, AddressPolicy::PublicOnly)).unwrap();
        let e = s.crossref_work("10.1/abc", &cancel).await.unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, ServiceError::Forbidden { .. }), "{text}");
        assert!(text.starts_with("Crossref: refused to connect"), "{text}");
        assert!(text.contains("loopback"), "{text}");
        assert!(text.contains("ZOTERO_CROSSREF_BASE"), "{text}");
        assert!(text.contains("ZOTERO_FETCH_ALLOW_PRIVATE=1"), "{text}");
    }
    assert!(mock.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_identifier_never_leaves_the_service_path() {
    let mock = MockServer::start().await;
    let s = MetadataServices::new(config(&mock.uri(), AddressPolicy::Any)).unwrap();
    let cancel = CancellationToken::new();
    let doi = "10.5555/../../../x";
    for e in [
        s.doi_csl(doi, &cancel).await.unwrap_err(),
        s.crossref_work(doi, &cancel).await.unwrap_err(),
        s.datacite(doi, &cancel).await.unwrap_err(),
        s.unpaywall(doi, &cancel).await.unwrap_err(),
    ] {
        assert!(matches!(e, ServiceError::BadIdentifier(_)), "{e}");
    }
    // Batched identifiers travel as encoded query values.
    let _ = s
        .pubmed_summaries(&["1/../../x&db=other".into()], &cancel)
        .await;
    let _ = s.pmc_ids(&["PMC1/../x".into()], &cancel).await;
    let _ = s.arxiv_feed(&["2101.00001/../x".into()], &cancel).await;
    let _ = s.openlibrary_isbn("978/../x", &cancel).await;
    let requests = mock.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4);
    for r in requests {
        assert!(!r.url.path().contains(".."), "{}", r.url);
        assert!(
            r.url.path().starts_with("/zotero_ncbi_base/")
                || r.url.path().starts_with("/zotero_arxiv_api_base/")
                || r.url.path().starts_with("/zotero_openlibrary_base/"),
            "{}",
            r.url
        );
        assert!(
            !r.url.query().unwrap_or("").contains("db=other"),
            "{}",
            r.url
        );
    }
}

#[tokio::test]
async fn a_secret_echoed_by_a_service_is_never_shown() {
    let mock = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/zotero_ncbi_base/entrez/eutils/esummary.fcgi"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!(
            r#"{{"error":"API key invalid","api-key":"{NCBI_KEY}"}}"#
        )))
        .mount(&mock)
        .await;
    let s = MetadataServices::new(config(&mock.uri(), AddressPolicy::Any)).unwrap();
    let e = s
        .pubmed_summaries(&["123".into()], &CancellationToken::new())
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("API key invalid"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(!text.contains(NCBI_KEY), "{text}");
    // The request did carry it: the scrubbing is of what comes back.
    let sent = mock.received_requests().await.unwrap();
    assert!(sent[0].url.query().unwrap().contains(NCBI_KEY));
    assert_eq!(s.clean(&format!("x {NCBI_KEY} y")), "x [redacted] y");
}

#[tokio::test]
async fn an_oversized_error_answer_gives_a_short_message_and_no_retry() {
    let mock = MockServer::start().await;
    let title = "T".repeat(700_000);
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!(
            "<feed><entry><title>{title}</title></entry></feed>"
        )))
        .mount(&mock)
        .await;
    let s = MetadataServices::new(config(&mock.uri(), AddressPolicy::Any)).unwrap();
    let e = s
        .arxiv_feed(&["2101.00001".into()], &CancellationToken::new())
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(text.len() < 500, "{}", text.len());
    assert_eq!(mock.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_answer_over_the_bound_is_not_read() {
    let mock = MockServer::start().await;
    let body = vec![b' '; zotero_metadata::services::MAX_ANSWER_BYTES + 1];
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
        .mount(&mock)
        .await;
    let s = MetadataServices::new(config(&mock.uri(), AddressPolicy::Any)).unwrap();
    let e = s
        .crossref_work("10.1/abc", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ServiceError::BadAnswer { .. }), "{e}");
    assert!(e.to_string().contains("the most read is 4 MB"), "{e}");
    assert_eq!(mock.received_requests().await.unwrap().len(), 1);
}
