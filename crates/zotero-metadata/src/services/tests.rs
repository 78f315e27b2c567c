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
