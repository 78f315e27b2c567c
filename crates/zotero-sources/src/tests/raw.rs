//! The SSRF guard (redirect hops included), and what only a raw TCP server can send: no
//! Content-Length, a short body, silence.

use super::*;

// ---------------------------------------------------------------- the SSRF guard

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let dir = TestDir::new();
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"x".to_vec()))
        .mount(&s)
        .await;
    let port = s.address().port();
    let strict = fetcher(100, false, dir.path());
    for url in [
        s.uri(),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "https://10.0.0.1/x.pdf".to_string(),
    ] {
        let err = prep(&strict, SourceSpec::Url(url.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::Forbidden { .. }), "{url}: {err}");
        let t = Seen::from(err);
        assert_eq!(t.code, Blame::Input, "{url}");
        assert_eq!(t.details["field"], "file_url");
        assert!(
            t.message.contains("ZOTERO_FETCH_ALLOW_PRIVATE"),
            "{}",
            t.message
        );
    }
    assert!(s.received_requests().await.unwrap().is_empty());
    let lax = fetcher(100, true, dir.path());
    assert!(
        prep(&lax, SourceSpec::Url(format!("http://localhost:{port}/")))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn every_redirect_hop_is_checked_literal_or_resolved() {
    // 127.0.0.2 plays a public host; every other address is refused, as private ones are.
    fn refused(ip: std::net::IpAddr) -> bool {
        ip != std::net::IpAddr::from([127, 0, 0, 2])
    }
    let dir = TestDir::new();
    let target = raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx".to_vec()).await;
    let port = target
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let strict = Fetcher::with_policy(
        &config(100, false, dir.path()),
        guard::AddressPolicy::Refuse(refused),
    );
    for location in [
        target.clone(),                              // a literal private address
        format!("http://localhost:{port}/file.bin"), // a name that resolves to one
    ] {
        let public = raw_server_on(
            "127.0.0.2",
            format!("HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n")
                .into_bytes(),
        )
        .await;
        let err = prep(&strict, SourceSpec::Url(public)).await.unwrap_err();
        assert!(
            matches!(err, SourceError::Forbidden { .. }),
            "{location}: {err}"
        );
    }
    // The same target is reached when the policy allows it.
    let lax = fetcher(100, true, dir.path());
    assert!(prep(&lax, SourceSpec::Url(target)).await.is_ok());
}

// ---------------------------------------------------------------- a raw server

/// Serves `response` to every connection; with an empty response, holds the connection
/// open without answering.
async fn raw_server(response: Vec<u8>) -> String {
    raw_server_on("127.0.0.1", response).await
}

/// `raw_server` on another loopback address (all of 127/8 is loopback on Linux).
async fn raw_server_on(ip: &str, response: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let response = response.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut byte = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut byte).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&byte[..n]),
                    }
                }
                if response.is_empty() {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                let _ = sock.write_all(&response).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}/file.bin")
}

#[tokio::test]
async fn the_limit_holds_without_content_length() {
    let dir = TestDir::new();
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"40\r\n");
        chunked.extend_from_slice(&[b'x'; 64]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let url = raw_server(chunked).await;
    let err = prep(
        &fetcher(100, true, dir.path()),
        SourceSpec::Url(url.clone()),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            SourceError::TooLarge {
                size: None,
                max_bytes: 100,
                ..
            }
        ),
        "{err}"
    );
    // Under the limit the same body is fine.
    assert_eq!(
        prep(&fetcher(192, true, dir.path()), SourceSpec::Url(url))
            .await
            .unwrap()
            .size,
        192
    );

    let mut close_delimited = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    close_delimited.extend_from_slice(&[b'y'; 150]);
    let url = raw_server(close_delimited).await;
    let err = prep(&fetcher(100, true, dir.path()), SourceSpec::Url(url))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SourceError::TooLarge { size: None, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_a_network_error() {
    let dir = TestDir::new();
    let mut short = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n".to_vec();
    short.extend_from_slice(&[b'z'; 10]);
    let url = raw_server(short).await;
    let err = prep(&fetcher(100, true, dir.path()), SourceSpec::Url(url))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Network { .. }), "{err}");
    assert_eq!(err.blame(), Blame::Remote);
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_call_can_be_cancelled() {
    let dir = TestDir::new();
    let url = raw_server(Vec::new()).await;
    let mut c = config(100, true, dir.path());
    c.timeout = Duration::from_millis(300);
    let f = Fetcher::new(&c).unwrap();
    let err = prep(&f, SourceSpec::Url(url.clone())).await.unwrap_err();
    assert!(matches!(err, SourceError::Timeout { .. }), "{err}");
    assert_eq!(err.blame(), Blame::Remote);

    let mut c = config(100, true, dir.path());
    c.timeout = Duration::from_secs(30);
    let f = Fetcher::new(&c).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let err = f
        .prepare(SourceSpec::Url(url), PrepareOptions::default(), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Cancelled), "{err}");
    assert_eq!(Seen::from(err).code, Blame::Remote);
}

#[tokio::test]
async fn debug_output_hides_sources() {
    let spec = SourceSpec::Base64 {
        data: "c2VjcmV0".into(),
        filename: "x".into(),
    };
    assert!(!format!("{spec:?}").contains("c2VjcmV0"));
    let spec = SourceSpec::Path("/home/someone/secret.pdf".into());
    assert!(!format!("{spec:?}").contains("secret"));
}
