//! Encoding that keeps identifiers below the base, redirects, and the services' paces.

use hyper::Uri;

use super::endpoints::encode_list;
use super::transport::resolve;
use super::*;

#[test]
fn dois_keep_their_slashes_and_lose_what_a_url_cannot_hold() {
    assert_eq!(
        encode_path("10.1038/nature12373").unwrap(),
        "10.1038/nature12373"
    );
    assert_eq!(
        encode_path("10.1002/(SICI)1097-4571 <x>#").unwrap(),
        "10.1002/(SICI)1097-4571%20%3Cx%3E%23"
    );
    assert_eq!(encode_query("a b&c=d@e"), "a%20b%26c%3Dd%40e");
}

#[test]
fn an_identifier_never_leaves_the_base_path() {
    for doi in [
        "10.5555/../../../x",
        "10.5555/..",
        "10.5555/./x",
        "../10.5555/x",
        "10.5555/a/../../b",
    ] {
        let e = encode_path(doi).unwrap_err();
        assert!(matches!(e, ServiceError::BadIdentifier(_)), "{doi}: {e}");
    }
    // Dots inside a segment, and what only looks like a dot segment once decoded, stay.
    assert_eq!(encode_path("10.5555/a..b").unwrap(), "10.5555/a..b");
    assert_eq!(
        encode_path("10.5555/%2E%2E/x").unwrap(),
        "10.5555/%252E%252E/x"
    );
    assert_eq!(
        encode_path("10.5555/a?b#c\\d").unwrap(),
        "10.5555/a%3Fb%23c%5Cd"
    );
    assert_eq!(
        encode_list(&["1234".into(), "PMC1/../x".into(), "a,b&c".into()]),
        "1234,PMC1%2F..%2Fx,a%2Cb%26c"
    );
}

#[test]
fn redirects_resolve_absolute_and_host_relative() {
    let base: Uri = "https://doi.org/10.1/x".parse().unwrap();
    assert_eq!(
        resolve(&base, "/y").unwrap().to_string(),
        "https://doi.org/y"
    );
    assert_eq!(
        resolve(&base, "https://api.crossref.org/z")
            .unwrap()
            .to_string(),
        "https://api.crossref.org/z"
    );
    assert!(resolve(&base, "ftp://x").is_none());
}

#[test]
fn paces_are_the_ones_the_services_ask_for() {
    assert_eq!(
        Service::Arxiv.min_interval(true, true),
        Duration::from_secs(3)
    );
    assert!(Service::Ncbi.min_interval(false, false) >= Duration::from_millis(334));
    assert!(Service::Crossref.min_interval(false, false) >= Duration::from_millis(200));
    assert!(Service::Crossref.min_interval(true, false) >= Duration::from_millis(100));
}

#[test]
fn openalex_is_paced_to_ten_a_second() {
    assert_eq!(
        Service::OpenAlex.min_interval(true, false),
        Duration::from_millis(100)
    );
    assert_eq!(Service::OpenAlex.variable(), "ZOTERO_OPENALEX_BASE");
}

#[test]
fn openalex_requests_stop_at_the_daily_allowance_and_start_again_the_next_day() {
    let config = ServicesConfig {
        bases: HashMap::new(),
        contact_email: None,
        ncbi_api_key: None,
        openalex_api_key: None,
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_wait: Duration::from_secs(1),
        },
        min_interval_override: None,
        policy: AddressPolicy::PublicOnly,
        secrets: Secrets::default(),
    };
    let services = MetadataServices::new(config).unwrap();
    for _ in 0..OPENALEX_DAILY_REQUESTS {
        services.spend_on(Service::OpenAlex, 20_000).unwrap();
    }
    let e = services.spend_on(Service::OpenAlex, 20_000).unwrap_err();
    assert!(matches!(e, ServiceError::DailyBudget { .. }), "{e}");
    assert!(e.to_string().contains("midnight UTC"), "{e}");
    // Other services are not counted; the next day starts afresh.
    services.spend_on(Service::Crossref, 20_000).unwrap();
    services.spend_on(Service::OpenAlex, 20_001).unwrap();
}
