//! The manners kept with every metadata service, against a local mock: the user agent and
//! contact address, the pace between requests, retries of 429 with `Retry-After`, redirects
//! from doi.org, and no Unpaywall request without an e-mail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use zotero_metadata::services::{MetadataServices, Service, ServiceError, ServicesConfig};
use zotero_net::{AddressPolicy, RetryPolicy, Secrets};

fn services(mock: &MockServer, email: Option<&str>, pace: Option<Duration>) -> MetadataServices {
    MetadataServices::new(config(mock, email, pace)).unwrap()
}

fn config(mock: &MockServer, email: Option<&str>, pace: Option<Duration>) -> ServicesConfig {
    let bases: HashMap<Service, String> = Service::ALL
        .into_iter()
        .map(|s| (s, format!("{}/{}", mock.uri(), s.variable().to_lowercase())))
        .collect();
    ServicesConfig {
        bases,
        contact_email: email.map(str::to_string),
        ncbi_api_key: None,
        openalex_api_key: None,
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_wait: Duration::from_secs(5),
        },
        min_interval_override: pace,
        policy: AddressPolicy::Any,
        secrets: Secrets::default(),
    }
}

#[tokio::test]
async fn every_request_names_the_project_and_the_contact() {
    let mock = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/zotero_crossref_base/works/10.1038/nature12373"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"message": {"DOI": "10.1038/nature12373"}})),
        )
        .mount(&mock)
        .await;
    let s = services(&mock, Some("me@example.org"), Some(Duration::ZERO));
    let work = s
        .crossref_work("10.1038/nature12373", &CancellationToken::new())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(work["DOI"], "10.1038/nature12373");
    let got = mock.received_requests().await.unwrap();
    let ua = got[0].headers.get("user-agent").unwrap().to_str().unwrap();
    assert!(ua.starts_with("zotero-mcp/"), "{ua}");
    assert!(ua.contains("mailto:me@example.org"), "{ua}");
    assert!(got[0]
        .url
        .query()
        .unwrap()
        .contains("mailto=me%40example.org"));
}

#[tokio::test]
async fn arxiv_is_asked_at_most_once_every_3_seconds() {
    let mock = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/zotero_arxiv_api_base/api/query"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<feed/>"))
        .mount(&mock)
        .await;
    // The real pace (no override).
    let s = services(&mock, None, None);
    let cancel = CancellationToken::new();
    for id in ["1706.03762", "1810.04805"] {
        s.arxiv_feed(&[id.to_string()], &cancel).await.unwrap();
    }
    let got = mock.received_requests().await.unwrap();
    assert_eq!(got.len(), 2);
    // wiremock does not stamp requests: the pacer's wait is what is measured instead.
    let started = std::time::Instant::now();
    s.arxiv_feed(&["hep-th/9901001".to_string()], &cancel)
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(2_900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_429_is_retried_after_the_wait_it_asks_for() {
    let mock = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/zotero_openlibrary_base/api/books"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .mount(&mock)
        .await;
    Mock::given(method("GET"))
        .and(path("/zotero_openlibrary_base/api/books"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ISBN:9780306406157": {"title": "Data"}})),
        )
        .mount(&mock)
        .await;
    let s = services(&mock, None, Some(Duration::ZERO));
    let started = std::time::Instant::now();
    let book = s
        .openlibrary_isbn("9780306406157", &CancellationToken::new())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(book["title"], "Data");
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(mock.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn doi_org_redirects_are_followed_and_unknown_dois_are_none() {
    let mock = MockServer::start().await;
    let target = format!("{}/agency/csl/10.1/abc", mock.uri());
    Mock::given(method("GET"))
        .and(path("/zotero_doi_base/10.1/abc"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", target.as_str()))
        .mount(&mock)
        .await;
    Mock::given(method("GET"))
        .and(path("/agency/csl/10.1/abc"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"type": "article-journal"})))
        .mount(&mock)
        .await;
    let s = services(&mock, None, Some(Duration::ZERO));
    let cancel = CancellationToken::new();
    let csl = s.doi_csl("10.1/abc", &cancel).await.unwrap().unwrap();
    assert_eq!(csl["type"], "article-journal");
    let got = mock.received_requests().await.unwrap();
    assert_eq!(
        got[1].headers.get("accept").unwrap(),
        "application/vnd.citationstyles.csl+json"
    );
    assert!(s.doi_csl("10.1/unknown", &cancel).await.unwrap().is_none());
}

#[tokio::test]
async fn unpaywall_is_never_asked_without_an_email() {
    let mock = MockServer::start().await;
    let s = services(&mock, None, Some(Duration::ZERO));
    let e = s
        .unpaywall("10.1038/nature12373", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ServiceError::NoContact), "{e}");
    assert!(mock.received_requests().await.unwrap().is_empty());
}
